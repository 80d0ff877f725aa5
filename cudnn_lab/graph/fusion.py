"""Fusion beyond epilogues as recipes: a ``genstats`` node reading the conv's output (batch-norm statistics), and a
pointwise prologue (scale, bias, relu) feeding the conv's image operand, as in the frontend's C++ sample "SBRCS"
(``samples/cpp/convolution/fprop.cpp``) and its Python test ``test/python/test_conv_genstats.py``.

Also: conv_fprop -> ``reduction`` (ADD/MAX, y virtual), conv_fprop -> ``concatenate`` with the other input in place
(the frontend's C++ sample "Convolution fprop concatenate"), and conv_dgrad -> ``relu_backward`` (the legacy
"DgradDrelu" sample), which ``scripts/probe_fusions.py`` found to run on 9.19 (H100, 2026-11-22).

Every tensor is NHWC; the ops compute in float32. The prologue's virtual tensors are in the data's own type (the
graph's intermediate type): the conv's image must be fp16/bf16 like its filter, or 9.19's engine 3 refuses the graph
(docs/FINDINGS.md, 2026-11-22). Pure: no cudnn import here.
"""

from __future__ import annotations

from typing import Any

from ..specs.base import pair
from ..specs.fusion import ConvConcatSpec, ConvDgradReluSpec, ConvGenstatsSpec, ConvPrologueSpec, ConvReductionSpec
from . import reduction as _reduction  # noqa: F401 - registers the standalone reduction family (graph/reduction.py)
from .families import RECIPES, REFERENCE_CODE
from .recipe import Enum, OpDecl, Recipe, TensorDecl, data_type

_ConvFusion = ConvGenstatsSpec | ConvPrologueSpec | ConvReductionSpec | ConvConcatSpec | ConvDgradReluSpec

_FLOAT = (("compute_data_type", data_type("fp32")),)


def _decl(spec: _ConvFusion, name: str, role: str) -> TensorDecl:
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    return TensorDecl(name, shapes[name], strides[name], dtypes[name] if role != "virtual" else None, role)


def _geometry(spec: _ConvFusion) -> tuple[tuple[str, Any], ...]:
    (ph, pw), (sh, sw), (dh, dw) = pair(spec.padding), pair(spec.stride), pair(spec.dilation)
    return (("padding", [ph, pw]), ("stride", [sh, sw]), ("dilation", [dh, dw]), *_FLOAT)


def _conv(spec: _ConvFusion, image: str) -> OpDecl:
    return OpDecl("conv_fprop", "conv_fprop", (("image", image), ("weight", "W")), _geometry(spec), "Y")


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


@RECIPES.register(ConvReductionSpec)
def reduction_recipe(spec: ConvReductionSpec) -> Recipe:
    """X, W -> conv_fprop -> Y (virtual: float32, never stored) -> reduction(mode) -> R (float32, y's dims with
    the reduced ones 1: the frontend infers the reduced axes from R's dims)."""
    conv = spec.conv
    tensors = [_decl(spec, "X", "input"), _decl(spec, "W", "input"),
               TensorDecl("Y", conv.y_dims, spec.conv.tensor_strides()["Y"], None, "virtual"),
               _decl(spec, "R", "output")]
    red = OpDecl("reduction", "reduction", (("input", "Y"),),
                 (("mode", Enum(f"reduction_mode.{spec.mode.upper()}")), *_FLOAT), "R")
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (_conv(spec, "X"), red))


@RECIPES.register(ConvConcatSpec)
def concat_recipe(spec: ConvConcatSpec) -> Recipe:
    """X, W -> conv_fprop -> Y (virtual, in the data's type: the graph's intermediate type, as the sample sets it);
    concatenate([Y, Y0], axis=1, in_place_index=1) -> Y1."""
    conv = spec.conv
    tensors = [*(_decl(spec, n, "input") for n in ("X", "W", "Y0")),
               TensorDecl("Y", conv.y_dims, conv.tensor_strides()["Y"], None, "virtual"), _decl(spec, "Y1", "output")]
    cat = OpDecl("concatenate", "concatenate", (("inputs[]", "Y"), ("inputs[]", "Y0")),
                 (("axis", 1), ("in_place_index", 1)), "Y1")
    return Recipe(spec.dtype, spec.dtype, "fp32", tuple(tensors), (_conv(spec, "X"), cat))


@RECIPES.register(ConvDgradReluSpec)
def dgrad_relu_recipe(spec: ConvDgradReluSpec) -> Recipe:
    """DY, W -> conv_dgrad -> dgrad::DX (virtual, float32) -> relu_backward(loss, input=X) -> DX."""
    tensors = [*(_decl(spec, n, "input") for n in ("DY", "W", "X")),
               TensorDecl("dgrad::DX", spec.conv.x_dims, spec.tensor_strides()["DX"], None, "virtual"),
               _decl(spec, "DX", "output")]
    dgrad = OpDecl("conv_dgrad", "conv_dgrad", (("loss", "DY"), ("filter", "W")), _geometry(spec), "dgrad::DX")
    drelu = OpDecl("relu_backward", "relu_backward", (("loss", "dgrad::DX"), ("input", "X")), _FLOAT, "DX")
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (dgrad, drelu))


def _conv_line(spec: _ConvFusion, image: str) -> str:
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


@REFERENCE_CODE.register(ConvReductionSpec)
def reduction_code(spec: ConvReductionSpec) -> list[str]:
    dims = "1" if spec.axes == "c" else "(0, 2, 3)"
    op = "y.sum(dim={d}, keepdim=True)" if spec.mode == "add" else "y.amax(dim={d}, keepdim=True)"
    return [_conv_line(spec, "inputs['X'].double()"), f"y = {op.format(d=dims)}", "return y"]


@REFERENCE_CODE.register(ConvConcatSpec)
def concat_code(spec: ConvConcatSpec) -> list[str]:
    return [_conv_line(spec, "inputs['X'].double()"), "y = torch.cat([y, inputs['Y0'].double()], dim=1)",
            "return y"]


@REFERENCE_CODE.register(ConvDgradReluSpec)
def dgrad_relu_code(spec: ConvDgradReluSpec) -> list[str]:
    geo = (f"stride={list(pair(spec.stride))}, padding={list(pair(spec.padding))}, "
           f"dilation={list(pair(spec.dilation))}")
    return [f"y = torch.nn.grad.conv2d_input({list(spec.conv.x_dims)}, inputs['W'].double(), "
            f"inputs['DY'].double(), {geo})", "y = y * (inputs['X'] > 0)", "return y"]
