"""The PyTorch side of 3-D convolutions (:class:`~cudnn_lab.specs.conv3d.Conv3dSpec`): ``conv3d`` for fprop (then
the epilogue), ``aten.convolution_backward`` for dgrad and wgrad (what autograd calls in a training step). The
float64 reference runs the same code on float64 copies; PyTorch's own op (the baseline) runs it in the native dtype
and memory format (channels_last_3d for NDHWC), through PyTorch's cuDNN path where it takes the layer."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..specs.conv3d import Conv3dSpec, triple
from . import epilogue
from .conv import convolve
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch


def fan_in(spec: Conv3dSpec) -> int:
    """How many products the op sums per output element (about): sets the scale that keeps outputs O(1)."""
    (sd, sh, sw), g = triple(spec.stride), spec.groups
    return {"fprop": spec.c // g * spec.t * spec.r * spec.s,
            "dgrad": max(1, spec.k // g * math.ceil(spec.t / sd) * math.ceil(spec.r / sh) * math.ceil(spec.s / sw)),
            "wgrad": spec.n * math.prod(spec.out_dhw)}[spec.direction]


def compute(spec: Conv3dSpec, t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The spec's 3-D convolution (and epilogue) on tensors ``t`` in their own dtype (channels_last_3d kept for
    NDHWC)."""
    return convolve(spec, t, triple, 3)


def make_inputs(spec: Conv3dSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Uniform [-1, 1] inputs in the layout's strides, the second operand scaled by 1/sqrt(fan_in)."""
    return epilogue.make_inputs(spec, fan_in(spec), device=device, seed=seed)


reference_outputs, torch_op = epilogue.functions(compute, "n")

REFERENCES.add(Conv3dSpec, Reference(epilogue.input_names, make_inputs, epilogue.make_outputs, reference_outputs,
                                     torch_op))
