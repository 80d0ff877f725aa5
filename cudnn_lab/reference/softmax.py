"""The PyTorch side of softmax (:class:`~cudnn_lab.specs.SoftmaxSpec`): x in its layout, a NaN-poisoned y, the
float64 reference and PyTorch's own (log_)softmax.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.softmax import SoftmaxSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, expecting, poisoned, uniform, x_only
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "softmax"]


_check_spec = expecting(SoftmaxSpec, "softmax")
input_names = x_only


def make_inputs(spec: SoftmaxSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """X uniform in [-4, 4]: logits spread enough that the softmax is far from uniform."""
    import torch

    spec = _check_spec(spec)
    x = uniform("X", spec.x_dims, spec.tensor_strides()["X"], spec.dtype, seed, -4.0, 4.0, device=device)
    return {"X": x.to(torch.device(device))}


def make_outputs(spec: SoftmaxSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    return poisoned(_check_spec(spec), ("Y",), device)


def softmax(spec: SoftmaxSpec, x: torch.Tensor) -> torch.Tensor:
    """(log_)softmax of ``x`` over c (channel) or c, h, w (instance), in x's dtype and device."""
    import torch

    fn = torch.log_softmax if spec.algo == "log" else torch.softmax
    if spec.mode == "channel":
        return fn(x, dim=1)
    return fn(x.reshape(x.shape[0], -1), dim=1).reshape(x.shape)


def _check(spec: SoftmaxSpec, inputs: Mapping[str, torch.Tensor], flop_limit: float) -> torch.Tensor:
    device = check_inputs(spec, inputs, ("X",))
    check_cpu_work(spec, device, "n", flop_limit=flop_limit)
    return inputs["X"]


def reference_outputs(spec: SoftmaxSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Y in float64 (every algo's exact answer: fast differs from accurate only in overflow behaviour)."""
    spec = _check_spec(spec)
    return {"Y": softmax(spec, _check(spec, inputs, cpu_flop_limit).double())}


def torch_op(spec: SoftmaxSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    spec = _check_spec(spec)
    x = _check(spec, inputs, cpu_flop_limit)
    return lambda: softmax(spec, x)


REFERENCES.add(SoftmaxSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
