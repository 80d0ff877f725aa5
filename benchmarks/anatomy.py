"""Benchmark of plan anatomy: what kernels, notes and engine-space exploration cost on top of an all-plan run.

Targets (issue 12), printed with met/missed:
- kernels (CUPTI) and numerical notes for all plans of a ResNet-50 3x3 conv add at most 1 s to an all-plan run;
- an engine-space sample of 200 configurations (built, checked, timed) finishes within 60 s, with progress.

Both are measured through ``cl.run`` (options ``kernels``, ``notes``, ``explore``), in a fresh process so that the
first use of CUPTI is included; that one-time process cost (``gpu.kernels.cupti_first_use_s``) is reported apart from
the per-run cost, each with its own verdict, and a breakdown by step follows.

Run on a GPU machine:  python benchmarks/anatomy.py [--json out.json] [--budget 200]
"""

from __future__ import annotations

import sys
import time

import cudnn_lab as cl
from cudnn_lab.gpu.device import end_program
from _shared import parser, write_json

SPEC = cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
MODES = ("A", "FALLBACK")
PLAIN = {"heuristics": MODES, "plans": "all", "kernels": False, "notes": False, "resample": True}


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def secs(value) -> str:
    return "n/a" if value is None else f"{value:.3f} s"


def timed_run(**options) -> tuple[cl.RunResult, float]:
    t0 = time.perf_counter()
    result = cl.run(SPEC, **options)
    return result, time.perf_counter() - t0


def anatomy_cost() -> dict:
    """An all-plan run without anatomy, then with kernels + notes (CUPTI's first use in the process inside it, timed
    apart by ``gpu.kernels``), then the same steps again one by one."""
    from cudnn_lab.gpu import kernels
    from cudnn_lab.gpu.notes import _CACHE, check_determinism, numeric_notes
    from cudnn_lab.gpu.session import session

    timed_run(**PLAIN)  # compile, build, ceilings: not what is measured here
    plain, plain_s = timed_run(**PLAIN)
    # timing 'auto' starts CUPTI itself for plans under its cupti_below_ms; then the anatomy run has no first use
    started_before = kernels.cupti_first_use_s()
    full, full_s = timed_run(**{**PLAIN, "kernels": True, "notes": True})
    first_use = kernels.cupti_first_use_s() if started_before is None else 0.0
    ran = full.ok
    phases = (full.settings or {}).get("phase_s") or {}
    out = {"plans": len(plain.plans), "ran": len(ran), "plain_run_s": plain_s, "anatomy_run_s": full_s,
           "added_s": full_s - plain_s, "cupti_first_use_s": first_use or 0.0,
           "cupti_started_before": started_before, "added_per_run_s": full_s - plain_s - (first_use or 0.0),
           "phase_kernels_s": phases.get("kernels"), "phase_notes_s": phases.get("notes"),
           "with_kernels": int(ran["kernel_ms"].notna().sum()),
           "with_notes": int(ran["numeric_notes"].notna().sum()),
           "deterministic": int(ran["deterministic"].fillna(False).astype(bool).sum()),
           "max_launch_gap_us": float(ran["launch_gap_ms"].max() * 1e3) if ran["launch_gap_ms"].notna().any()
           else None, "warnings": full.warnings}
    sess = session(SPEC, MODES)
    calls = {e.name: sess.call(e) for e in sess.entries if e.name in set(ran["plan"])}
    t0 = time.perf_counter()
    kernels.profile_plans(calls, sess.stream)
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
    cli = parser(__doc__, "also write the numbers to this JSON file")
    cli.add_argument("--budget", type=int, default=200, help="configurations to sample (default 200)")
    args = cli.parse_args()
    a = anatomy_cost()
    print(f"{SPEC.label()}: {a['plans']} plans, {a['ran']} ran; all-plan run {a['plain_run_s']:.2f} s, with kernels "
          f"+ notes {a['anatomy_run_s']:.2f} s (the first anatomy run of this process)")
    print(f"  kernels for {a['with_kernels']} plans, notes for {a['with_notes']}, {a['deterministic']} bitwise "
          f"deterministic; largest launch gap {a['max_launch_gap_us'] or float('nan'):.1f} us")
    if a["cupti_started_before"] is not None:
        print(f"  CUPTI was already started by the plain run (timing 'auto' uses it for very short plans): its "
              f"one-time start ({a['cupti_started_before']:.2f} s) is not in the anatomy run")
    else:
        print(f"  of the {a['added_s']:.2f} s added, {a['cupti_first_use_s']:.2f} s is the first use of CUPTI in this "
              f"process (loading libcupti and starting the tracer): paid once per process, by whichever run first "
              f"asks for kernels, whatever the spec")
    print(f"  phases of that run: kernels {secs(a['phase_kernels_s'])}, notes {secs(a['phase_notes_s'])}; "
          f"again, step by step: kernels {a['kernels_again_s']:.3f} s, notes {a['notes_again_s']:.3f} s, determinism "
          f"{a['determinism_again_s']:.3f} s")
    print(f"kernels + notes add {a['added_per_run_s']:.2f} s per run once CUPTI is started; target <= 1 s: "
          f"{verdict(a['added_per_run_s'] <= 1.0)}")
    print(f"  counting CUPTI's one-time start, the first such run in a process adds {a['added_s']:.2f} s: "
          f"{verdict(a['added_s'] <= 1.0)}")
    e = exploration_cost(args.budget, time_budget_s=60.0)
    not_tried = e["statuses"].get("not_tried", 0)
    print(f"engine space: {e['engines']} engines, {e['runnable']} can run here, {e['space_size']} configurations; "
          f"sampled {e['sampled']}: {e['statuses']}; exploration {e['explore_s']:.1f} s (run {e['run_s']:.1f} s)")
    print(f"target {args.budget} configurations within 60 s: "
          f"{verdict(e['explore_s'] <= 60.0 and not_tried == 0)}")
    print(f"answer: {e['answer_text']}")
    import torch

    print(f"device: {torch.cuda.get_device_name()}")
    write_json(args.json, {"anatomy": a, "explore": e}, default=str)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
