"""3-D convolution problems (video and volumetric models): forward (fprop), data gradient (dgrad) and weight gradient
(wgrad) over [n, c, d, h, w] tensors, with the 2-D family's pointwise epilogues after the forward.

A family of its own (``op`` 'conv3d') rather than a depth on :class:`~.conv.ConvSpec`: every 2-D tool keyed on
ConvSpec (FP8, block formats, the fused conv families, what-if models fitted on 2-D convs) stays 2-D, and every
tensor here is 5-D. cuDNN's conv_fprop / conv_dgrad / conv_wgrad take the 5-D tensors as they are, with padding,
stride and dilation as 3-lists (depth, height, width).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, DTYPES, MAX_DIM, Spec, check_choice, check_int, read_int
from .conv import (CONV_IO, check_conv_epilogue, check_fits_filter, check_padding_reach, compute_dtypes,
                   dilation_range, filter_range, side_range)
from .epilogue import EPILOGUE_HINT, OPERAND_TENSORS, check_epilogue, epilogue_shapes
from .layout import packed_strides

CONV3D_DIRECTIONS: tuple[str, ...] = ("fprop", "dgrad", "wgrad")
#: Memory orders of a 5-D [N, C, D, H, W] tensor: NCDHW (PyTorch's default) or channels-last NDHWC
#: (``torch.channels_last_3d``), which cuDNN's tensor-core engines prefer.
CONV3D_LAYOUTS: tuple[str, ...] = ("NCDHW", "NDHWC")
_ORDERS = {"NCDHW": (0, 1, 2, 3, 4), "NDHWC": (0, 2, 3, 4, 1)}
_AXES = ("depth", "height", "width")

Triple = tuple[int, int, int]


def check_triple(spec: str, field: str, value: Any, lo: int, hi: int = MAX_DIM) -> int | Triple:
    """An int or a (depth, height, width) triple; returned as an int when all three agree."""
    if isinstance(value, (list, tuple)):
        if len(value) != 3:
            raise SpecError(field, value, "must be an integer or a triple (depth, height, width) such as 1x3x3",
                            spec=spec)
        a, b, c = (check_int(spec, field, x, lo, hi) for x in value)
        return a if a == b == c else (a, b, c)
    return check_int(spec, field, value, lo, hi)


def triple(value: int | tuple[int, ...]) -> Triple:
    """All three sides of a canonical int-or-triple value."""
    return (value, value, value) if isinstance(value, int) else (value[0], value[1], value[2])


def _read_triple(values: Mapping[str, Any], key: str, default: int) -> Triple:
    """(depth, height, width) of a form's int-or-triple value; junk reads as the default."""
    v = values.get(key, default)
    if isinstance(v, (list, tuple)):
        if len(v) != 3:
            return default, default, default
        a, b, c = (read_int({"x": x}, "x", default) for x in v)
        return a, b, c
    side = read_int(values, key, default)
    return side, side, side


