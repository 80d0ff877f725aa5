"""Families that run through one of cuDNN's classic (non-graph) calls: the error ``build_graph`` raises for them,
and their drawing, described in the shape of ``pygraph.inspect()`` so the one renderer draws it.

Used by softmax, activations, tensor conversions and RNNs (pooling has its own module, ``pool.py``, written first).
Pure: no cudnn or torch import here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import CudnnLabError, UnsupportedGraphError
from ..specs import Spec
from .families import DRAWINGS, RECIPES, recipe_for
from .recipe import CUDNN_DTYPES
from .render import SafeDigraph
from .render import to_dot as render

#: ``cudnnDataType_t`` names and numbers (cuDNN 9 ``cudnn_graph.h``).
CLASSIC_DATA_TYPES: dict[str, tuple[str, int]] = {
    "fp32": ("CUDNN_DATA_FLOAT", 0), "fp64": ("CUDNN_DATA_DOUBLE", 1), "fp16": ("CUDNN_DATA_HALF", 2),
    "bf16": ("CUDNN_DATA_BFLOAT16", 9),
}


class ClassicOnlyError(UnsupportedGraphError):
    """``build_graph(spec)`` for a family the graph API does not hold: says why and what runs instead."""

    def __init__(self, spec: Spec, summary: str) -> None:
        self.spec = spec
        self.summary = summary
        self.detail = ""
        self.device = ""
        self.cudnn_version = ""
        # Not UnsupportedGraphError's message: "try another layout or heuristic mode" would send users astray.
        RuntimeError.__init__(self, f"{spec.label()}: {summary}")


def is_classic_call(spec: Spec) -> bool:
    """True when ``spec`` runs through a classic cuDNN call (its recipe is :class:`ClassicOnlyError`: pooling,
    softmax, activation, a transform's convert, RNN): no heuristics choose its plans, so forms and figures leave
    their words out. Pure: the recipe is a description, nothing is built."""
    try:
        recipe_for(spec)
    except ClassicOnlyError:
        return True
    except CudnnLabError:
        return False
    return False


def describe_call(spec: Spec, call: str, inputs: Mapping[str, str], outputs: Mapping[str, str],
                  params: Mapping[str, Any], *, kind: str = "classic cuDNN call (no graph API node)") -> dict[str, Any]:
    """One classic call as ``inspect()`` would show a one-node graph: its tensors (every tensor the spec names,
    with dims, strides and dtype as the call's descriptors say) and the call with its arguments."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    names = [*inputs.values(), *outputs.values()]
    tensors = {name: {"dim": list(shapes[name]), "stride": list(strides[name]),
                      "dtype": f"data_type.{CUDNN_DTYPES[dtypes[name]]}", "is_virtual": False, "uid": uid}
               for uid, name in enumerate(names, start=1)}
    node = {"name": call, "type": kind, "inputs": dict(inputs), "outputs": dict(outputs), "params": dict(params)}
    return {"context": {"io_data_type": f"data_type.{CUDNN_DTYPES[spec.dtype]}",
                        "compute_data_type": "data_type.FLOAT"}, "nodes": [node], "tensors": tensors}


def draw_call(spec: Spec, info: dict[str, Any], call: str) -> SafeDigraph:
    """The drawing of :func:`describe_call`'s description, titled with the call (and that no graph holds it)."""
    roles = {name: "input" for name in info["nodes"][0]["inputs"].values()}
    roles.update({name: "output" for name in info["nodes"][0]["outputs"].values()})
    return render(info, roles, title=f"{spec.label()} (classic {call}, no graph API)")


def classic_family(spec_class: type[Spec], call: str, summary: str,
                   params: Callable[[Any], Mapping[str, Any]]) -> Callable[[Any], dict[str, Any]]:
    """Register a family that runs only through the classic ``call`` (one input X, one output Y): its recipe raises
    :class:`ClassicOnlyError` with ``summary``, its drawing shows the call with ``params(spec)``. Returns the
    family's ``describe(spec)``."""

    def describe(spec: Any) -> dict[str, Any]:
        return describe_call(spec, call, {"x": "X"}, {"y": "Y"}, params(spec))

    @RECIPES.register(spec_class)
    def recipe(spec: Any) -> Any:
        raise ClassicOnlyError(spec, summary)

    @DRAWINGS.register(spec_class)
    def to_dot(spec: Any) -> SafeDigraph:
        """X -> the classic call(params) -> Y with dims, strides, layout and dtype."""
        return draw_call(spec, describe(spec), call)

    return describe
