"""The PyTorch side of convolutions (:class:`~cudnn_lab.specs.ConvSpec`): ``conv2d`` for fprop (then the epilogue),
``torch.nn.grad.conv2d_input`` / ``conv2d_weight`` for dgrad and wgrad."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..specs import ConvSpec
from ..specs.base import pair
from . import epilogue, fp8
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch


def fan_in(spec: ConvSpec) -> int:
    """How many products the op sums per output element (about): sets the scale that keeps outputs O(1)."""
    (sh, sw), g = pair(spec.stride), spec.groups
    p, q = spec.out_hw
    return {"fprop": spec.c // g * spec.r * spec.s,
            "dgrad": max(1, spec.k // g * math.ceil(spec.r / sh) * math.ceil(spec.s / sw)),
            "wgrad": spec.n * p * q}[spec.direction]


def compute(spec: ConvSpec, t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The spec's convolution (and epilogue) on tensors ``t`` in their own dtype."""
    import torch

    geom = dict(stride=pair(spec.stride), padding=pair(spec.padding), dilation=pair(spec.dilation),
                groups=spec.groups)
    if spec.direction == "fprop":
        return epilogue.apply_epilogue(spec, torch.nn.functional.conv2d(t["X"], t["W"], **geom), t)
    if spec.direction == "dgrad":
        return torch.nn.grad.conv2d_input(spec.x_dims, t["W"], t["DY"], **geom)
    return torch.nn.grad.conv2d_weight(t["X"], spec.w_dims, t["DY"], **geom)


def make_inputs(spec: ConvSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    return epilogue.make_inputs(spec, fan_in(spec), device=device, seed=seed)


reference_outputs, torch_op = epilogue.functions(compute, "n")

_PLAIN = Reference(epilogue.input_names, make_inputs, epilogue.make_outputs, reference_outputs, torch_op)
# FP8 (spec.fp8, forward only): quantized X and W with their descales, the reference from the same FP8 values.
REFERENCES.add(ConvSpec, fp8.dispatch(_PLAIN, fp8.fp8_family(compute, fan_in, "n")))
