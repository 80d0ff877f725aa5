"""Plan anatomy inside a run: knob names, kernels (CUPTI), numerical notes and determinism for the plans that ran,
and the engine space explored beyond the heuristics' proposals. The runner calls these; each adds plain columns to
its plan rows, and every failure is recorded per plan (or as a warning), never raised.
"""

from __future__ import annotations

import time

from collections.abc import Callable, Iterable
from typing import Any

from .. import knobs as knob_table

#: Plans at least this slow per execution (ms) have their kernels recorded from one execution.
LONG_PLAN_MS = 1.0
#: Columns measured once per plan and session (a plan's kernels, notes and determinism do not change between runs).
_CACHED = ("kernels", "kernel_count", "kernel_ms", "numeric_notes", "deterministic")

Progress = Callable[[int, int, str], None]


def knob_columns(rows: Iterable[dict[str, Any]], version: Any) -> None:
    """Fill ``knob_names`` (``TILE_SIZE=0, TILEK=1``) from each row's plan name; ``proposed``/``origin`` default to
    the heuristics'."""
    for row in rows:
        row["knob_names"] = knob_table.plan_label(row.get("plan"), version)
        row.setdefault("proposed", True)
        row.setdefault("origin", "heuristics")


def _cache(sess: Any) -> dict[str, dict[str, Any]]:
    cache = getattr(sess, "_anatomy", None)
    if cache is None:
        cache = {}
        sess._anatomy = cache  # plan name -> its anatomy columns, kept with the session's built plans
    return cache


def kernel_and_note_columns(spec: Any, options: Any, sess: Any, entries: list[Any], ok: set[str],
                            measured: dict[str, dict[str, Any]], warnings: list[str],
                            progress: Progress | None = None) -> None:
    """Add kernels (and the launch gap), numerical notes and determinism to ``measured[name]`` of the plans in
    ``ok``, as ``options.kernels`` / ``options.notes`` ask. Measured once per plan and session."""
    cache = _cache(sess)
    want_kernels, want_notes = bool(getattr(options, "kernels", False)), bool(getattr(options, "notes", False))
    ran = [e for e in entries if e.name in ok]
    todo_k = [e for e in ran if want_kernels and "kernel_ms" not in cache.get(e.name, {})]
    todo_n = [e for e in ran if want_notes and "deterministic" not in cache.get(e.name, {})]
    if todo_k:
        from .kernels import DEFAULT_RUNS, cupti_first_use_s, profile_plans

        if progress and cupti_first_use_s() is None:
            progress(0, len(todo_k), "starting CUPTI (once per process)")
        # The plans just ran (checked and timed): no warm-up; a plan of 1 ms or more is recorded once (its kernels
        # and their time are plain in one execution; five would cost the run seconds for a slow fallback plan).
        runs = {e.name: 1 if (measured.get(e.name, {}).get("median_ms") or 0.0) >= LONG_PLAN_MS else DEFAULT_RUNS
                for e in todo_k}
        found = profile_plans({e.name: sess.call(e) for e in todo_k}, sess.stream, runs=runs, warmup=0,
                              progress=progress)
        errors = set()
        for name, pk in found.items():
            if pk.error:
                errors.add(pk.error)
                continue
            cache.setdefault(name, {}).update(kernels=pk.to_json(), kernel_count=pk.kernel_count,
                                              kernel_ms=pk.kernel_ms)
        if errors:
            warnings.append("Kernels (CUPTI) could not be recorded for some plans: "
                            + "; ".join(sorted(errors))[:300])
    if todo_n:
        from .notes import check_determinism, numeric_notes

        if progress:
            progress(0, 1, "numerical notes")
        backend = [e for e in todo_n if knob_table.parse_plan_name(e.name) is not None]
        if backend:  # plans of the backend's engines; python-engine and classic-API plans have no backend notes
            result = _notes(spec, sess, tuple(options.heuristics), numeric_notes, bool(options.plan_cache))
            for e in backend:
                if e.name in result.notes or e.name in result.unknown:
                    cache.setdefault(e.name, {})["numeric_notes"] = result.of(e.name)
            if result.errors:
                warnings.append("Numerical notes: " + "; ".join(result.errors)[:300])
        for e in todo_n:
            verdict = check_determinism(sess.call(e), sess.outputs, sess.stream)
            if verdict.deterministic is not None:
                cache.setdefault(e.name, {})["deterministic"] = verdict.deterministic
    for e in ran:
        cols = measured.setdefault(e.name, {})
        have = cache.get(e.name, {})
        cols.update({k: have[k] for k in _CACHED if k in have and (
            want_kernels if k.startswith("kernel") else want_notes)})
        if cols.get("median_ms") is not None and cols.get("kernel_ms") is not None:
            cols["launch_gap_ms"] = cols["median_ms"] - cols["kernel_ms"]


def _notes(spec: Any, sess: Any, modes: tuple[str, ...], ask: Callable[..., Any], use_disk: bool = True) -> Any:
    """The plans' numerical notes: kept on disk with the graph's proposals where those are kept (a graph whose
    heuristics are slow to ask: ``gpu/heuristics_cache.py``), else asked (``ask``: ``notes.numeric_notes``)."""
    from . import heuristics_cache as hc

    ident = getattr(sess, "notes_ident", None) if use_disk else None
    if ident is not None and tuple(modes) == tuple(getattr(sess, "modes", ())):
        kept = hc.recall_notes(ident)
        if kept is not None:
            return kept
        result = ask(spec, sess.handle, modes)
        hc.remember_notes(ident, result)
        return result
    return ask(spec, sess.handle, modes)


def explore_rows(spec: Any, options: Any, sess: Any, proposals: list[str], measure: Callable[[Any], tuple],
                 make_row: Callable[..., dict[str, Any]], progress: Progress | None = None,
                 version: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """Rows for ``options.explore`` sampled configurations beyond ``proposals`` (built, checked, timed by
    ``measure(entry) -> ((status, error), columns)`` within ``options.explore_time_s``), and the engine-space record
    (every engine with its knob ranges, whether it runs here, and the answer to 'did anything beat the
    heuristics' is read from the rows by ``results.anatomy``), and the explored plans' error histograms."""
    from .engine_space import Explorer, explore, explore_refusal, sample_configs, space_size
    from .plans import PlanEntry

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
    explorer = getattr(sess, "_explorer", None)  # kept with the session: its plans back captured CUDA graphs
    if explorer is None:
        try:
            explorer = Explorer(spec, sess.handle)
        except Exception as e:  # noqa: BLE001 - no engine space for this graph (a classic-API op, a python engine)
            return [], {"error": " ".join(str(e).split())[:300]}, {}
        sess._explorer = explorer
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

