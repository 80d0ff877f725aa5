"""Roofline ceilings measured on the GPU in use: a large matmul for compute, a large device copy for bandwidth.

Measured once per device and dtype per process; datasheet numbers are never used.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from .timing import Timer, TimingOptions


@dataclasses.dataclass(frozen=True)
class Ceilings:
    """Peak TFLOP/s of a large matmul in ``dtype`` (TF32 for fp32) and GB/s of a device copy (read + write)."""

    dtype: str
    tflops: float
    gbps: float
    matmul_size: int
    copy_bytes: int

    @property
    def ridge_flop_per_byte(self) -> float:
        """Arithmetic intensity where the memory roof meets the compute roof."""
        return self.tflops * 1e12 / (self.gbps * 1e9)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@functools.cache
def measure_ceilings(dtype: str = "fp16", device: int = 0, size: int = 8192, copy_mib: int = 1024) -> Ceilings:
    """Time torch.matmul of size^3 and a copy of ``copy_mib`` MiB on ``device`` (cached for the process)."""
    import torch

    tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    stream = torch.cuda.Stream(device)
    timer = Timer(stream, TimingOptions(mode="events", min_samples=5, max_samples=20, time_cap_s=2.0))
    gen = torch.Generator(device=f"cuda:{device}").manual_seed(0)
    a = torch.rand(size, size, device=f"cuda:{device}", generator=gen).to(tdt)
    b = torch.rand(size, size, device=f"cuda:{device}", generator=gen).to(tdt)
    c = torch.empty(size, size, device=f"cuda:{device}", dtype=tdt)
    # cuDNN's "fp32" engines may use TF32 tensor cores, so the fp32 compute roof is TF32's.
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        mm = timer.time(lambda: torch.matmul(a, b, out=c))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    del a, b, c
    n = copy_mib << 20
    src = torch.empty(n, dtype=torch.uint8, device=f"cuda:{device}").random_(0, 255)
    dst = torch.empty_like(src)
    cp = timer.time(lambda: dst.copy_(src))
    del src, dst
    tflops = 2 * size**3 / (mm.median_ms * 1e-3) / 1e12
    gbps = 2 * n / (cp.median_ms * 1e-3) / 1e9
    return Ceilings(dtype=dtype, tflops=tflops, gbps=gbps, matmul_size=size, copy_bytes=n)
