"""Which spec fields of a sweep frame a figure can draw, and the x and colour it draws by default: the numeric field
with the most distinct values on x, the word-valued (or else numeric) field with the fewest on colour. Pure; the
Lab's Sweep view and the sweep report use the same choice."""

from __future__ import annotations

from typing import Any

__all__ = ["NONE", "default_axes", "plot_fields"]

#: "No field" in a choice of x or colour.
NONE = ""


def _ok_rows(frame: Any) -> Any:
    if "point_status" in frame.columns:
        return frame[frame["point_status"] == "ok"]
    return frame


def plot_fields(frame: Any) -> tuple[list[str], list[str]]:
    """The spec fields of a sweep frame (columns ``spec_<field>``) that hold values in points that ran.

    Returns ``(varying, constant)``: those whose value changes from point to point (what x and colour are chosen
    from), and those with one value.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return [], []
    rows = _ok_rows(frame)
    key = "point_id" if "point_id" in rows.columns else None
    points = rows.drop_duplicates(subset=[key]) if key else rows
    varying: list[str] = []
    constant: list[str] = []
    for col in points.columns:
        if not str(col).startswith("spec_") or col == "spec_epilogue":
            continue
        values = points[col].dropna()
        if values.empty:
            continue
        n = values.astype(str).nunique()
        (varying if n > 1 else constant).append(col[len("spec_"):])
    return varying, constant


def _distinct(frame: Any, field: str) -> int:
    col = f"spec_{field}"
    return int(frame[col].dropna().astype(str).nunique()) if col in frame.columns else 0


def _numeric_field(frame: Any, field: str) -> bool:
    import pandas as pd

    col = f"spec_{field}"
    return col in frame.columns and pd.api.types.is_numeric_dtype(frame[col]) and not \
        pd.api.types.is_bool_dtype(frame[col])


def default_axes(frame: Any, x: str | None = None, color: str | None = None) -> tuple[str | None, str | None]:
    """x and colour for a sweep frame: the ones asked for where the frame has them, else the numeric field with the
    most distinct values on x and the non-numeric (or else numeric) field with the fewest on colour."""
    varying, constant = plot_fields(frame)
    fields = varying or constant
    if not fields:
        return None, None
    rows = _ok_rows(frame)
    if x not in fields:
        numeric = [f for f in varying if _numeric_field(rows, f)]
        x = max(numeric or fields, key=lambda f: _distinct(rows, f))
    if color is not None and color != NONE and color in varying and color != x:
        return x, color
    if color == NONE:
        return x, None
    rest = [f for f in varying if f != x]
    if not rest:
        return x, None
    words = [f for f in rest if not _numeric_field(rows, f)]
    return x, min(words or rest, key=lambda f: _distinct(rows, f))
