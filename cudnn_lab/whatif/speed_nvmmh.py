"""NVIDIA's GEMM estimator as an optional, labelled predictor of the forecast (issue 35, predictor (c)).

``nvidia-matmul-heuristics`` (PyPI, NVIDIA; the kit's optional extra ``estimator``) answers, on a CPU and without a
GPU, which CUTLASS configuration it would run for a GEMM on a predefined GPU and how long that would take. It knows
nothing of cuDNN's plan: its time is the problem's, not a plan's. Where the package is not installed every function
here answers None and the forecast and its validation leave the predictor out (and say so).

Two uses, each validated on the shipped H100/H200 matmul recordings (no fitted parameter, so no hold-out needed):
``nvidia_estimator`` is the estimator's own time on the target; ``nvidia_estimator_ratio`` is the measured source
time scaled by the estimator's target/source ratio.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

#: The kit's GPU facts key -> the estimator's predefined GPU (its ``NvMatmulHeuristicsNvidiaGpu`` member).
GPUS = {"h100": "H100_SXM", "h200": "H200_SXM", "a100_80gb_pcie": "A100_PCIE_80GB", "l40s": "L40S", "b200": "B200",
        "gb200": "GB200_NVL", "gb300": "GB300_NVL", "rtx_pro_6000": "RTX_PRO_6000"}
#: The spec's input dtype -> the estimator's precision string (inputs, compute, output; its header's letters: T
#: bfloat16, H half, S single, Q FP8 E4M3, R FP8 E5M2).
PRECISIONS = {"bf16": "TST", "fp16": "HSH", "fp32": "SSS", "fp8_e4m3": "QQTST", "fp8_e5m2": "RRTST"}
LABEL = "nvidia-matmul-heuristics"


@lru_cache(maxsize=1)
def _module() -> Any:
    try:
        import nvMatmulHeuristics
    except (ImportError, OSError):
        return None
    return nvMatmulHeuristics


def available() -> bool:
    """Whether the optional ``nvidia-matmul-heuristics`` package imports here."""
    return _module() is not None


def version() -> str | None:
    """The installed estimator's package version, or None where it is not installed."""
    if not available():
        return None
    return _dist_version()


@lru_cache(maxsize=1)
def _dist_version() -> str | None:
    """The package's version from its metadata, looked up once (each look-up scans the installed distributions, and
    the forecast's validation names it on every matmul row)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version
    try:
        return dist_version("nvidia-matmul-heuristics")
    except PackageNotFoundError:
        return None


@lru_cache(maxsize=16)
def _handle(gpu_key: str) -> Any:
    mod = _module()
    return mod.NvMatmulHeuristicsInterfaceEx(
        backend=mod.NvMatmulHeuristicsTarget.CUTLASS3, flags=mod.NvMatmulHeuristicsFlags.PERF_MODEL_BASED_AUTO_TUNING,
        gpu=getattr(mod.NvMatmulHeuristicsNvidiaGpu, GPUS[gpu_key]))


# the estimator's handles are released while its library is still loaded (not at interpreter teardown, where its
# destructor finds the library gone and prints a TypeError)
atexit.register(_handle.cache_clear)


@lru_cache(maxsize=256)
def _estimate(gpu_key: str, m: int, n: int, k: int, batch: int, layout: str, precision: str) -> float | None:
    mod = _module()
    h = _handle(gpu_key)
    problem = h.makeNvMatmulHeuristicsProblem(m, n, k, getattr(mod.NvMatmulHeuristicsMatmulLayout, layout), batch)
    found = h.get(problem, 1, precision=precision)
    runtime = float(found[0]["runtime"]) if found else 0.0
    return runtime * 1e3 if runtime > 0 else None


def estimate_ms(spec: Mapping[str, Any], gpu_key: str) -> float | None:
    """The estimator's time (ms) of the GEMM ``spec`` (a matmul spec's dict) on ``gpu_key``; None where the package
    is not installed, the spec is not a matmul, or the GPU or dtype is not one the estimator knows."""
    if not available() or spec.get("op") != "matmul" or gpu_key not in GPUS:
        return None
    precision = PRECISIONS.get(str(spec.get("dtype")))
    if precision is None:
        return None
    layout = ("T" if spec.get("transpose_a") else "N") + ("T" if spec.get("transpose_b") else "N") + "_ROW_MAJOR"
    return _estimate(gpu_key, int(spec["m"]), int(spec["n"]), int(spec["k"]), int(spec.get("batch") or 1), layout,
                     precision)


def predictions(spec: Mapping[str, Any], src_key: str, tgt_key: str, source_ms: float
                ) -> tuple[dict[str, float], dict[str, str]]:
    """The estimator's two predictors for ``spec`` moved from ``src_key`` (measured ``source_ms``) to ``tgt_key``,
    with what each assumed; empty where the estimator cannot answer."""
    tgt = estimate_ms(spec, tgt_key)
    if tgt is None:
        return {}, {}
    pred = {"nvidia_estimator": tgt}
    notes = {"nvidia_estimator": (f"{LABEL} {version() or ''} on {GPUS[tgt_key]}: its own CUTLASS pick for the GEMM "
                                  f"({PRECISIONS[str(spec['dtype'])]}), not cuDNN's plan; the problem's time")}
    src = estimate_ms(spec, src_key)
    if src is not None:
        pred["nvidia_estimator_ratio"] = source_ms * tgt / src
        notes["nvidia_estimator_ratio"] = (f"the measured source time times {LABEL}'s {GPUS[tgt_key]}/"
                                           f"{GPUS.get(src_key, src_key)} ratio ({tgt / src:.3f})")
    return pred, notes
