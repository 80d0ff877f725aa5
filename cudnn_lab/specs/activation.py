"""Activations as ops of their own: cuDNN's classic ``cudnnActivationForward`` over x [n, c, h, w].

The graph API offers these as pointwise nodes fused after a conv or matmul (the epilogues); standing alone they run
through the classic call (``gpu/classic/ops.py``). Pure: no torch or cudnn here.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError, shorten
from .base import DTYPES, LAYOUTS, check_float
from .tensor4d import Tensor4dSpec

#: Each activation and what it computes (``cudnnActivationMode_t``); ``coef`` is the coefficient it takes.
ACTIVATIONS: dict[str, str] = {
    "relu": "max(x, 0)",
    "sigmoid": "1 / (1 + exp(-x))",
    "tanh": "tanh(x)",
    "clipped_relu": "min(max(x, 0), coef) (coef: the ceiling)",
    "elu": "x if x > 0 else coef * (exp(x) - 1) (coef: alpha)",
    "swish": "x * sigmoid(coef * x) (coef: beta; 1 is SiLU)",
}
#: The modes that take ``coef``, with its default (PyTorch's ReLU6, ELU and SiLU).
COEF_DEFAULTS: dict[str, float] = {"clipped_relu": 6.0, "elu": 1.0, "swish": 1.0}
MAX_COEF = 1e4


class IgnoredFieldWarning(UserWarning):
    """A spec field was given a value that the spec ignores as set (e.g. ``coef`` for relu); the value is dropped."""


#: Floating-point operations per element counted for throughput.
FLOPS_PER_ELEMENT: dict[str, int] = {"relu": 1, "sigmoid": 4, "tanh": 5, "clipped_relu": 2, "elu": 4, "swish": 5}


@dataclasses.dataclass(frozen=True)
class ActivationSpec(Tensor4dSpec):
    """y = activation(x) elementwise. ``coef`` (clipped_relu's ceiling, elu's alpha, swish's beta) defaults to
    6, 1 and 1; the modes without a coefficient take none: a coef given to them is dropped (it reads back as None)
    with an :class:`IgnoredFieldWarning` naming it, and ``replace(mode=...)`` to such a mode drops it quietly; a coef
    no mode takes (text, NaN, out of range) is a SpecError whatever the mode."""

    op: ClassVar[str] = "activation"
    menu_order: ClassVar[int] = 80
    title: ClassVar[str] = "activation"
    description: ClassVar[str] = ("activations: ActivationSpec (ReLU, sigmoid, tanh, clipped ReLU, ELU, swish; "
                                  "classic call)")
    field_order: ClassVar[tuple[str, ...]] = ("mode", "coef", "n", "c", "h", "w", "layout", "dtype")

    mode: str = "relu"
    coef: float | None = None

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._check_tensor()
        self._check_choices("mode")
        if self.mode not in COEF_DEFAULTS:
            if self.coef is not None:
                try:  # junk is refused, not dropped: only a coefficient another mode could take is ignored
                    check_float(name, "coef", self.coef, 0.0, MAX_COEF, lo_open=True)
                except SpecError as e:
                    raise SpecError("coef", self.coef, f"{e.allowed}; mode {self.mode!r} takes none: leave coef out",
                                    spec=name) from None
                warnings.warn(f"{name}.coef={shorten(self.coef, 40)} is ignored: mode {self.mode!r} takes no "
                              f"coefficient (only {', '.join(COEF_DEFAULTS)} do); leave coef out (it reads back as "
                              "None)", IgnoredFieldWarning, stacklevel=3)
            self._set("coef", None)
            return
        coef = COEF_DEFAULTS[self.mode] if self.coef is None else self.coef
        coef = check_float(name, "coef", coef, 0.0, MAX_COEF, lo_open=True)
        if self.mode == "clipped_relu" and coef < 1e-3:
            raise SpecError("coef", coef, "is clipped_relu's ceiling: at least 1e-3 (a smaller one maps every x "
                            "to about 0)", spec=name)
        self._set("coef", coef)

    def replace(self, **changes: Any) -> ActivationSpec:
        """A validated copy; a change of ``mode`` to one without a coefficient drops ``coef`` (no warning: it came
        with the old mode), so sweeps over ``mode`` keep working. A coef given with such a mode still warns."""
        mode = changes.get("mode")
        if "coef" not in changes and isinstance(mode, str) and mode in ACTIVATIONS and mode not in COEF_DEFAULTS:
            changes["coef"] = None
        return super().replace(**changes)

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"mode": tuple(ACTIVATIONS), "layout": LAYOUTS, "dtype": DTYPES}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        return frozenset() if values.get("mode") in COEF_DEFAULTS else frozenset({"coef"})

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        mode = values.get("mode")
        return {"coef": {"clipped_relu": "ceiling", "elu": "alpha", "swish": "beta"}.get(mode, "")
                if isinstance(mode, str) else ""}

    def flops(self) -> int:
        return FLOPS_PER_ELEMENT[self.mode] * self.numel

    def label(self) -> str:
        coef = f"({self.coef:g})" if self.coef is not None else ""
        return f"activation {self.mode}{coef} {self.dims_label()}"
