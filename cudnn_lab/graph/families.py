"""The graph layer's family registries, keyed by spec class: each op family's module registers itself here.

- :data:`RECIPES`: spec -> :class:`~cudnn_lab.graph.recipe.Recipe` (the tensors and frontend calls of its graph);
- :data:`REFERENCE_CODE`: spec -> the body lines of the exported script's ``reference(inputs)``;
- :data:`DRAWINGS`: spec -> its drawing (a ``SafeDigraph``): by default (labgraph) the frontend graph of a family
  with a recipe; a family that runs outside the graph API registers what runs instead.

Adding a family: a module in this package that registers one of each for its spec class, imported by
``graph/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..registry import FamilyRegistry
from ..specs import Spec

if TYPE_CHECKING:  # pragma: no cover
    from .recipe import Recipe

RECIPES: FamilyRegistry[Callable[[Any], Recipe]] = FamilyRegistry("cuDNN graph recipe")
REFERENCE_CODE: FamilyRegistry[Callable[[Any], list[str]]] = FamilyRegistry("script reference code")
DRAWINGS: FamilyRegistry[Callable[[Any], Any]] = FamilyRegistry("drawing")


def recipe_for(spec: Spec) -> Recipe:
    """The tensors and calls that make up ``spec``'s cuDNN graph (SpecError naming the layer for a spec without)."""
    return RECIPES[checked(spec)](spec)


def reference_code(spec: Spec) -> list[str]:
    """Body lines of the exported script's ``reference(inputs)``: the main output in float64, ending in a return."""
    return REFERENCE_CODE[checked(spec)](spec)


def checked(spec: Any) -> Spec:
    """``spec`` if it is a spec instance (not a class, a dict or a name); SpecError otherwise."""
    if not isinstance(spec, Spec):
        raise SpecError("spec", getattr(spec, "__name__", type(spec).__name__),
                        "must be a cudnn_lab spec such as ConvSpec(...) or MatmulSpec(...)")
    return spec