def layout_strides_5d(dims: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """Strides of a logical [N, C, D, H, W] tensor stored as NCDHW or NDHWC (other ranks: row-major)."""
    order = _ORDERS[layout] if len(dims) == 5 else tuple(range(len(dims)))
    return packed_strides(dims, order)


@dataclasses.dataclass(frozen=True)
class Conv3dSpec(Spec):
    """A 3-D convolution: input [n, c, d, h, w], filter [k, c/groups, t, r, s], output [n, k, o_d, p, q].

    ``layout`` says how every 5-D tensor is stored (dims are always given N, C, D, H, W); ``padding``, ``stride``
    and ``dilation`` are one value or a (depth, height, width) triple; ``groups`` = c = k is a depthwise conv
    (X3D, video MobileNets); ``epilogue`` lists pointwise steps fused after a forward conv (bias, scale, add, ReLU,
    GELU, ...). fp32, fp16 and bf16; no FP8 here.
    """

    op: ClassVar[str] = "conv3d"
    menu_order: ClassVar[int] = 170
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "layout")
    title: ClassVar[str] = "conv 3-D"
    description: ClassVar[str] = "3-D convolution: Conv3dSpec (fprop, dgrad, wgrad, fused epilogue; video models)"
    tensor_axes: ClassVar[str | None] = "NCDHW"
    field_order: ClassVar[tuple[str, ...]] = (
        "direction", "n", "c", "d", "h", "w", "k", "t", "r", "s", "padding", "stride", "dilation", "groups", "layout",
        "dtype", "compute_dtype", "epilogue")

    n: int = 2
    c: int = 64
    d: int = 8
    h: int = 32
    w: int = 32
    k: int = 64
    t: int = 3
    r: int = 3
    s: int = 3
    padding: int | tuple[int, int, int] = 1
    stride: int | tuple[int, int, int] = 1
    dilation: int | tuple[int, int, int] = 1
    groups: int = 1
    layout: str = "NDHWC"
    dtype: str = "fp16"
    compute_dtype: str = "fp32"
    direction: str = "fprop"
    epilogue: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("n", "c", "d", "h", "w", "k", "t", "r", "s"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._set("stride", check_triple(name, "stride", self.stride, 1, 64))
        self._set("dilation", check_triple(name, "dilation", self.dilation, 1, 64))
        self._set("padding", check_triple(name, "padding", self.padding, 0))
        self._set("groups", check_int(name, "groups", self.groups, 1, self.c))
        self._check_choices("layout", "dtype")
        self._set("compute_dtype", check_choice(name, "compute_dtype", self.compute_dtype, compute_dtypes(self.dtype)))
        self._check_choices("direction")
        self._set("epilogue", check_epilogue(name, self.epilogue))
        self._check_geometry(name)

    def _check_geometry(self, name: str) -> None:
        for f in ("c", "k"):
            if getattr(self, f) % self.groups:
                raise SpecError("groups", self.groups, f"must divide {f}={getattr(self, f)} (c and k both; "
                                f"depthwise: groups = c = k)", spec=name)
        pads, dils = triple(self.padding), triple(self.dilation)
        for axis, side, size, p, dl, f in zip(_AXES, ("t", "r", "s"), (self.d, self.h, self.w), pads, dils,
                                              (self.t, self.r, self.s)):
            check_padding_reach(name, self.padding, side, p, dl, f, along=f" along {axis}")
            check_fits_filter(name, {"depth": "d", "height": "h", "width": "w"}[axis], size, p, dl, f, extent=axis)
        check_conv_epilogue(name, self.epilogue, self.direction)
        image, filt, out = ("n", "c", "d", "h", "w"), ("k", "c", "t", "r", "s"), ("n", "k", "d", "h", "w")
        self.check_elements({"X": image, "DX": image, "W": filt, "DW": filt, "Y": out, "DY": out, "residual": out,
                             "bias": ("k",), "scale": ("k",)})

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"direction": CONV3D_DIRECTIONS, "layout": CONV3D_LAYOUTS, "dtype": DTYPES,
                "compute_dtype": ("fp32", "fp16")}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """Each filter side from what padding needs to what the padded input allows; each input side at least the
        dilated filter less the padding; ``padding`` up to the smallest ``dilation*(f-1)``; ``groups`` up to
        ``gcd(c, k)`` (it must divide both)."""
        c, k = max(read_int(values, "c", 1), 1), max(read_int(values, "k", 1), 1)
        pads = tuple(max(x, 0) for x in _read_triple(values, "padding", 0))
        dils = tuple(max(x, 1) for x in _read_triple(values, "dilation", 1))
        sizes = tuple(max(read_int(values, f, 1), 1) for f in ("d", "h", "w"))
        filt = tuple(max(read_int(values, f, 1), 1) for f in ("t", "r", "s"))
        out: dict[str, tuple[int, int]] = {"n": (1, MAX_DIM), "c": (1, MAX_DIM), "k": (1, MAX_DIM),
                                           "stride": (1, 64), "groups": (1, max(1, math.gcd(c, k)))}
        for i, (side, fside) in enumerate((("d", "t"), ("h", "r"), ("w", "s"))):
            p, dl, size, f = pads[i], dils[i], sizes[i], filt[i]
            out[side] = side_range(p, dl, f)
            out[fside] = filter_range(size, p, dl)
        out["padding"] = (0, min(dl * (f - 1) for dl, f in zip(dils, filt)))
        dil = [dilation_range(size, p, f) for size, p, f in zip(sizes, pads, filt)]
        out["dilation"] = (max(lo for lo, _ in dil), min(hi for _, hi in dil))
        return out

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        g = cls.field_limits(values)["groups"][1]
        return {"groups": f"divides {g}; depthwise: c", "padding": "n or DxHxW", "stride": "n or DxHxW",
                "dilation": "n or DxHxW", "t": "filter depth", "epilogue": "fprop only"}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """The epilogue unless the direction is fprop (gradients take none)."""
        return frozenset() if values.get("direction", "fprop") == "fprop" else frozenset({"epilogue"})

    # --- derived sizes ------------------------------------------------------------------------------------------

    @property
    def out_dhw(self) -> Triple:
        """Output depth, height and width (o_d, p, q)."""
        sizes = (self.d, self.h, self.w)
        filt = (self.t, self.r, self.s)
        od, p, q = ((x + 2 * pd - dl * (f - 1) - 1) // st + 1 for x, pd, dl, f, st in
                    zip(sizes, triple(self.padding), triple(self.dilation), filt, triple(self.stride)))
        return od, p, q

    @property
    def x_dims(self) -> tuple[int, int, int, int, int]:
        return (self.n, self.c, self.d, self.h, self.w)

    @property
    def w_dims(self) -> tuple[int, int, int, int, int]:
        return (self.k, self.c // self.groups, self.t, self.r, self.s)

    @property
    def y_dims(self) -> tuple[int, int, int, int, int]:
        return (self.n, self.k, *self.out_dhw)

    @property
    def depthwise(self) -> bool:
        """True for a depthwise conv: one group per input channel (groups = c = k)."""
        return self.groups == self.c == self.k and self.groups > 1

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """Names of the main op's inputs and of its output, for this direction."""
        return CONV_IO[self.direction]

    def input_names(self) -> tuple[str, ...]:
        """The main op's operands, then the epilogue's (bias, scale, residual) in chain order."""
        ins, _ = self.io_names()
        return (*ins, *(OPERAND_TENSORS[e] for e in self.epilogue if e in OPERAND_TENSORS))

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        dims = {"X": self.x_dims, "W": self.w_dims, "Y": self.y_dims, "DY": self.y_dims, "DX": self.x_dims,
                "DW": self.w_dims}
        ins, out = self.io_names()
        shapes: dict[str, tuple[int, ...]] = {n: dims[n] for n in (*ins, out)}
        return {**shapes, **epilogue_shapes(self.epilogue, (1, self.k, 1, 1, 1), self.y_dims)}

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Strides of every tensor in the spec's layout (dims in N, C, D, H, W order)."""
        return {n: layout_strides_5d(d, self.layout) for n, d in self.tensor_shapes().items()}

    def flops(self) -> int:
        """2 * n * k * o_d * p * q * (c / groups) * t * r * s: every direction does the same multiply-adds."""
        return 2 * self.n * self.k * math.prod(self.out_dhw) * (self.c // self.groups) * self.t * self.r * self.s

    def min_bytes(self) -> int:
        return sum(DTYPE_BYTES[self.dtype] * math.prod(d) for d in self.tensor_shapes().values())

    def gemm_mn(self) -> tuple[int, int] | None:
        """A forward conv's implicit GEMM: output voxels (n*o_d*p*q) by output channels (k); other directions: None."""
        if self.direction != "fprop":
            return None
        return self.n * math.prod(self.out_dhw), self.k

    def support_hint(self) -> str:
        """What narrows a 3-D convolution's engines: channels off multiples of 8 in half types, NCDHW, groups."""
        if self.dtype in ("fp16", "bf16") and (self.c % 8 or self.k % 8) and not self.depthwise:
            return f"Channel counts c={self.c}, k={self.k} that are not multiples of 8 rule out tensor-core engines."
        if self.layout == "NCDHW" and self.dtype != "fp32":
            return "Half-precision 3-D convolutions have most engines in channels-last; try layout='NDHWC'."
        if self.groups > 1:
            return "Grouped 3-D convolutions have fewer engines; try groups=1 or depthwise (groups=c=k)."
        return EPILOGUE_HINT if self.epilogue else ""

    def label(self) -> str:
        def text(v: int | tuple[int, ...]) -> str:
            return str(v) if isinstance(v, int) else "x".join(map(str, v))

        extra = "".join(f"+{e}" for e in self.epilogue)
        g = " dw" if self.depthwise else (f" g{self.groups}" if self.groups > 1 else "")
        st = f" str{text(self.stride)}" if self.stride != 1 else ""
        dl = f" dil{text(self.dilation)}" if self.dilation != 1 else ""
        return (f"conv3d {self.direction} {self.layout} {self.dtype} n{self.n} c{self.c} {self.d}x{self.h}x{self.w} "
                f"k{self.k} {self.t}x{self.r}x{self.s} pad{text(self.padding)}{st}{dl}{g}{extra}")
