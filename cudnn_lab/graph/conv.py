"""Convolutions as recipes: one ``conv_fprop``, ``conv_dgrad`` or ``conv_wgrad`` call with the layout's strides, then
the pointwise epilogue chain (forward only). Pure: no cudnn import here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..specs import ConvSpec
from ..specs.base import pair
from ..specs.layout import layout_strides
from .block_scale import BLOCK_SCALED, BlockProduct, BlockTypes
from .epilogue import epilogue_code, with_epilogue
from .families import RECIPES, REFERENCE_CODE
from .fp8 import scaled_recipe, scaled_reference_code
from .recipe import OpDecl, Recipe, TensorDecl, data_type

#: The frontend's keywords for the two operands of each direction.
_PORTS = {"fprop": ("image", "weight"), "dgrad": ("loss", "filter"), "wgrad": ("image", "loss")}


def conv_call(spec: Any, sides: Callable[[Any], tuple[int, ...]]) -> tuple[list[TensorDecl], OpDecl]:
    """The input operands of a 2-D or 3-D convolution in the spec's layout and its call, padding, stride and dilation
    as lists of ``sides(value)`` (:func:`~cudnn_lab.specs.base.pair` or :func:`~cudnn_lab.specs.conv3d.triple`)."""
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    ins, out = spec.io_names()
    tensors = [TensorDecl(n, shapes[n], strides[n], spec.dtype, "input") for n in ins]
    params = (("padding", list(sides(spec.padding))), ("stride", list(sides(spec.stride))),
              ("dilation", list(sides(spec.dilation))), ("compute_data_type", data_type(spec.compute_dtype)))
    method = f"conv_{spec.direction}"
    return tensors, OpDecl(method, method, tuple(zip(_PORTS[spec.direction], ins)), params, out)


def conv_geometry(spec: Any, sides: Callable[[Any], tuple[int, ...]]) -> str:
    """PyTorch's keyword arguments for the convolution's geometry: stride, padding, dilation and groups."""
    return (f"stride={list(sides(spec.stride))}, padding={list(sides(spec.padding))}, "
            f"dilation={list(sides(spec.dilation))}, groups={spec.groups}")


def conv_reference_lines(spec: Any, geo: str, nd: str) -> list[str]:
    """The script's float64 reference of a ``nd`` ("2d", "3d") convolution: ``torch.nn.functional.conv{nd}`` or
    ``torch.nn.grad.conv{nd}_input`` / ``conv{nd}_weight``, then the epilogue."""
    if spec.direction == "fprop":
        lines = [f"y = torch.nn.functional.conv{nd}(inputs['X'].double(), inputs['W'].double(), {geo})"]
    elif spec.direction == "dgrad":
        lines = [f"y = torch.nn.grad.conv{nd}_input({list(spec.x_dims)}, inputs['W'].double(), "
                 f"inputs['DY'].double(), {geo})"]
    else:
        lines = [f"y = torch.nn.grad.conv{nd}_weight(inputs['X'].double(), {list(spec.w_dims)}, "
                 f"inputs['DY'].double(), {geo})"]
    return [*lines, *epilogue_code(spec.epilogue), "return y"]


@RECIPES.register(ConvSpec)
def recipe(spec: ConvSpec) -> Recipe:
    """The operands in the spec's layout, the convolution call, then the epilogue."""
    tensors, main = conv_call(spec, pair)
    if spec.fp8:
        return scaled_recipe(spec, main, ("X", "W"))
    return with_epilogue(spec, tensors, main)


@REFERENCE_CODE.register(ConvSpec)
def reference_code(spec: ConvSpec) -> list[str]:
    """The script's float64 reference: ``conv2d`` or the gradient functions of ``torch.nn.grad``, then the epilogue."""
    geo = conv_geometry(spec, pair)
    if spec.fp8:
        return scaled_reference_code(f"torch.nn.functional.conv2d(a, b, {geo})", ("X", "W"))
    return conv_reference_lines(spec, geo, "2d")


@BLOCK_SCALED.register(ConvSpec)
def block_scaled_product(g: Any, spec: ConvSpec, t: BlockTypes) -> BlockProduct:
    """X and W channels-last, blocked along C, their scales likewise, dequantized, then conv_fprop. cuDNN 9.19's
    backend refuses the conv's block size [1, bs, 1, 1] (BAD_PARAM, seen 2026-11-26): it takes matrix-style block
    sizes only, so this graph is cuDNN's refusal to quote."""
    bs = t.block_size
    x_dims, w_dims = spec.x_dims, spec.w_dims
    sx_dims = (x_dims[0], -(-x_dims[1] // bs), *x_dims[2:])
    sw_dims = (w_dims[0], -(-w_dims[1] // bs), *w_dims[2:])

    def nhwc(dims: tuple[int, ...]) -> list[int]:
        return list(layout_strides(dims, "NHWC"))

    x = g.tensor(name="X", dim=list(x_dims), stride=nhwc(x_dims), data_type=t.element)
    w = g.tensor(name="W", dim=list(w_dims), stride=nhwc(w_dims), data_type=t.element)
    sx = g.tensor(name="SFX", dim=list(sx_dims), stride=nhwc(sx_dims), data_type=t.scale)
    sw = g.tensor(name="SFW", dim=list(sw_dims), stride=nhwc(sw_dims), data_type=t.scale, reordering_type=t.reorder)
    xd = g.block_scale_dequantize(x, sx, block_size=[1, bs, 1, 1], compute_data_type=t.compute, name="dequantize_X")
    wd = g.block_scale_dequantize(w, sw, block_size=[1, bs, 1, 1], compute_data_type=t.compute, name="dequantize_W")
    out = g.conv_fprop(xd, wd, pre_padding=list(pair(spec.padding)), post_padding=list(pair(spec.padding)),
                       stride=list(pair(spec.stride)), dilation=list(pair(spec.dilation)), compute_data_type=t.compute,
                       name="conv_fprop")
    return BlockProduct(out, (1, 1, 1, 1), "Y")
