"""A reduction on its own: r = reduce(x) over some axes of x [n, c, h, w], as the graph API's ``reduction`` node.

cuDNN's ``reduction_mode`` has ADD, MUL, MIN, MAX, AMAX, AVG, NORM1, NORM2 and MUL_NO_ZEROS; the output keeps x's
rank with the reduced dims set to 1 and is float32. cuDNN 9.19 on Hopper (H200, 2026-11-26; ``scripts/
probe_reductions.py``) ran NHWC reductions ADD, MAX, MIN and AMAX over c (a row), n, h, w (a column) or everything
(5 plans, engine 1, exact or within 1e-6); it declined NCHW ("!is_NHWC"), axes hw and chw (neither a row, a column
nor all), MUL ("Unsupported reduction op") and AVG, NORM1, NORM2, MUL_NO_ZEROS (for AVG and NORM2 the reduction
descriptor's own finalize said CUDNN_STATUS_NOT_SUPPORTED, before any engine was asked, so cuDNN gives no per-engine
reason; the other two answered alike, no reasons seen). The spec keeps every mode and axis:
where no engine takes a graph, ``cl.run`` raises UnsupportedGraphError with cuDNN's per-engine reasons (``why_not``)
and :meth:`ReductionSpec.support_hint`. Pure: no torch or cudnn here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from .base import DTYPE_BYTES, DTYPES, LAYOUTS
from .tensor4d import Tensor4dSpec
from .tolerance import CUDNN_SOURCE, TORCH_SOURCE, ToleranceBand

#: cuDNN's ``reduction_mode`` members (lower-cased), NOT_SET left out.
REDUCTION_MODES: tuple[str, ...] = ("add", "mul", "min", "max", "amax", "avg", "norm1", "norm2", "mul_no_zeros")
#: What ran standalone on cuDNN 9.19, Hopper (NHWC only; H200, 2026-11-26), for the hint when nothing does.
RAN_MODES: tuple[str, ...] = ("add", "max", "min", "amax")
RAN_AXES: tuple[str, ...] = ("c", "nhw", "nchw")
#: Which dims of x are reduced (set to 1 in r): over channels, over space, per channel (batch statistics), per
#: sample, or everything.
REDUCTION_AXES: dict[str, tuple[int, ...]] = {"c": (1,), "hw": (2, 3), "nhw": (0, 2, 3), "chw": (1, 2, 3),
                                              "nchw": (0, 1, 2, 3)}


@dataclasses.dataclass(frozen=True)
class ReductionSpec(Tensor4dSpec):
    """r = reduce(x) with ``mode`` over ``axes`` of x [n, c, h, w] (``layout``, ``dtype``); r float32 with the
    reduced dims 1 (``axes='nhw'``: r [1, c, 1, 1], a per-channel sum as batch norm needs)."""

    op: ClassVar[str] = "reduction"
    menu_order: ClassVar[int] = 160
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "mode")
    # It reads x exactly and accumulates and writes float32 whatever x's dtype, so its bands are float32's: an fp16
    # band would pass a sum off by 0.5% (measured: rel. L2 <= 6e-7, max/min exact).
    tolerances: ClassVar[Mapping[str, Mapping[str, Mapping[str, ToleranceBand]]]] = {"reduction": {
        d: {"torch": ToleranceBand(1.3e-6, 1e-5, TORCH_SOURCE + " for fp32 (the output's type)"),
            "cudnn": ToleranceBand(1e-3, 1e-3, CUDNN_SOURCE + " for fp32 (the output's type)")}
        for d in ("fp16", "bf16")}}
    title: ClassVar[str] = "reduction"
    description: ClassVar[str] = ("reduction: ReductionSpec (add, mul, min, max, amax, avg, norms over chosen axes; "
                                  "graph API reduction node)")
    field_order: ClassVar[tuple[str, ...]] = ("mode", "axes", "n", "c", "h", "w", "layout", "dtype")

    mode: str = "add"
    axes: str = "nhw"

    def __post_init__(self) -> None:
        self._check_x()  # a graph API node: check_elements below bounds its size, not the classic 32-bit limit
        self._check_choices("mode", "axes")
        self.check_elements({"X": ("n", "c", "h", "w"), "R": ("n", "c", "h", "w")})

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"mode": REDUCTION_MODES, "axes": tuple(REDUCTION_AXES), "layout": LAYOUTS, "dtype": DTYPES}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        return {"axes": "the dims reduced (nhw: per channel)", "mode": "amax: max |x|; norm2: sqrt(sum x^2)"}

    @property
    def reduced(self) -> tuple[int, ...]:
        """The dims of x (0..3 in N, C, H, W order) the reduction runs over."""
        return REDUCTION_AXES[self.axes]

    @property
    def r_dims(self) -> tuple[int, int, int, int]:
        n, c, h, w = self.x_dims
        return tuple(1 if i in self.reduced else d for i, d in enumerate((n, c, h, w)))  # type: ignore[return-value]

    def input_names(self) -> tuple[str, ...]:
        return ("X",)

    def output_names(self) -> tuple[str, ...]:
        return ("R",)

    def io_names(self) -> tuple[tuple[str, ...], str]:
        return ("X",), "R"

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"X": self.x_dims, "R": self.r_dims}

    def tensor_dtypes(self) -> dict[str, str]:
        """x in ``dtype``; r in float32 (cuDNN's reductions accumulate and write float)."""
        return {"X": self.dtype, "R": "fp32"}

    def flops(self) -> int:
        """One operation per element of x."""
        return self.numel

    def min_bytes(self) -> int:
        return self.numel * DTYPE_BYTES[self.dtype] + math.prod(self.r_dims) * DTYPE_BYTES["fp32"]

    def support_hint(self) -> str:
        """What to try when cuDNN has no engine (what ran on 9.19, Hopper: the module's docstring)."""
        return (f"cuDNN 9.19 on Hopper ran standalone reductions only in NHWC, with modes {', '.join(RAN_MODES)} "
                f"over axes {', '.join(RAN_AXES)} (this is {self.layout} {self.mode} over {self.axes}); a reduction "
                "can also be fused after a convolution (ConvReductionSpec).")

    def label(self) -> str:
        return f"reduction({self.mode} over {self.axes}) {self.dims_label()}"
