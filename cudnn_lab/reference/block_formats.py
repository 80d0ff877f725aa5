"""Blackwell's block-scaled number formats, emulated in float64: MXFP8 (OCP Microscaling) and NVFP4.

cuDNN runs these formats only on compute capability 10.x; the error they bring is arithmetic and is computed here on
any machine. A block of ``block_size`` consecutive elements along the reduction axis shares one scale:

- **MXFP8** (OCP MX v1.0): FP8 E4M3 or E5M2 elements, blocks of 32, one E8M0 scale per block (a power of two,
  2**-127 to 2**127). The scale is ``2**(floor(log2(block amax)) - emax)`` with ``emax`` the exponent of the
  element format's largest normal (8 for E4M3, 15 for E5M2); elements are ``x / scale`` rounded to nearest-even
  on the element grid and clipped to its max (a block amax with a large mantissa lands above the max: it
  saturates, as the spec says). An all-zero block gets the smallest scale, 2**-127. ``scale_rule="ceil"`` picks
  the smallest power of two that clips nothing instead (NVIDIA's MXFP8 recipe).
- **NVFP4** (NVIDIA): FP4 E2M1 elements (0, 0.5, 1, 1.5, 2, 3, 4, 6), blocks of 16, one FP8 E4M3 scale per block
  and one FP32 scale per tensor. The tensor's encode scale is ``448 * 6 / amax(tensor)`` (1 for an all-zero
  tensor); a block's scale is ``amax(block) / 6 * encode`` rounded to E4M3 (nearest-even, saturating); elements are
  ``x * encode / block_scale`` rounded to E2M1 (saturating at 6). A value is read back as
  ``element * block_scale / encode``.

Every rounding is done here in float64 with round-half-to-even on the format's grid (not through a torch cast), so
the emulation is exact. torch is imported inside the functions.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..specs.fp8 import FP8_FORMATS
from ..specs.records import AsDict

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["ElementGrid", "ELEMENT_GRIDS", "E8M0_MIN_EXP", "E8M0_MAX_EXP", "BlockFormat", "BLOCK_FORMATS",
           "SCALE_FORMATS", "SCALE_RULES", "BLOCK_SIZES", "block_format", "round_to_grid", "grid_values", "e8m0_scale",
           "BlockQuantized", "BlockQuantError", "block_quantize", "block_dequantize", "block_quantization_error"]


@dataclasses.dataclass(frozen=True)
class ElementGrid:
    """The values a small float format holds: ``mantissa_bits`` bits after the point, normal exponents from
    ``min_exp`` up, and ``max`` its largest finite value (sign-symmetric; no infinities are ever produced)."""

    name: str
    mantissa_bits: int
    min_exp: int
    max: float
    bits: int

    @property
    def min_subnormal(self) -> float:
        """Smallest nonzero magnitude: the spacing below the smallest normal."""
        return 2.0 ** (self.min_exp - self.mantissa_bits)

    @property
    def max_exp(self) -> int:
        """Exponent of the largest normal (emax in the OCP MX spec)."""
        return math.frexp(self.max)[1] - 1

    @property
    def overflow(self) -> float:
        """max plus half a step: magnitudes above it are changed by clipping, not by rounding alone."""
        return self.max + 2.0 ** (self.max_exp - self.mantissa_bits - 1)


def _fp8_grid(name: str) -> ElementGrid:
    f = FP8_FORMATS[name]  # one owner of the FP8 formats' numbers: specs/fp8.py
    return ElementGrid(name.removeprefix("fp8_"), f.mantissa_bits, math.frexp(f.min_normal)[1] - 1, f.max, 8)


#: Element formats of the block-scaled types cuDNN knows, by short name.
ELEMENT_GRIDS: dict[str, ElementGrid] = {
    "e4m3": _fp8_grid("fp8_e4m3"),
    "e5m2": _fp8_grid("fp8_e5m2"),
    "e2m1": ElementGrid("e2m1", 1, 0, 6.0, 4),
}
#: E8M0 (OCP MX scale): an unsigned power of two 2**e, e from -127 to 127 (the all-ones code is NaN).
E8M0_MIN_EXP = -127
E8M0_MAX_EXP = 127
#: Scale formats, and the block size each goes with in the formats cuDNN runs (MX: E8M0 per 32; NVFP4: E4M3 per 16).
SCALE_FORMATS: dict[str, int] = {"e8m0": 32, "e4m3": 16}
BLOCK_SIZES: tuple[int, ...] = tuple(sorted(set(SCALE_FORMATS.values())))
#: How each scale format's scale may be chosen (see BlockFormat.scale_rule).
SCALE_RULES: dict[str, tuple[str, ...]] = {"e8m0": ("floor", "ceil"), "e4m3": ("floor",)}


@dataclasses.dataclass(frozen=True)
class BlockFormat(AsDict):
    """A block-scaled format: ``element`` grid, ``block_size`` elements per scale, ``scale_format``; an E4M3 scale
    (NVFP4) comes with a per-tensor FP32 scale. Validated on creation (SpecError naming the field)."""

    name: str
    element: str
    block_size: int
    scale_format: str
    #: How an E8M0 scale is chosen: "floor" (OCP MX v1.0: 2**(floor(log2 amax) - emax); a block amax with a large
    #: mantissa clips) or "ceil" (the smallest power of two with amax / scale <= max: nothing clips, as NVIDIA's
    #: MXFP8 recipe in cuBLAS and Transformer Engine does). E4M3 scales are rounded to nearest: "floor" only.
    scale_rule: str = "floor"

    def __post_init__(self) -> None:
        if self.element not in ELEMENT_GRIDS:
            raise SpecError("element", self.element, "must be one of " + ", ".join(ELEMENT_GRIDS), spec="BlockFormat")
        if self.scale_format not in SCALE_FORMATS:
            raise SpecError("scale_format", self.scale_format,
                            "must be e8m0 (MX formats, blocks of 32) or e4m3 (NVFP4, blocks of 16)", spec="BlockFormat")
        want = SCALE_FORMATS[self.scale_format]
        if isinstance(self.block_size, bool) or not isinstance(self.block_size, int) or self.block_size != want:
            raise SpecError("block_size", self.block_size,
                            f"must be {want} with {self.scale_format.upper()} scales (cuDNN's block-scaled formats: "
                            "MXFP8 has one E8M0 scale per 32 elements, NVFP4 one E4M3 scale per 16)",
                            spec="BlockFormat")
        if self.scale_format == "e4m3" and self.element != "e2m1":
            raise SpecError("element", self.element, "must be e2m1 with E4M3 block scales (NVFP4)", spec="BlockFormat")
        rules = SCALE_RULES[self.scale_format]
        if self.scale_rule not in rules:
            raise SpecError("scale_rule", self.scale_rule, f"must be {' or '.join(rules)} with "
                            f"{self.scale_format.upper()} scales", spec="BlockFormat")

    @property
    def grid(self) -> ElementGrid:
        return ELEMENT_GRIDS[self.element]

    @property
    def tensor_scale(self) -> bool:
        """True when a per-tensor FP32 scale comes on top of the block scales (NVFP4)."""
        return self.scale_format == "e4m3"

    @property
    def bits_per_element(self) -> float:
        """Storage per element, the block's scale shared out (8.25 for MXFP8, 4.5 for NVFP4)."""
        return self.grid.bits + 8 / self.block_size

    def describe(self) -> str:
        """One line: elements, block, scale."""
        extra = " and one FP32 scale per tensor" if self.tensor_scale else ""
        return (f"{self.name}: {self.element.upper()} elements (max {self.grid.max:g}), one "
                f"{self.scale_format.upper()} scale per {self.block_size} along the reduction axis{extra}; "
                f"{self.bits_per_element:g} bits per element")


