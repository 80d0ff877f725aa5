"""The Plans view's table and the result labels, as plain values (frames and HTML strings) that tests compare."""

from __future__ import annotations

import html
import json
import math
from typing import Any

__all__ = ["PLAN_TABLE_COLUMNS", "cudnn_version_text", "plan_table", "plan_table_html", "result_label",
           "heuristic_summary"]

#: The numbers a reader compares come first; the long knob and note texts last.
PLAN_TABLE_COLUMNS: tuple[str, ...] = ("rank", "plan", "engine", "median", "IQR", "error", "pass", "workspace",
                                       "knobs", "notes")


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, pd.NA raise or compare unequal
    except (TypeError, ValueError):
        return True


def _us(ms: Any) -> str:
    if _missing(ms):
        return ""
    return f"{float(ms) * 1e3:.1f} µs"


def _bytes(n: Any) -> str:
    if _missing(n):
        return ""
    n = int(n)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _knobs(text: Any) -> str:
    if _missing(text) or not text:
        return ""
    try:
        knobs = json.loads(text)
    except (TypeError, ValueError):
        return str(text)
    if isinstance(knobs, dict):
        return ", ".join(f"{k}={v}" for k, v in knobs.items())
    return str(knobs)


def _verdict(value: Any) -> str:
    if _missing(value):
        return ""
    return "✓" if bool(value) else "✗"


def plan_table(result: Any) -> Any:
    """One row per plan in heuristic order with the Plans view's columns, as display text (a DataFrame)."""
    import pandas as pd

    plans = result.plans.sort_values("heuristic_rank", kind="stable", na_position="last")
    rows = []
    for _, p in plans.iterrows():
        ok = p["status"] == "ok"
        if ok:
            error = "" if _missing(p["rel_l2"]) else f"{float(p['rel_l2']):.1e}"
        else:
            reason = "" if _missing(p["error"]) else str(p["error"])
            error = f"{p['status']}" + (f": {reason}" if reason else "")
        verdicts = [f"{band} {_verdict(p[col])}" for band, col in (("cuDNN", "pass_cudnn"), ("torch", "pass_torch"))
                    if not _missing(p[col])]
        rows.append({
            "rank": "" if _missing(p["heuristic_rank"]) else int(p["heuristic_rank"]),
            "plan": str(p["plan"]),
            "engine": "" if _missing(p["engine_id"]) else int(p["engine_id"]),
            "knobs": _knobs(p["knobs"]),
            "notes": "" if _missing(p["behavior_notes"]) else ", ".join(
                n.strip() for n in str(p["behavior_notes"]).split(",") if n.strip()),
            "workspace": _bytes(p["workspace_bytes"]),
            "median": _us(p["median_ms"]) if ok else "",
            "IQR": _us(p["iqr_ms"]) if ok else "",
            "error": error,
            "pass": ", ".join(verdicts),
        })
    return pd.DataFrame(rows, columns=list(PLAN_TABLE_COLUMNS))


def plan_table_html(result: Any, selected: str | None = None) -> str:
    """The plan table as HTML; the selected plan's row carries class ``cl-selected``, failed plans ``cl-failed``."""
    if result is None:
        return "<p class='cl-empty'>No results yet: run on a GPU, or load a recorded result.</p>"
    table = plan_table(result)
    if table.empty:
        return "<p class='cl-empty'>The heuristics proposed no plan for this graph.</p>"
    status = dict(zip(result.plans["plan"], result.plans["status"]))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in PLAN_TABLE_COLUMNS)
    body = []
    for _, row in table.iterrows():
        classes = []
        if row["plan"] == selected:
            classes.append("cl-selected")
        if status.get(row["plan"]) != "ok":
            classes.append("cl-failed")
        cells = "".join(f"<td class='cl-col-{c.lower()}'>{html.escape(str(row[c]))}</td>" for c in PLAN_TABLE_COLUMNS)
        body.append(f"<tr class='{' '.join(classes)}'>{cells}</tr>")
    return (f"<div class='cl-table-wrap'><table class='cl-plan-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def cudnn_version_text(value: Any) -> str:
    """cuDNN's version number as text: 91900 -> '9.19.0'; text stays as it is."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return "unknown" if _missing(value) or value == "" else str(value)
    if v >= 90000:
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    if v >= 1000:
        return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"
    return str(v)


def result_label(result: Any, source: str = "") -> str:
    """'GPU · driver · cuDNN · date' of a result, with where it came from."""
    device = result.device or {}
    parts = [str(device.get("gpu") or "unknown GPU"),
             f"driver {device.get('driver') or 'unknown'}",
             f"cuDNN {cudnn_version_text(device.get('cudnn_backend', device.get('cudnn')))}",
             (result.created or "")[:10] or "undated"]
    text = " · ".join(parts)
    return f"{source}: {text}" if source else text


def heuristic_summary(result: Any) -> str:
    """One sentence: did the heuristics' first choice turn out the fastest? (pick, best and regret are
    :mod:`cudnn_lab.results.metrics`')"""
    from ..results import metrics

    pick, best, regret = metrics.pick(result.plans), metrics.best(result.plans), metrics.regret(result.plans)
    if pick is None or best is None:
        return "No plan ran, so the heuristics' choice cannot be compared."
    if regret is None or not math.isfinite(regret):
        return "The heuristics' pick has no measured time."
    p, b = html.escape(str(pick["plan"])), html.escape(str(best["plan"]))
    if pick["plan"] == best["plan"]:
        return f"The heuristics' first choice <b>{p}</b> ({_us(pick['median_ms'])}) is also the fastest passing plan."
    return (f"The heuristics' first choice <b>{p}</b> takes {_us(pick['median_ms'])}; the fastest passing plan "
            f"<b>{b}</b> takes {_us(best['median_ms'])}: the pick is <b>{regret:.2f}x</b> slower.")
