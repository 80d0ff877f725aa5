"""FP8 on the GPU: refuse a problem this GPU or cuDNN cannot run before anything is built (naming the rule); the FP8
compute roof (torch._scaled_mm) is measured in ceilings.py, so an FP8 plan's share of the roofline is against it.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnsupportedGraphError
from ..specs import Spec
from ..specs.fp8 import is_fp8, unmet
from ..reference import quantization_report
from ..reference.fp8 import keep_report, kept_report

__all__ = ["unmet_requirements", "check_requirements", "ceiling_dtype", "quantization_figures"]


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
    reqs = spec.gpu_requirements()
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



def quantization_figures(spec: Spec, inputs: Any, seed: int) -> dict[str, Any] | None:
    """The quantization report of an FP8 problem (``reference.quantization_report``; None for others), computed once
    per (spec, seed) in this process and kept (``reference.fp8.kept_report``): a repeated run returns the same
    figures without redoing the float64 work. ``inputs`` are the session's, made for ``seed``."""
    found = kept_report(spec, seed)
    if found is not None:
        return found
    report = quantization_report(spec, inputs, seed=seed)
    if report:
        keep_report(spec, seed, report)
    return report
