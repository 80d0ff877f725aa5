"""Probe cuDNN's what-if answers on this GPU host: the card's own description, deviceless plan lists against the
card's own, other compute capabilities, SM carve-outs (proposals and conv timings), and the per-mode messages of
graphs cuDNN declines. Writes one JSON (--out); run it under another cuDNN with LD_LIBRARY_PATH set first.

    python scripts/probe_whatif.py --out /tmp/whatif.json [--no-torch]
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--cudnn-lib", default=None, help="a folder of another cuDNN (its libcudnn*.so.9)")
    ap.add_argument("--no-torch", action="store_true", help="do not time (another cuDNN: torch refuses it)")
    args = ap.parse_args()
    from cudnn_lab.gpu.asker import asker
    from cudnn_lab.gpu.frontend import graph_plans
    from cudnn_lab.gpu.plans import PLAN_SOURCES
    import cudnn_lab.gpu  # noqa: F401 - registers the plan sources

    problems = runpy.run_path(str(HERE / "record.py"))["PROBLEMS"]
    a = asker(args.cudnn_lib)
    conv = problems["conv_nhwc_fp16"]
    t0 = time.perf_counter()
    a.ask(conv, modes=("A",))
    out: dict = {"first_query_s": time.perf_counter() - t0, "cudnn": a.cudnn_version, "description": a.card,
                 "problems": {}, "errors": []}
    desc = a.card
    for name, spec in problems.items():
        if (args.only and name not in args.only) or PLAN_SOURCES[spec] is not graph_plans:
            continue
        entry: dict = {"spec": spec.to_dict()}
        for label, kwargs in [("device", {}), ("deviceless", {"description": desc})] + [
                (f"cc{v}", {"description": {**desc, "deviceVer": v}}) for v in (800, 860, 890, 1000, 1030, 1200)] + [
                (f"sm{n}", {"sm_count": n}) for n in (114, 66)]:
            t0 = time.perf_counter()
            entry[label] = a.ask(spec, **kwargs).to_dict()
            entry[label]["wall_s"] = time.perf_counter() - t0
        out["problems"][name] = entry
        print(name, {k: len(v["proposals"]) if "proposals" in v else v["refused"] for k, v in entry.items()
                     if k != "spec"}, flush=True)
    t = []
    for _ in range(5):
        t0 = time.perf_counter()
        a.ask(conv, description=desc, modes=("A",))
        t.append(time.perf_counter() - t0)
    out["repeat_query_s"] = t
    if not args.no_torch:
        try:
            out["sm_timing"] = sm_timing()
        except Exception:  # noqa: BLE001
            out["errors"].append(traceback.format_exc())
    Path(args.out).write_text(json.dumps(out, indent=1, default=str))
    return 0


def sm_timing() -> dict:
    """Every mode-A plan of a ResNet-50 3x3 conv at several SM counts, CUDA-event medians."""
    import cudnn
    import torch

    n, c, h, k = 32, 256, 28, 256
    x = torch.randn(n, c, h, h, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, 3, 3, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    y = torch.empty(n, k, h, h, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    handle = cudnn.create_handle()
    cudnn.set_stream(handle, torch.cuda.current_stream().cuda_stream)
    res = {}
    for sms in (132, 114, 78, 66, None):
        g = cudnn.pygraph(io_data_type=cudnn.data_type.HALF, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle,
                          **({} if sms is None else {"sm_count": sms}))
        X = g.tensor_like(x)
        W = g.tensor_like(w)
        Y = g.conv_fprop(X, W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
        Y.set_output(True).set_dim(list(y.shape)).set_stride(list(y.stride()))
        row: dict = {}
        try:
            g.validate()
            g.build_operation_graph()
            g.create_execution_plans([cudnn.heur_mode.A])
        except Exception as e:  # noqa: BLE001
            res[str(sms)] = {"error": str(e)[:3000]}
            continue
        for i in range(g.get_execution_plan_count()):
            name = g.get_plan_name_at_index(i)
            try:
                g.build_plan_at_index(i)
                ws = torch.empty(g.get_workspace_size_plan_at_index(i), device="cuda", dtype=torch.uint8)
                feed = {X: x, W: w, Y: y}
                for _ in range(3):
                    g.execute_plan_at_index(feed, ws, i, handle=handle)
                ts = []
                for _ in range(15):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    for _ in range(5):
                        g.execute_plan_at_index(feed, ws, i, handle=handle)
                    b.record()
                    b.synchronize()
                    ts.append(a.elapsed_time(b) / 5)
                ts.sort()
                row[name] = ts[len(ts) // 2]
            except Exception as e:  # noqa: BLE001
                row[name] = str(e)[:1500]
        res[str(sms)] = row
    return res


if __name__ == "__main__":
    sys.exit(main())
