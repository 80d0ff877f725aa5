"""3-D convolutions as recipes: one ``conv_fprop``, ``conv_dgrad`` or ``conv_wgrad`` call on 5-D tensors with the
layout's strides and padding/stride/dilation as (depth, height, width) lists, then the pointwise epilogue chain
(forward only). Pure: no cudnn import here."""

from __future__ import annotations

from ..specs.conv3d import Conv3dSpec, triple
from .conv import conv_call, conv_geometry, conv_reference_lines
from .epilogue import with_epilogue
from .families import RECIPES, REFERENCE_CODE
from .recipe import Recipe


@RECIPES.register(Conv3dSpec)
def recipe(spec: Conv3dSpec) -> Recipe:
    """The 5-D operands in the spec's layout, the convolution call with 3-lists, then the epilogue."""
    tensors, main = conv_call(spec, triple)
    return with_epilogue(spec, tensors, main)


@REFERENCE_CODE.register(Conv3dSpec)
def reference_code(spec: Conv3dSpec) -> list[str]:
    """The script's float64 reference: ``conv3d`` or ``torch.nn.grad.conv3d_input`` / ``conv3d_weight``, then the
    epilogue."""
    return conv_reference_lines(spec, conv_geometry(spec, triple), "3d")
