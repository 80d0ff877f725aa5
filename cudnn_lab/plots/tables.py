"""Plan tables as a reader scans them, for the Lab's Plans view and the HTML report (one definition for both).

The compact table has a few chosen columns with headers in words and numbers formatted for reading (times in µs to
3 significant digits, workspace in B/KiB/MiB, errors as 2.1e-04); knobs by name (``cudnn_lab.knobs``), only those
that differ between the plans of an engine (the ones every plan of an engine shares are said once, in the caption).
Every column of the plan frame is one click away in a ``<details>`` under it. Pick, best and regret are
:mod:`cudnn_lab.results.metrics`'. Pure: frames and HTML strings.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

from ..results.anatomy import with_knob_names
from ..results.schema import PLAN_SCHEMA

__all__ = ["ALL_COLUMN_TITLES", "PLAN_TABLE_COLUMNS", "compact_knobs", "frame_table_html", "full_table_html",
           "plan_table", "plan_table_html", "sig3", "us_text"]

#: The compact table's columns (headers in words), the numbers a reader compares first.
PLAN_TABLE_COLUMNS: tuple[str, ...] = ("rank", "engine", "knobs", "median (µs)", "IQR (µs)", "error (rel. L2)",
                                       "passes", "workspace")
#: Headers in words for every column of a plan frame (the full table), from the schema (results/schema.py); a
#: column not named here keeps its name.
ALL_COLUMN_TITLES: dict[str, str] = {c.name: c.title for c in PLAN_SCHEMA}
_US_COLUMNS = frozenset({"median_ms", "iqr_ms", "min_ms", "host_ms", "kernel_ms", "launch_gap_ms", "kernel_gap_ms"})
_STATUS_TEXT = {"build_failed": "build failed", "run_failed": "run failed", "not_built": "not built"}


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA raise or compare unequal
    except (TypeError, ValueError):
        return True


def sig3(value: Any) -> str:
    """A number to 3 significant digits without exponent for ordinary sizes: 21.957 -> '22.0', 3.712 -> '3.71',
    776.6667 -> '777', 12345.6 -> '12346', 0.14 -> '0.140'; '' when missing."""
    if _missing(value):
        return ""
    v = float(value)
    if not math.isfinite(v):
        return str(v)
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    if a >= 0.001:
        return f"{v:#.3g}"  # '#': keep trailing zeros (0.140, not 0.14)
    return f"{v:.2e}"


def us_text(ms: Any) -> str:
    """A time in ms as µs to 3 significant digits ('22.0'), '' when missing."""
    return "" if _missing(ms) else sig3(float(ms) * 1e3)


_us = us_text


def _bytes(n: Any) -> str:
    if _missing(n):
        return ""
    n = int(n)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{sig3(n / size)} {unit}"
    return f"{n} B"


def _knobs(text: Any) -> str:
    """Knobs compact: ``{"k2": 7, "k13": 1}`` -> 'k2=7 k13=1' (knob number order)."""
    if _missing(text) or not text:
        return ""
    try:
        knobs = json.loads(text)
    except (TypeError, ValueError):
        return str(text)
    if isinstance(knobs, dict):
        def order(k: str) -> tuple[int, str]:
            digits = "".join(c for c in str(k) if c.isdigit())
            return (int(digits) if digits else 10**6, str(k))

        return " ".join(f"{k}={knobs[k]}" for k in sorted(knobs, key=order))
    return str(knobs)


def _passes(p: Any) -> str:
    """'✓' (both bands), '✗' (cuDNN's band failed), 'torch ✗' (only torch's tighter band failed), ''
    (unchecked)."""
    cudnn, torch = p.get("pass_cudnn"), p.get("pass_torch")
    if _missing(cudnn) and _missing(torch):
        return ""
    if not _missing(cudnn) and not bool(cudnn):
        return "✗"
    if not _missing(torch) and not bool(torch):
        return "torch ✗"
    return "✓"


def _error(p: Any) -> str:
    if _missing(p.get("rel_l2")):
        return ""
    v = float(p["rel_l2"])
    return "0" if v == 0 else f"{v:.1e}"


def _ordered(result: Any) -> Any:
    """The plan frame in the heuristic's order, with ``knob_names`` filled (older recordings lack it)."""
    plans = with_knob_names(result.plans, (result.device or {}).get("cudnn_backend"))
    return plans.sort_values("heuristic_rank", kind="stable", na_position="last")


