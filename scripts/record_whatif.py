"""Record cuDNN's what-if answers on this GPU host, for machines without one (the Lab's What-if view, notebook 07).

For every recorded problem that asks the heuristics (scripts/record.py's PROBLEMS): the answer on the card itself,
deviceless for every recorded target of this cuDNN (the card's own description included), for each synthetic
compute capability made from this card, under SM carve-outs, and the same questions under a second cuDNN (the
system's 9.14 on the kit's GPU machines). Writes this card's description to cudnn_lab/data/targets/ and the answers to
cudnn_lab/data/whatif/<gpu>_<date>.json (or --out). Every answer is labelled "cuDNN's heuristics' answer".

    python scripts/record_whatif.py [--out DIR] [--other-cudnn /usr/lib/x86_64-linux-gnu] [--only NAME ...]
    python scripts/record_whatif.py --block-scale [--out DIR]   # MXFP8/NVFP4 graphs only (whatif.block_formats)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import runpy
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from cudnn_lab.cli import say_error  # noqa: E402
from cudnn_lab.errors import CudnnLabError  # noqa: E402
from cudnn_lab.gpu.device import end_program  # noqa: E402

SM_COUNTS = (114, 78, 66)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "cudnn_lab" / "data"), help="folder holding targets/ and whatif/")
    ap.add_argument("--other-cudnn", default="/usr/lib/x86_64-linux-gnu",
                    help="folder of a second cuDNN to compare with ('' to skip)")
    ap.add_argument("--only", nargs="*", help="record only these problems")
    ap.add_argument("--skip-answers", action="store_true", help="record no heuristics' answers (only the extras)")
    ap.add_argument("--sm-scaling", action="store_true", help="also time the ResNet-50 3x3 conv at 132/114/78/66 SMs")
    ap.add_argument("--run-drift", nargs="*", default=[], help="also run these problems under --other-cudnn (the "
                    "times and errors of the other version; the cuDNN in use is the shipped recording's)")
    ap.add_argument("--block-scale", action="store_true", help="record only cuDNN's answers for block-scaled "
                    "(MXFP8, NVFP4) graphs, to <out>/whatif/block_scale/")
    args = ap.parse_args()
    try:
        if args.block_scale:
            from cudnn_lab.whatif.block_formats import record_block_scale

            print(f"wrote {record_block_scale(Path(args.out) / 'whatif' / 'block_scale')}")
            return 0
        return record(args)
    except CudnnLabError as e:
        return say_error("record_whatif.py", e)


def record(args: argparse.Namespace) -> int:
    import cudnn_lab.gpu  # noqa: F401 - registers the plan sources
    from cudnn_lab.whatif import devices as tg
    from cudnn_lab.whatif import heuristics as wi
    from cudnn_lab.whatif.versions import run_under
    from cudnn_lab.gpu.asker import asker
    from cudnn_lab.gpu.frontend import graph_plans
    from cudnn_lab.gpu.plans import PLAN_SOURCES
    from cudnn_lab.results import recordings
    from cudnn_lab.results.datasets import dataset_prefix

    out = Path(args.out)
    card = wi.profile()  # NoGPUError without a GPU
    prefix = dataset_prefix(card.description["deviceName"])
    libs: list[str | None] = [None]
    if args.other_cudnn and Path(args.other_cudnn).is_dir():
        libs.append(args.other_cudnn)
    recorded = []
    for lib in libs:
        a = asker(lib)
        a.ensure_started()
        t = tg.Target(name=prefix, description=dict(a.card), origin="recorded", cudnn_version=int(a.cudnn_version),
                      created=tg.today())
        path = t.save(out / "targets" / f"{prefix}_cudnn{a.cudnn_version}.json")
        print("target", path, flush=True)
        recorded.append((lib, t))
    recordings.clear()  # read the descriptions just written
    problems = runpy.run_path(str(HERE / "record.py"))["PROBLEMS"]
    answers = []
    t0 = time.perf_counter()
    for name, spec in problems.items():
        if args.skip_answers or (args.only and name not in args.only) or PLAN_SOURCES[spec] is not graph_plans:
            continue
        for lib, own in recorded:
            same = [own] + [t for t in tg.targets(own.cudnn_version)
                            if t.origin == "recorded" and t.name != own.name]  # the card's own description first
            made = [tg.synthetic(cc, own) for cc in tg.COMPUTE_CAPABILITIES]
            asks = [(None, None)] + [(t, None) for t in same + made] + [(None, n) for n in SM_COUNTS]
            for tgt, sms in asks:
                w = wi.plans_for(spec, tgt, cudnn_lib=lib, sm_count=sms, recorded=False)
                w = dataclasses.replace(w, source=f"recorded on {card.description['deviceName']}, {tg.today()}",
                                        detail=w.detail[:12000])
                answers.append(w.to_dict())
            print(f"{name} cuDNN {own.cudnn_version}: {len(asks)} answers", flush=True)
    stamp = tg.today()
    if args.sm_scaling:
        from cudnn_lab.whatif.scaling import sm_scaling

        conv = problems.get("rn50_conv") or type(problems["conv_nhwc_fp16"])(
            n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
        scaled = sm_scaling(conv, sm_counts=(None, 114, 78, 66))
        path = out / "whatif" / "sm_scaling" / f"{prefix}_{stamp}_conv_rn50_3x3.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(scaled.to_dict()))
        print("sm scaling", path, scaled.summary(), flush=True)
    for name in args.run_drift:
        if len(libs) < 2:
            break
        other = run_under(problems[name], libs[1], {"heuristics": ("A", "B", "FALLBACK"), "time_cap_s": 0.25})
        path = out / "whatif" / "runs" / f"{prefix}_cudnn{recorded[1][1].cudnn_version}_{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        other.save(path)
        print("run under", libs[1], path, flush=True)
    if args.skip_answers:
        return 0
    doc = {"format": wi.FORMAT, "version": 1, "gpu": card.description["deviceName"], "created": stamp,
           "seconds": round(time.perf_counter() - t0, 1), "answers": answers}
    path = out / "whatif" / f"{prefix}_{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, separators=(",", ":")))
    print(f"saved {len(answers)} answers to {path} ({path.stat().st_size / 2**20:.1f} MiB)", flush=True)
    return 0


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
