"""Sweeps: a grid of problems run point by point into a resumable store.

- :mod:`.axes`: which fields can vary, an axis from text (:func:`parse_axis`), ``over`` checked;
- :mod:`.grid`: the grid, generated lazily (:func:`iter_points`, :func:`grid_size`);
- :mod:`.points`: a point's id and rows (:func:`run_point`);
- :mod:`.runner`: :func:`sweep` (executors, store, resume); :mod:`.progress`: the text bar.
"""

from .axes import axis_kind, parse_axis, sweep_fields
from .grid import grid, grid_size, iter_points
from .points import POINT_COLUMNS, point_id, run_point
from .progress import Progress, text_progress
from .runner import check_executor, check_store, sweep

__all__ = ["POINT_COLUMNS", "Progress", "axis_kind", "check_executor", "check_store", "grid", "grid_size",
           "iter_points", "parse_axis", "point_id", "run_point", "sweep", "sweep_fields", "text_progress"]
