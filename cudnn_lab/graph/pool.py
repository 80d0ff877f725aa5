"""Pooling and the cuDNN graph API: why there is no graph, and a drawing of what the kit runs instead.

The cuDNN frontend 1.32 Python graph API cannot hold pooling: ``cudnn.pygraph`` has no pooling (``resample``)
method, and a resample node loaded from graph JSON (:func:`resample_graph_json`) fails at
``build_operation_graph``. So ``build_graph(PoolSpec)`` raises :class:`PoolingHasNoGraphError`, ``cl.run(PoolSpec)``
runs cuDNN's classic ``cudnnPoolingForward`` (``cudnn_lab/gpu/classic/pool.py``), and the registered drawing
(:func:`to_dot`) shows that call. What was tried and found is in docs/FINDINGS.md. Pure: no cudnn or torch import.
"""

from __future__ import annotations

from typing import Any

from ..specs.base import pair
from ..specs.pool import PoolSpec
from .classic_call import ClassicOnlyError
from .families import DRAWINGS, RECIPES, REFERENCE_CODE
from .recipe import CUDNN_DTYPES, Recipe
from .render import SafeDigraph
from .render import to_dot as render

#: The classic API's names and numbers (cuDNN 9 ``cudnn_ops.h`` / ``cudnn_graph.h``).
CLASSIC_POOLING_MODES: dict[str, tuple[str, int]] = {
    "max": ("CUDNN_POOLING_MAX", 0),
    "avg": ("CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING", 1),
    "avg_exclude_pad": ("CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING", 2),
}
#: ``cudnnNanPropagation_t``: a NaN under the window makes the max NaN, as PyTorch's max_pool2d does.
CUDNN_PROPAGATE_NAN = ("CUDNN_PROPAGATE_NAN", 1)

CLASSIC_CALL = "cudnnPoolingForward"

NO_GRAPH_SUMMARY = (
    "Pooling is not in the cuDNN frontend 1.32 graph API: its Python pygraph has no resample/pooling method, and a "
    "resample node loaded from graph JSON fails at build_operation_graph (CUDNN_STATUS_BAD_PARAM). cl.run() runs "
    "this PoolSpec through cuDNN's classic cudnnPoolingForward instead (one plan row, 'classic "
    "cudnnPoolingForward'); every PoolSpec (max, avg, avg_exclude_pad; NCHW, NHWC; fp16, bf16, fp32) has that "
    "path. Draw it with cudnn_lab.graph.pool.to_dot(spec)."
)


class PoolingHasNoGraphError(ClassicOnlyError):
    """``build_graph(PoolSpec)``: there is no frontend graph for pooling; says what runs instead."""

    def __init__(self, spec: PoolSpec) -> None:
        super().__init__(spec, NO_GRAPH_SUMMARY)


@RECIPES.register(PoolSpec)
def recipe(spec: PoolSpec) -> Recipe:
    """No recipe: a frontend graph cannot hold pooling in 1.32 (see the module's docstring)."""
    raise PoolingHasNoGraphError(spec)


@REFERENCE_CODE.register(PoolSpec)
def reference_code(spec: PoolSpec) -> list[str]:
    """Body of a script's ``reference(inputs)``: Y in float64 with PyTorch's pooling."""
    (kh, kw), (sh, sw), (ph, pw) = pair(spec.window), pair(spec.stride), pair(spec.padding)
    geo = f"kernel_size=({kh}, {kw}), stride=({sh}, {sw}), padding=({ph}, {pw})"
    if spec.mode == "max":
        call = f"torch.nn.functional.max_pool2d(inputs['X'].double(), {geo})"
    else:
        call = (f"torch.nn.functional.avg_pool2d(inputs['X'].double(), {geo}, "
                f"count_include_pad={spec.mode == 'avg'})")
    return [f"y = {call}", "return y"]


