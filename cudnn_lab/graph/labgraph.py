"""``build_graph(spec)``: a real cuDNN frontend graph with the kit's views on it (inspect, drawing, script)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..specs import Spec
from .build import build_pygraph
from .families import DRAWINGS, RECIPES, checked, recipe_for
from .recipe import Recipe
from .render import SafeDigraph, to_dot
from .._version import __version__
from .script import to_script


class LabGraph:
    """A spec's graph: ``.pygraph`` is the live ``cudnn.pygraph``; ``.tensors`` its tensors by name."""

    def __init__(self, spec: Spec, handle: Any = None, graph_options: Mapping[str, Any] | None = None) -> None:
        self.spec = spec
        self.recipe: Recipe = recipe_for(spec)
        self.pygraph, self.tensors = build_pygraph(self.recipe, handle, graph_options)

    def inspect(self) -> dict[str, Any]:
        """The frontend's own description of the graph: nodes and tensors (dims, strides, dtype, virtual, uid)."""
        return self.pygraph.inspect()

    @property
    def roles(self) -> dict[str, str]:
        """Tensor name -> 'input', 'output' or 'virtual'."""
        return {t.name: t.role for t in self.recipe.tensors}

    def to_dot(self) -> SafeDigraph:
        """The drawing as a graphviz Digraph; shows as SVG in Jupyter, and still shows without ``dot``."""
        return to_dot(self.inspect(), self.roles, title=self.spec.label(), axes=self.spec.tensor_axes)

    def to_script(self) -> str:
        """A standalone script (cudnn + torch only) that rebuilds, runs and checks this graph."""
        return to_script(self.spec, self.recipe, __version__)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        return self.to_dot()._repr_mimebundle_(include, exclude, **kwargs)

    def __repr__(self) -> str:
        return f"LabGraph({self.spec!r})"


def build_graph(spec: Spec, *, handle: Any = None, graph_options: Mapping[str, Any] | None = None) -> LabGraph:
    """Build ``spec``'s real cuDNN graph (no GPU needed until validation or execution); ``graph_options`` go to
    ``cudnn.pygraph`` (a deviceless target's ``device_property``, an ``sm_count`` carve-out)."""
    return LabGraph(checked(spec), handle, graph_options)


@functools.lru_cache(maxsize=64)
def viewed_graph(spec: Spec) -> LabGraph:
    """``spec``'s graph built once (no handle) for the views that only read it: its drawing, script and node
    details share it, so a change in the Lab builds one cuDNN graph. Never execute it: build_graph for that."""
    return build_graph(spec)


def frontend_drawing(spec: Spec) -> SafeDigraph:
    """The drawing of a family with a frontend graph: the graph itself, as ``inspect()`` describes it."""
    return viewed_graph(spec).to_dot()


DRAWINGS.set_default(frontend_drawing, RECIPES)  # a family with a frontend graph is drawn as that graph


def drawing(spec: Spec) -> SafeDigraph:
    """Any spec's drawing, as its family registered it: its frontend graph, or (pooling, which has no 1.32 graph)
    the classic call that runs instead."""
    return DRAWINGS[checked(spec)](spec)


@functools.lru_cache(maxsize=256)
def cached_dot_source(spec: Spec) -> str:
    """DOT text of any spec's drawing, memoized for redraw-on-every-change views."""
    return drawing(spec).source
