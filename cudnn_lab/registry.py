"""A typed registry of op families, keyed by spec class: how each layer finds the code for a spec.

Each layer that has family-specific code (graph recipes, references, GPU plan sources, ...) owns one
``FamilyRegistry`` and each family module registers itself there::

    RECIPES: FamilyRegistry[Callable[[ConvSpec], Recipe]] = FamilyRegistry("cuDNN graph recipe")

    @RECIPES.register(ConvSpec)
    def recipe(spec: ConvSpec) -> Recipe: ...

Lookups go by the spec's class (and its bases), never by a string, so adding a family means adding one module per
layer and registering it there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from .errors import SpecError
from .specs import Spec

T = TypeVar("T")


class FamilyRegistry(Generic[T]):
    """Spec class -> one implementation (a function, a class or a small object) for one layer."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[type, T] = {}
        self._default: tuple[T, FamilyRegistry[Any]] | None = None

    def set_default(self, item: T, families: FamilyRegistry[Any]) -> None:
        """``item`` for every family registered in ``families`` that registers none of its own here (the frontend
        graph's drawing for a family with a recipe), so such a family needs no entry of its own."""
        self._default = (item, families)

    def register(self, spec_cls: type) -> Callable[[T], T]:
        """Decorator: ``@REG.register(ConvSpec)`` over the implementation for that family."""
        def deco(item: T) -> T:
            self.add(spec_cls, item)
            return item
        return deco

    def add(self, spec_cls: type, item: T) -> None:
        if not isinstance(spec_cls, type):
            raise TypeError(f"register a spec class, not {spec_cls!r}")
        if spec_cls in self._items and self._items[spec_cls] is not item:
            raise ValueError(f"{spec_cls.__name__} already has a {self.what}")
        self._items[spec_cls] = item

    def get(self, spec_or_cls: Any) -> T | None:
        cls = spec_or_cls if isinstance(spec_or_cls, type) else type(spec_or_cls)
        for base in cls.__mro__:
            if base in self._items:
                return self._items[base]
        if self._default is not None and cls in self._default[1]:
            return self._default[0]
        return None

    def __getitem__(self, spec_or_cls: Any) -> T:
        item = self.get(spec_or_cls)
        if item is None:
            cls = spec_or_cls if isinstance(spec_or_cls, type) else type(spec_or_cls)
            if not issubclass(cls, Spec):
                raise SpecError("spec", cls.__name__, "must be a cudnn_lab spec such as ConvSpec or MatmulSpec")
            raise SpecError("spec", cls.__name__, f"has no {self.what} in this version of cudnn_lab "
                            f"(families with one: {', '.join(self.names()) or 'none'})")
        return item

    def __contains__(self, spec_or_cls: Any) -> bool:
        return self.get(spec_or_cls) is not None

    def __iter__(self) -> Iterator[type]:
        return iter(self._items)

    def names(self) -> list[str]:
        """The families that have an item here (their own, or the default)."""
        defaulted = self._default[1].names() if self._default is not None else []
        return sorted({*(c.__name__ for c in self._items), *defaulted})
