"""Float data to FP8 and back, with the error quantization alone causes, so a user sees it apart from the kernel's.

``quantize`` multiplies by the scale, clips to the format's max (a saturating cast, as Transformer Engine and
PyTorch's float8 training do: a plain cast would turn e5m2 overflow into inf) and rounds to nearest-even.
``dequantize`` gives the float64 values the FP8 tensor stands for; references are computed from those, so they see
the same inputs the kernel sees. torch is imported inside the functions.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..specs.fp8 import check_scale, descale_of, fp8_format, recommended_scale
from ..specs.records import AsDict

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["Quantized", "QuantError", "torch_fp8_dtype", "amax", "auto_scale", "quantize", "dequantize",
           "quantization_error", "chunks", "CHUNK_ELEMENTS"]


def torch_fp8_dtype(dtype: str) -> torch.dtype:
    """torch's dtype for a kit FP8 dtype name ('fp8_e4m3' -> torch.float8_e4m3fn)."""
    import torch

    return getattr(torch, fp8_format(dtype).torch_name)


def amax(x: torch.Tensor) -> float:
    """Largest finite magnitude in ``x`` (0.0 for an empty tensor); NaN and inf are left out."""
    import torch

    if x.numel() == 0:
        return 0.0
    a = x.detach().abs()
    a = torch.where(torch.isfinite(a), a, torch.zeros((), dtype=a.dtype, device=a.device))
    return float(a.max())


def auto_scale(x: torch.Tensor, dtype: str, margin: int = 0) -> float:
    """The power-of-two scale a spec's ``scale=None`` means: max / amax(x) rounded down (see specs.fp8)."""
    return recommended_scale(amax(x), dtype, margin)


@dataclasses.dataclass(frozen=True)
class Quantized:
    """An FP8 tensor with the scale it was made with and what quantizing did to it."""

    data: Any  # torch.Tensor of an FP8 dtype, with the input's shape and strides
    dtype: str
    scale: float
    amax: float
    #: elements whose |x * scale| exceeded the format's max and were clipped to it
    saturated: int
    #: nonzero elements that became 0 (below half the smallest subnormal after scaling)
    flushed: int

    @property
    def descale(self) -> float:
        """1 / scale: the factor cuDNN multiplies back in (fed as a float tensor)."""
        return descale_of(self.scale)


def quantize(x: torch.Tensor, dtype: str, scale: float | None = None, *, margin: int = 0) -> Quantized:
    """``x`` (any float dtype, device and strides) as FP8 ``dtype`` with ``scale`` (None: ``auto_scale``).

    The product x * scale is formed in float64 for float64 input and in float32 otherwise, clipped to
    [-max, max] and rounded to nearest-even; NaN stays NaN. The result keeps ``x``'s strides, so a column-major
    operand stays column-major.
    """
    import torch

    fmt = fp8_format(dtype)
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise SpecError("x", type(x).__name__ if not isinstance(x, torch.Tensor) else str(x.dtype),
                        "must be a floating-point torch tensor to quantize")
    a = amax(x)
    checked = None if scale is None else check_scale("quantize", "scale", scale)
    s = auto_scale(x, dtype, margin) if checked is None else checked
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    scaled = x.detach().to(work) * s
    over = scaled.abs() > fmt.max  # NaN compares False: NaN is not counted as saturated
    clipped = scaled.clamp(-fmt.max, fmt.max)
    out = torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=torch_fp8_dtype(dtype), device=x.device)
    out.copy_(clipped)
    flushed = (out.to(work) == 0) & (scaled != 0)
    return Quantized(data=out, dtype=dtype, scale=s, amax=a, saturated=int(over.sum()), flushed=int(flushed.sum()))


def dequantize(q: Quantized | torch.Tensor, descale: float | None = None) -> torch.Tensor:
    """The float64 values an FP8 tensor stands for: q * descale (``descale`` defaults to the Quantized's own)."""
    import torch

    if isinstance(q, Quantized):
        d = q.descale if descale is None else descale
        data = q.data
    else:
        if descale is None:
            raise SpecError("descale", None, "must be given when dequantizing a bare tensor (1 / its scale)")
        d, data = descale, q
    if not (isinstance(d, (int, float)) and not isinstance(d, bool) and math.isfinite(d) and d > 0):
        raise SpecError("descale", d, "must be a positive finite number (1 / the quantization scale)")
    return data.to(torch.float64) * float(d)


