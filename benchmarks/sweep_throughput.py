"""Sweep throughput: points per minute with all-plan timing, and the speed-up of one warm worker per GPU, through the
kit's GPUExecutor and through Dask (dask-cuda's LocalCUDACluster where installed, else ``distributed`` workers).

The grid runs into fresh stores, all sharing one temporary cache folder:
1. in this process on GPU 0, cold (fills the plan cache and the ceilings on disk; shown for reference);
2. GPUExecutor with one warm worker on GPU 0, then with one warm worker per GPU: speed-up = (2) / (N);
3. the same through a Dask cluster (one worker, then one per GPU), where ``distributed`` is installed.
Worker start-up (importing torch and cuDNN, starting CUDA) happens before the clock starts (``warm=True``,
``warm_dask``); without it, it is shown apart. Targets (issue 13): >= 1.8x on 2 GPUs, >= 3.4x on 4.

Run on a machine with 2 or more GPUs (about 4-6 minutes on two H200s):
    python benchmarks/sweep_throughput.py [--points 24] [--json sweep.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time
from pathlib import Path

import cudnn_lab as cl
from cudnn_lab import cache_dir

NEEDED = {2: 1.8, 4: 3.4}


def grid(points: int) -> tuple[cl.Spec, dict[str, list]]:
    base = cl.ConvSpec(n=16, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    ns = [1, 2, 4, 8, 16, 32, 48, 64][: max(1, points // 6)]
    return base, {"n": ns, "layout": ["NCHW", "NHWC"], "dtype": ["fp16", "bf16", "fp32"]}


#: Seconds the workers spent inside points in the last sweep timed (the sum of the sweep's point_s column).
BUSY: dict[str, float] = {}


def timed(spec: cl.Spec, over: dict, executor=None) -> tuple[float, int, int]:
    """(seconds, points, points that ran) of one sweep into a fresh store; the workers' busy seconds go to BUSY."""
    t0 = time.perf_counter()
    frame = cl.sweep(spec=spec, over=over, store=Path(tempfile.mkdtemp()) / "s.parquet", plans="all",
                     progress=False, executor=executor)
    seconds = time.perf_counter() - t0
    per_point = frame.groupby("point_id")["point_s"].first() if "point_s" in frame else None
    BUSY["s"] = float(per_point.sum()) if per_point is not None else float("nan")
    BUSY["max"] = float(per_point.max()) if per_point is not None else float("nan")
    ok = frame[frame["status"] == "ok"] if "status" in frame else frame.iloc[:0]
    # plans whose kernels CUPTI listed (a worker where CUPTI cannot start lists none and says so in its warnings)
    BUSY["with_kernels"] = float(ok["kernels"].fillna("").astype(str).str.len().gt(2).mean()) \
        if "kernels" in ok and len(ok) else float("nan")
    return seconds, int(frame["point_id"].nunique()), int(frame.loc[frame["point_status"] == "ok",
                                                                    "point_id"].nunique())


def line(what: str, seconds: float, n: int, ok: int, workers: int = 1) -> str:
    """One row: the sweep's rate, then where its time went: the mean seconds per point inside a worker (grows if
    workers slow each other down) and the workers' busy share of the wall time (falls with idle and tail time)."""
    busy = BUSY.get("s", float("nan"))
    return (f"{what:<44} {n} points ({ok} ran) in {seconds:6.1f} s = {60 * n / seconds:6.1f} points/min | "
            f"{busy / max(n, 1):.3f} s/point in a worker (longest {BUSY.get('max', float('nan')):.2f} s), "
            f"workers busy {busy / (workers * seconds):4.0%}, kernels listed for {BUSY.get('with_kernels', 0):.0%} "
            "of plans")


