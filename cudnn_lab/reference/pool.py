"""The PyTorch side of pooling (:class:`~cudnn_lab.specs.PoolSpec`): X in the real layout, a NaN-poisoned Y,
the float64 reference and PyTorch's own pooling.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..specs.base import pair
from ..specs.pool import PoolSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, expecting, poisoned, uniform, x_only
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "pool"]


_check_spec = expecting(PoolSpec, "pooling")
input_names = x_only


def make_inputs(spec: PoolSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """X uniform in [-1, 1], never zeros, in the spec's dtype and layout (NHWC: channels_last strides), from a CPU
    generator seeded by ``seed``. Negative values catch a max that treats the padding as zeros."""
    import torch

    spec = _check_spec(spec)
    x = uniform("X", spec.x_dims, spec.tensor_strides()["X"], spec.dtype, seed, device=device)
    return {"X": x.to(torch.device(device))}  # preserve_format: a dense tensor keeps its strides


def make_outputs(spec: PoolSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Y with the layout's strides, filled with NaN so any element cuDNN never writes shows up."""
    return poisoned(_check_spec(spec), ("Y",), device)


def pool(spec: PoolSpec, x: torch.Tensor) -> torch.Tensor:
    """The spec's pooling of ``x`` with PyTorch, in ``x``'s own dtype and device."""
    import torch.nn.functional as F

    window, stride, padding = pair(spec.window), pair(spec.stride), pair(spec.padding)
    if spec.mode == "max":
        return F.max_pool2d(x, kernel_size=window, stride=stride, padding=padding)
    return F.avg_pool2d(x, kernel_size=window, stride=stride, padding=padding, count_include_pad=spec.mode == "avg")


def _check(spec: PoolSpec, inputs: dict[str, torch.Tensor], flop_limit: float) -> torch.Tensor:
    """X is there with its shape and, on the CPU, the problem is small enough; returns X."""
    device = check_inputs(spec, inputs, ("X",))
    check_cpu_work(spec, device, "n", flop_limit=flop_limit, what="window operations")
    return inputs["X"]


def reference_outputs(spec: PoolSpec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Y in float64 on X's device: max_pool2d, or avg_pool2d with count_include_pad as the mode says."""
    spec = _check_spec(spec)
    x = _check(spec, inputs, cpu_flop_limit)
    return {"Y": pool(spec, x.double())}


def torch_op(spec: PoolSpec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """A zero-argument callable running the same pooling in PyTorch eager, native dtype, on X's device."""
    spec = _check_spec(spec)
    x = _check(spec, inputs, cpu_flop_limit)
    return lambda: pool(spec, x)


REFERENCES.add(PoolSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
