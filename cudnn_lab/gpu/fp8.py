"""FP8 on the GPU: refuse a problem this GPU or cuDNN cannot run before anything is built (naming the rule), and
measure the FP8 compute roof (torch._scaled_mm), so an FP8 plan's share of the roofline is against the right roof.
"""

from __future__ import annotations

import datetime
import statistics
from typing import Any

from ..errors import UnsupportedGraphError
from ..specs import Spec
from ..specs.fp8 import is_fp8, unmet
from .timing import Timer, TimingOptions

__all__ = ["unmet_requirements", "check_requirements", "ceiling_dtype", "measure_fp8_record"]


def _cc(info: dict[str, Any]) -> tuple[int, int]:
    major, _, minor = str(info.get("compute_capability", "0.0")).partition(".")
    return int(major or 0), int(minor or 0)


def _version(value: Any) -> str:
    """91900 -> '9.19.0' (other values as given)."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value or "")
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def unmet_requirements(spec: Spec, info: dict[str, Any]) -> list[str]:
    """Sentences naming each of ``spec.gpu_requirements()`` this GPU (``device_info``) or its cuDNN does not meet."""
    reqs = getattr(spec, "gpu_requirements", lambda: ())()
    version = int(info.get("cudnn_backend") or 0)
    return [msg for req in reqs if (msg := unmet(req, _cc(info), version)) is not None]


def check_requirements(spec: Spec, info: dict[str, Any]) -> None:
    """UnsupportedGraphError (GPU and cuDNN named) when the problem needs more than this GPU and cuDNN offer."""
    missing = unmet_requirements(spec, info)
    if missing:
        raise UnsupportedGraphError(f"{spec.label()}: {'; '.join(missing)}", device=str(info.get("gpu", "")),
                                    cudnn_version=_version(info.get("cudnn_backend")),
                                    hint=" Run it on a GPU and cuDNN that have it, or change the field the rule "
                                         "names (see the spec's gpu_requirements()).")


def ceiling_dtype(dtype: str) -> str:
    """The roof a dtype is measured against: its own for fp16/bf16, FP8's (e4m3 and e5m2 share Hopper's FP8 tensor
    core rate) for both FP8 formats, TF32's for the rest."""
    if is_fp8(dtype):
        return "fp8_e4m3"
    return dtype if dtype in ("fp16", "bf16") else "fp32"


def measure_fp8_record(device: int, size: int, copy_mib: int) -> dict[str, Any]:
    """A Ceilings record for FP8: torch._scaled_mm of size^3 e4m3 operands (random data, B column-major, bf16 out),
    timed with and without fast accumulation (the faster kept: the highest rate the GPU reaches through a library),
    and a device copy of ``copy_mib`` MiB for the bandwidth roof."""
    import torch

    from .ceilings import Ceilings

    dev = f"cuda:{device}"
    with torch.cuda.device(device):
        stream = torch.cuda.Stream(device)
        timer = Timer(stream, TimingOptions(mode="events", min_samples=10, max_samples=30, time_cap_s=2.0))
        gen = torch.Generator(device=dev).manual_seed(0)
        a = (torch.rand(size, size, device=dev, generator=gen) * 2 - 1).to(torch.float8_e4m3fn)
        b = (torch.rand(size, size, device=dev, generator=gen) * 2 - 1).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        results = {fast: timer.time(lambda f=fast: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                                      out_dtype=torch.bfloat16, use_fast_accum=f))
                   for fast in (False, True)}
        del a, b
        n = copy_mib << 20
        src = torch.empty(n, dtype=torch.uint8, device=dev).random_(0, 255)
        dst = torch.empty_like(src)
        cp = timer.time(lambda: dst.copy_(src))
        del src, dst
    fast = min(results, key=lambda f: results[f].median_ms)
    mm = results[fast]
    flop = 2 * size**3 / 1e9  # FLOP per ms / 1e9 = TFLOP/s
    return Ceilings(dtype="fp8_e4m3", tflops=flop / mm.median_ms, gbps=2 * n / 1e6 / cp.median_ms,
                    matmul_size=size, copy_bytes=n, tflops_iqr=flop / mm.q1_ms - flop / mm.q3_ms,
                    gbps_iqr=2 * n / 1e6 / cp.q1_ms - 2 * n / 1e6 / cp.q3_ms,
                    samples=int(statistics.median([mm.samples, cp.samples])),
                    measured=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    ).to_dict() | {"kernel": f"torch._scaled_mm (use_fast_accum={fast})"}
