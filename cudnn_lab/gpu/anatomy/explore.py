"""The engine space explored beyond the heuristics' proposals: sampled configurations built, checked and timed
within a time budget, as plan rows, and the engine-space record (``explore_rows``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ... import knobs as knob_table
from ..engine_space import explore, explore_refusal, Explorer, sample_configs, space_size
from ..plans import PlanEntry

Progress = Callable[[int, int, str], None]


def explore_rows(spec: Any, options: Any, sess: Any, proposals: list[str], measure: Callable[[Any], tuple],
                 make_row: Callable[..., dict[str, Any]], progress: Progress | None = None,
                 version: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Rows for ``options.explore`` sampled configurations beyond ``proposals`` (built, checked, timed by
    ``measure(entry) -> ((status, error), columns)`` within ``options.explore_time_s``), and the engine-space record
    (every engine with its knob ranges, whether it runs here, and the answer to 'did anything beat the
    heuristics' is read from the rows by ``results.anatomy``), and the explored plans' error histograms."""
    try:
        nodes = len(sess.entries[0].graph.inspect().get("nodes", ())) if sess.entries else 0
    except Exception:  # noqa: BLE001 - a classic-API op has no frontend graph: nothing to explore
        nodes = 0
    if (refused := explore_refusal(nodes, version)) is not None:
        return [], {"error": refused}, {}

    budget = int(getattr(options, "explore", 0) or 0)
    time_budget_s = float(getattr(options, "explore_time_s", 60.0))
    # One budget for the whole exploration: listing engines and appending configurations can take long too
    # (docs/FINDINGS.md: exploration of a conv with an epilogue, H100, 2026-11-22).
    start = time.perf_counter()
    explorer = sess.explorer  # kept with the session: its plans back captured CUDA graphs
    if explorer is None:
        try:
            explorer = Explorer(spec, sess.handle)
        except Exception as e:  # noqa: BLE001 - no engine space for this graph (a classic-API op, a python engine)
            return [], {"error": " ".join(str(e).split())[:300]}, {}
        sess.explorer = explorer
    configs = sample_configs(explorer.engines, proposals, budget, seed=getattr(options, "seed", 0), version=version)
    cands = explorer.append(configs, known=proposals, version=version, deadline=start + time_budget_s)
    rows: list[dict[str, Any]] = []
    by_name: dict[str, dict[str, Any]] = {}
    histograms: dict[str, Any] = {}

    def row_of(cand: Any, status: str, error: str, cols: dict[str, Any], entry: Any = None) -> dict[str, Any]:
        parsed = knob_table.parse_plan_name(cand.name) if cand.name else None
        if entry is None:
            requested = "".join(f"_k{n}={v}" for n, v in sorted(cand.config.backend_knobs().items()))
            entry = PlanEntry(name=cand.name or f"eng{cand.config.engine_id}{requested}",
                              engine_id=cand.config.engine_id,
                              knobs={f"k{n}": v for n, v in sorted((parsed[1] if parsed else
                                                                     cand.config.backend_knobs()).items())},
                              graph=explorer.lab, index=cand.index if cand.index is not None else -1,
                              behavior_notes=cand.behavior_notes)
        row = make_row(entry, None, status, error, cols)
        row.update(proposed=False, origin=cand.config.origin, heuristic_rank=None)
        return row

    def evaluate(cand: Any) -> None:
        parsed = knob_table.parse_plan_name(cand.name)
        entry = PlanEntry(name=cand.name, engine_id=cand.config.engine_id,
                          knobs={f"k{n}": v for n, v in sorted(parsed[1].items())} if parsed else {},
                          graph=explorer.lab, index=cand.index, behavior_notes=cand.behavior_notes)
        if not entry.build():
            cand.status, cand.error = "build_failed", entry.build_error
            by_name[cand.name] = row_of(cand, "build_failed", entry.build_error, {}, entry)
            return
        try:
            sess.ensure_workspace(entry.workspace_bytes or 0)
        except Exception as e:  # noqa: BLE001 - a workspace that does not fit: this configuration only
            cand.status, cand.error = "run_failed", " ".join(str(e).split())[:300]
            by_name[cand.name] = row_of(cand, "run_failed", cand.error, {}, entry)
            return
        (status, error), cols = measure(entry)
        cand.status, cand.error = status, error
        if "_histogram" in cols:
            histograms[cand.name] = cols.pop("_histogram")
        by_name[cand.name] = row_of(cand, status, error, cols, entry)

    explore(cands, evaluate, time_budget_s=time_budget_s, progress=progress, start=start)
    for cand in cands:
        if cand.name in by_name:
            rows.append(by_name.pop(cand.name))
        elif cand.status in ("refused", "not_tried"):
            rows.append(row_of(cand, cand.status, cand.error, {}))
    counts: dict[str, int] = {}
    for cand in cands:
        counts[cand.status] = counts.get(cand.status, 0) + 1
    record = {"engines": [e.to_dict() for e in explorer.engines], "space_size": space_size(explorer.engines),
              "sampled": len(configs), "budget": budget, "statuses": counts,
              "time_budget_s": time_budget_s}
    return rows, record, histograms

