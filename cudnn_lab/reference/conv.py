"""The PyTorch side of convolutions (:class:`~cudnn_lab.specs.ConvSpec`): ``conv2d`` for fprop (then the epilogue),
``torch.nn.grad.conv2d_input`` / ``conv2d_weight`` for dgrad and wgrad."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs import ConvSpec
from ..specs.base import pair
from . import epilogue, fp8
from .families import BLOCK_PRODUCTS, REFERENCES, BlockProduct, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch


def fan_in(spec: ConvSpec) -> int:
    """How many products the op sums per output element (about): sets the scale that keeps outputs O(1)."""
    (sh, sw), g = pair(spec.stride), spec.groups
    p, q = spec.out_hw
    return {"fprop": spec.c // g * spec.r * spec.s,
            "dgrad": max(1, spec.k // g * math.ceil(spec.r / sh) * math.ceil(spec.s / sw)),
            "wgrad": spec.n * p * q}[spec.direction]


def convolve(spec: Any, t: Mapping[str, torch.Tensor], sides: Callable[[Any], tuple[int, ...]],
             nd: int) -> torch.Tensor:
    """A 2-D or 3-D (``nd``) convolution spec's op (and epilogue) on tensors ``t`` in their own dtype, padding,
    stride and dilation as ``sides(value)`` (:func:`~cudnn_lab.specs.base.pair` or
    :func:`~cudnn_lab.specs.conv3d.triple`)."""
    import torch

    geom = dict(stride=sides(spec.stride), padding=sides(spec.padding), dilation=sides(spec.dilation),
                groups=spec.groups)
    if spec.direction == "fprop":
        conv = torch.nn.functional.conv2d if nd == 2 else torch.nn.functional.conv3d
        return epilogue.apply_epilogue(spec, conv(t["X"], t["W"], **geom), t)
    # What autograd calls in a training step, with the tensor that is not needed as an empty placeholder in the
    # others' memory format. (torch.nn.grad.conv2d_input/_weight pass a 1-element tensor expanded to the shape,
    # which PyTorch reads as NCHW: an NHWC dgrad then ran ~4.7x slower than cuDNN's, docs/FINDINGS.md.)
    like = t["DY"]
    last = torch.channels_last if nd == 2 else torch.channels_last_3d
    fmt = last if like.dim() == nd + 2 and like.is_contiguous(memory_format=last) and not like.is_contiguous() \
        else torch.contiguous_format
    args = (sides(spec.stride), sides(spec.padding), sides(spec.dilation), False, [0] * nd, spec.groups)

    def empty(dims: Any) -> torch.Tensor:  # allocated in its format (no copy kernel inside a timed baseline)
        return torch.empty(tuple(dims), dtype=like.dtype, device=like.device, memory_format=fmt)

    if spec.direction == "dgrad":
        return torch.ops.aten.convolution_backward(t["DY"], empty(spec.x_dims), t["W"], None, *args,
                                                   (True, False, False))[0]
    return torch.ops.aten.convolution_backward(t["DY"], t["X"], empty(spec.w_dims), None, *args,
                                               (False, True, False))[1]


def compute(spec: ConvSpec, t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The spec's convolution (and epilogue) on tensors ``t`` in their own dtype."""
    return convolve(spec, t, pair, 2)


def make_inputs(spec: ConvSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    return epilogue.make_inputs(spec, fan_in(spec), device=device, seed=seed)


reference_outputs, torch_op = epilogue.functions(compute, "n")

_PLAIN = Reference(epilogue.input_names, make_inputs, epilogue.make_outputs, reference_outputs, torch_op)
# FP8 (spec.fp8, forward only): quantized X and W with their descales, the reference from the same FP8 values.
REFERENCES.add(ConvSpec, fp8.dispatch(_PLAIN, fp8.fp8_family(compute, fan_in, "n")))


@BLOCK_PRODUCTS.register(ConvSpec)
def block_product(spec: ConvSpec) -> BlockProduct:
    """A forward convolution (one group), X and W blocked along C; an outlier pixel of X reaches the output pixels
    whose window holds it."""
    import torch

    geom = dict(stride=pair(spec.stride), padding=pair(spec.padding), dilation=pair(spec.dilation))

    def product(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.conv2d(x, w, **geom)

    def touched(rows: torch.Tensor) -> torch.Tensor:
        ones = torch.ones((1, 1, spec.r, spec.s), dtype=torch.float64)
        return torch.nn.functional.conv2d(rows.to(torch.float64), ones, **geom) > 0  # [n, 1, p, q]

    return BlockProduct("X", "W", {"X": 1, "W": 1}, spec.c * spec.r * spec.s, "n", product, touched)
