"""The PyTorch side of activations (:class:`~cudnn_lab.specs.ActivationSpec`): x in its layout, a NaN-poisoned y,
the float64 reference from each mode's formula and PyTorch's own activation for the baseline.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..specs.activation import COEF_DEFAULTS, ActivationSpec
from .common import x_to_y_reference
from .families import REFERENCES

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "activation"]


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


#: X uniform in [-8, 8]: both sides of zero, past clipped ReLU's default ceiling (6) and into tanh's and the
#: sigmoid's flat tails.
REFERENCE = x_to_y_reference(ActivationSpec, "activation", activation, x_range=(-8.0, 8.0))
input_names, make_inputs, make_outputs = REFERENCE.input_names, REFERENCE.make_inputs, REFERENCE.make_outputs
reference_outputs, torch_op = REFERENCE.reference_outputs, REFERENCE.torch_op
REFERENCES.add(ActivationSpec, REFERENCE)
