"""Sweep throughput: points per minute with all-plan timing on one GPU, and the speedup of one worker per GPU.

Runs the same grid twice into fresh stores: in this process on GPU 0, then on a GPUExecutor with one worker
process per visible GPU (the workers' start-up, importing torch and cuDNN, is counted). Prints a table.

Run on a machine with one or more GPUs:  python benchmarks/sweep_throughput.py [--points 24]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cudnn_lab as cl


def grid(points: int) -> tuple[cl.Spec, dict[str, list]]:
    base = cl.ConvSpec(n=16, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    ns = [1, 2, 4, 8, 16, 32, 48, 64][: max(1, points // 6)]
    return base, {"n": ns, "layout": ["NCHW", "NHWC"], "dtype": ["fp16", "bf16", "fp32"]}


def timed(**kwargs) -> tuple[float, int]:
    t0 = time.perf_counter()
    frame = cl.sweep(**kwargs, store=Path(tempfile.mkdtemp()) / "s.parquet", plans="all", progress=False)
    return time.perf_counter() - t0, int(frame["point_id"].nunique())


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=24)
    args = parser.parse_args()
    spec, over = grid(args.points)
    gpus = torch.cuda.device_count()
    one_s, n = timed(spec=spec, over=over)
    print(f"one GPU, in process: {n} points in {one_s:.1f} s = {60 * n / one_s:.1f} points/min")
    with cl.GPUExecutor() as ex:
        many_s, n2 = timed(spec=spec, over=over, executor=ex)
    print(f"{gpus} worker(s), one per GPU: {n2} points in {many_s:.1f} s = {60 * n2 / many_s:.1f} points/min; "
          f"speedup {one_s / many_s:.2f}x on {torch.cuda.get_device_name(0)} x{gpus}")


if __name__ == "__main__":
    main()
