"""Benchmark of the run layer on a small standard suite: plans, build times, regret, PyTorch, and timer fidelity.

For each problem it prints: plan count, time to build all plans, the heuristic pick's and the best plan's median,
regret, PyTorch (cudnn.benchmark off/on), % of the measured roofline, and how close three timers come to the
kernel time CUPTI records (torch.profiler): the kit's timer, triton's do_bench and plain CUDA events.
It also checks that a repeated run names the same best plan, and times a first and a repeated all-plan run.

Run on a GPU machine:  python benchmarks/plans.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import cudnn_lab as cl
from cudnn_lab.gpu.session import session
from cudnn_lab.gpu.timing import Timer, TimingOptions

SUITE = {
    "rn50 3x3 56px": cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"),
    "rn50 3x3 28px": cl.ConvSpec(n=32, c=128, h=28, w=28, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"),
    "rn50 3x3 14px": cl.ConvSpec(n=32, c=256, h=14, w=14, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"),
    "rn50 3x3 7px": cl.ConvSpec(n=32, c=512, h=7, w=7, k=512, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"),
    "rn50 1x1 64->256": cl.ConvSpec(n=32, c=64, h=56, w=56, k=256, r=1, s=1, padding=0, layout="NHWC",
                                    dtype="fp16"),
    "bert gemm bf16": cl.MatmulSpec(m=4096, n=3072, k=768, dtype="bf16"),
    "matmul fp32": cl.MatmulSpec(m=2048, n=2048, k=2048, dtype="fp32"),
    "tiny conv 1x1": cl.ConvSpec(n=1, c=64, h=14, w=14, k=64, r=1, s=1, padding=0, layout="NHWC", dtype="fp16"),
}


def cupti_ms(fn, stream, calls: int = 50) -> float:
    """Kernel time per call as CUPTI records it (sum of all GPU activity: kernels and memsets)."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with torch.cuda.stream(stream):
        for _ in range(5):
            fn()
    stream.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        with torch.cuda.stream(stream):
            for _ in range(calls):
                fn()
        stream.synchronize()
    total_us = sum(e.time_range.elapsed_us() for e in prof.events() if e.device_type == DeviceType.CUDA)
    return total_us / calls / 1e3


def plain_events_ms(fn, stream, reps: int = 100) -> float:
    import torch

    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(stream):
            a.record(stream)
            fn()
            b.record(stream)
        stream.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def triton_ms(fn, stream) -> float | None:
    try:
        import torch
        from triton.testing import do_bench
    except ImportError:
        return None
    with torch.cuda.stream(stream):
        return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def bench(name: str, spec: cl.Spec) -> dict:
    t0 = time.perf_counter()
    first = cl.run(spec, plans="all", heuristics=("A", "B", "FALLBACK"))
    first_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = cl.run(spec, plans="all", heuristics=("A", "B", "FALLBACK"))
    again_s = time.perf_counter() - t0
    pick, best = first.heuristic_pick, first.best
    sess = session(spec, ("A", "B", "FALLBACK"))
    entry = next(e for e in sess.entries if e.name == pick["plan"])
    fn = sess.call(entry)
    kit = Timer(sess.stream, TimingOptions()).time(fn).median_ms
    cupti = cupti_ms(fn, sess.stream)
    tri = triton_ms(fn, sess.stream)
    ev = plain_events_ms(fn, sess.stream)
    ok = first.ok
    # Same best plan on the repeat, unless the two fastest plans are within 3% (then either may win).
    times = ok.sort_values("median_ms")["median_ms"].tolist()
    close = len(times) > 1 and times[1] / times[0] < 1.03
    return {
        "problem": name, "plans": len(first.plans), "ran": len(ok), "build_all_ms": float(ok["build_ms"].sum()),
        "pick_us": pick["median_ms"] * 1e3, "best_us": best["median_ms"] * 1e3, "regret": first.regret,
        "torch_off_us": (first.torch.get("benchmark_off_ms") or float("nan")) * 1e3,
        "torch_on_us": (first.torch.get("benchmark_on_ms") or float("nan")) * 1e3,
        "cupti_us": cupti * 1e3, "kit/cupti": kit / cupti, "triton/cupti": (tri / cupti) if tri else float("nan"),
        "events/cupti": ev / cupti, "pct_ceiling": float(pick["pct_of_ceiling"]),
        "same_best": (best["plan"] == again.best["plan"]) or close, "first_run_s": first_s, "repeat_run_s": again_s,
        "pick_pass": bool(pick["pass_cudnn"]), "device": first.device["gpu"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--only", nargs="*", help="problem names to run (default: all)")
    args = parser.parse_args()
    rows = []
    for name, spec in SUITE.items():
        if args.only and name not in args.only:
            continue
        try:
            rows.append(bench(name, spec))
        except cl.CudnnLabError as e:
            print(f"{name}: {e}")
        r = rows[-1]
        print(f"{r['problem']:<18} plans {r['plans']:>3} ran {r['ran']:>3} build {r['build_all_ms']:8.1f} ms | "
              f"pick {r['pick_us']:8.1f} us best {r['best_us']:8.1f} us regret {r['regret']:.2f} | torch off "
              f"{r['torch_off_us']:8.1f} on {r['torch_on_us']:8.1f} us | cupti {r['cupti_us']:8.1f} us kit/cupti "
              f"{r['kit/cupti']:.3f} triton/cupti {r['triton/cupti']:.3f} events/cupti {r['events/cupti']:.2f} | "
              f"ceil {r['pct_ceiling']:5.1f}% | same best {r['same_best']} | first {r['first_run_s']:.2f} s "
              f"repeat {r['repeat_run_s']:.2f} s", flush=True)
    if rows:
        print(f"device: {rows[0]['device']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
