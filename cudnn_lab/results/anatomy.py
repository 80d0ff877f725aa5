"""Plan anatomy read from a plan table: knob names, kernels per plan, and what the engine-space exploration found.

Pure functions over ``RunResult.plans`` (or its records) for the CLI, the report and the Lab; they work on recordings
made before these columns existed (knob names come from the plan names; absent kernels give empty tables).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import kernel_names, knobs
from ..errors import CudnnLabError

__all__ = ["answer_text", "beat_heuristics", "is_proposed", "kernel_story", "kernels_table", "knob_points",
           "with_knob_names"]


def _records(rows: Any) -> list[dict[str, Any]]:
    return rows.to_dict("records") if hasattr(rows, "to_dict") else [dict(r) for r in rows]


def _is_false(value: Any) -> bool:
    """True only for an explicit False (NA, None and NaN are not False)."""
    try:
        return value is not None and value == value and not bool(value)
    except TypeError:  # pandas.NA
        return False


def is_proposed(value: Any) -> bool:
    """A ``proposed`` cell: only an explicit False marks a configuration sampled beyond the proposals."""
    return not _is_false(value)


def with_knob_names(plans: Any, version: Any = None) -> Any:
    """The plan table with ``knob_names`` filled from each plan's name where it is missing (older recordings)."""
    frame = plans.copy()
    names = [knobs.plan_label(p, version) for p in frame["plan"]]
    if "knob_names" in frame.columns:
        frame["knob_names"] = [n if (isinstance(n, str) and n) else d for n, d in zip(frame["knob_names"], names)]
    else:
        frame["knob_names"] = names
    return frame


def _kernel_items(value: Any) -> list[Mapping[str, Any]]:
    if value is None or (isinstance(value, float) and value != value):
        return []
    try:
        items = json.loads(value) if isinstance(value, str) else list(value)
    except (TypeError, ValueError):
        return []
    return [i for i in items if isinstance(i, Mapping) and i.get("name")]


def kernel_story(value: Any) -> str:
    """One line about a plan's kernels from its ``kernels`` cell ('' when none were recorded)."""
    items = _kernel_items(value)
    if not items:
        return ""
    names = []
    for i in items:
        count = i.get("count", 1)
        names += [str(i["name"])] * max(1, int(round(float(count)))) if isinstance(count, (int, float)) else \
            [str(i["name"])]
    return kernel_names.plan_story(names)


def kernels_table(plans: Any) -> Any:
    """One row per (plan, kernel): plan, engine_id, kernel, kind, reading (what the name tells), tile, count per
    execution, us per launch, total_us per execution. Empty (with these columns) without recorded kernels."""
    import pandas as pd

    columns = ["plan", "engine_id", "kernel", "kind", "reading", "tile", "count", "us", "total_us"]
    rows = []
    for r in _records(plans):
        for i in _kernel_items(r.get("kernels")):
            reading = kernel_names.read(str(i["name"]))
            count = i.get("count")
            us = i.get("us")
            total = i.get("total_us")
            if total is None and isinstance(count, (int, float)) and isinstance(us, (int, float)):
                total = count * us
            rows.append({"plan": r.get("plan"), "engine_id": r.get("engine_id"), "kernel": reading.short,
                         "kind": reading.kind, "reading": reading.summary, "tile": reading.tile, "count": count,
                         "us": us, "total_us": total})
    return pd.DataFrame(rows, columns=columns)


