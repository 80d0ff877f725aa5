"""PyTorch's own op for the same problem, timed on the same inputs: the baseline every plan is compared with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..reference.moe import extra_baselines as _moe_baselines
from ..registry import FamilyRegistry
from ..specs import Spec
from ..specs.moe import MoeSpec
from .timing import Timer
from ..reference import torch_op

#: A family's PyTorch baselines beside its eager op (name -> zero-argument op), each timed once with cudnn.benchmark
#: off and stored as ``<name>_ms`` / ``<name>_iqr_ms`` (or ``<name>_error``) next to the eager op's times.
EXTRA_BASELINES: FamilyRegistry[Callable[[Any, dict[str, Any]], dict[str, Callable[[], Any]]]] = FamilyRegistry(
    "extra PyTorch baselines")
# MoE: one dense GEMM of the same FLOPs and torch._grouped_mm, so the cost of the routing shows (reference/moe.py).
EXTRA_BASELINES.add(MoeSpec, _moe_baselines)


def torch_baseline(spec: Spec, inputs: dict[str, Any], timer: Timer) -> dict[str, Any]:
    """PyTorch eager latency for the same op with cudnn.benchmark off and on, and its TF32 settings."""
    import torch

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
    extras = EXTRA_BASELINES.get(spec)
    for name, op in (extras(spec, inputs) if extras is not None else {}).items():
        try:
            t = timer.time(op)
            info[f"{name}_ms"], info[f"{name}_iqr_ms"], info[f"{name}_mode"] = t.median_ms, t.iqr_ms, t.mode
        except Exception as e:  # noqa: BLE001 - as above: recorded, the run goes on
            info[f"{name}_error"] = " ".join(str(e).split())[:300]
    return info
