"""Tensor transforms: a layout change (NCHW <-> NHWC) and a dtype conversion through cuDNN's classic
``cudnnTransformTensor``; and the graph API's structural ops (transpose, reshape, slice, concatenate).

``kind='convert'`` runs ``cudnnTransformTensor`` (``gpu/classic/ops.py``): the same copy an NCHW convolution plan
does in its ``nchwToNhwcKernel`` before an NHWC kernel, timed on its own. The graph kinds are real frontend 1.32
graphs (drawn without a GPU), but cuDNN runs them as standalone graphs only from the version in
:data:`GRAPH_KIND_NEEDS`; the GPU layer refuses them before that with the version in the message. Every field is
an int or a choice, so a form and a sweep axis can set each. Pure: no torch or cudnn here.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, DTYPES, LAYOUTS, MAX_DIM, check_int, read_int
from .layout import layout_strides, packed_strides
from .tensor4d import Tensor4dSpec

#: ``convert``: cudnnTransformTensor (layout and/or dtype); the rest are graph API nodes.
TRANSFORM_KINDS: tuple[str, ...] = ("convert", "transpose", "reshape", "slice", "concatenate")
#: Every order of the four dims, as digits: '0231' makes y [n, h, w, c] from x [n, c, h, w].
PERMUTATIONS: tuple[str, ...] = tuple("".join(p) for p in itertools.permutations("0123"))
#: Reshapes that merge neighbouring dims (x read in N, C, H, W order), named by the dims y keeps.
RESHAPES: dict[str, str] = {"n,c,hw": "flatten each image", "n,chw": "flatten each sample",
                            "nc,hw": "one row per (sample, channel)", "nc,h,w": "merge batch and channels",
                            "nchw": "one vector"}
#: The cuDNN version from which each graph kind runs as a graph of its own, and what runs before it
#: (frontend 1.32 messages on 9.19: "Transpose requires cuDNN v9.22.0", "Slice backend operation requires 9.22.0";
#: a reshape alone found no engine; NVIDIA's membound samples run all four from 9.22.0).
GRAPH_KIND_NEEDS: dict[str, tuple[int, str, str]] = {
    "transpose": (92200, "9.22.0", "the frontend says 'Transpose requires cuDNN v9.22.0'"),
    "slice": (92200, "9.22.0", "the frontend says 'Slice backend operation requires 9.22.0'"),
    "reshape": (92200, "9.22.0", "before it a reshape runs only inside a graph with a matmul or convolution "
                "(9.19: 'mmaNodeCount == 0', no engine)"),
    "concatenate": (92200, "9.22.0", "before it cuDNN (from 9.8.0) fuses a concatenate only after a conv_fprop "
                    "that writes in place into the concatenation"),
}


@dataclasses.dataclass(frozen=True)
class TransformSpec(Tensor4dSpec):
    """x [n, c, h, w] in ``layout``/``dtype`` -> y, by ``kind``:

    - ``convert``: y has x's dims in ``out_layout`` and ``out_dtype`` (cudnnTransformTensor);
    - ``transpose``: y = x with its dims reordered by ``permutation`` ('0231': y is [n, h, w, c]), stored packed;
    - ``reshape``: y = x read in N, C, H, W order into the dims ``reshape_to`` names ('n,c,hw': [n, c, h*w]);
    - ``slice``: y = x[start:stop] along ``axis`` (0 n, 1 c, 2 h, 3 w), in x's layout;
    - ``concatenate``: y = x and a second input X2 joined along ``axis``; X2 is x with ``concat_size`` along it.
    The graph kinds keep the dtype and layout (``out_dtype``/``out_layout`` read back as x's); the fields a kind
    does not use are ignored.
    """

    op: ClassVar[str] = "transform"
    menu_order: ClassVar[int] = 90
    title: ClassVar[str] = "tensor transform"
    description: ClassVar[str] = ("tensor transforms: TransformSpec (NCHW<->NHWC and dtype conversion through "
                                  "cudnnTransformTensor; graph API transpose, reshape, slice, concatenate)")
    field_order: ClassVar[tuple[str, ...]] = ("kind", "n", "c", "h", "w", "layout", "out_layout", "dtype",
                                              "out_dtype", "permutation", "reshape_to", "axis", "start", "stop",
                                              "concat_size")

    kind: str = "convert"
    h: int = 56
    w: int = 56
    layout: str = "NCHW"
    out_layout: str = "NHWC"
    out_dtype: str = "fp16"
    permutation: str = "0231"
    reshape_to: str = "n,c,hw"
    axis: int = 1
    start: int = 0
    stop: int = 32
    concat_size: int = 64

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._check_tensor()
        self._check_choices("kind", "out_layout", "out_dtype", "permutation", "reshape_to")
        self._set("axis", check_int(name, "axis", self.axis, 0, 3))
        self._set("start", check_int(name, "start", self.start, 0, MAX_DIM))
        self._set("stop", check_int(name, "stop", self.stop, 1, MAX_DIM))
        self._set("concat_size", check_int(name, "concat_size", self.concat_size, 1, MAX_DIM))
        if self.kind != "convert":  # the graph API's structural ops keep the dtype (a conversion is 'convert')
            self._set("out_dtype", self.dtype)
            self._set("out_layout", self.layout)
        if self.kind == "slice":
            extent = self.x_dims[self.axis]
            if self.stop > extent:
                raise SpecError("stop", self.stop, f"is past x's extent along axis {self.axis} ({'nchw'[self.axis]} "
                                f"= {extent}): a slice of x takes start < stop <= {extent}", spec=name)
            if self.start >= self.stop:
                raise SpecError("start", self.start, f"must be below stop ({self.stop}): the slice would be empty",
                                spec=name)
        self.check_elements({"X": ("n", "c", "h", "w"), "Y": ("n", "c", "h", "w"), "X2": ("n", "c", "h", "w")})

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"kind": TRANSFORM_KINDS, "layout": LAYOUTS, "out_layout": LAYOUTS, "dtype": DTYPES,
                "out_dtype": DTYPES, "permutation": PERMUTATIONS, "reshape_to": tuple(RESHAPES)}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """``stop`` from start + 1 to x's extent along ``axis``; ``start`` below stop."""
        dims = [max(read_int(values, f, 1), 1) for f in ("n", "c", "h", "w")]
        axis = min(max(read_int(values, "axis", 1), 0), 3)
        start, stop = max(read_int(values, "start", 0), 0), max(read_int(values, "stop", 1), 1)
        return {"n": (1, MAX_DIM), "c": (1, MAX_DIM), "h": (1, MAX_DIM), "w": (1, MAX_DIM), "axis": (0, 3),
                "start": (0, stop - 1), "stop": (start + 1, dims[axis]), "concat_size": (1, MAX_DIM)}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        used = {"convert": {"out_layout", "out_dtype"}, "transpose": {"permutation"}, "reshape": {"reshape_to"},
                "slice": {"axis", "start", "stop"}, "concatenate": {"axis", "concat_size"}}
        kind = values.get("kind")
        own = used.get(kind, set()) if isinstance(kind, str) else set()
        return frozenset(f for fields in used.values() for f in fields) - own

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        kind = values.get("kind")
        hints = {"axis": "0 n, 1 c, 2 h, 3 w", "permutation": "y's dims from x's", "reshape_to": "merged dims"}
        if isinstance(kind, str) and kind in GRAPH_KIND_NEEDS:
            hints["kind"] = f"runs from cuDNN {GRAPH_KIND_NEEDS[kind][1]}"
        return hints

    # --- the problem's tensors ---------------------------------------------------------------------------------

    @property
    def perm(self) -> tuple[int, ...]:
        """``permutation`` as dim indices: '0231' -> (0, 2, 3, 1)."""
        return tuple(int(ch) for ch in self.permutation)

    @property
    def reshaped_dims(self) -> tuple[int, ...]:
        sizes = dict(zip("nchw", self.x_dims))
        return tuple(math.prod(sizes[ch] for ch in group) for group in self.reshape_to.split(","))

    @property
    def slices(self) -> tuple[tuple[int, int], ...]:
        """(start, stop) of each dim of a slice: the whole extent but along ``axis``."""
        return tuple((self.start, self.stop) if i == self.axis else (0, d) for i, d in enumerate(self.x_dims))

    @property
    def y_dims(self) -> tuple[int, ...]:
        if self.kind == "transpose":
            return tuple(self.x_dims[p] for p in self.perm)
        if self.kind == "reshape":
            return self.reshaped_dims
        if self.kind == "slice":
            return tuple(b - a for a, b in self.slices)
        if self.kind == "concatenate":
            return tuple(d + self.concat_size if i == self.axis else d for i, d in enumerate(self.x_dims))
        return self.x_dims

    @property
    def x2_dims(self) -> tuple[int, ...]:
        return tuple(self.concat_size if i == self.axis else d for i, d in enumerate(self.x_dims))

    def input_names(self) -> tuple[str, ...]:
        return ("X", "X2") if self.kind == "concatenate" else ("X",)

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        shapes: dict[str, tuple[int, ...]] = {"X": self.x_dims}
        if self.kind == "concatenate":
            shapes["X2"] = self.x2_dims
        shapes["Y"] = self.y_dims
        return shapes

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """x (and X2) in ``layout``; y in ``out_layout`` (convert), in x's layout (slice, concatenate) or packed in
        its own dim order (transpose, reshape: the data really moves)."""
        out = super().tensor_strides()
        y = self.y_dims
        if self.kind == "convert":
            out["Y"] = layout_strides(y, self.out_layout)
        elif self.kind in ("transpose", "reshape"):
            out["Y"] = packed_strides(y, tuple(range(len(y))))
        return out

    def tensor_dtypes(self) -> dict[str, str]:
        return {**{n: self.dtype for n in self.input_names()}, "Y": self.out_dtype}

    def flops(self) -> int:
        """One operation (a conversion or a copy) per element written."""
        return math.prod(self.y_dims)

    def min_bytes(self) -> int:
        shapes, dtypes = self.tensor_shapes(), self.tensor_dtypes()
        return sum(math.prod(shapes[n]) * DTYPE_BYTES[dtypes[n]] for n in shapes)

    def label(self) -> str:
        if self.kind == "convert":
            return (f"transform {self.layout} {self.dtype} -> {self.out_layout} {self.out_dtype} n{self.n} c{self.c} "
                    f"{self.h}x{self.w}")
        detail = {"transpose": f"perm {self.permutation}", "reshape": f"to [{self.reshape_to}]",
                  "slice": f"axis {self.axis} {self.start}:{self.stop}",
                  "concatenate": f"axis {self.axis} +{self.concat_size}"}[self.kind]
        return f"transform {self.kind} {detail} {self.dims_label()}"
