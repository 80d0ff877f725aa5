"""The PyTorch side of softmax (:class:`~cudnn_lab.specs.SoftmaxSpec`): x in its layout, a NaN-poisoned y, the
float64 reference and PyTorch's own (log_)softmax.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..specs.softmax import SoftmaxSpec
from .common import x_to_y_reference
from .families import REFERENCES

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "softmax"]


def softmax(spec: SoftmaxSpec, x: torch.Tensor) -> torch.Tensor:
    """(log_)softmax of ``x`` over c (channel) or c, h, w (instance), in x's dtype and device."""
    import torch

    fn = torch.log_softmax if spec.algo == "log" else torch.softmax
    if spec.mode == "channel":
        return fn(x, dim=1)
    return fn(x.reshape(x.shape[0], -1), dim=1).reshape(x.shape)


#: X uniform in [-4, 4]: logits spread enough that the softmax is far from uniform; Y in float64 is every algo's
#: exact answer (fast differs from accurate only in overflow behaviour).
REFERENCE = x_to_y_reference(SoftmaxSpec, "softmax", softmax, x_range=(-4.0, 4.0))
input_names, make_inputs, make_outputs = REFERENCE.input_names, REFERENCE.make_inputs, REFERENCE.make_outputs
reference_outputs, torch_op = REFERENCE.reference_outputs, REFERENCE.torch_op
REFERENCES.add(SoftmaxSpec, REFERENCE)