@dataclasses.dataclass(frozen=True)
class QuantError(AsDict):
    """How far the FP8 values are from the float data they came from (float64 arithmetic)."""

    dtype: str
    scale: float
    amax: float
    rel_l2: float
    max_abs: float
    #: largest |error| / |x| over elements with |x * scale| at or above the format's smallest normal
    max_rel_normal: float
    saturated: int
    flushed: int
    numel: int

    def summary(self) -> str:
        """One line: the error and what clipped or vanished."""
        parts = [f"{self.dtype} scale {self.scale:g} (amax {self.amax:.4g}): rel L2 {self.rel_l2:.2e}, "
                 f"max abs {self.max_abs:.2e}, max rel {self.max_rel_normal:.2e} (normal range)"]
        if self.saturated:
            parts.append(f"{self.saturated} of {self.numel} clipped to +-{fp8_format(self.dtype).max:g}")
        if self.flushed:
            parts.append(f"{self.flushed} of {self.numel} flushed to 0")
        return "; ".join(parts)


#: Elements of float64 work per chunk when the error of a large tensor is computed (256 MiB of float64 each).
CHUNK_ELEMENTS = 1 << 25


def chunks(x: torch.Tensor, limit: int = CHUNK_ELEMENTS, dim: int | None = None) -> list[tuple[int, int, int]]:
    """(dim, start, length) pieces of ``x`` along ``dim`` (default: its longest) of at most about ``limit`` elements
    each, so float64 work on a tensor too large for float64 at once runs piece by piece (one piece when it fits)."""
    if x.numel() == 0 or x.dim() == 0:
        return [(0, 0, 1 if x.dim() else 0)]
    d = max(range(x.dim()), key=lambda i: x.shape[i]) if dim is None else dim
    size = int(x.shape[d])
    per = max(1, x.numel() // max(size, 1))
    step = max(1, limit // per)
    return [(d, s, min(step, size - s)) for s in range(0, size, step)] or [(d, 0, 0)]


def quantization_error(x: torch.Tensor, q: Quantized, *, limit: int = CHUNK_ELEMENTS) -> QuantError:
    """Error of ``dequantize(q)`` against the float data ``x`` it was made from, on ``x``'s device (a GPU's data stays
    there), in float64 pieces of at most about ``limit`` elements (:func:`chunks`) so a large tensor never needs a
    whole float64 copy; the sums are accumulated in float64 (one piece: exactly the single-pass figures)."""
    import torch

    if tuple(x.shape) != tuple(q.data.shape):
        raise SpecError("x", list(x.shape), f"must have the quantized tensor's shape {list(q.data.shape)}")
    fmt = fp8_format(q.dtype)
    data = q.data.to(x.device)
    err_sq = ref_sq = torch.zeros((), dtype=torch.float64, device=x.device)
    norms: tuple[float, float] | None = None
    max_abs = max_rel = 0.0
    pieces = chunks(x, limit)
    for d, start, length in pieces:
        xs = x.detach().narrow(d, start, length) if x.dim() else x.detach()
        qs = data.narrow(d, start, length) if x.dim() else data
        e = xs.to(torch.float64)
        diff = (qs.to(torch.float64) * float(q.descale) - e).abs()
        finite = torch.isfinite(e)
        diff = torch.where(finite, diff, torch.zeros((), dtype=diff.dtype, device=diff.device))
        ref = torch.where(finite, e, torch.zeros_like(e))
        if len(pieces) == 1:  # the single-pass figures, bit for bit
            norms = float(torch.linalg.vector_norm(diff)), float(torch.linalg.vector_norm(ref))
        else:
            err_sq = err_sq + (diff * diff).sum()
            ref_sq = ref_sq + (ref * ref).sum()
        if diff.numel():
            max_abs = max(max_abs, float(diff.max()))
        normal = finite & (e.abs() * q.scale >= fmt.min_normal)
        if bool(normal.any()):
            max_rel = max(max_rel, float((diff[normal] / e[normal].abs()).max()))
    err, ref_norm = norms if norms is not None else (float(torch.sqrt(err_sq)), float(torch.sqrt(ref_sq)))
    rel_l2 = err / ref_norm if ref_norm > 0 else (0.0 if err == 0 else math.inf)
    return QuantError(dtype=q.dtype, scale=q.scale, amax=q.amax, rel_l2=rel_l2, max_abs=max_abs,
                      max_rel_normal=max_rel, saturated=q.saturated, flushed=q.flushed, numel=x.numel())
