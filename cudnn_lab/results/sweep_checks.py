"""Sweeps read from Parquet files and stores: the file (header, footer, schema), then the frame's columns
(``point_id``, ``point_status``, number columns) and its values by meaning (:func:`sweep_row_problems`). Part of the
loading layer (:mod:`cudnn_lab.results.loading` re-exports every name).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import DataError, shorten
from ..files import _fail, _kind, finite_number
from ..specs.base import spec_classes
from .paths import check_input_path
from .result_checks import FLOAT_COLUMNS, INT_COLUMNS, JSON_COLUMNS, VALUE_RANGES, _is_missing, check_cell
from .schema import point_columns_of

__all__ = ["PARQUET_MAGIC", "plain_cell", "SWEEP_NUMBER_COLUMNS", "SWEEP_REQUIRED", "parquet_problem", "read_parquet",
           "check_sweep_columns", "RowProblem", "sweep_row_problems", "check_sweep_frame", "read_sweep_frame"]

PARQUET_MAGIC = b"PAR1"
#: Sweep-frame columns that must hold numbers where they are filled: the plan's and the point's (the schema's).
SWEEP_NUMBER_COLUMNS = (*INT_COLUMNS, *FLOAT_COLUMNS, *point_columns_of("int"), *point_columns_of("float"))
SWEEP_REQUIRED = ("point_id", "point_status")


# ------------------------------------------------------------------------------------------------ Parquet

def parquet_problem(path: Path) -> str | None:
    """Why ``path`` is not a readable Parquet file (None when its header, footer and schema read)."""
    import pyarrow.parquet as pq

    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(4)
            f.seek(max(size - 4, 0))
            tail = f.read(4)
    except OSError as e:
        return f"could not be read ({e.strerror or e})"
    if size == 0:
        return "is empty"
    if head != PARQUET_MAGIC:
        return "is not a Parquet file (no PAR1 header)"
    if size < 12 or tail != PARQUET_MAGIC:
        return "is a truncated Parquet file (no PAR1 footer: the write was cut short?)"
    try:
        pq.read_schema(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a damaged footer
        return f"is a damaged Parquet file ({type(e).__name__}: {shorten(str(e), 120)})"
    return None


def read_parquet(path: Any, what: str = "Parquet file", columns: list[str] | None = None) -> Any:
    """A Parquet file as a DataFrame; PathError for the path, DataError for a truncated or damaged file."""
    import pandas as pd

    path = check_input_path(path, what=what)
    problem = parquet_problem(path)
    if problem:
        raise DataError(path, f"the {what} {problem}")
    try:
        return pd.read_parquet(path, columns=columns)
    except Exception as e:  # noqa: BLE001 - pyarrow's errors are not the kit's
        raise DataError(path, f"the {what} could not be decoded ({type(e).__name__}: {shorten(str(e), 120)})") \
            from None


def check_sweep_columns(frame: Any, source: Any) -> Any:
    """A sweep frame's columns checked: it has point_id and point_status, point_id is filled, and the number columns
    hold numbers (the values themselves: :func:`sweep_row_problems`)."""
    import pandas as pd
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if not isinstance(frame, pd.DataFrame):
        raise DataError(source, f"is not a sweep frame (a pandas DataFrame), but {_kind(frame)}")
    missing = [c for c in SWEEP_REQUIRED if c not in frame.columns]
    if missing:
        raise DataError(source, f"is not a sweep frame: column {missing[0]} is missing",
                        hint="a sweep store or a file written from cl.sweep(...) has point_id and point_status")
    if frame["point_id"].isna().any():
        raise _fail(source, "point_id", "is empty in some rows")
    for col in SWEEP_NUMBER_COLUMNS:
        if col in frame.columns:
            s = frame[col]
            if (is_bool_dtype(s) or not is_numeric_dtype(s)) and s.notna().any():
                bad = pd.to_numeric(s, errors="coerce").isna() & s.notna()
                if bad.any() or is_bool_dtype(s):
                    raise _fail(source, col, f"must hold numbers, not {_kind(s[s.notna()].iloc[0])}")
    return frame


@dataclasses.dataclass(frozen=True)
class RowProblem:
    """Rows of a sweep frame that fail one check: the field, what is wrong with them (a phrase for a summary), the
    rows (a bool array, one per row) and ``detail(pos)``, the problem of the row at position ``pos`` in words."""

    field: str
    what: str
    rows: Any
    detail: Callable[[int], str]


def _problem_of(check: Callable[[], Any]) -> str | None:
    """The problem ``check`` raises as DataError, or None when it passes."""
    try:
        check()
    except DataError as e:
        return e.problem
    return None


def plain_cell(value: Any) -> Any:
    """A frame's cell as a plain Python value (numpy and pandas scalars unwrapped, missing as None)."""
    if _is_missing(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (TypeError, ValueError):  # an array of several values: left as it is (and refused as not text)
            return value
    return value


def sweep_row_problems(frame: Any) -> list[RowProblem]:
    """Every check of a sweep frame's values that some rows fail (columns checked first,
    :func:`check_sweep_columns`): numbers not finite or out of range (``VALUE_RANGES``), an operation the kit does not
    know, a plan repeated within its point (a point stored twice), a second pick or best plan in a point, and JSON
    cells (``JSON_COLUMNS``) that do not parse or are not of their shape."""
    import numpy as np
    import pandas as pd

    out: list[RowProblem] = []

    def cell(col: str, pos: int) -> Any:
        return plain_cell(frame[col].iloc[pos])

    for col, (low, high) in VALUE_RANGES.items():
        if col not in frame.columns:
            continue
        values = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = np.isinf(values)
            if low is not None:
                bad |= values < low
            if high is not None:
                bad |= values > high
        if bad.any():
            out.append(RowProblem(col, "with impossible values", bad, _range_detail(cell, col, low, high)))
    if "op" in frame.columns:
        ops = spec_classes()
        bad = frame["op"].map(lambda v: not _is_missing(v) and not (isinstance(v, str) and v in ops)).to_numpy(bool)
        if bad.any():
            out.append(RowProblem("op", "of an unknown operation", bad, lambda pos: (
                f"field op: must be one of {', '.join(ops)}, not {shorten(cell('op', pos), 40)}")))
    keys = ["point_id", "plan"] if "plan" in frame.columns else ["point_id"]
    try:
        bad = frame.duplicated(subset=keys).to_numpy(bool)
    except TypeError:  # unhashable cells: the plan column's type is not text
        bad = np.zeros(len(frame), bool)
    if bad.any():
        out.append(RowProblem("plan", "repeating a plan already in its point", bad, lambda pos: (
            "field plan: repeats a row of the same point and plan (the point is stored twice?)")))
    for col, role in (("is_pick", "heuristic pick"), ("is_best", "best plan")):
        if col in frame.columns:
            flag = frame[col].map(lambda v: v is True or (type(v).__name__ == "bool_" and bool(v))).to_numpy(bool)
            ids = pd.Series(frame["point_id"].to_numpy(), dtype=object).where(flag)
            bad = flag & ids.duplicated().to_numpy(bool)
            if bad.any():
                said = f"field {col}: marks a second {role} in its point"
                out.append(RowProblem(col, f"marking a second {role} in its point", bad, _said(said)))
    for col in JSON_COLUMNS:
        if col not in frame.columns:
            continue
        found: dict[Any, str | None] = {}

        def problem(value: Any, col: str = col, found: dict[Any, str | None] = found) -> str | None:
            try:
                return found[value]
            except KeyError:
                found[value] = p = _problem_of(lambda: check_cell("", col, col, plain_cell(value)))
                return p
            except TypeError:  # an unhashable cell (a list): checked each time
                return _problem_of(lambda: check_cell("", col, col, value))

        problems = [problem(v) for v in frame[col]]
        bad = np.array([p is not None for p in problems], bool)
        if bad.any():
            out.append(RowProblem(col, "with unreadable JSON", bad, _listed(problems)))
    return out


def _range_detail(cell: Callable[[str, int], Any], col: str, low: float | None,
                  high: float | None) -> Callable[[int], str]:
    """The problem of the row at a position with a value out of ``col``'s range, in words."""
    def detail(pos: int) -> str:
        return _problem_of(lambda: finite_number("", col, cell(col, pos), low=low, high=high)) or ""
    return detail


def _said(text: str) -> Callable[[int], str]:
    """The same words for every row."""
    return lambda _pos: text


def _listed(problems: list[str | None]) -> Callable[[int], str]:
    """The problem found for the row at a position."""
    return lambda pos: problems[pos] or ""


def _row_label(frame: Any, pos: int) -> str:
    """'row 12 (point 3f2a..., plan eng4_k24=45)': where a sweep frame's row is, for a message."""
    def value(col: str) -> Any:
        return plain_cell(frame[col].iloc[pos]) if col in frame.columns else None

    plan = value("plan")
    return (f"row {pos} (point {shorten(value('point_id'), 40)}"
            + (f", plan {shorten(plan, 60)}" if plan is not None else "") + ")")


def check_sweep_frame(frame: Any, source: Any) -> Any:
    """A sweep frame checked: its columns (:func:`check_sweep_columns`), then its values by meaning
    (:func:`sweep_row_problems`); DataError names the file, the first bad row (position, point, plan) and the field."""
    import numpy as np

    check_sweep_columns(frame, source)
    for problem in sweep_row_problems(frame):
        pos = int(np.flatnonzero(problem.rows)[0])
        raise DataError(source, f"{_row_label(frame, pos)}: {problem.detail(pos)}")
    return frame


def read_sweep_frame(path: Any) -> Any:
    """A sweep saved as one Parquet file -> its checked frame."""
    frame = read_parquet(path, "sweep Parquet file")
    return check_sweep_frame(frame, Path(path))

