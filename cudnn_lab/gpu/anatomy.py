"""Plan anatomy inside a run: knob names, kernels (CUPTI), numerical notes and determinism for the plans that ran,
and the engine space explored beyond the heuristics' proposals. The runner calls these; each adds plain columns to
its plan rows, and every failure is recorded per plan (or as a warning), never raised.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from .. import knobs as knob_table

#: Plan-row columns this module fills (the results schema lists them after the run's own columns).
ANATOMY_COLUMNS: tuple[str, ...] = ("knob_names", "proposed", "origin", "kernels", "kernel_count", "kernel_ms",
                                    "launch_gap_ms", "numeric_notes", "deterministic")

Progress = Callable[[int, int, str], None]


def knob_columns(rows: Iterable[dict[str, Any]], version: Any) -> None:
    """Fill ``knob_names`` (``TILE_SIZE=0, TILEK=1``) from each row's plan name; ``proposed``/``origin`` default to
    the heuristics'."""
    for row in rows:
        row["knob_names"] = knob_table.safe_label(str(row.get("plan") or ""), version)
        row.setdefault("proposed", True)
        row.setdefault("origin", "heuristics")


def kernel_and_note_columns(spec: Any, options: Any, sess: Any, entries: list[Any], ok: set[str],
                            measured: dict[str, dict[str, Any]], warnings: list[str],
                            progress: Progress | None = None) -> None:
    """Add kernels (and launch gap), numerical notes and determinism to ``measured[name]`` of the plans in ``ok``
    (as ``options.kernels`` / ``options.notes`` ask)."""
    ran = [e for e in entries if e.name in ok]
    if not ran:
        return
    if getattr(options, "kernels", False):
        from .kernels import profile_plans

        found = profile_plans({e.name: sess.call(e) for e in ran}, sess.stream, progress=progress)
        errors = set()
        for name, pk in found.items():
            cols = measured.setdefault(name, {})
            if pk.error:
                errors.add(pk.error)
                continue
            cols["kernels"] = pk.to_json()
            cols["kernel_count"] = pk.kernel_count
            cols["kernel_ms"] = pk.kernel_ms
            if cols.get("median_ms") is not None and pk.kernel_ms is not None:
                cols["launch_gap_ms"] = cols["median_ms"] - pk.kernel_ms
        if errors:
            warnings.append("Kernels (CUPTI) could not be recorded for some plans: " + "; ".join(sorted(errors))[:300])
    if getattr(options, "notes", False):
        from .notes import check_determinism, numeric_notes

        if progress:
            progress(0, 1, "numerical notes")
        backend = [e for e in ran if knob_table.parse_plan_name(e.name) is not None]
        if backend:
            result = numeric_notes(spec, sess.handle, tuple(options.heuristics))
            for e in backend:
                measured.setdefault(e.name, {})["numeric_notes"] = result.of(e.name) if (
                    e.name in result.notes or e.name in result.unknown) else None
            if result.errors:
                warnings.append("Numerical notes: " + "; ".join(result.errors)[:300])
        for e in ran:
            verdict = check_determinism(sess.call(e), sess.outputs, sess.stream)
            if verdict.deterministic is not None:
                measured.setdefault(e.name, {})["deterministic"] = verdict.deterministic


def explore_rows(spec: Any, options: Any, sess: Any, proposals: list[str], measure: Callable[[Any], tuple],
                 make_row: Callable[..., dict[str, Any]], progress: Progress | None = None,
                 version: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows for ``options.explore`` sampled configurations beyond ``proposals`` (built, checked, timed by
    ``measure(entry) -> ((status, error), columns)`` within ``options.explore_time_s``), and the engine-space record
    (every engine with its knob ranges, whether it runs here, and the answer to 'did anything beat the
    heuristics')."""
    from .engine_space import Explorer, explore, sample_configs, space_size
    from .plans import PlanEntry

    budget = int(getattr(options, "explore", 0) or 0)
    try:
        explorer = Explorer(spec, sess.handle)
    except Exception as e:  # noqa: BLE001 - no engine space for this graph (a classic-API op, a python engine)
        return [], {"error": " ".join(str(e).split())[:300]}
    configs = sample_configs(explorer.engines, proposals, budget, seed=getattr(options, "seed", 0), version=version)
    cands = explorer.append(configs, known=proposals, version=version)
    rows: list[dict[str, Any]] = []
    by_name: dict[str, dict[str, Any]] = {}

    def row_of(cand: Any, status: str, error: str, cols: dict[str, Any], entry: Any = None) -> dict[str, Any]:
        parsed = knob_table.parse_plan_name(cand.name) if cand.name else None
        if entry is None:
            entry = PlanEntry(name=cand.name or f"eng{cand.config.engine_id} ({cand.config.origin})",
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
        by_name[cand.name] = row_of(cand, status, error, cols, entry)

    explore(cands, evaluate, time_budget_s=float(getattr(options, "explore_time_s", 60.0)), progress=progress)
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
              "time_budget_s": float(getattr(options, "explore_time_s", 60.0))}
    return rows, record


def kernels_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``kernels`` column of a row as a list of {name, kind, count, us, total_us} (empty when absent)."""
    value = row.get("kernels")
    if not value:
        return []
    try:
        items = json.loads(value) if isinstance(value, str) else list(value)
    except ValueError:
        return []
    return [i for i in items if isinstance(i, dict)]
