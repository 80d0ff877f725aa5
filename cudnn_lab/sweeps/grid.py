"""A sweep's grid, generated lazily: every combination of the axes applied to each base spec.

The size is a product computed without making a point (:func:`grid_size`), so a grid of three 1000-value axes is
announced at once and its first point runs within seconds; :func:`iter_points` makes one point at a time.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

from ..errors import SpecError
from ..specs import Spec
from .axes import check_bases, check_over

__all__ = ["grid", "grid_size", "iter_points", "points_of", "cell"]


def cell(value: Any) -> Any:
    """A spec value as one cell of a frame (chains and pairs as JSON text)."""
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def grid_size(spec: Spec | list[Spec], over: Any = None) -> int:
    """How many points the grid has (valid or not), without making any."""
    bases = check_bases(spec)
    return len(bases) * math.prod(len(v) for v in check_over(bases, over).values())


def iter_points(spec: Spec | list[Spec], over: Any = None) -> Iterator[Spec | SpecError]:
    """The points one at a time, base by base, in the order of ``over``'s axes (the last varies fastest).

    A combination the spec refuses is yielded as its SpecError, with ``.point`` naming it (base spec and axis values),
    so the sweep records why it was skipped. Arguments are checked before the first point (OptionError).
    """
    bases = check_bases(spec)
    return points_of(bases, check_over(bases, over))


def points_of(bases: list[Spec], axes: dict[str, tuple[Any, ...]]) -> Iterator[Spec | SpecError]:
    """:func:`iter_points` over arguments already checked (``check_bases``, ``check_over``)."""
    names = list(axes)
    for base in bases:
        for combo in itertools.product(*(axes[n] for n in names)):
            changes = dict(zip(names, combo))
            try:
                yield base.replace(**changes)
            except SpecError as e:
                e.point = {"base": base.to_dict(), **{k: cell(v) for k, v in changes.items()}}  # names the point
                yield e
            except (TypeError, ValueError, OverflowError) as e:  # a value the spec's own checks do not expect
                err = SpecError(names[0] if len(names) == 1 else ",".join(names), combo, str(e)[:200],
                                spec=type(base).__name__)
                err.point = {"base": base.to_dict(), **{k: cell(v) for k, v in changes.items()}}
                yield err


def grid(spec: Spec | list[Spec], over: Any = None) -> list[Spec | SpecError]:
    """Every point of the grid as a list (small grids; :func:`iter_points` for large ones)."""
    return list(iter_points(spec, over))
