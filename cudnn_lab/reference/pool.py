"""The PyTorch side of pooling (:class:`~cudnn_lab.specs.PoolSpec`): X in the real layout, a NaN-poisoned Y,
the float64 reference and PyTorch's own pooling.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..specs.base import pair
from ..specs.pool import PoolSpec
from .common import x_to_y_reference
from .families import REFERENCES

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "pool"]


def pool(spec: PoolSpec, x: torch.Tensor) -> torch.Tensor:
    """The spec's pooling of ``x`` with PyTorch, in ``x``'s own dtype and device."""
    import torch.nn.functional as F

    window, stride, padding = pair(spec.window), pair(spec.stride), pair(spec.padding)
    if spec.mode == "max":
        return F.max_pool2d(x, kernel_size=window, stride=stride, padding=padding)
    return F.avg_pool2d(x, kernel_size=window, stride=stride, padding=padding, count_include_pad=spec.mode == "avg")


#: X uniform in [-1, 1], in the spec's dtype and layout (NHWC: channels_last strides): negative values catch a max
#: that treats the padding as zeros. Y in float64 on X's device: max_pool2d, or avg_pool2d with count_include_pad
#: as the mode says; the baseline runs the same pooling in PyTorch eager, native dtype.
REFERENCE = x_to_y_reference(PoolSpec, "pooling", pool, work="window operations")
input_names, make_inputs, make_outputs = REFERENCE.input_names, REFERENCE.make_inputs, REFERENCE.make_outputs
reference_outputs, torch_op = REFERENCE.reference_outputs, REFERENCE.torch_op
REFERENCES.add(PoolSpec, REFERENCE)