#: The formats cuDNN runs on compute capability 10.x, by the name a user passes.
BLOCK_FORMATS: dict[str, BlockFormat] = {
    "mxfp8_e4m3": BlockFormat("mxfp8_e4m3", "e4m3", 32, "e8m0"),
    "mxfp8_e5m2": BlockFormat("mxfp8_e5m2", "e5m2", 32, "e8m0"),
    "nvfp4": BlockFormat("nvfp4", "e2m1", 16, "e4m3"),
}


def block_format(fmt: Any, *, block_size: Any = None, scale_format: Any = None,
                 scale_rule: Any = None) -> BlockFormat:
    """A BlockFormat from its name ('mxfp8_e4m3', 'mxfp8_e5m2', 'nvfp4') or itself, optionally with another
    ``block_size``, ``scale_format`` or ``scale_rule`` (checked: SpecError naming the field and what is allowed)."""
    if isinstance(fmt, BlockFormat):
        base = fmt
    elif isinstance(fmt, str) and fmt in BLOCK_FORMATS:
        base = BLOCK_FORMATS[fmt]
    else:
        raise SpecError("fmt", fmt, "must be one of " + ", ".join(BLOCK_FORMATS))
    if block_size is None and scale_format is None and scale_rule is None:
        return base
    return BlockFormat(base.name, base.element, base.block_size if block_size is None else block_size,
                       base.scale_format if scale_format is None else scale_format,
                       base.scale_rule if scale_rule is None else scale_rule)


# ------------------------------------------------------------------------------------------------ rounding

