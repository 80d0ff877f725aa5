"""How close a result is to its float64 reference: tolerance bands per dtype, error metrics, the TF32 caveat.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from .errors import SpecError

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from .specs import Spec

__all__ = ["ToleranceBand", "TOLERANCES", "TOLERANCES_BY_OP", "tolerance_bands", "REL_FLOOR", "ErrorMetrics",
           "compare", "tf32_note"]


@dataclasses.dataclass(frozen=True)
class ToleranceBand:
    """An element passes when |actual - expected| <= atol + rtol * |expected| (torch.testing's rule)."""

    rtol: float
    atol: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return dataclasses.asdict(self)


_TORCH = "torch.testing.assert_close default"
_CUDNN = "cuDNN frontend's test tolerance"

#: Two bands per dtype: ``'torch'`` is torch.testing.assert_close's default (strict: it expects the same
#: algorithm), ``'cudnn'`` the looser band cuDNN's own tests accept for a single op. cuDNN's "fp32" engines may run
#: in TF32 (10-bit mantissa), so its fp32 band is TF32-level, not fp32-level.
TOLERANCES: dict[str, dict[str, ToleranceBand]] = {
    "fp16": {"torch": ToleranceBand(1e-3, 1e-5, _TORCH), "cudnn": ToleranceBand(5e-3, 3e-3, _CUDNN)},
    # bf16 output rounding alone is up to 2**-8 = 3.9e-3 relative, so cuDNN's 5e-3 would fail correct plans
    # against a float64 reference: the bf16 band takes the looser of the two rtols.
    "bf16": {"torch": ToleranceBand(1.6e-2, 1e-5, _TORCH),
             "cudnn": ToleranceBand(1.6e-2, 3e-3, _CUDNN + " (rtol widened to bf16's rounding step)")},
    "fp32": {"torch": ToleranceBand(1.3e-6, 1e-5, _TORCH),
             "cudnn": ToleranceBand(1e-3, 1e-3, _CUDNN + " (TF32 level: cuDNN's fp32 engines may use TF32)")},
    "fp64": {"torch": ToleranceBand(1e-7, 1e-7, _TORCH), "cudnn": ToleranceBand(1e-7, 1e-7, _CUDNN)},
}

#: Per-op replacements of a dtype's bands where cuDNN's own tests of that op accept a looser one. SDPA rounds the
#: softmax P and its gradient dS to fp16/bf16 before the second GEMMs, so sums over many rows (dV of the first keys
#: under a causal mask, GQA's summed dK/dV) carry errors near 1e-2 in bf16; PyTorch's flash attention shows the same.
TOLERANCES_BY_OP: dict[str, dict[str, dict[str, ToleranceBand]]] = {
    "sdpa": {d: {"cudnn": ToleranceBand(2e-2, 2e-2, _CUDNN + " for SDPA")} for d in ("fp16", "bf16")},
}


def tolerance_bands(dtype: str, op: str | None = None) -> dict[str, ToleranceBand]:
    """The 'torch' and 'cudnn' bands of ``dtype``, with ``op``'s replacements (TOLERANCES_BY_OP) where it has any."""
    return {**TOLERANCES[dtype], **TOLERANCES_BY_OP.get(op or "", {}).get(dtype, {})}


#: max_rel divides by |expected| + REL_FLOOR: an exact zero in the reference then gives a large but finite
#: relative error instead of inf or NaN. max_rel is dominated by near-zero references either way, which is why
#: the pass criterion is the band (atol + rtol * |expected|), not max_rel.
REL_FLOOR = 1e-30


@dataclasses.dataclass(frozen=True)
class ErrorMetrics:
    """Agreement of one output with its float64 reference; the worst element is the one with the largest |a - e|.

    A NaN or Inf in the output is never ignored: its error counts as +inf (so rel_l2, max_abs and max_rel are inf,
    worst_index points at it and it sorts last), it is outside every band, and it is counted in nan_count/inf_count.
    """

    rel_l2: float
    max_abs: float
    max_rel: float
    worst_index: tuple[int, ...]
    worst_actual: float
    worst_expected: float
    within_torch: float
    within_cudnn: float
    nan_count: int
    inf_count: int
    numel: int
    dtype: str
    passed_torch: bool
    passed_cudnn: bool
    op: str | None = None  # the op whose bands were used (TOLERANCES_BY_OP), None: the dtype's

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (worst_index as a list)."""
        out = dataclasses.asdict(self)
        out["worst_index"] = list(self.worst_index)
        return out

    def summary(self) -> str:
        """One line for a notebook or a log: the errors, both bands' verdicts and any NaN/Inf."""
        idx = ", ".join(map(str, self.worst_index))
        bands = tolerance_bands(self.dtype, self.op)
        parts = [
            f"{self.dtype}: rel L2 {self.rel_l2:.2e}, max abs {self.max_abs:.2e} at [{idx}] "
            f"({self.worst_actual:.6g} vs {self.worst_expected:.6g}), max rel {self.max_rel:.2e}",
            _verdict("PyTorch's default", self.within_torch, self.passed_torch, bands["torch"]),
            _verdict("cuDNN's test tolerance", self.within_cudnn, self.passed_cudnn, bands["cudnn"]),
        ]
        if self.nan_count or self.inf_count:
            parts.append(f"{self.nan_count} NaN, {self.inf_count} Inf of {self.numel}")
        return "; ".join(parts)


def _verdict(name: str, share: float, passed: bool, band: ToleranceBand) -> str:
    return (f"{100 * share:.2f}% within {name} (rtol {band.rtol:g}, atol {band.atol:g}) "
            f"{'PASS' if passed else 'FAIL'}")


def compare(actual: torch.Tensor, expected: torch.Tensor, dtype: str, op: str | None = None) -> ErrorMetrics:
    """Error metrics of ``actual`` (any float dtype, any device) against the float64 reference ``expected``.

    Computed in float64 on ``actual``'s device; only scalars come back to the host. ``dtype`` ('fp16', 'bf16',
    'fp32', 'fp64') picks the tolerance bands: it is the dtype the computation claimed to run in. ``op`` (a spec's
    op, e.g. 'sdpa') swaps in that op's bands from TOLERANCES_BY_OP where it has any.
    """
    import torch

    if dtype not in TOLERANCES:
        raise SpecError("dtype", dtype, f"must be one of {', '.join(TOLERANCES)}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise SpecError("actual", list(actual.shape),
                        f"must have the reference's shape {list(expected.shape)} to be compared with it")
    shape = tuple(actual.shape)
    numel = actual.numel()
    bands = tolerance_bands(dtype, op)
    if numel == 0:
        return ErrorMetrics(0.0, 0.0, 0.0, (), math.nan, math.nan, 1.0, 1.0, 0, 0, 0, dtype, True, True, op)

    a = actual.detach().to(torch.float64)
    e = expected.detach().to(device=a.device, dtype=torch.float64)
    nan_count = int(torch.isnan(a).sum())
    inf_count = int(torch.isinf(a).sum())

    diff = (a - e).abs()
    # Matching infinities agree (as torch.testing says); any other non-finite error counts as +inf.
    diff = torch.where(a == e, torch.zeros((), dtype=diff.dtype, device=diff.device), diff)
    diff = torch.nan_to_num(diff, nan=math.inf, posinf=math.inf)
    abs_e = e.abs()

    def share_within(band: ToleranceBand) -> float:
        return float((diff <= band.atol + band.rtol * abs_e).sum()) / numel

    within_torch = share_within(bands["torch"])
    within_cudnn = share_within(bands["cudnn"])

    flat = int(torch.argmax(diff.reshape(-1)))
    worst_index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), shape))
    max_abs = float(diff.reshape(-1)[flat])
    max_rel = float((diff / (abs_e + REL_FLOOR)).max())
    ref_norm = float(torch.linalg.vector_norm(e))
    err_norm = float(torch.linalg.vector_norm(diff))
    rel_l2 = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)

    finite = nan_count == 0 and inf_count == 0
    return ErrorMetrics(
        rel_l2=rel_l2, max_abs=max_abs, max_rel=max_rel, worst_index=worst_index,
        worst_actual=float(a[worst_index]), worst_expected=float(e[worst_index]),
        within_torch=within_torch, within_cudnn=within_cudnn, nan_count=nan_count, inf_count=inf_count,
        numel=numel, dtype=dtype,
        passed_torch=finite and within_torch == 1.0, passed_cudnn=finite and within_cudnn == 1.0, op=op,
    )


def tf32_note(spec: Spec | str) -> str | None:
    """A plain-words note on TF32 when the problem is fp32 (else None): why fp32 errors near 1e-4 are not a bug."""
    dtype = spec if isinstance(spec, str) else getattr(spec, "dtype", None)
    if dtype != "fp32":
        return None
    import torch

    conv_tf32 = bool(torch.backends.cudnn.allow_tf32)
    mm_tf32 = bool(torch.backends.cuda.matmul.allow_tf32)
    return (
        "fp32 may run in TF32 (a 10-bit mantissa) on tensor cores: PyTorch's torch.backends.cudnn.allow_tf32 "
        f"(default True, now {conv_tf32}) makes its fp32 convolutions use TF32, "
        f"torch.backends.cuda.matmul.allow_tf32 (default False, now {mm_tf32}) does the same for its fp32 "
        "matmuls, and cuDNN's own fp32 engines may use TF32 tensor cores. Errors of about 1e-4 to 1e-3 against "
        "the float64 reference are TF32-level, not a bug; true fp32 errors are nearer 1e-6."
    )
