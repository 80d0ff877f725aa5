"""2-D pooling: max, average counting the padding, and average over the window's real elements only.

cuDNN frontend 1.32's Python graph API has no pooling (resample) node, so the kit runs these problems through
cuDNN's classic ``cudnnPoolingForward`` (``cudnn_lab/gpu/classic/pool.py``); the spec itself is plain data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import (DTYPE_BYTES, DTYPES, LAYOUTS, MAX_DIM, Spec, blame_largest, check_int, check_pair,
                   pair, read_int, read_sides)
from .layout import InLayout

#: ``max``; ``avg`` divides by the full window (padding counts as zeros, PyTorch's ``count_include_pad=True``);
#: ``avg_exclude_pad`` divides by the number of real elements under the window (``count_include_pad=False``).
POOL_MODES: tuple[str, ...] = ("max", "avg", "avg_exclude_pad")

#: cuDNN's classic API takes 32-bit dims and strides.
_INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class PoolSpec(InLayout, Spec):
    """Pooling of X [n, c, h, w] into Y [n, c, p, q] with a ``window`` (kh, kw), ``stride`` and ``padding``.

    ``window``, ``stride`` and ``padding`` take an int or an (h, w) pair; ``padding`` is added on every side and
    may be at most half the window (``window // 2``) per side, as in PyTorch. ``layout`` says how X and Y are
    stored (dims are always given N, C, H, W).
    """

    op: ClassVar[str] = "pool"
    menu_order: ClassVar[int] = 50
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "layout")
    title: ClassVar[str] = "pooling"
    description: ClassVar[str] = "pooling: PoolSpec (max, average; cuDNN's classic call, no graph API node)"
    field_order: ClassVar[tuple[str, ...]] = ("mode", "n", "c", "h", "w", "window", "stride", "padding", "layout",
                                              "dtype")

    n: int = 16
    c: int = 64
    h: int = 56
    w: int = 56
    mode: str = "max"
    window: int | tuple[int, int] = 3
    stride: int | tuple[int, int] = 2
    padding: int | tuple[int, int] = 1
    layout: str = "NHWC"
    dtype: str = "fp16"

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("n", "c", "h", "w"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._check_choices("mode")
        self._set("window", check_pair(name, "window", self.window, 1, MAX_DIM))
        self._set("stride", check_pair(name, "stride", self.stride, 1, MAX_DIM))
        self._set("padding", check_pair(name, "padding", self.padding, 0, MAX_DIM))
        self._check_choices("layout", "dtype")
        self._check_geometry(name)

    def _check_geometry(self, name: str) -> None:
        (kh, kw), (ph, pw) = pair(self.window), pair(self.padding)
        if ph > kh // 2 or pw > kw // 2:
            raise SpecError("padding", self.padding, f"must be at most half the window per side (window "
                            f"{kh}x{kw} allows padding up to {kh // 2}x{kw // 2}): a wider pad makes windows that "
                            "see only padding", spec=name)
        for side, size, p, k in (("h", self.h, ph, kh), ("w", self.w, pw, kw)):
            if size + 2 * p < k:
                raise SpecError(side, size, f"is too small for the window: {side} + 2*padding must be at least "
                                f"{k} (the window's extent)", spec=name)
        self.check_elements({"X": ("n", "c", "h", "w"), "Y": ("n", "c", "h", "w")})
        if self.c * self.h * self.w > _INT32_MAX:
            field = blame_largest(self, ("c", "h", "w"))
            raise SpecError(field, getattr(self, field), f"makes one image c*h*w = {self.c * self.h * self.w} "
                            "elements, more than cuDNN's classic pooling API can address (32-bit strides); use "
                            "smaller sizes", spec=name)

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"mode": POOL_MODES, "layout": LAYOUTS, "dtype": DTYPES}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """``padding`` up to ``window // 2``; ``window`` from ``2 * padding`` to ``h + 2 * padding``; ``h``/``w``
        at least the window less the padding."""
        h, w = max(read_int(values, "h", 1), 1), max(read_int(values, "w", 1), 1)
        kh, kw = (max(x, 1) for x in read_sides(values, "window", 1))
        ph, pw = (max(x, 0) for x in read_sides(values, "padding", 0))
        return {
            "n": (1, MAX_DIM), "c": (1, MAX_DIM),
            "h": (max(1, kh - 2 * ph), MAX_DIM), "w": (max(1, kw - 2 * pw), MAX_DIM),
            "window": (max(1, 2 * max(ph, pw)), min(h + 2 * ph, w + 2 * pw, MAX_DIM)),
            "stride": (1, MAX_DIM),
            "padding": (0, min(kh // 2, kw // 2)),
        }

    @property
    def out_hw(self) -> tuple[int, int]:
        """Output height and width (p, q): floor((h + 2*pad - window) / stride) + 1, as cuDNN and PyTorch compute."""
        (kh, kw), (sh, sw), (ph, pw) = pair(self.window), pair(self.stride), pair(self.padding)
        return (self.h + 2 * ph - kh) // sh + 1, (self.w + 2 * pw - kw) // sw + 1

    @property
    def x_dims(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, self.h, self.w)

    @property
    def y_dims(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, *self.out_hw)

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """Names of the inputs and of the output."""
        return ("X",), "Y"

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"X": self.x_dims, "Y": self.y_dims}

    def flops(self) -> int:
        """One compare (max) or add (average) per window element per output; the average's divide not counted."""
        kh, kw = pair(self.window)
        return math.prod(self.y_dims) * kh * kw

    def min_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype] * sum(math.prod(d) for d in self.tensor_shapes().values())

    def label(self) -> str:
        def fmt(v: int | tuple[int, int]) -> str:
            return str(v) if isinstance(v, int) else "x".join(map(str, v))

        kh, kw = pair(self.window)
        return (f"pool {self.mode} {self.layout} {self.dtype} n{self.n} c{self.c} {self.h}x{self.w} "
                f"win{kh}x{kw} str{fmt(self.stride)} pad{fmt(self.padding)}")
