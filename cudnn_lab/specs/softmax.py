"""Softmax as an op of its own: cuDNN's classic ``cudnnSoftmaxForward`` over x [n, c, h, w].

The graph API has no softmax node (cuDNN fuses a softmax only inside its SDPA node), so the kit runs this through
the classic call (``gpu/classic/ops.py``). Pure: no torch or cudnn here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from .base import DTYPES, LAYOUTS
from .tensor4d import Tensor4dSpec

#: ``cudnnSoftmaxAlgorithm_t``: accurate subtracts the max before exp (no overflow), fast does not, log gives
#: log(softmax) (computed stably).
SOFTMAX_ALGOS: tuple[str, ...] = ("accurate", "fast", "log")
#: ``cudnnSoftmaxMode_t``: channel normalizes over c at each (n, h, w) (classification logits [n, c, 1, 1] or a
#: per-pixel class map); instance over all of c, h, w of each n.
SOFTMAX_MODES: tuple[str, ...] = ("channel", "instance")
#: Floating-point operations per element counted for throughput: max, subtract, exp, sum, divide.
FLOPS_PER_ELEMENT = 5


@dataclasses.dataclass(frozen=True)
class SoftmaxSpec(Tensor4dSpec):
    """y = softmax(x) (``algo='log'``: log softmax) over c (``mode='channel'``) or over c, h, w (``'instance'``)."""

    op: ClassVar[str] = "softmax"
    menu_order: ClassVar[int] = 70
    title: ClassVar[str] = "softmax"
    description: ClassVar[str] = "softmax: SoftmaxSpec (accurate, fast, log; per channel or instance; classic call)"
    field_order: ClassVar[tuple[str, ...]] = ("algo", "mode", "n", "c", "h", "w", "layout", "dtype")

    n: int = 256
    c: int = 1000
    h: int = 1
    w: int = 1
    algo: str = "accurate"
    mode: str = "channel"

    def __post_init__(self) -> None:
        self._check_tensor()
        self._check_choices("algo", "mode")

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"algo": SOFTMAX_ALGOS, "mode": SOFTMAX_MODES, "layout": LAYOUTS, "dtype": DTYPES}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        return {"mode": "channel: over c; instance: over c, h, w", "algo": "fast: no max subtraction"}

    def reduced_dims(self) -> tuple[int, ...]:
        """The dims of x each softmax normalizes over."""
        return (1,) if self.mode == "channel" else (1, 2, 3)

    def flops(self) -> int:
        return FLOPS_PER_ELEMENT * self.numel

    def label(self) -> str:
        return f"softmax {self.algo} {self.mode} {self.dims_label()}"
