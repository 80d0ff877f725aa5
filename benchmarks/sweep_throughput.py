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
import dataclasses
import logging
import os
import tempfile
import time
from pathlib import Path

import cudnn_lab as cl
from cudnn_lab import cache_dir
from cudnn_lab.gpu.device import end_program
from _shared import write_json

NEEDED = {2: 1.8, 4: 3.4}


def grid(points: int) -> tuple[cl.Spec, dict[str, list]]:
    base = cl.ConvSpec(n=16, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    ns = [1, 2, 4, 8, 16, 32, 48, 64][: max(1, points // 6)]
    return base, {"n": ns, "layout": ["NCHW", "NHWC"], "dtype": ["fp16", "bf16", "fp32"]}


@dataclasses.dataclass(frozen=True)
class Timed:
    """One sweep timed: wall seconds, points and points that ran, and where the time went: the workers' seconds
    inside points (the sum of the sweep's point_s), the longest point, and the share of plans with kernels listed."""

    seconds: float
    points: int
    ran: int
    busy_s: float
    longest_s: float
    with_kernels: float
    #: seconds each point took in its worker, by label, in the order the points finished
    point_s: tuple[tuple[str, float], ...] = ()

    def line(self, what: str, workers: int = 1) -> str:
        """One row: the rate, the mean seconds per point inside a worker (grows if workers slow each other down) and
        the workers' busy share of the wall time (falls with idle and tail time)."""
        return (f"{what:<44} {self.points} points ({self.ran} ran) in {self.seconds:6.1f} s = "
                f"{60 * self.points / self.seconds:6.1f} points/min | {self.busy_s / max(self.points, 1):.3f} s/point "
                f"in a worker (longest {self.longest_s:.2f} s), workers busy "
                f"{self.busy_s / (workers * self.seconds):4.0%}, kernels listed for {self.with_kernels:.0%} of plans")

    def busy(self) -> dict[str, float]:
        return {"s": self.busy_s, "max": self.longest_s, "with_kernels": self.with_kernels,
                "point_s": [list(p) for p in self.point_s]}


def timed(spec: cl.Spec, over: dict, executor=None) -> Timed:
    """One sweep into a fresh store, timed."""
    t0 = time.perf_counter()
    frame = cl.sweep(spec=spec, over=over, store=Path(tempfile.mkdtemp()) / "s.parquet", plans="all",
                     progress=False, executor=executor)
    seconds = time.perf_counter() - t0
    nan = float("nan")
    per_point = frame.groupby("point_id")["point_s"].first() if "point_s" in frame else None
    ok = frame[frame["status"] == "ok"] if "status" in frame else frame.iloc[:0]
    # plans whose kernels CUPTI listed (a worker where CUPTI cannot start lists none and says so in its warnings)
    with_kernels = float(ok["kernels"].fillna("").astype(str).str.len().gt(2).mean()) \
        if "kernels" in ok and len(ok) else nan
    labels = frame.groupby("point_id", sort=False).agg(label=("label", "first"), s=("point_s", "first")) \
        if "point_s" in frame and "label" in frame else None
    return Timed(seconds, int(frame["point_id"].nunique()),
                 int(frame.loc[frame["point_status"] == "ok", "point_id"].nunique()),
                 float(per_point.sum()) if per_point is not None else nan,
                 float(per_point.max()) if per_point is not None else nan, with_kernels,
                 tuple((str(r.label), round(float(r.s), 3)) for r in labels.itertuples()) if labels is not None
                 else ())


def with_executor(spec: cl.Spec, over: dict, gpus: list[int], threads: int | None = 1) -> tuple[float, Timed]:
    """(warm-up seconds, the sweep timed) on a GPUExecutor warmed before the clock starts."""
    t0 = time.perf_counter()
    with cl.GPUExecutor(gpus, warm=True, threads=threads) as ex:
        warm_s = time.perf_counter() - t0
        return warm_s, timed(spec, over, ex)


def with_dask(spec: cl.Spec, over: dict, gpus: list[int]) -> tuple[float, Timed, str]:
    """The same through a Dask cluster with one worker per GPU in ``gpus``; also the cluster's kind."""
    import distributed

    from cudnn_lab.sweeps.executors import dask_cluster, warm_dask

    t0 = time.perf_counter()
    cluster = dask_cluster(gpus)
    kind = type(cluster).__name__
    try:
        with distributed.Client(cluster) as client:
            warm_dask(client)
            warm_s = time.perf_counter() - t0
            with client.get_executor() as ex:
                result = timed(spec, over, ex)
    finally:
        cluster.close()
    return warm_s, result, kind


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=24)
    parser.add_argument("--json", help="write the times and speed-ups here (benchmarks/plans.py --sweep reads it)")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask half")
    parser.add_argument("--worker-threads", type=int, help="CPU threads per GPUExecutor worker (default: one; 0: "
                        "its share of the host's cores; the core count shows what oversubscription costs)")
    args = parser.parse_args()
    logging.getLogger("distributed").setLevel(logging.ERROR)
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")  # the workers' own loggers, too
    os.environ[cache_dir.ENV_DIR] = tempfile.mkdtemp(prefix="cudnn_lab_sweep_cache_")
    os.environ.pop(cache_dir.ENV_OFF, None)
    spec, over = grid(args.points)
    count = torch.cuda.device_count()
    device = torch.cuda.get_device_name(0)
    out: dict = {"device": device, "gpus": count, "points": args.points, "times": {}, "speedups": {},
                 "worker_threads": {None: 1, 0: "share"}.get(args.worker_threads, args.worker_threads)}

    cold = timed(spec, over)
    out["times"]["in_process_cold"] = cold.seconds
    out["busy"] = {}
    print(cold.line("one GPU, in this process, cold caches"), flush=True)

    def keep(how: str, key: str, g: int, warm_s: float, result: Timed, label: str, warm_what: str) -> None:
        out["times"][f"{key}_{g}"] = result.seconds
        out["busy"][f"{key}_{g}"] = result.busy()
        print(result.line(label, g) + f" ({warm_what} {warm_s:.1f} s, not counted)", flush=True)
        first = out["times"][f"{key}_1"]
        if g > 1:
            out["speedups"].setdefault(str(g), {})[how] = first / result.seconds

    sizes = sorted({1, count} | ({2} if count >= 2 else set()))
    for g in sizes:
        threads = 1 if args.worker_threads is None else (args.worker_threads or None)  # 0: each worker's share
        warm_s, result = with_executor(spec, over, list(range(g)), threads)
        keep("GPUExecutor", "executor", g, warm_s, result, f"GPUExecutor, {g} warm worker(s)", "warm-up")
    if not args.no_dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            print("Dask: 'distributed' is not installed here; skipped (pip install distributed dask-cuda)")
        else:
            for g in sizes:
                warm_s, result, kind = with_dask(spec, over, list(range(g)))
                keep("Dask", "dask", g, warm_s, result, f"Dask {kind}, {g} warm worker(s)", "start + warm-up")
    print(f"\nspeed-up over one warm worker on {device} (target: >= 1.8x on 2 GPUs, >= 3.4x on 4):")
    for g, by in sorted(out["speedups"].items()):
        for how, x in by.items():
            need = NEEDED.get(int(g))
            verdict = "-" if need is None else ("met" if x >= need else "MISSED")
            print(f"  {g} GPUs, {how:<12} {x:5.2f}x  {verdict}")
    write_json(args.json, out)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
