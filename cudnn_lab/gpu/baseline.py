"""PyTorch's own op for the same problem, timed on the same inputs: the baseline every plan is compared with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..reference.moe import extra_baselines as _moe_baselines
from ..reference.sdpa import backend_ops as _sdpa_backends
from ..registry import FamilyRegistry
from ..specs import Spec
from ..specs.moe import MoeSpec
from ..specs.sdpa import SdpaSpec
from .timing import Timer
from ..reference import torch_op

#: A family's PyTorch baselines beside its eager op (name -> zero-argument op), each timed once with cudnn.benchmark
#: off and stored as ``<name>_ms`` / ``<name>_iqr_ms`` (or ``<name>_error``) next to the eager op's times.
EXTRA_BASELINES: FamilyRegistry[Callable[[Any, dict[str, Any]], dict[str, Callable[[], Any]]]] = FamilyRegistry(
    "extra PyTorch baselines")
# MoE: one dense GEMM of the same FLOPs and torch._grouped_mm, so the cost of the routing shows (reference/moe.py).
EXTRA_BASELINES.add(MoeSpec, _moe_baselines)

#: A family's PyTorch backends, each forced alone (name -> zero-argument op), timed only when asked
#: (``RunOptions(backends=True)``) and stored like the extra baselines: which backend wins where (issue 38).
BACKEND_BASELINES: FamilyRegistry[Callable[[Any, dict[str, Any]], dict[str, Callable[[], Any]]]] = FamilyRegistry(
    "PyTorch backends")
# Attention: flash, memory-efficient, cuDNN through PyTorch and math (reference/sdpa.py SDPA_BACKENDS).
BACKEND_BASELINES.add(SdpaSpec, _sdpa_backends)


def _time_into(info: dict[str, Any], key: str, op: Callable[[], Any], timer: Timer) -> None:
    """``op``'s median, spread and timing mode as ``<key>_ms`` ... in ``info``, or why it failed as ``<key>_error``
    (a baseline that fails is recorded and the run goes on)."""
    try:
        t = timer.time(op)
        info[f"{key}_ms"], info[f"{key}_iqr_ms"], info[f"{key}_mode"] = t.median_ms, t.iqr_ms, t.mode
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        info[f"{key}_error"] = " ".join(str(e).split())[:300]


def torch_baseline(spec: Spec, inputs: dict[str, Any], timer: Timer, *, backends: bool = False) -> dict[str, Any]:
    """PyTorch eager latency for the same op with cudnn.benchmark off and on, and its TF32 settings; the family's
    extra baselines; with ``backends`` each of the family's PyTorch backends forced alone."""
    import torch

    fn = torch_op(spec, inputs)
    flags = torch.backends.cudnn
    info: dict[str, Any] = {"allow_tf32_cudnn": bool(flags.allow_tf32),
                            "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
    saved = flags.benchmark
    try:
        for key, bench in (("benchmark_off", False), ("benchmark_on", True)):
            flags.benchmark = bench
            _time_into(info, key, fn, timer)
    finally:
        flags.benchmark = saved
    for registry, wanted in ((EXTRA_BASELINES, True), (BACKEND_BASELINES, backends)):
        ops = registry.get(spec) if wanted else None
        for name, op in (ops(spec, inputs) if ops is not None else {}).items():
            _time_into(info, name, op, timer)
    return info
