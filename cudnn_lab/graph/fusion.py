"""Fusion beyond epilogues as recipes: a ``genstats`` node reading the conv's output (batch-norm statistics), and a
pointwise prologue (scale, bias, relu) feeding the conv's image operand, as in the frontend's C++ sample "SBRCS"
(``samples/cpp/convolution/fprop.cpp``) and its Python test ``test/python/test_conv_genstats.py``.

Every tensor is NHWC; the ops compute in float32. The prologue's virtual tensors are in the data's own type (the
graph's intermediate type): the conv's image must be fp16/bf16 like its filter, or 9.19's engine 3 refuses the graph
(docs/FINDINGS.md, 2026-11-22). Pure: no cudnn import here.
"""

from __future__ import annotations

from ..specs.base import pair
from ..specs.fusion import ConvGenstatsSpec, ConvPrologueSpec
from .families import DRAWINGS, RECIPES, REFERENCE_CODE
from .labgraph import frontend_drawing
from .recipe import OpDecl, Recipe, TensorDecl, data_type

_FLOAT = (("compute_data_type", data_type("fp32")),)


def _decl(spec: ConvGenstatsSpec | ConvPrologueSpec, name: str, role: str) -> TensorDecl:
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    return TensorDecl(name, shapes[name], strides[name], dtypes[name] if role != "virtual" else None, role)


def _conv(spec: ConvGenstatsSpec | ConvPrologueSpec, image: str) -> OpDecl:
    (ph, pw), (sh, sw), (dh, dw) = pair(spec.padding), pair(spec.stride), pair(spec.dilation)
    params = (("padding", [ph, pw]), ("stride", [sh, sw]), ("dilation", [dh, dw]), *_FLOAT)
    return OpDecl("conv_fprop", "conv_fprop", (("image", image), ("weight", "W")), params, "Y")


def _genstats() -> OpDecl:
    """SUM and SQ_SUM of Y per output channel ([1, k, 1, 1], float32)."""
    return OpDecl("genstats", "genstats", (("input", "Y"),), _FLOAT, "SUM", extra_outputs=("SQ_SUM",))


@RECIPES.register(ConvGenstatsSpec)
def genstats_recipe(spec: ConvGenstatsSpec) -> Recipe:
    """X, W -> conv_fprop -> Y (an output), Y -> genstats -> SUM, SQ_SUM."""
    tensors = [_decl(spec, n, "input") for n in ("X", "W")] + [_decl(spec, n, "output") for n in spec.output_names()]
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (_conv(spec, "X"), _genstats()))


@RECIPES.register(ConvPrologueSpec)
def prologue_recipe(spec: ConvPrologueSpec) -> Recipe:
    """X -> scale -> bias -> relu (virtual, x's shape and dtype) -> conv_fprop image; W the filter; Y (and its
    statistics). The intermediate type is the data's: a float32 image (the frontend's default for virtual tensors
    here) left cuDNN 9.19 with no engine for the graph without genstats."""
    x = _decl(spec, "X", "input")
    tensors = [x, *(_decl(spec, n, "input") for n in ("scale", "bias", "W"))]
    ops, current = [], "X"
    for method, operand in (("scale", "scale"), ("bias", "bias"), ("relu", None)):
        result = f"{method}::Y"
        tensors.append(TensorDecl(result, x.dims, x.strides, None, "virtual"))
        inputs = (("input", current),) + (((operand, operand),) if operand else ())
        ops.append(OpDecl(method, method, inputs, _FLOAT, result))
        current = result
    ops.append(_conv(spec, current))
    if spec.genstats:
        ops.append(_genstats())
    tensors += [_decl(spec, n, "output") for n in spec.output_names()]
    return Recipe(spec.dtype, spec.dtype, "fp32", tuple(tensors), tuple(ops))


def _conv_line(spec: ConvGenstatsSpec | ConvPrologueSpec, image: str) -> str:
    geo = (f"stride={list(pair(spec.stride))}, padding={list(pair(spec.padding))}, "
           f"dilation={list(pair(spec.dilation))}")
    return f"y = torch.nn.functional.conv2d({image}, inputs['W'].double(), {geo})"


@REFERENCE_CODE.register(ConvGenstatsSpec)
def genstats_code(spec: ConvGenstatsSpec) -> list[str]:
    """The script checks Y (the main output); the statistics are y.sum((0, 2, 3)) and (y * y).sum((0, 2, 3))."""
    return [_conv_line(spec, "inputs['X'].double()"), "return y"]


@REFERENCE_CODE.register(ConvPrologueSpec)
def prologue_code(spec: ConvPrologueSpec) -> list[str]:
    return ["x = torch.relu(inputs['X'].double() * inputs['scale'].double() + inputs['bias'].double())",
            _conv_line(spec, "x"), "return y"]


DRAWINGS.add(ConvGenstatsSpec, frontend_drawing)
DRAWINGS.add(ConvPrologueSpec, frontend_drawing)
