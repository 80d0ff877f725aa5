"""How close a result is to its float64 reference: tolerance bands per dtype, error metrics, the TF32 caveat.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from .errors import SpecError
from .specs import spec_classes
from .specs.fp8 import Fp8Operands
from .specs.tolerance import CUDNN_SOURCE, TORCH_SOURCE, ToleranceBand

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from .specs import Spec

__all__ = ["ToleranceBand", "TOLERANCES", "TOLERANCES_BY_OP", "FP8_GEMM_BANDS", "tolerance_bands", "band_args",
           "REL_FLOOR", "ErrorMetrics", "compare", "tf32_note", "VERDICT_METRIC_TITLE", "outside_share",
           "band_rule"]


_TORCH, _CUDNN = TORCH_SOURCE, CUDNN_SOURCE

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

# FP8. An FP8 kernel is compared with a float64 reference computed from the same FP8 values (quantization is
# reported apart), so its error is the accumulation's and the output's rounding. cuDNN's own FP8 matmul and conv
# samples check no numbers: the second band of an FP8 GEMM or convolution is PyTorch's, from test_matmul_cuda.py
# ``test_scaled_mm_vs_emulated`` (torch._scaled_mm against an emulation on the same FP8 values): 7e-2 for fp16/bf16
# outputs, 3e-3 for fp32. The first band is torch.testing's default of the output dtype.
_SCALED_MM = "PyTorch's FP8 GEMM test tolerance (test_matmul_cuda.py, test_scaled_mm_vs_emulated)"
FP8_GEMM_BANDS: dict[str, dict[str, ToleranceBand]] = {
    "bf16": {"torch": ToleranceBand(1.6e-2, 1e-5, _TORCH + " for the bf16 output"),
             "cudnn": ToleranceBand(7e-2, 7e-2, _SCALED_MM)},
    "fp16": {"torch": ToleranceBand(1e-3, 1e-5, _TORCH + " for the fp16 output"),
             "cudnn": ToleranceBand(7e-2, 7e-2, _SCALED_MM)},
    "fp32": {"torch": ToleranceBand(1.3e-6, 1e-5, _TORCH + " for the fp32 output"),
             "cudnn": ToleranceBand(3e-3, 3e-3, _SCALED_MM)},
}
for _dt in ("fp8_e4m3", "fp8_e5m2"):
    TOLERANCES[_dt] = FP8_GEMM_BANDS["bf16"]  # what plots show per dtype: the GEMM's default bf16 output

#: Per-op replacements of a dtype's bands, band key (an op, or a variant such as 'sdpa_bwd') -> dtype -> bands:
#: derived from each family's ``Spec.tolerances`` (the family owns why its op takes a looser band).
TOLERANCES_BY_OP: dict[str, dict[str, dict[str, ToleranceBand]]] = {
    key: {dt: dict(bands) for dt, bands in by_dtype.items()}
    for cls in spec_classes().values() for key, by_dtype in cls.tolerances.items()}
#: The families whose FP8 bands follow the output dtype (FP8_GEMM_BANDS): the FP8 GEMMs and convolutions.
_FP8_GEMM_OPS = frozenset(op for op, cls in spec_classes().items() if issubclass(cls, Fp8Operands))


def tolerance_bands(dtype: str, op: str | None = None, out_dtype: str | None = None) -> dict[str, ToleranceBand]:
    """The 'torch' and 'cudnn' bands of ``dtype``, with ``op``'s replacements (TOLERANCES_BY_OP) where it has any.

    An FP8 GEMM or convolution (``dtype`` FP8, ``op`` matmul or conv) takes the bands of its ``out_dtype``
    (FP8_GEMM_BANDS); FP8 attention its own (op 'sdpa', or 'sdpa_bwd' for the backward)."""
    if dtype in ("fp8_e4m3", "fp8_e5m2") and op in _FP8_GEMM_OPS and out_dtype in FP8_GEMM_BANDS:
        return dict(FP8_GEMM_BANDS[out_dtype])
    by_op = TOLERANCES_BY_OP.get(op or "", {}).get(dtype, {})
    return {**TOLERANCES[dtype], **by_op}


#: What a band's verdict reads (ErrorMetrics.passed_*): the share of output elements outside it; a plan passes when
#: none is. Plots of the verdict plot this, not rel L2 (a rel L2 under rtol can still fail element by element).
VERDICT_METRIC_TITLE = "share of output elements outside cuDNN's band"


def outside_share(within: Any) -> float:
    """The verdict's metric from a stored ``within_*`` share: 1 - within (NaN where not checked)."""
    try:
        value = float(within)
    except (TypeError, ValueError):
        return math.nan
    return 1.0 - value if math.isfinite(value) else math.nan


def band_rule(band: ToleranceBand) -> str:
    """The per-element rule of ``band`` in words, for a figure's pass line: '|out - ref| <= 0.001 + 0.001·|ref|'."""
    return f"|out − ref| ≤ {band.atol:g} + {band.rtol:g}·|ref|"