def beat_heuristics(rows: Any) -> dict[str, Any]:
    """Did any configuration outside the proposals beat the heuristics' best, and by how much?

    ``rows``: a plan table (or its records) with ``plan``, ``proposed``, ``median_ms`` and, where present,
    ``status`` and ``pass_cudnn`` (only plans that ran and did not fail cuDNN's band count). Returns ``explored``
    (such plans that ran), ``best_proposed`` / ``best_other`` ({plan, median_ms}), ``speedup`` (best proposed time
    over best other time: above 1 a non-proposed plan was faster) and ``beaten`` (None when it cannot be told).
    """

    def ok(r: Mapping[str, Any]) -> bool:
        m = r.get("median_ms")
        if not isinstance(m, (int, float)) or isinstance(m, bool) or m != m or m <= 0:
            return False
        if r.get("status") not in (None, "ok"):
            return False
        return not _is_false(r.get("pass_cudnn"))

    records = [r for r in _records(rows) if ok(r)]
    prop = [r for r in records if is_proposed(r.get("proposed"))]
    other = [r for r in records if not is_proposed(r.get("proposed"))]
    best_p = min(prop, key=lambda r: r["median_ms"], default=None)
    best_o = min(other, key=lambda r: r["median_ms"], default=None)
    out: dict[str, Any] = {"explored": len(other), "best_proposed": None, "best_other": None, "speedup": None,
                           "beaten": None}
    if best_p is not None:
        out["best_proposed"] = {"plan": best_p["plan"], "median_ms": float(best_p["median_ms"])}
    if best_o is not None:
        out["best_other"] = {"plan": best_o["plan"], "median_ms": float(best_o["median_ms"])}
    if best_p is not None and best_o is not None:
        out["speedup"] = float(best_p["median_ms"]) / float(best_o["median_ms"])
        out["beaten"] = out["speedup"] > 1.0
    return out


def answer_text(summary: Mapping[str, Any]) -> str:
    """One sentence for :func:`beat_heuristics`'s answer."""
    if not summary.get("explored"):
        return "No configuration outside the heuristics' proposals ran."
    if summary.get("best_proposed") is None:
        return "No proposed plan ran, so there is nothing to compare the explored configurations with."
    p, o, s = summary["best_proposed"], summary["best_other"], summary["speedup"]
    if summary["beaten"]:
        return (f"Yes: {o['plan']} ({o['median_ms'] * 1e3:.1f} us), not proposed, beat the heuristics' best "
                f"{p['plan']} ({p['median_ms'] * 1e3:.1f} us) by {100 * (s - 1):.1f}%.")
    return (f"No: the best of {summary['explored']} explored configurations, {o['plan']} "
            f"({o['median_ms'] * 1e3:.1f} us), is {100 * (1 / s - 1):.1f}% slower than the heuristics' best "
            f"{p['plan']} ({p['median_ms'] * 1e3:.1f} us).")


def _knobs_column(cell: Any) -> dict[int, int]:
    """A plan's knob settings from its ``knobs`` cell (JSON text or a mapping; none when missing or unreadable)."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return {}
    try:
        return knobs.backend_numbers(cell)
    except CudnnLabError:  # a cell the loading layer let through but no knob table reads: no knobs to show
        return {}


def knob_points(rows: Any, version: Any = None) -> list[dict[str, Any]]:
    """Long-format points for a view of the engine space: one per (plan, knob) with the plan's engine, whether the
    heuristics proposed it, its median and status, and the knob's name and value (from the plan name). A plan
    without knobs gives one point with knob None. For the Lab's 'latency by engine and knob value' plot."""
    out = []
    for r in _records(rows):
        parsed = knobs.parse_plan_name(str(r.get("plan") or ""))
        engine = r.get("engine_id")
        base = {"plan": r.get("plan"), "engine_id": engine if engine is not None else (parsed[0] if parsed else None),
                "proposed": is_proposed(r.get("proposed")), "median_ms": r.get("median_ms"),
                "status": r.get("status")}
        settings = parsed[1] if parsed else _knobs_column(r.get("knobs"))  # a name the kit did not make: its column
        decoded = knobs.decode(settings, version) if settings else ()
        if not decoded:
            out.append({**base, "knob": None, "value": None})
        for k in decoded:
            out.append({**base, "knob": k.key, "value": k.value})
    return out