def with_executor(spec: cl.Spec, over: dict, gpus: list[int], threads: int | None = None
                  ) -> tuple[float, float, int, int]:
    """(warm-up seconds, sweep seconds, points, ran) on a GPUExecutor warmed before the clock starts."""
    t0 = time.perf_counter()
    with cl.GPUExecutor(gpus, warm=True, threads=threads) as ex:
        warm_s = time.perf_counter() - t0
        s, n, ok = timed(spec, over, ex)
    return warm_s, s, n, ok


def with_dask(spec: cl.Spec, over: dict, gpus: list[int]) -> tuple[float, float, int, int, str]:
    """The same through a Dask cluster with one worker per GPU in ``gpus``."""
    import distributed

    from cudnn_lab.gpu.workers import dask_cluster, warm_dask

    t0 = time.perf_counter()
    cluster = dask_cluster(gpus)
    kind = type(cluster).__name__
    try:
        with distributed.Client(cluster) as client:
            warm_dask(client)
            warm_s = time.perf_counter() - t0
            with client.get_executor() as ex:
                s, n, ok = timed(spec, over, ex)
    finally:
        cluster.close()
    return warm_s, s, n, ok, kind


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=24)
    parser.add_argument("--json", help="write the times and speed-ups here (benchmarks/plans.py --sweep reads it)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask half")
    parser.add_argument("--worker-threads", type=int, help="CPU threads per GPUExecutor worker (default: its share "
                        "of the host's cores; give the core count to see what oversubscription costs)")
    args = parser.parse_args()
    logging.getLogger("distributed").setLevel(logging.ERROR)
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # the workers' own loggers, too
    os.environ[cache_dir.ENV_DIR] = tempfile.mkdtemp(prefix="cudnn_lab_sweep_cache_")
    os.environ.pop(cache_dir.ENV_OFF, None)
    spec, over = grid(args.points)
    count = torch.cuda.device_count()
    device = torch.cuda.get_device_name(0)
    out: dict = {"device": device, "gpus": count, "points": args.points, "times": {}, "speedups": {},
                 "worker_threads": args.worker_threads or "share"}

    s, n, ok = timed(spec, over)
    out["times"]["in_process_cold"] = s
    out["busy"] = {}
    print(line("one GPU, in this process, cold caches", s, n, ok), flush=True)

    sizes = sorted({1, count} | ({2} if count >= 2 else set()))
    base: dict[str, float] = {}
    for g in sizes:
        warm_s, s, n, ok = with_executor(spec, over, list(range(g)), args.worker_threads)
        out["times"][f"executor_{g}"] = s
        out["busy"][f"executor_{g}"] = dict(BUSY)
        print(line(f"GPUExecutor, {g} warm worker(s)", s, n, ok, g) + f" (warm-up {warm_s:.1f} s, not counted)",
              flush=True)
        base.setdefault("GPUExecutor", s)
        if g > 1:
            out["speedups"].setdefault(str(g), {})["GPUExecutor"] = base["GPUExecutor"] / s
    if not args.no_dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print("Dask: 'distributed' is not installed here; skipped (pip install distributed dask-cuda)")
        else:
            for g in sizes:
                warm_s, s, n, ok, kind = with_dask(spec, over, list(range(g)))
                out["times"][f"dask_{g}"] = s
                out["busy"][f"dask_{g}"] = dict(BUSY)
                print(line(f"Dask {kind}, {g} warm worker(s)", s, n, ok, g) + f" (start + warm-up {warm_s:.1f} s, "
                      "not counted)", flush=True)
                base.setdefault("Dask", s)
                if g > 1:
                    out["speedups"].setdefault(str(g), {})["Dask"] = base["Dask"] / s
    print(f"\nspeed-up over one warm worker on {device} (target: >= 1.8x on 2 GPUs, >= 3.4x on 4):")
    for g, by in sorted(out["speedups"].items()):
        for how, x in by.items():
            need = NEEDED.get(int(g))
            verdict = "-" if need is None else ("met" if x >= need else "MISSED")
            print(f"  {g} GPUs, {how:<12} {x:5.2f}x  {verdict}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