def _knob_pairs(text: Any) -> list[tuple[str, str]]:
    """'TILE_SIZE=7, TILEK=1' -> [('TILE_SIZE', '7'), ('TILEK', '1')]."""
    if _missing(text) or not str(text).strip():
        return []
    out = []
    for part in str(text).split(","):
        name, _, value = part.strip().partition("=")
        if name:
            out.append((name.strip(), value.strip()))
    return out


def compact_knobs(plans: Any) -> tuple[list[str], dict[int, str]]:
    """Each plan's knobs by name that differ between the plans of its engine ('TILE_SIZE=7 WORKSPACE=1'), and for
    each engine with more than one plan the knobs all its plans share ('TILEK=1 IDX_MODE=0')."""
    rows = [(None if _missing(e) else int(e), _knob_pairs(k)) for e, k in zip(plans["engine_id"],
                                                                              plans["knob_names"])]
    shared: dict[int, dict[str, str]] = {}
    count: dict[int, int] = {}
    for engine, pairs in rows:
        if engine is None:
            continue
        count[engine] = count.get(engine, 0) + 1
        now = dict(pairs)
        shared[engine] = now if engine not in shared else {k: v for k, v in shared[engine].items()
                                                           if now.get(k) == v}
    shared = {e: kv for e, kv in shared.items() if count[e] > 1 and kv}
    none: dict[str, str] = {}
    texts = [" ".join(f"{k}={v}" for k, v in pairs if k not in (none if engine is None else shared.get(engine, none)))
             or ("(as above)" if engine in shared else "") for engine, pairs in rows]
    return texts, {e: " ".join(f"{k}={v}" for k, v in kv.items()) for e, kv in shared.items()}


def plan_table(result: Any) -> Any:
    """One row per plan in heuristic order with the compact table's columns, as display text (a DataFrame); a
    plan that did not run says why in its time column."""
    import pandas as pd

    plans = _ordered(result)
    knobs, _ = compact_knobs(plans)
    rows = []
    for (_, p), knob_text in zip(plans.iterrows(), knobs):
        ok = p["status"] == "ok"
        rows.append({
            "rank": "" if _missing(p["heuristic_rank"]) else str(int(p["heuristic_rank"])),
            "engine": "" if _missing(p["engine_id"]) else str(int(p["engine_id"])),
            "knobs": knob_text,
            "median (µs)": _us(p["median_ms"]) if ok else _STATUS_TEXT.get(str(p["status"]), str(p["status"])),
            "IQR (µs)": _us(p["iqr_ms"]) if ok else "",
            "error (rel. L2)": _error(p) if ok else "",
            "passes": _passes(p) if ok else "",
            "workspace": _bytes(p["workspace_bytes"]),
        })
    return pd.DataFrame(rows, columns=list(PLAN_TABLE_COLUMNS))


def _cell(column: str, value: Any) -> str:
    if _missing(value):
        return ""
    if column in _US_COLUMNS:
        return _us(value)
    if column == "workspace_bytes":
        return _bytes(value)
    if column in ("knobs", "kernels"):
        return _knobs(value) if column == "knobs" else str(value)
    if column == "status":
        return _STATUS_TEXT.get(str(value), str(value))
    if isinstance(value, bool) or str(type(value).__name__) in ("bool_", "BooleanDtype"):
        return "yes" if bool(value) else "no"
    if column in ("rel_l2", "max_abs", "max_rel"):
        return "0" if float(value) == 0 else f"{float(value):.2e}"
    if isinstance(value, float):
        return sig3(value)
    return str(value)