def round_to_grid(x: torch.Tensor, grid: ElementGrid) -> torch.Tensor:
    """``x`` (float64) rounded to nearest-even on ``grid`` and clipped to +-max; 0 stays 0, sign kept."""
    import torch

    a = x.abs()
    _, e = torch.frexp(a)  # a = m * 2**e, m in [0.5, 1): the binade exponent is e - 1, exactly
    exp = torch.clamp(e.to(torch.float64) - 1, min=grid.min_exp)  # below the smallest normal: fixed spacing
    quantum = torch.pow(torch.tensor(2.0, dtype=torch.float64), exp - grid.mantissa_bits)
    q = torch.round(a / quantum) * quantum  # torch.round is half-to-even; a / quantum is exact (power of two)
    q = torch.clamp(q, max=grid.max)
    return torch.where(x < 0, -q, q)


def grid_values(grid: ElementGrid) -> list[float]:
    """Every non-negative finite value of ``grid``, ascending (0 and the subnormals included)."""
    step = 2.0 ** (grid.min_exp - grid.mantissa_bits)
    values = [i * step for i in range(2 ** grid.mantissa_bits)]  # 0 and the subnormals
    e = grid.min_exp
    while True:
        for i in range(2 ** grid.mantissa_bits):
            v = (1 + i / 2 ** grid.mantissa_bits) * 2.0**e
            if v > grid.max:
                return values
            values.append(v)
        e += 1


def e8m0_scale(block_amax: torch.Tensor, grid: ElementGrid, rule: str = "floor") -> torch.Tensor:
    """The shared power-of-two scale per block: "floor" (OCP MX) 2**(floor(log2(amax)) - emax of ``grid``), or
    "ceil" the smallest 2**e with amax / 2**e <= max; the exponent clipped to E8M0's range; 2**-127 for an all-zero
    block."""
    import torch

    if rule == "ceil":  # smallest e with amax <= max * 2**e: frexp of amax / max gives it exactly unless a power
        m, e = torch.frexp(block_amax / grid.max)
        raw = torch.where(m == 0.5, e - 1, e).to(torch.float64)
        raw = torch.where(block_amax / torch.pow(2.0, raw) > grid.max, raw + 1, raw)  # amax / max rounded down
    else:
        _, e = torch.frexp(block_amax)
        raw = e.to(torch.float64) - 1 - grid.max_exp
    exp = torch.clamp(raw, E8M0_MIN_EXP, E8M0_MAX_EXP)
    exp = torch.where(block_amax > 0, exp, torch.full_like(exp, E8M0_MIN_EXP))
    return torch.pow(torch.tensor(2.0, dtype=torch.float64), exp)


# ------------------------------------------------------------------------------------------------ quantizing

@dataclasses.dataclass(frozen=True)
class BlockQuantized:
    """A tensor in a block-scaled format (all float64): ``elements`` (values on the element grid, the input's
    shape), ``scales`` (one per block: the input's shape with the blocked axis divided by the block size, rounded
    up), ``tensor_scale`` (NVFP4's encode scale; 1.0 for MX), and what quantizing clipped or flushed."""

    fmt: BlockFormat
    axis: int
    elements: Any
    scales: Any
    tensor_scale: float
    amax: float
    #: elements whose scaled magnitude exceeded the element max by more than half a step (clipping changed them)
    saturated: int
    #: nonzero elements that became 0
    flushed: int
    #: blocks whose scale itself was clipped (an E4M3 block scale above 448 by more than half a step) or flushed to 0
    scale_clipped: int


def _blocks(x: torch.Tensor, axis: int, block: int) -> tuple[torch.Tensor, int]:
    """``x`` with ``axis`` moved last, zero-padded to whole blocks and split: [..., blocks, block]; the pad."""
    import torch

    moved = x.movedim(axis, -1)
    length = moved.shape[-1]
    pad = (-length) % block
    if pad:
        moved = torch.nn.functional.pad(moved, (0, pad))
    return moved.reshape(*moved.shape[:-1], -1, block), pad


def _unblocks(b: torch.Tensor, axis: int, pad: int) -> torch.Tensor:
    flat = b.reshape(*b.shape[:-2], -1)
    if pad:
        flat = flat[..., :flat.shape[-1] - pad]
    return flat.movedim(-1, axis)


def _check_tensor(x: Any, axis: Any) -> int:
    import torch

    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise SpecError("x", type(x).__name__ if not isinstance(x, torch.Tensor) else str(x.dtype),
                        "must be a floating-point torch tensor to quantize")
    if x.dim() == 0 or x.numel() == 0:
        raise SpecError("x", list(x.shape), "must have at least one dimension and one element")
    if isinstance(axis, bool) or not isinstance(axis, int) or not -x.dim() <= axis < x.dim():
        raise SpecError("axis", axis, f"must be an integer from {-x.dim()} to {x.dim() - 1} (the blocked axis)")
    if not bool(torch.isfinite(x).all()):
        raise SpecError("x", "non-finite values", "must be finite: block scales come from the block's amax")
    return axis % x.dim()


