"""Benchmark of plan anatomy: what kernels, notes and engine-space exploration cost on top of an all-plan run.

Targets (issue 12), printed with met/missed:
- kernels (CUPTI) and numerical notes for all plans of a ResNet-50 3x3 conv add at most 1 s to an all-plan run;
- an engine-space sample of 200 configurations (built, checked, timed) finishes within 60 s, with progress.

Run on a GPU machine:  python benchmarks/anatomy.py [--json out.json] [--budget 200]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import cudnn_lab as cl
from cudnn_lab.gpu.session import session

SPEC = cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
MODES = ("A", "FALLBACK")


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def anatomy_cost(spec: cl.Spec) -> dict:
    """Seconds of an (already warm) all-plan run, and of kernels + notes + determinism for all its plans."""
    from cudnn_lab.gpu.kernels import profile_plans
    from cudnn_lab.gpu.notes import check_determinism, numeric_notes

    cl.run(spec, plans="all", heuristics=MODES)  # compile, build, ceilings: not what is measured here
    t0 = time.perf_counter()
    result = cl.run(spec, plans="all", heuristics=MODES)
    run_s = time.perf_counter() - t0
    sess = session(spec, MODES)
    ran = set(result.ok["plan"])
    calls = {e.name: sess.call(e) for e in sess.entries if e.name in ran}
    rows = {}
    for label in ("first", "again"):  # the first pays CUPTI's start-up in this process
        t0 = time.perf_counter()
        kernels = profile_plans(calls, sess.stream)
        k_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        notes = numeric_notes(spec, sess.handle, MODES)
        n_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        det = {name: check_determinism(call, sess.outputs, sess.stream) for name, call in calls.items()}
        d_s = time.perf_counter() - t0
        rows[label] = {"kernels_s": k_s, "notes_s": n_s, "determinism_s": d_s,
                       "with_kernels": sum(1 for k in kernels.values() if not k.error),
                       "with_notes": sum(1 for n in calls if n in notes.notes),
                       "deterministic": sum(1 for d in det.values() if d.deterministic)}
    return {"plans": len(calls), "run_s": run_s, **{f"{k}_{lab}": v for lab, r in rows.items() for k, v in r.items()}}


def exploration_cost(spec: cl.Spec, budget: int, time_budget_s: float) -> dict:
    """Sample ``budget`` configurations beyond the proposals, build/check/time each; seconds and the answer."""
    import cudnn
    import torch

    from cudnn_lab.gpu.engine_space import Explorer, answer_text, beat_heuristics, explore, sample_configs
    from cudnn_lab.gpu.timing import Timer, TimingOptions
    from cudnn_lab.numerics import compare

    result = cl.run(spec, plans="all", heuristics=MODES)
    sess = session(spec, MODES)
    version = cudnn.backend_version()
    t0 = time.perf_counter()
    explorer = Explorer(spec, sess.handle)
    configs = sample_configs(explorer.engines, list(result.plans["plan"]), budget, seed=0, version=version)
    cands = explorer.append(configs, known=list(result.plans["plan"]), version=version)
    timer = Timer(sess.stream, TimingOptions(time_cap_s=0.1))
    rows = [{"plan": p, "proposed": True, "median_ms": m, "status": s, "pass_cudnn": ok}
            for p, m, s, ok in zip(result.plans["plan"], result.plans["median_ms"], result.plans["status"],
                                   result.plans["pass_cudnn"])]
    g = explorer.lab.pygraph
    main = next(iter(sess.expected))

    def evaluate(c):
        g.build_plan_at_index(c.index)
        sess.ensure_workspace(int(g.get_workspace_size_plan_at_index(c.index)))
        feed = {explorer.lab.tensors[n]: t for n, t in {**sess.inputs, **sess.outputs}.items()}
        ws, handle, index = sess.workspace, sess.handle, c.index

        def call():
            g.execute_plan_at_index(feed, ws, index=index, handle=handle)

        with torch.cuda.stream(sess.stream):
            sess.outputs[main].fill_(float("nan"))
            call()
        sess.stream.synchronize()
        passed = compare(sess.outputs[main], sess.expected[main], spec.dtype, op=spec.op).passed_cudnn
        t = timer.time(call, key=("explore", c.name))
        c.status = "ok"
        rows.append({"plan": c.name, "proposed": False, "median_ms": t.median_ms, "status": "ok",
                     "pass_cudnn": passed})

    def progress(i, n, msg):
        if i % 20 == 0 or i == n:
            print(f"  [{i}/{n}] {time.perf_counter() - t0:6.1f} s  {msg}", file=sys.stderr, flush=True)

    explore(cands, evaluate, time_budget_s=time_budget_s, progress=progress)
    seconds = time.perf_counter() - t0
    answer = beat_heuristics(rows)
    counts: dict[str, int] = {}
    for c in cands:
        counts[c.status] = counts.get(c.status, 0) + 1
    return {"engines": len(explorer.engines), "runnable": sum(e.runnable for e in explorer.engines),
            "sampled": len(configs), "statuses": counts, "explore_s": seconds, "answer": answer,
            "answer_text": answer_text(answer)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    parser.add_argument("--budget", type=int, default=200, help="configurations to sample (default 200)")
    args = parser.parse_args()
    a = anatomy_cost(SPEC)
    added = a["kernels_s_again"] + a["notes_s_again"]
    print(f"{SPEC.label()}: {a['plans']} plans; all-plan run {a['run_s']:.2f} s")
    for lab in ("first", "again"):
        print(f"  {lab:5}: kernels {a[f'kernels_s_{lab}']:.3f} s ({a[f'with_kernels_{lab}']} plans), notes "
              f"{a[f'notes_s_{lab}']:.3f} s ({a[f'with_notes_{lab}']} plans), determinism "
              f"{a[f'determinism_s_{lab}']:.3f} s ({a[f'deterministic_{lab}']} bitwise-equal)")
    first_added = a["kernels_s_first"] + a["notes_s_first"]
    print(f"kernels + notes add {added:.2f} s (first in the process {first_added:.2f} s); target <= 1 s: "
          f"{verdict(added <= 1.0)} (first: {verdict(first_added <= 1.0)})")
    e = exploration_cost(SPEC, args.budget, time_budget_s=60.0)
    print(f"engine space: {e['engines']} engines, {e['runnable']} can run here; sampled {e['sampled']}: "
          f"{e['statuses']}; {e['explore_s']:.1f} s; target {args.budget} configurations <= 60 s: "
          f"{verdict(e['explore_s'] <= 60.0 and e['statuses'].get('not_tried', 0) == 0)}")
    print(f"answer: {e['answer_text']}")
    import torch

    print(f"device: {torch.cuda.get_device_name()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"anatomy": a, "explore": e}, f, indent=1, default=str)


if __name__ == "__main__":
    main()
