"""The PyTorch side of :class:`~cudnn_lab.specs.ReductionSpec`: x in its layout, a NaN-poisoned float32 r, the
float64 reference and the same reduction in PyTorch eager (float32 accumulation, as cuDNN's float output).

Inputs by mode, so every result is O(1) and far from zero: sums and averages of x in [0, 1]; norms, min, max and
amax of x in [-1, 1]; products of x in [0.99, 1.01] (a product of thousands stays near 1), every seventh element 0
for ``mul_no_zeros`` (the zeros it skips). torch is imported inside the functions that need it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.reduction import ReductionSpec
from .common import CPU_FLOP_LIMIT, checked_device, expect, poisoned, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "reduce"]

#: The input range of each mode (see the module's docstring).
INPUT_RANGES: dict[str, tuple[float, float]] = {
    "add": (0.0, 1.0), "avg": (0.0, 1.0), "mul": (0.99, 1.01), "mul_no_zeros": (0.99, 1.01),
    "min": (-1.0, 1.0), "max": (-1.0, 1.0), "amax": (-1.0, 1.0), "norm1": (-1.0, 1.0), "norm2": (-1.0, 1.0)}


def _spec(spec: object) -> ReductionSpec:
    return expect(spec, ReductionSpec, "reduction")


def input_names(spec: ReductionSpec) -> tuple[str, ...]:
    return _spec(spec).input_names()


def make_inputs(spec: ReductionSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    import torch

    spec = _spec(spec)
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    x = uniform("X", shapes["X"], strides["X"], dtypes["X"], seed, *INPUT_RANGES[spec.mode], device=device)
    if spec.mode == "mul_no_zeros":
        flat = torch.arange(x.numel(), device=x.device).reshape(x.shape)
        x = x.masked_fill(flat % 7 == 0, 0.0)
    return {"X": x.to(torch.device(device))}


def make_outputs(spec: ReductionSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    spec = _spec(spec)
    return poisoned(spec, spec.output_names(), device)


def reduce(spec: ReductionSpec, x: torch.Tensor) -> torch.Tensor:
    """``spec``'s reduction of ``x`` in ``x``'s dtype, keeping the reduced dims as 1."""
    import torch

    d = spec.reduced

    def prod(t: torch.Tensor) -> torch.Tensor:
        for dim in d:  # torch.prod takes one dim at a time
            t = t.prod(dim=dim, keepdim=True)
        return t

    ops: dict[str, Callable[[], torch.Tensor]] = {
        "add": lambda: x.sum(dim=d, keepdim=True),
        "mul": lambda: prod(x),
        "min": lambda: x.amin(dim=d, keepdim=True),
        "max": lambda: x.amax(dim=d, keepdim=True),
        "amax": lambda: x.abs().amax(dim=d, keepdim=True),
        "avg": lambda: x.mean(dim=d, keepdim=True),
        "norm1": lambda: x.abs().sum(dim=d, keepdim=True),
        "norm2": lambda: x.square().sum(dim=d, keepdim=True).sqrt(),
        "mul_no_zeros": lambda: prod(torch.where(x == 0, torch.ones_like(x), x)),
    }
    return ops[spec.mode]()


def reference_outputs(spec: ReductionSpec, inputs: Mapping[str, torch.Tensor], *,
                      cpu_flop_limit: float = CPU_FLOP_LIMIT) -> dict[str, torch.Tensor]:
    """R in float64."""
    spec = _spec(spec)
    checked_device(spec, inputs, cpu_flop_limit, what="element operations")
    return {"R": reduce(spec, inputs["X"].double())}


def torch_op(spec: ReductionSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """The reduction in PyTorch eager on x converted to float32 (cuDNN's float accumulation and output)."""
    spec = _spec(spec)
    checked_device(spec, inputs, cpu_flop_limit, what="element operations")
    x = inputs["X"]
    return lambda: reduce(spec, x.float())


REFERENCES.add(ReductionSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