def block_quantize(x: torch.Tensor, fmt: Any = "mxfp8_e4m3", *, axis: int = -1) -> BlockQuantized:
    """``x`` in the block format ``fmt`` (a name or BlockFormat), blocks along ``axis`` (the reduction axis); a
    length that is no multiple of the block size ends in a shorter block (zeros padded in do not change amax)."""
    import torch

    f = block_format(fmt)
    axis = _check_tensor(x, axis)
    grid = f.grid
    xd = x.detach().to(device="cpu", dtype=torch.float64)
    b, pad = _blocks(xd, axis, f.block_size)
    block_amax = b.abs().amax(dim=-1, keepdim=True)
    amax = float(xd.abs().max())
    scale_clipped = 0
    if f.tensor_scale:  # NVFP4: FP32 tensor scale, then E4M3 block scales relative to it
        e4m3 = ELEMENT_GRIDS["e4m3"]
        encode = e4m3.max * grid.max / amax if amax > 0 else 1.0
        encode = float(torch.tensor(encode, dtype=torch.float32))  # stored as FP32
        wanted = block_amax / grid.max * encode
        scales = round_to_grid(wanted, e4m3)
        scale_clipped = int(((wanted > e4m3.overflow) | ((scales == 0) & (block_amax > 0))).sum())
        factor = torch.where(scales > 0, encode / torch.where(scales > 0, scales, 1.0), torch.zeros_like(scales))
        scaled = b * factor
    else:  # MX: a power-of-two E8M0 scale per block
        encode = 1.0
        scales = e8m0_scale(block_amax, grid, f.scale_rule)
        scaled = b / scales
    elements = round_to_grid(scaled, grid)
    saturated = int((scaled.abs() > grid.overflow).sum())
    flushed = int(((elements == 0) & (b != 0)).sum())
    return BlockQuantized(fmt=f, axis=axis, elements=_unblocks(elements, axis, pad),
                          scales=scales.squeeze(-1).movedim(-1, axis), tensor_scale=encode, amax=amax,
                          saturated=saturated, flushed=flushed, scale_clipped=scale_clipped)


def block_dequantize(q: BlockQuantized) -> torch.Tensor:
    """The float64 values a block-quantized tensor stands for: element * block scale / tensor scale."""
    import torch

    scales = q.scales.movedim(q.axis, -1).unsqueeze(-1)
    b, pad = _blocks(q.elements, q.axis, q.fmt.block_size)
    return _unblocks(b * scales, q.axis, pad).to(torch.float64) / q.tensor_scale


@dataclasses.dataclass(frozen=True)
class BlockQuantError(AsDict):
    """How far a block-quantized tensor is from the float data it came from (float64; emulated, not measured)."""

    fmt: str
    rel_l2: float
    max_abs: float
    amax: float
    saturated: int
    flushed: int
    scale_clipped: int
    blocks: int
    numel: int

    def summary(self) -> str:
        """One line: the error and what clipped or vanished."""
        parts = [f"{self.fmt} (emulated): rel L2 {self.rel_l2:.2e}, max abs {self.max_abs:.2e}"]
        if self.saturated:
            parts.append(f"{self.saturated} of {self.numel} clipped")
        if self.flushed:
            parts.append(f"{self.flushed} of {self.numel} flushed to 0")
        if self.scale_clipped:
            parts.append(f"{self.scale_clipped} of {self.blocks} block scales clipped or flushed")
        return "; ".join(parts)


def block_quantization_error(x: torch.Tensor, q: BlockQuantized) -> BlockQuantError:
    """Error of ``block_dequantize(q)`` against the float data ``x`` it was made from."""
    import torch

    if tuple(x.shape) != tuple(q.elements.shape):
        raise SpecError("x", list(x.shape), f"must have the quantized tensor's shape {list(q.elements.shape)}")
    e = x.detach().to(device="cpu", dtype=torch.float64)
    diff = (block_dequantize(q) - e).abs()
    ref = float(torch.linalg.vector_norm(e))
    err = float(torch.linalg.vector_norm(diff))
    rel = err / ref if ref > 0 else (0.0 if err == 0 else math.inf)
    return BlockQuantError(fmt=q.fmt.name, rel_l2=rel, max_abs=float(diff.max()), amax=q.amax,
                           saturated=q.saturated, flushed=q.flushed, scale_clipped=q.scale_clipped,
                           blocks=int(q.scales.numel()), numel=e.numel())
