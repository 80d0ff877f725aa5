"""Benchmark of plan anatomy: what kernels, notes and engine-space exploration cost on top of an all-plan run.

Targets (issue 12), printed with met/missed:
- kernels (CUPTI) and numerical notes for all plans of a ResNet-50 3x3 conv add at most 1 s to an all-plan run;
- an engine-space sample of 200 configurations (built, checked, timed) finishes within 60 s, with progress.

Both are measured through ``cl.run`` (options ``kernels``, ``notes``, ``explore``), in a fresh process so that the
first use of CUPTI is included; a breakdown by step follows.

Run on a GPU machine:  python benchmarks/anatomy.py [--json out.json] [--budget 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import cudnn_lab as cl

SPEC = cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
MODES = ("A", "FALLBACK")
PLAIN = {"heuristics": MODES, "plans": "all", "kernels": False, "notes": False, "resample": True}


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def timed_run(**options) -> tuple[cl.RunResult, float]:
    t0 = time.perf_counter()
    result = cl.run(SPEC, **options)
    return result, time.perf_counter() - t0


def anatomy_cost() -> dict:
    """An all-plan run without anatomy, then with kernels + notes (first in the process), then a breakdown."""
    from cudnn_lab.gpu.kernels import profile_plans
    from cudnn_lab.gpu.notes import _CACHE, check_determinism, numeric_notes
    from cudnn_lab.gpu.session import session

    timed_run(**PLAIN)  # compile, build, ceilings: not what is measured here
    plain, plain_s = timed_run(**PLAIN)
    full, full_s = timed_run(**{**PLAIN, "kernels": True, "notes": True})
    ran = full.ok
    out = {"plans": len(plain.plans), "ran": len(ran), "plain_run_s": plain_s, "anatomy_run_s": full_s,
           "added_s": full_s - plain_s, "with_kernels": int(ran["kernel_ms"].notna().sum()),
           "with_notes": int(ran["numeric_notes"].notna().sum()),
           "deterministic": int(ran["deterministic"].fillna(False).astype(bool).sum()),
           "max_launch_gap_us": float(ran["launch_gap_ms"].max() * 1e3) if ran["launch_gap_ms"].notna().any()
           else None, "warnings": full.warnings}
    sess = session(SPEC, MODES)
    calls = {e.name: sess.call(e) for e in sess.entries if e.name in set(ran["plan"])}
    t0 = time.perf_counter()
    profile_plans(calls, sess.stream)
    out["kernels_again_s"] = time.perf_counter() - t0
    _CACHE.clear()
    t0 = time.perf_counter()
    numeric_notes(SPEC, sess.handle, MODES)
    out["notes_again_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for call in calls.values():
        check_determinism(call, sess.outputs, sess.stream)
    out["determinism_again_s"] = time.perf_counter() - t0
    return out


def exploration_cost(budget: int, time_budget_s: float) -> dict:
    """``budget`` configurations beyond the proposals through ``cl.run(explore=...)``, with progress on stderr."""
    from cudnn_lab.results.anatomy import answer_text

    _, plain_s = timed_run(**{**PLAIN, "resample": False})
    t0 = time.perf_counter()

    def progress(i, n, msg):
        if msg.startswith("exploring") and (i % 20 == 0) or msg == "exploration done":
            print(f"  [{i}/{n}] {time.perf_counter() - t0:6.1f} s  {msg}", file=sys.stderr, flush=True)

    result = cl.run(SPEC, heuristics=MODES, plans="all", explore=budget, explore_time_s=time_budget_s,
                    progress=progress)
    total_s = time.perf_counter() - t0
    explored = result.plans[result.plans["proposed"].astype(object).map(lambda v: v is False)]
    space = result.engine_space
    return {"engines": len(space.get("engines", [])),
            "runnable": sum(1 for e in space.get("engines", []) if e.get("runnable")),
            "space_size": space.get("space_size"), "sampled": space.get("sampled"),
            "statuses": explored["status"].value_counts().to_dict(), "run_s": total_s,
            "explore_s": total_s - plain_s, "answer": result.exploration,
            "answer_text": answer_text(result.exploration)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    parser.add_argument("--budget", type=int, default=200, help="configurations to sample (default 200)")
    args = parser.parse_args()
    a = anatomy_cost()
    print(f"{SPEC.label()}: {a['plans']} plans, {a['ran']} ran; all-plan run {a['plain_run_s']:.2f} s, with kernels "
          f"+ notes {a['anatomy_run_s']:.2f} s (first use of CUPTI in this process included)")
    print(f"  kernels for {a['with_kernels']} plans, notes for {a['with_notes']}, {a['deterministic']} bitwise "
          f"deterministic; largest launch gap {a['max_launch_gap_us']} us")
    print(f"  again, step by step: kernels {a['kernels_again_s']:.3f} s, notes {a['notes_again_s']:.3f} s, "
          f"determinism {a['determinism_again_s']:.3f} s")
    print(f"kernels + notes add {a['added_s']:.2f} s; target <= 1 s: {verdict(a['added_s'] <= 1.0)}")
    e = exploration_cost(args.budget, time_budget_s=60.0)
    not_tried = e["statuses"].get("not_tried", 0)
    print(f"engine space: {e['engines']} engines, {e['runnable']} can run here, {e['space_size']} configurations; "
          f"sampled {e['sampled']}: {e['statuses']}; exploration {e['explore_s']:.1f} s (run {e['run_s']:.1f} s)")
    print(f"target {args.budget} configurations within 60 s: "
          f"{verdict(e['explore_s'] <= 60.0 and not_tried == 0)}")
    print(f"answer: {e['answer_text']}")
    import torch

    print(f"device: {torch.cuda.get_device_name()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"anatomy": a, "explore": e}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
