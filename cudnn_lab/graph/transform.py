"""Tensor transforms as cuDNN runs them: ``kind='convert'`` through the classic ``cudnnTransformTensor`` (no graph:
``build_graph`` raises :class:`~.classic_call.ClassicOnlyError`, the drawing shows the call), the graph kinds as
real frontend graphs of one structural node (``transpose``, ``reshape``, ``slice``, ``concatenate``), which build and
draw without a GPU; the GPU layer refuses them below the cuDNN version in
:data:`~cudnn_lab.specs.transform.GRAPH_KIND_NEEDS`. Pure: no cudnn or torch import here.

A list port (concatenate's ``inputs``) is written ``("inputs[]", name)`` once per tensor, in order.
"""

from __future__ import annotations

from typing import Any

from ..specs.layout import describe_layout
from ..specs.transform import GRAPH_KIND_NEEDS, TransformSpec
from .classic_call import CLASSIC_DATA_TYPES, ClassicOnlyError, describe_call, draw_call
from .families import DRAWINGS, RECIPES, REFERENCE_CODE
from .labgraph import frontend_drawing
from .recipe import OpDecl, Recipe, TensorDecl
from .render import SafeDigraph

CLASSIC_CALL = "cudnnTransformTensor"

NO_GRAPH_SUMMARY = (
    "A layout or dtype conversion on its own is not a graph of the cuDNN graph API here (its structural nodes run "
    "standalone from cuDNN 9.22.0). cl.run() runs this TransformSpec through cuDNN's classic cudnnTransformTensor "
    "instead (one plan row, 'classic cudnnTransformTensor'): the same copy an NCHW convolution plan makes with its "
    "nchwToNhwcKernel; cudnn_lab.graph.drawing(spec) draws it.")


def needs(spec: TransformSpec) -> tuple[int, str, str] | None:
    """(version number, version text, why) from which cuDNN runs this graph kind alone; None for ``convert``."""
    return GRAPH_KIND_NEEDS.get(spec.kind)


@RECIPES.register(TransformSpec)
def recipe(spec: TransformSpec) -> Recipe:
    """One structural node from x (and X2) to y; ``convert`` has none (ClassicOnlyError)."""
    if spec.kind == "convert":
        raise ClassicOnlyError(spec, NO_GRAPH_SUMMARY)
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    tensors = [TensorDecl(n, shapes[n], strides[n], spec.dtype, "input") for n in spec.input_names()]
    tensors.append(TensorDecl("Y", shapes["Y"], strides["Y"], spec.dtype, "output"))
    params: tuple[tuple[str, Any], ...] = ()
    inputs: tuple[tuple[str, str], ...] = (("input", "X"),)
    if spec.kind == "transpose":
        params = (("permutation", list(spec.perm)),)
    elif spec.kind == "slice":
        params = (("slices", [slice(a, b) for a, b in spec.slices]),)
    elif spec.kind == "concatenate":
        inputs = (("inputs[]", "X"), ("inputs[]", "X2"))
        params = (("axis", spec.axis),)
    op = OpDecl(spec.kind, spec.kind, inputs, params, "Y")
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (op,))


def classic_params(spec: TransformSpec) -> dict[str, Any]:
    """What the two tensor descriptors of ``cudnnTransformTensor`` say (y = 1 * x + 0 * y)."""
    strides = spec.tensor_strides()
    return {"x": f"{CLASSIC_DATA_TYPES[spec.dtype][0]} {describe_layout(spec.x_dims, strides['X'])}",
            "y": f"{CLASSIC_DATA_TYPES[spec.out_dtype][0]} {describe_layout(spec.y_dims, strides['Y'])}",
            "alpha": 1.0, "beta": 0.0}


def describe(spec: TransformSpec) -> dict[str, Any]:
    return describe_call(spec, CLASSIC_CALL, {"x": "X"}, {"y": "Y"}, classic_params(spec))


@DRAWINGS.register(TransformSpec)
def to_dot(spec: TransformSpec) -> SafeDigraph:
    """``convert``: X -> cudnnTransformTensor -> Y; a graph kind: its frontend graph, titled with the version from
    which cuDNN runs it."""
    if spec.kind == "convert":
        return draw_call(spec, describe(spec), CLASSIC_CALL)
    dot = frontend_drawing(spec)
    need = needs(spec)
    if need is not None:
        dot.graph_attr["label"] = f"{spec.label()} (graph API {spec.kind}: runs alone from cuDNN {need[1]})"
    return dot


@REFERENCE_CODE.register(TransformSpec)
def reference_code(spec: TransformSpec) -> list[str]:
    """Y in float64 from PyTorch's own view of the same transform."""
    x = "inputs['X'].double()"
    body = {
        "convert": f"y = inputs['X'].to({_torch_dtype(spec.out_dtype)}).double()  # the conversion's rounding",
        "transpose": f"y = {x}.permute({list(spec.perm)})",
        "reshape": f"y = {x}.reshape({list(spec.reshaped_dims)})",
        "slice": f"y = {x}[{', '.join(f'{a}:{b}' for a, b in spec.slices)}]",
        "concatenate": f"y = torch.cat([{x}, inputs['X2'].double()], dim={spec.axis})",
    }[spec.kind]
    return [body, "return y"]


def _torch_dtype(name: str) -> str:
    return {"fp32": "torch.float32", "fp16": "torch.float16", "bf16": "torch.bfloat16"}[name]
