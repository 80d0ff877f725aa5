"""PyTorch's own op for the same problem, timed on the same inputs: the baseline every plan is compared with."""

from __future__ import annotations

from typing import Any

from ..specs import Spec
from .timing import Timer


def torch_baseline(spec: Spec, inputs: dict[str, Any], timer: Timer) -> dict[str, Any]:
    """PyTorch eager latency for the same op with cudnn.benchmark off and on, and its TF32 settings."""
    import torch

    from ..reference import torch_op

    fn = torch_op(spec, inputs)
    flags = torch.backends.cudnn
    info: dict[str, Any] = {"allow_tf32_cudnn": bool(flags.allow_tf32),
                            "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
    saved = flags.benchmark
    try:
        for key, bench in (("benchmark_off", False), ("benchmark_on", True)):
            flags.benchmark = bench
            try:
                t = timer.time(fn)
                info[f"{key}_ms"], info[f"{key}_iqr_ms"], info[f"{key}_mode"] = t.median_ms, t.iqr_ms, t.mode
            except Exception as e:  # noqa: BLE001 - a baseline that fails is recorded, the run goes on
                info[f"{key}_error"] = " ".join(str(e).split())[:300]
    finally:
        flags.benchmark = saved
    return info