def band_args(spec: Spec) -> dict[str, Any]:
    """The keywords :func:`compare` takes for ``spec``'s outputs: its dtype, op ('sdpa_bwd' for an attention
    backward) and, for FP8, the output dtype that picks the bands."""
    return spec.tolerance_args()


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
    out_dtype: str | None = None  # an FP8 problem's output dtype, which picks its bands

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (worst_index as a list)."""
        out = dataclasses.asdict(self)
        out["worst_index"] = list(self.worst_index)
        return out

    def summary(self) -> str:
        """One line for a notebook or a log: the errors, both bands' verdicts and any NaN/Inf."""
        idx = ", ".join(map(str, self.worst_index))
        bands = tolerance_bands(self.dtype, self.op, self.out_dtype)
        parts = [
            f"{self.dtype}: rel L2 {self.rel_l2:.2e}, max abs {self.max_abs:.2e} at [{idx}] "
            f"({self.worst_actual:.6g} vs {self.worst_expected:.6g}), max rel {self.max_rel:.2e}",
            _verdict("PyTorch's default", self.within_torch, self.passed_torch, bands["torch"]),
            _verdict("cuDNN's test tolerance" if bands["cudnn"].source.startswith(_CUDNN) else bands["cudnn"].source,
                     self.within_cudnn, self.passed_cudnn, bands["cudnn"]),
        ]
        if self.nan_count or self.inf_count:
            parts.append(f"{self.nan_count} NaN, {self.inf_count} Inf of {self.numel}")
        return "; ".join(parts)


def _verdict(name: str, share: float, passed: bool, band: ToleranceBand) -> str:
    return (f"{100 * share:.2f}% within {name} (rtol {band.rtol:g}, atol {band.atol:g}) "
            f"{'PASS' if passed else 'FAIL'}")


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index tuple of element ``flat`` of a C-ordered tensor of ``shape``."""
    out = []
    for d in reversed(shape):
        flat, r = divmod(flat, max(int(d), 1))
        out.append(r)
    return tuple(reversed(out))


def compare(actual: torch.Tensor, expected: torch.Tensor, dtype: str, op: str | None = None,
            out_dtype: str | None = None) -> ErrorMetrics:
    """Error metrics of ``actual`` (any float dtype, any device) against the float64 reference ``expected``.

    Computed in float64 on ``actual``'s device; only scalars come back to the host. ``dtype`` ('fp16', 'bf16',
    'fp32', 'fp64') picks the tolerance bands: it is the dtype the computation claimed to run in. ``op`` (a spec's
    op, e.g. 'sdpa') swaps in that op's bands from TOLERANCES_BY_OP where it has any; ``out_dtype`` picks an FP8
    problem's bands (see :func:`tolerance_bands`; :func:`band_args` gives all three for a spec).
    """
    import torch

    if dtype not in TOLERANCES:
        raise SpecError("dtype", dtype, f"must be one of {', '.join(TOLERANCES)}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise SpecError("actual", list(actual.shape),
                        f"must have the reference's shape {list(expected.shape)} to be compared with it")
    shape = tuple(actual.shape)
    numel = actual.numel()
    bands = tolerance_bands(dtype, op, out_dtype)
    if numel == 0:
        return ErrorMetrics(0.0, 0.0, 0.0, (), math.nan, math.nan, 1.0, 1.0, 0, 0, 0, dtype, True, True, op,
                            out_dtype)

    a = actual.detach().to(torch.float64)
    e = expected.detach().to(device=a.device, dtype=torch.float64)
    diff = (a - e).abs()
    # Matching infinities agree (as torch.testing says); any other non-finite error counts as +inf.
    diff = torch.where(a == e, torch.zeros((), dtype=diff.dtype, device=diff.device), diff)
    diff = torch.nan_to_num(diff, nan=math.inf, posinf=math.inf)
    abs_e = e.abs()
    flat_diff = diff.reshape(-1)
    flat = torch.argmax(flat_diff)

    def count_within(band: ToleranceBand) -> Any:
        return (diff <= band.atol + band.rtol * abs_e).sum()

    # Every scalar computed where the data is and brought back at once (one synchronization, not eleven).
    scalars = torch.stack([t.to(torch.float64) for t in (
        torch.isnan(a).sum(), torch.isinf(a).sum(), count_within(bands["torch"]), count_within(bands["cudnn"]),
        flat, flat_diff[flat], (diff / (abs_e + REL_FLOOR)).max(), torch.linalg.vector_norm(e),
        torch.linalg.vector_norm(diff), a.reshape(-1)[flat], e.reshape(-1)[flat])]).tolist()
    nan_count, inf_count = int(scalars[0]), int(scalars[1])
    within_torch, within_cudnn = scalars[2] / numel, scalars[3] / numel
    worst_index = _unravel(int(scalars[4]), tuple(shape))  # not torch.unravel_index: its first call imports sympy
    max_abs, max_rel, ref_norm, err_norm = scalars[5], scalars[6], scalars[7], scalars[8]
    rel_l2 = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)

    finite = nan_count == 0 and inf_count == 0
    return ErrorMetrics(
        rel_l2=rel_l2, max_abs=max_abs, max_rel=max_rel, worst_index=worst_index,
        worst_actual=scalars[9], worst_expected=scalars[10],
        within_torch=within_torch, within_cudnn=within_cudnn, nan_count=nan_count, inf_count=inf_count,
        numel=numel, dtype=dtype,
        passed_torch=finite and within_torch == 1.0, passed_cudnn=finite and within_cudnn == 1.0, op=op,
        out_dtype=out_dtype,
    )


def tf32_note(spec: Spec | str) -> str | None:
    """A plain-words note on TF32 when the problem is fp32 (else None): why fp32 errors near 1e-4 are not a bug."""
    dtype = spec if isinstance(spec, str) else spec.tolerance_args()["dtype"]
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
