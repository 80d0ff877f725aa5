"""What the single-tensor classic ops share (softmax, activations, layout/dtype transforms): one x [n, c, h, w] in a
layout and a dtype, and a y of the same dims, each described to cuDNN by a 4-D tensor descriptor."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from ..errors import SpecError
from .base import DTYPE_BYTES, DTYPES, LAYOUTS, MAX_DIM, Spec, blame_largest, check_int
from .layout import InLayout

#: cuDNN's classic API takes 32-bit dims and strides.
INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Tensor4dSpec(InLayout, Spec):
    """Base (no ``op`` of its own): x [n, c, h, w] in ``layout`` and ``dtype``; y with x's dims."""

    n: int = 32
    c: int = 64
    h: int = 28
    w: int = 28
    layout: str = "NHWC"
    dtype: str = "fp16"

    def _check_x(self) -> None:
        """Validate n, c, h, w, layout and dtype (a graph API family calls this first in ``__post_init__``)."""
        name = type(self).__name__
        for f in ("n", "c", "h", "w"):
            self._set(f, check_int(name, f, getattr(self, f), 1, MAX_DIM))
        self._check_choices("layout", "dtype")

    def _check_tensor(self) -> None:
        """:meth:`_check_x`, then x within the classic API's 32-bit addressing (a classic-call family calls this
        first in ``__post_init__``)."""
        name = type(self).__name__
        self._check_x()
        if self.numel > INT32_MAX:
            field = blame_largest(self, ("n", "c", "h", "w"))
            raise SpecError(field, getattr(self, field), f"makes x {list(self.x_dims)} = {self.numel} elements, more "
                            "than cuDNN's classic API addresses with 32-bit strides; use smaller sizes", spec=name)

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"layout": LAYOUTS, "dtype": DTYPES}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        return {f: (1, MAX_DIM) for f in ("n", "c", "h", "w")}

    @property
    def x_dims(self) -> tuple[int, int, int, int]:
        return (self.n, self.c, self.h, self.w)

    @property
    def numel(self) -> int:
        return math.prod(self.x_dims)

    def io_names(self) -> tuple[tuple[str, ...], str]:
        return ("X",), "Y"

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"X": self.x_dims, "Y": self.x_dims}

    def min_bytes(self) -> int:
        return 2 * self.numel * DTYPE_BYTES[self.dtype]

    def dims_label(self) -> str:
        return f"{self.layout} {self.dtype} n{self.n} c{self.c} {self.h}x{self.w}"
