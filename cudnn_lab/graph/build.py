"""Spec -> real ``cudnn.pygraph``: every tensor with explicit dims, strides and dtype, as the recipe says."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .recipe import CUDNN_DTYPES, Enum, Recipe, TensorDecl


def resolve(value: Any, cudnn: Any) -> Any:
    """Turn recipe enums into live cudnn enum members."""
    if isinstance(value, Enum):
        obj = cudnn
        for part in value.path.split("."):
            obj = getattr(obj, part)
        return obj
    return value


def dtype_name(decl: TensorDecl, recipe: Recipe) -> str:
    """A tensor's data type name: its own, or (None) the graph's intermediate type, as TensorDecl declares."""
    return decl.dtype if decl.dtype is not None else recipe.intermediate_dtype


def build_pygraph(recipe: Recipe, handle: Any = None,
                  graph_options: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """Build the frontend graph for ``recipe``; returns the graph and its tensors by name.

    ``graph_options`` go to ``cudnn.pygraph`` as they are (``device_property`` for a deviceless target,
    ``sm_count`` for a carve-out). Works without a GPU up to ``inspect()``; validation and plans need the driver.
    """
    import cudnn

    dt = {k: getattr(cudnn.data_type, v) for k, v in CUDNN_DTYPES.items()}
    kwargs: dict[str, Any] = dict(io_data_type=dt[recipe.io_dtype],
                                  intermediate_data_type=dt[recipe.intermediate_dtype],
                                  compute_data_type=dt[recipe.compute_dtype])
    if handle is not None:
        kwargs["handle"] = handle
    kwargs.update(graph_options or {})
    graph = cudnn.pygraph(**kwargs)
    tensors: dict[str, Any] = {}
    for t in recipe.inputs:
        tensors[t.name] = graph.tensor(name=t.name, dim=list(t.dims), stride=list(t.strides),
                                       data_type=dt[dtype_name(t, recipe)], is_pass_by_value=t.value is not None)
    for t in recipe.inputs:
        if t.ragged_offset:
            tensors[t.name].set_ragged_offset(tensors[t.ragged_offset])
    for op in recipe.ops:
        args = {kw: [tensors[n] for n in name] if isinstance(name, list) else tensors[name]
                for kw, name in op.arguments()}
        params = {k: resolve(v, cudnn) for k, v in op.params}
        result = getattr(graph, op.method)(**args, **params, name=op.name)
        results = result if isinstance(result, (list, tuple)) else (result,)
        for name, out in zip(op.results, results):
            if not name or out is None:
                continue
            decl = recipe.tensor(name)
            out.set_name(decl.name).set_dim(list(decl.dims)).set_stride(list(decl.strides))
            if decl.role == "output":
                out.set_output(True).set_data_type(dt[dtype_name(decl, recipe)])
            if decl.ragged_offset:
                out.set_ragged_offset(tensors[decl.ragged_offset])
            tensors[decl.name] = out
    return graph, tensors
