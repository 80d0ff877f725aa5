"""3-D convolutions as recipes: one ``conv_fprop``, ``conv_dgrad`` or ``conv_wgrad`` call on 5-D tensors with the
layout's strides and padding/stride/dilation as (depth, height, width) lists, then the pointwise epilogue chain
(forward only). Pure: no cudnn import here."""

from __future__ import annotations

from ..specs.conv3d import Conv3dSpec, triple
from .epilogue import epilogue_code, with_epilogue
from .families import RECIPES, REFERENCE_CODE
from .recipe import OpDecl, Recipe, TensorDecl, data_type

#: The frontend's keywords for the two operands of each direction (as for 2-D convolutions).
_PORTS = {"fprop": ("image", "weight"), "dgrad": ("loss", "filter"), "wgrad": ("image", "loss")}


@RECIPES.register(Conv3dSpec)
def recipe(spec: Conv3dSpec) -> Recipe:
    """The 5-D operands in the spec's layout, the convolution call with 3-lists, then the epilogue."""
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    ins, out = spec.io_names()
    tensors = [TensorDecl(n, shapes[n], strides[n], spec.dtype, "input") for n in ins]
    params = (("padding", list(triple(spec.padding))), ("stride", list(triple(spec.stride))),
              ("dilation", list(triple(spec.dilation))), ("compute_data_type", data_type(spec.compute_dtype)))
    method = f"conv_{spec.direction}"
    main = OpDecl(method, method, tuple(zip(_PORTS[spec.direction], ins)), params, out)
    return with_epilogue(spec, tensors, main)


@REFERENCE_CODE.register(Conv3dSpec)
def reference_code(spec: Conv3dSpec) -> list[str]:
    """The script's float64 reference: ``conv3d`` or ``torch.nn.grad.conv3d_input`` / ``conv3d_weight``, then the
    epilogue."""
    geo = (f"stride={list(triple(spec.stride))}, padding={list(triple(spec.padding))}, "
           f"dilation={list(triple(spec.dilation))}, groups={spec.groups}")
    if spec.direction == "fprop":
        lines = [f"y = torch.nn.functional.conv3d(inputs['X'].double(), inputs['W'].double(), {geo})"]
    elif spec.direction == "dgrad":
        lines = [f"y = torch.nn.grad.conv3d_input({list(spec.x_dims)}, inputs['W'].double(), "
                 f"inputs['DY'].double(), {geo})"]
    else:
        lines = [f"y = torch.nn.grad.conv3d_weight(inputs['X'].double(), {list(spec.w_dims)}, "
                 f"inputs['DY'].double(), {geo})"]
    return [*lines, *epilogue_code(spec.epilogue), "return y"]
