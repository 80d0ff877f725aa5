"""The JSON-ready dict of a plain frozen record (a tolerance band, a quantization error, a GPU's facts): its fields,
as :func:`dataclasses.asdict` gives them, in one place for every such record of the kit."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from _typeshed import DataclassInstance


class AsDict:
    """Mixin of a dataclass whose :meth:`to_dict` is its fields (nested dataclasses, lists and dicts copied)."""

    def to_dict(self: DataclassInstance) -> dict[str, Any]:
        """Plain JSON-ready dict of the fields."""
        return dataclasses.asdict(self)
