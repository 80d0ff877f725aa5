"""Plan anatomy columns of the plans that ran: knob names, kernels (CUPTI), numerical notes and determinism.

Each adds plain columns to a run's plan rows; every failure is recorded per plan (or as a warning), never raised.
What was measured is kept with the session (``Session.anatomy``), measured once per plan and session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ... import knobs as knob_table
from .. import heuristics_cache as hc
from ..kernels import DEFAULT_RUNS, cupti_first_use_s, profile_plans
from ..notes import check_determinism, numeric_notes

#: Plans at least this slow per execution (ms) have their kernels recorded from one execution.
LONG_PLAN_MS = 1.0
#: Columns measured once per plan and session (a plan's kernels, notes and determinism do not change between runs).
_CACHED = ("kernels", "kernel_count", "kernel_ms", "kernel_gap_ms", "numeric_notes", "deterministic")

Progress = Callable[[int, int, str], None]


def knob_columns(rows: Iterable[dict[str, Any]], version: Any) -> None:
    """Fill ``knob_names`` (``TILE_SIZE=0, TILEK=1``) from each row's plan name; ``proposed``/``origin`` default to
    the heuristics'."""
    for row in rows:
        row["knob_names"] = knob_table.plan_label(row.get("plan"), version)
        row.setdefault("proposed", True)
        row.setdefault("origin", "heuristics")


def kernel_and_note_columns(spec: Any, options: Any, sess: Any, entries: list[Any], ok: set[str],
                            measured: dict[str, dict[str, Any]], warnings: list[str],
                            progress: Progress | None = None) -> None:
    """Add kernels (and the launch gap), numerical notes and determinism to ``measured[name]`` of the plans in
    ``ok``, as ``options.kernels`` / ``options.notes`` ask. Measured once per plan and session."""
    cache = sess.anatomy  # plan name -> its anatomy columns, kept with the session's built plans
    want_kernels, want_notes = bool(getattr(options, "kernels", False)), bool(getattr(options, "notes", False))
    ran = [e for e in entries if e.name in ok]
    todo_k = [e for e in ran if want_kernels and "kernel_ms" not in cache.get(e.name, {})]
    todo_n = [e for e in ran if want_notes and "deterministic" not in cache.get(e.name, {})]
    if todo_k:
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
                                              kernel_ms=pk.kernel_ms, kernel_gap_ms=pk.kernel_gap_ms)
        if errors:
            warnings.append("Kernels (CUPTI) could not be recorded for some plans: "
                            + "; ".join(sorted(errors))[:300])
    if todo_n:
        if progress:
            progress(0, 1, "numerical notes")
        backend = [e for e in todo_n if knob_table.parse_plan_name(e.name) is not None]
        if backend:  # plans of the backend's engines; python-engine and classic-API plans have no backend notes
            result = session_notes(spec, sess, tuple(options.heuristics), bool(options.plan_cache))
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


def session_notes(spec: Any, sess: Any, modes: tuple[str, ...], use_disk: bool = True) -> Any:
    """The graph's numerical notes for ``modes``, asked once per session (a heuristics query: it needs no built
    plan, so a run asks it while it waits for a helper's plan) and kept with it."""
    kept = getattr(sess, "notes_by_modes", None)
    if kept is None:  # a session without the stash (a stand-in): asked every time
        return _notes(spec, sess, modes, numeric_notes, use_disk)
    if modes not in kept:
        kept[modes] = _notes(spec, sess, modes, numeric_notes, use_disk)
    return kept[modes]


def _notes(spec: Any, sess: Any, modes: tuple[str, ...], ask: Callable[..., Any], use_disk: bool = True) -> Any:
    """The plans' numerical notes: kept on disk with the graph's proposals where those are kept (a graph whose
    heuristics are slow to ask: ``gpu/heuristics_cache.py``), else asked (``ask``: ``notes.numeric_notes``)."""
    ident = getattr(sess, "notes_ident", None) if use_disk else None
    if ident is not None and tuple(modes) == tuple(getattr(sess, "modes", ())):
        kept = hc.recall_notes(ident)
        if kept is not None:
            return kept
        result = ask(spec, sess.handle, modes)
        hc.remember_notes(ident, result)
        return result
    return ask(spec, sess.handle, modes)