def full_table_html(result: Any, columns: Any = None) -> str:
    """Every column of the plan frame (or those of ``columns`` it has), headers in words and numbers formatted
    (the table under 'all columns')."""
    plans = _ordered(result)
    cols = list(plans.columns) if columns is None else [c for c in columns if c in plans.columns]
    head = "".join(f"<th title='{html.escape(c)}'>{html.escape(ALL_COLUMN_TITLES.get(c, c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td class='cl-col-{html.escape(c)}'>{html.escape(_cell(c, p[c]))}</td>"
                                    for c in cols) + "</tr>" for _, p in plans.iterrows())
    return (f"<table class='cl-plan-table cl-plan-table-full'><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            "</table>")


def frame_table_html(frame: Any, titles: dict[str, str] | None = None, *, formats: dict[str, Any] | None = None,
                     groups: list[tuple[str, int, str, str]] | None = None,
                     column_classes: dict[str, str] | None = None, classes: str = "", caption: str = "") -> str:
    """Any frame as the kit's table (class ``cl-plan-table``): headers in words (``titles``, else
    :data:`ALL_COLUMN_TITLES`, else the name), cells formatted as the plan tables format them (times in µs, bytes,
    counts, yes/no; ``formats`` maps a column to its own function of the value). ``groups``: a header row above,
    (text, columns spanned, tooltip, CSS class) each; ``column_classes``: a CSS class per column's cells;
    ``caption``: HTML made by the caller."""
    titles, formats, column_classes = titles or {}, formats or {}, column_classes or {}
    cols = list(frame.columns)

    def text(c: str, v: Any) -> str:
        return "" if _missing(v) else str(formats[c](v)) if c in formats else _cell(c, v)

    top = ""
    if groups:
        top = "<tr>" + "".join(f"<th colspan='{int(span)}' class='{html.escape(cls)}' title='{html.escape(tip)}'>"
                               f"{html.escape(t)}</th>" for t, span, tip, cls in groups) + "</tr>"
    head = "".join(f"<th class='cl-col-{_slug(c)} {html.escape(column_classes.get(c, ''))}' title='{html.escape(c)}'>"
                   f"{html.escape(titles.get(c) or ALL_COLUMN_TITLES.get(c, c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td class='cl-col-{_slug(c)} {html.escape(column_classes.get(c, ''))}'>"
                                    f"{html.escape(text(c, v))}</td>" for c, v in zip(cols, values)) + "</tr>"
                   for values in frame.itertuples(index=False, name=None))
    cap = f"<caption class='cl-table-caption'>{caption}</caption>" if caption else ""
    return (f"<table class='cl-plan-table {html.escape(classes)}'>{cap}<thead>{top}<tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def plan_table_html(result: Any, selected: str | None = None, *, columns: Any = None) -> str:
    """The compact plan table as HTML, then every column in a ``<details>``. The selected plan's row carries class
    ``cl-selected``, a failed plan's ``cl-failed``; each row's tooltip is its plan's full name. ``columns``: those
    of the full table (default every one)."""
    if result is None:
        return "<p class='cl-empty'>No results yet: run on a GPU, or load a recorded result.</p>"
    table = plan_table(result)
    if table.empty:
        return "<p class='cl-empty'>The heuristics proposed no plan for this graph.</p>"
    plans = _ordered(result)
    _, shared = compact_knobs(plans)
    caption = ("<caption class='cl-table-caption'>Knobs every plan of an engine shares are not repeated: "
               + "; ".join(f"engine {e}: {html.escape(t)}" for e, t in sorted(shared.items()))
               + ". Hover a row for the plan's full name.</caption>") if shared else ""
    head = "".join(f"<th class='cl-col-{_slug(c)}'>{html.escape(c)}</th>" for c in PLAN_TABLE_COLUMNS)
    body = []
    for (_, row), (_, p) in zip(table.iterrows(), plans.iterrows()):
        classes = []
        if p["plan"] == selected:
            classes.append("cl-selected")
        if p["status"] != "ok":
            classes.append("cl-failed")
        reason = "" if _missing(p["error"]) or not str(p["error"]) else f" — {p['error']}"
        cells = "".join(f"<td class='cl-col-{_slug(c)}'>{html.escape(str(row[c]))}</td>" for c in PLAN_TABLE_COLUMNS)
        body.append(f"<tr class='{' '.join(classes)}' title='{html.escape(str(p['plan']) + reason)}'>{cells}</tr>")
    return (f"<div class='cl-table-wrap'><table class='cl-plan-table'>{caption}<thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>"
            f"<details class='cl-all-columns'><summary>all columns "
            f"({len(plans.columns) if columns is None else len([c for c in columns if c in plans.columns])})"
            f"</summary><div class='cl-table-wrap cl-table-wide'>{full_table_html(result, columns)}</div></details>")


_SLUGS = {"error (rel. L2)": "rel-l2"}


def _slug(column: str) -> str:
    """A compact column's CSS class: cl-col-median, cl-col-rel-l2, ..."""
    return _SLUGS.get(column) or "".join(c if c.isalnum() else "-" for c in column.split(" (")[0]).strip("-").lower()


#: The interactive Plans table's columns: the compact table's, the plan's full name first and its notes last.
SORTABLE_COLUMNS: tuple[str, ...] = ("plan",) + PLAN_TABLE_COLUMNS + ("notes",)
_NUMERIC_COLUMNS = frozenset({"rank", "engine", "median (µs)", "IQR (µs)", "error (rel. L2)", "workspace"})
#: The columns the Plans table keeps in a narrow pane (the others on demand: its "all columns" button).
KEY_COLUMNS: tuple[str, ...] = ("plan", "rank", "median (µs)", "error (rel. L2)", "passes")


def _number(value: Any) -> float | None:
    if _missing(value):
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def plan_table_rows(result: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The compact plan table as data for a sortable table: ``columns`` (``key``, ``title``, ``numeric``,
    ``essential``: one of :data:`KEY_COLUMNS`, kept in a narrow pane) and one row
    per plan in heuristic order: ``plan``, ``cells`` (display text, the formatters of :func:`plan_table`), ``keys``
    (raw sort keys: numbers for numeric columns, None where missing or where the plan did not run, else text),
    ``status`` and ``title`` (the plan's name and its error, if any)."""
    columns = [{"key": c, "title": c, "numeric": c in _NUMERIC_COLUMNS, "essential": c in KEY_COLUMNS}
               for c in SORTABLE_COLUMNS]
    if result is None:
        return columns, []
    table = plan_table(result)
    plans = _ordered(result)
    rows = []
    for (_, row), (_, p) in zip(table.iterrows(), plans.iterrows()):
        ok = p["status"] == "ok"
        notes = " ".join(str(p.get(c)) for c in ("behavior_notes", "numeric_notes")
                         if not _missing(p.get(c)) and str(p.get(c)).strip())
        cells = {"plan": str(p["plan"]), **{c: str(row[c]) for c in PLAN_TABLE_COLUMNS}, "notes": notes}
        keys = {"plan": str(p["plan"]), "rank": _number(p["heuristic_rank"]), "engine": _number(p["engine_id"]),
                "knobs": cells["knobs"], "median (µs)": _number(p["median_ms"]) if ok else None,
                "IQR (µs)": _number(p["iqr_ms"]) if ok else None,
                "error (rel. L2)": _number(p.get("rel_l2")) if ok else None, "passes": cells["passes"],
                "workspace": _number(p["workspace_bytes"]), "notes": notes}
        reason = "" if _missing(p["error"]) or not str(p["error"]) else f" — {p['error']}"
        rows.append({"plan": str(p["plan"]), "cells": [cells[c] for c in SORTABLE_COLUMNS],
                     "keys": [keys[c] for c in SORTABLE_COLUMNS], "status": str(p["status"]),
                     "title": str(p["plan"]) + reason})
    return columns, rows