#: The frontend's names for the resample node's modes (``ResampleMode_t``) and the padding each uses.
_RESAMPLE_MODES = {"max": ("MAXPOOL", "NEG_INF_PAD"), "avg": ("AVGPOOL_INCLUDE_PADDING", "ZERO_PAD"),
                   "avg_exclude_pad": ("AVGPOOL_EXCLUDE_PADDING", "ZERO_PAD")}


def resample_graph_json(spec: PoolSpec) -> str:
    """The spec as a frontend graph JSON (format "2.0") holding one RESAMPLE node: ``pygraph.deserialize`` takes it.

    The only way to put pooling into a frontend 1.32 graph from Python; kept to reproduce why the kit does not
    (``build_operation_graph`` fails on it, see the module docstring) and to notice when a newer frontend fixes it.
    """
    import json

    (kh, kw), (sh, sw), (ph, pw) = pair(spec.window), pair(spec.stride), pair(spec.padding)
    shapes, strides, dt = spec.tensor_shapes(), spec.tensor_strides(), CUDNN_DTYPES[spec.dtype]
    tensors = [{"uid": uid, "name": name, "data_type": dt, "dim": list(shapes[name]), "stride": list(strides[name]),
                "is_virtual": False, "is_pass_by_value": False, "reordering_type": "NONE"}
               for uid, name in enumerate(("X", "Y"), start=1)]
    mode, padding_mode = _RESAMPLE_MODES[spec.mode]
    node = {"tag": "RESAMPLE", "name": "pool", "inputs": {"X": 1}, "outputs": {"Y": 2}, "generate_index": False,
            "resample_mode": mode, "padding_mode": padding_mode, "pre_padding": [ph, pw], "post_padding": [ph, pw],
            "stride": [sh, sw], "window": [kh, kw]}
    graph = {"json_version": "2.0", "gid": 1, "nodes": [node], "tensors": tensors,
             "context": {"name": "pool", "io_data_type": dt, "intermediate_data_type": "FLOAT",
                         "compute_data_type": "FLOAT"}}
    return json.dumps(graph)


def classic_params(spec: PoolSpec) -> dict[str, Any]:
    """The arguments of ``cudnnSetPooling2dDescriptor``, by name, as the kit passes them."""
    (kh, kw), (sh, sw), (ph, pw) = pair(spec.window), pair(spec.stride), pair(spec.padding)
    return {"mode": CLASSIC_POOLING_MODES[spec.mode][0], "maxpoolingNanOpt": CUDNN_PROPAGATE_NAN[0],
            "window": [kh, kw], "padding": [ph, pw], "stride": [sh, sw]}


def describe(spec: PoolSpec) -> dict[str, Any]:
    """What runs, in the shape of ``pygraph.inspect()`` (context, nodes, tensors), for drawings and text views.

    The one node is the classic call, not a graph node; the tensors are the two cuDNN tensor descriptors
    (``cudnnSetTensor4dDescriptorEx`` with the layout's strides).
    """
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    dt = f"data_type.{CUDNN_DTYPES[spec.dtype]}"
    tensors = {name: {"dim": list(shapes[name]), "stride": list(strides[name]), "dtype": dt, "is_virtual": False,
                      "uid": uid} for uid, name in enumerate(("X", "Y"), start=1)}
    node = {"name": CLASSIC_CALL, "type": "classic cuDNN call (no graph API node)", "inputs": {"x": "X"},
            "outputs": {"y": "Y"}, "params": classic_params(spec)}
    return {"context": {"io_data_type": dt, "compute_data_type": "data_type.FLOAT"}, "nodes": [node],
            "tensors": tensors}


def roles(spec: PoolSpec) -> dict[str, str]:
    return {"X": "input", "Y": "output"}


@DRAWINGS.register(PoolSpec)
def to_dot(spec: PoolSpec) -> SafeDigraph:
    """The drawing: X -> cudnnPoolingForward -> Y with dims, strides, layout and dtype."""
    return render(describe(spec), roles(spec), title=f"{spec.label()} (classic {CLASSIC_CALL}, no graph API)")
