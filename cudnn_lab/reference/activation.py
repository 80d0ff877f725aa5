"""The PyTorch side of activations (:class:`~cudnn_lab.specs.ActivationSpec`): x in its layout, a NaN-poisoned y,
the float64 reference from each mode's formula and PyTorch's own activation for the baseline.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.activation import COEF_DEFAULTS, ActivationSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, expecting, poisoned, uniform, x_only
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "activation"]


_check_spec = expecting(ActivationSpec, "activation")
input_names = x_only


def make_inputs(spec: ActivationSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """X uniform in [-8, 8]: both sides of zero, past clipped ReLU's default ceiling (6) and into tanh's and the
    sigmoid's flat tails."""
    import torch

    spec = _check_spec(spec)
    x = uniform("X", spec.x_dims, spec.tensor_strides()["X"], spec.dtype, seed, -8.0, 8.0, device=device)
    return {"X": x.to(torch.device(device))}


def make_outputs(spec: ActivationSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    return poisoned(_check_spec(spec), ("Y",), device)


def activation(spec: ActivationSpec, x: torch.Tensor) -> torch.Tensor:
    """The mode applied to ``x`` in x's dtype and device, with PyTorch's functions."""
    import torch
    import torch.nn.functional as F

    coef = COEF_DEFAULTS.get(spec.mode, 1.0) if spec.coef is None else spec.coef  # (set for the modes taking one)
    return {
        "relu": lambda: torch.relu(x),
        "sigmoid": lambda: torch.sigmoid(x),
        "tanh": lambda: torch.tanh(x),
        "clipped_relu": lambda: F.hardtanh(x, 0.0, coef),
        "elu": lambda: F.elu(x, alpha=coef),
        "swish": lambda: F.silu(x) if coef == 1.0 else x * torch.sigmoid(coef * x),
    }[spec.mode]()


def _check(spec: ActivationSpec, inputs: Mapping[str, torch.Tensor], flop_limit: float) -> torch.Tensor:
    device = check_inputs(spec, inputs, ("X",))
    check_cpu_work(spec, device, "n", flop_limit=flop_limit)
    return inputs["X"]


def reference_outputs(spec: ActivationSpec, inputs: Mapping[str, torch.Tensor], *,
                      cpu_flop_limit: float = CPU_FLOP_LIMIT) -> dict[str, torch.Tensor]:
    spec = _check_spec(spec)
    return {"Y": activation(spec, _check(spec, inputs, cpu_flop_limit).double())}


def torch_op(spec: ActivationSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    spec = _check_spec(spec)
    x = _check(spec, inputs, cpu_flop_limit)
    return lambda: activation(spec, x)


REFERENCES.add(ActivationSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
