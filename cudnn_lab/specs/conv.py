"""2-D convolution problems: forward (fprop), data gradient (dgrad) and weight gradient (wgrad); FP8 forward."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import (DTYPE_BYTES, DTYPES, LAYOUTS, MAX_DIM, Spec, check_choice, check_int, check_pair, pair, read_int,
                   read_sides)
from .epilogue import EPILOGUE_HINT, check_epilogue, epilogue_shapes
from .fp8 import FP8_DTYPES, FP8_GEMM_OUT_DTYPES, Fp8Operands, is_fp8
from .layout import InLayout

DIRECTIONS: tuple[str, ...] = ("fprop", "dgrad", "wgrad")
CONV_DTYPES: tuple[str, ...] = (*DTYPES, *FP8_DTYPES)
#: The fields only an FP8 convolution reads (ignored, as given, otherwise; a form hides them).
FP8_FIELDS: tuple[str, ...] = ("out_dtype", "scale_x", "scale_w", "amax")
#: Each direction's main inputs and output (2-D and 3-D convolutions alike).
CONV_IO: dict[str, tuple[tuple[str, ...], str]] = {"fprop": (("X", "W"), "Y"), "dgrad": (("DY", "W"), "DX"),
                                                   "wgrad": (("X", "DY"), "DW")}


def compute_dtypes(dtype: str) -> tuple[str, ...]:
    """The compute (accumulator) types a convolution of ``dtype`` data takes: fp32, and fp16 for fp16 data."""
    return ("fp32", "fp16") if dtype == "fp16" else ("fp32",)


def check_conv_epilogue(spec: str, epilogue: tuple[str, ...], direction: str) -> None:
    """An epilogue follows a forward convolution only."""
    if epilogue and direction != "fprop":
        raise SpecError("epilogue", epilogue, "epilogues are fused only after direction='fprop'", spec=spec)


def check_padding_reach(spec: str, padding: Any, side: str, p: int, d: int, f: int, along: str = "") -> None:
    """One axis's padding ``p`` at most the dilated filter's reach d*(f-1) (``side``: the filter's field)."""
    reach = d * (f - 1)
    if p > reach:
        allowed = f"{side}-1={f - 1}" if d == 1 else f"dilation*({side}-1)={reach}"
        raise SpecError("padding", padding, f"is larger than the filter allows{along} ({allowed})", spec=spec)


def check_fits_filter(spec: str, field: str, size: int, p: int, d: int, f: int, extent: str = "extent") -> None:
    """One input side plus both paddings holds the dilated filter (d*(f-1) + 1)."""
    need = d * (f - 1) + 1
    if size + 2 * p < need:
        raise SpecError(field, size, f"is too small for the filter: {field} + 2*padding must be at least {need} "
                        f"(the dilated filter's {extent})", spec=spec)


def side_range(p: int, d: int, f: int) -> tuple[int, int]:
    """A form's range of an input side: at least the dilated filter less both paddings."""
    return max(1, d * (f - 1) + 1 - 2 * p), MAX_DIM


def filter_range(size: int, p: int, d: int) -> tuple[int, int]:
    """A form's range of a filter side: from what the padding needs (p <= d*(f-1)) to what the padded input holds
    (size + 2p >= d*(f-1) + 1)."""
    return math.ceil(p / d) + 1, min((size + 2 * p - 1) // d + 1, MAX_DIM)


def dilation_range(size: int, p: int, f: int) -> tuple[int, int]:
    """A form's range of one axis's dilation (1 to 64): what the padding needs to what the padded input holds."""
    if f == 1:
        return 1, 64
    return max(1, math.ceil(p / (f - 1))), min(64, (size + 2 * p - 1) // (f - 1))


@dataclasses.dataclass(frozen=True)
class ConvSpec(Fp8Operands, InLayout, Spec):
    """A 2-D convolution: input [n, c, h, w], filter [k, c/groups, r, s], output [n, k, p, q].

    ``layout`` says how every 4-D tensor is stored (dims are always given N, C, H, W); ``direction`` picks the
    forward pass or one of the two gradients; ``epilogue`` lists pointwise steps fused after a forward conv.

    FP8 (``dtype`` 'fp8_e4m3' or 'fp8_e5m2', X and W): float data quantized with ``scale_x`` / ``scale_w`` (None: a
    power of two from the data's amax); the graph multiplies the result by both descales and writes Y in
    ``out_dtype``; ``amax`` adds an output Amax = max |Y|. FP8 convolutions here are forward, NHWC, ungrouped, with
    no epilogue. These fields are ignored when ``dtype`` is not FP8.
    """

    op: ClassVar[str] = "conv"
    menu_order: ClassVar[int] = 10
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "layout")
    block_scale_axis: ClassVar[str | None] = "C"
    FP8_SCALES: ClassVar[dict[str, str]] = {"X": "scale_x", "W": "scale_w"}
    title: ClassVar[str] = "conv"
    description: ClassVar[str] = "convolution: ConvSpec (fprop, dgrad, wgrad, fused epilogue)"
    field_order: ClassVar[tuple[str, ...]] = (
        "direction", "n", "c", "h", "w", "k", "r", "s", "padding", "stride", "dilation", "groups", "layout", "dtype",
        "out_dtype", "scale_x", "scale_w", "amax", "compute_dtype", "epilogue")

    n: int = 16
    c: int = 64
    h: int = 56
    w: int = 56
    k: int = 128
    r: int = 3
    s: int = 3
    padding: int | tuple[int, int] = 1
    stride: int | tuple[int, int] = 1
    dilation: int | tuple[int, int] = 1
    groups: int = 1
    layout: str = "NHWC"
    dtype: str = "fp16"
    compute_dtype: str = "fp32"
    direction: str = "fprop"
    epilogue: tuple[str, ...] = ()
    out_dtype: str = "fp16"
    scale_x: float | None = None
    scale_w: float | None = None
    amax: bool = False

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("n", "c", "h", "w", "k", "r", "s"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._set("stride", check_pair(name, "stride", self.stride, 1, 64))
        self._set("dilation", check_pair(name, "dilation", self.dilation, 1, 64))
        self._set("padding", check_pair(name, "padding", self.padding, 0))
        self._set("groups", check_int(name, "groups", self.groups, 1, self.c))
        self._check_choices("layout", "dtype", "out_dtype")
        self._check_fp8_fields(name)
        self._set("compute_dtype", check_choice(name, "compute_dtype", self.compute_dtype, compute_dtypes(self.dtype)))
        self._check_choices("direction")
        self._set("epilogue", check_epilogue(name, self.epilogue))
        self._check_geometry(name)

    def _check_geometry(self, name: str) -> None:
        if self.c % self.groups:
            raise SpecError("groups", self.groups, f"must divide c={self.c}", spec=name)
        if self.k % self.groups:
            raise SpecError("groups", self.groups, f"must divide k={self.k}", spec=name)
        (ph, pw), (dh, dw) = pair(self.padding), pair(self.dilation)
        for side, p, d, f in (("r", ph, dh, self.r), ("s", pw, dw, self.s)):
            check_padding_reach(name, self.padding, side, p, d, f)
        for side, size, p, d, f in (("h", self.h, ph, dh, self.r), ("w", self.w, pw, dw, self.s)):
            check_fits_filter(name, side, size, p, d, f)
        check_conv_epilogue(name, self.epilogue, self.direction)
        if self.fp8:
            self._check_fp8(name)
        image, filt, out = ("n", "c", "h", "w"), ("k", "c", "r", "s"), ("n", "k", "h", "w")
        self.check_elements({"X": image, "DX": image, "W": filt, "DW": filt, "Y": out, "DY": out, "residual": out,
                             "bias": ("k",), "scale": ("k",), "descale_X": ("n",), "descale_W": ("n",),
                             "scale_Y": ("n",), "Amax": ("n",)})

    def _check_fp8(self, name: str) -> None:
        """What the kit's FP8 convolution is: forward, channels-last, ungrouped (channel counts are cuDNN's to refuse:
        on Hopper with cuDNN 9.19 c and k need not be multiples of 16, docs/FINDINGS.md)."""
        if self.direction != "fprop":
            raise SpecError("direction", self.direction, "must be 'fprop' for FP8: the kit offers FP8 forward "
                            "convolutions only (FP8 wgrad runs far slower than fp16: cudnn-frontend issue #103)",
                            spec=name)
        if self.layout != "NHWC":
            raise SpecError("layout", self.layout, "must be 'NHWC' for FP8: FP8 tensor-core convolutions read "
                            "channels-last tensors (cuDNN's FP8 conv sample is NHWC)", spec=name)
        if self.groups != 1:
            raise SpecError("groups", self.groups, "must be 1 for FP8 (grouped and depthwise FP8 convolutions are "
                            "not offered)", spec=name)
        self._refuse_fp8_epilogue(name, "convolution")

    def fp8_dtypes(self) -> dict[str, str]:
        """X and W in ``dtype`` (FP8), Y in ``out_dtype``."""
        return {"X": self.dtype, "W": self.dtype, "Y": self.out_dtype}

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"direction": DIRECTIONS, "layout": LAYOUTS, "dtype": CONV_DTYPES, "compute_dtype": ("fp32", "fp16"),
                "out_dtype": FP8_GEMM_OUT_DTYPES}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """The FP8 fields unless ``dtype`` is FP8; the epilogue when it is (FP8 convolutions take none here)."""
        return frozenset({"epilogue"} if is_fp8(values.get("dtype")) else FP8_FIELDS)

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """``padding`` up to ``dilation*(r-1)``; ``r`` from what padding needs to what ``h + 2*padding`` allows
        (``s`` with ``w`` alike); ``dilation`` up to what the padded input allows; ``h``/``w`` at least the dilated
        filter's extent less the padding; ``groups`` up to ``gcd(c, k)`` (it must divide both)."""
        c, k = read_int(values, "c", 1), read_int(values, "k", 1)
        r, s = max(read_int(values, "r", 1), 1), max(read_int(values, "s", 1), 1)
        h, w = max(read_int(values, "h", 1), 1), max(read_int(values, "w", 1), 1)
        ph, pw = (max(x, 0) for x in read_sides(values, "padding", 0))
        dh, dw = (max(x, 1) for x in read_sides(values, "dilation", 1))
        (dh_lo, dh_hi), (dw_lo, dw_hi) = dilation_range(h, ph, r), dilation_range(w, pw, s)
        return {
            "n": (1, MAX_DIM), "c": (1, MAX_DIM), "k": (1, MAX_DIM),
            "h": side_range(ph, dh, r), "w": side_range(pw, dw, s),
            "r": filter_range(h, ph, dh), "s": filter_range(w, pw, dw),
            "padding": (0, min(dh * (r - 1), dw * (s - 1))),
            "stride": (1, 64),
            "dilation": (max(dh_lo, dw_lo), min(dh_hi, dw_hi)),
            "groups": (1, max(1, math.gcd(max(c, 1), max(k, 1)))),
        }

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        hints = {"groups": f"divides {cls.field_limits(values)['groups'][1]}"}
        if is_fp8(values.get("dtype")):
            hints.update(groups="FP8: 1", layout="FP8: NHWC", direction="FP8: fprop",
                         scale_x="blank: 2^n from amax", scale_w="blank: 2^n from amax")
        return hints

    @property
    def out_hw(self) -> tuple[int, int]:
        """Output height and width (p, q)."""
        (ph, pw), (sh, sw), (dh, dw) = pair(self.padding), pair(self.stride), pair(self.dilation)
        p = (self.h + 2 * ph - dh * (self.r - 1) - 1) // sh + 1
        q = (self.w + 2 * pw - dw * (self.s - 1) - 1) // sw + 1
        return p, q

    @property
    def x_dims(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, self.h, self.w)

    @property
    def w_dims(self) -> tuple[int, int, int, int]:
        return (self.k, self.c // self.groups, self.r, self.s)

    @property
    def y_dims(self) -> tuple[int, int, int, int]:
        return (self.n, self.k, *self.out_hw)

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """Names of the main op's inputs and of its output, for this direction."""
        return CONV_IO[self.direction]

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        dims = {"X": self.x_dims, "W": self.w_dims, "Y": self.y_dims,
                "DY": self.y_dims, "DX": self.x_dims, "DW": self.w_dims}
        ins, out = self.io_names()
        shapes: dict[str, tuple[int, ...]] = {n: dims[n] for n in (*ins, out)}
        shapes.update(epilogue_shapes(self.epilogue, (1, self.k, 1, 1), self.y_dims))
        if self.fp8:
            shapes.update({"descale_X": (1, 1, 1, 1), "descale_W": (1, 1, 1, 1)})
            if self.amax:
                shapes.update({"scale_Y": (1, 1, 1, 1), "Amax": (1, 1, 1, 1)})
        return shapes

    def flops(self) -> int:
        p, q = self.out_hw
        return 2 * self.n * self.k * p * q * (self.c // self.groups) * self.r * self.s

    def min_bytes(self) -> int:
        dtypes = self.tensor_dtypes()
        return sum(DTYPE_BYTES[dtypes[n]] * math.prod(d) for n, d in self.tensor_shapes().items())

    def tolerance_args(self) -> dict[str, Any]:
        """An FP8 convolution's bands follow its output dtype (numerics.FP8_GEMM_BANDS)."""
        return {"dtype": self.dtype, "op": self.op, "out_dtype": self.out_dtype if self.fp8 else None}

    def check_block_scale(self) -> None:
        """Block formats scale C, the forward convolution's reduction axis, whole: fprop and one group only."""
        if self.direction != "fprop":
            raise SpecError("direction", self.direction, "must be fprop for the block-format what-if (blocks run "
                            "along C, the forward convolution's reduction axis)", spec="ConvSpec")
        if self.groups != 1:
            raise SpecError("groups", self.groups, "must be 1 for the block-format what-if (cuDNN's block-scaled "
                            "convolution blocks the whole C axis)", spec="ConvSpec")

    def gemm_mn(self) -> tuple[int, int] | None:
        """A forward conv's implicit GEMM: output pixels (n*p*q) by output channels (k); other directions: None."""
        if self.direction != "fprop":
            return None
        p, q = self.out_hw
        return self.n * p * q, self.k

    def support_hint(self) -> str:
        """What narrows a convolution's engines: channels off multiples of 8 in half types, groups, an epilogue."""
        if self.dtype in ("fp16", "bf16") and (self.c % 8 or self.k % 8):
            return f"Channel counts c={self.c}, k={self.k} that are not multiples of 8 rule out tensor-core engines."
        if self.groups > 1:
            return "Grouped convolutions have fewer engines; try groups=1 or depthwise (groups=c)."
        return EPILOGUE_HINT if self.epilogue else ""

    def label(self) -> str:
        pad = self.padding if isinstance(self.padding, int) else "x".join(map(str, self.padding))
        extra = "".join(f"+{e}" for e in self.epilogue)
        g = f" g{self.groups}" if self.groups > 1 else ""
        dt = f"{self.dtype}->{self.out_dtype}" if self.fp8 else self.dtype
        if self.fp8 and self.amax:
            extra += "+amax"
        return (f"conv {self.direction} {self.layout} {dt} n{self.n} c{self.c} {self.h}x{self.w} "
                f"k{self.k} {self.r}x{self.s} pad{pad} str{self.stride}{g}{extra}")
