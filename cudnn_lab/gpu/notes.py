"""Numerical notes per plan (tensor cores, TF32 down-conversion, FFT, Winograd, non-determinism...) and a
determinism check.

Frontend 1.32 has no per-plan getter for numerical notes, but it filters by them. For each note, a fresh graph gets
the same heuristic plans (plus any explicit engine configurations), ``select_numeric_notes([note])`` and a workspace
limit of -1 bytes; its aggregate ``check_support()`` then visits every plan and fails each one fast without building
anything: "Deselecting execution plan" for a plan that lacks the note, "workspace violation" for one that has it. The
failure message lists every plan, so one call per note answers for all plans. Where the message does not list them,
each plan is asked once with ``build_plan_at_index`` on a fresh graph (which fails just as fast).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any
from ..graph import build_graph
from .timing import run_poisoned

#: The numerical notes asked about, in the order tables show them (frontend ``cudnn.numerical_note`` names).
NOTES: tuple[str, ...] = ("TENSOR_CORE", "DOWN_CONVERT_INPUTS", "REDUCED_PRECISION_REDUCTION", "FFT", "WINOGRAD",
                          "NONDETERMINISTIC", "STRICT_NAN_PROP")
#: Asked only when some plan is WINOGRAD.
WINOGRAD_TILES: tuple[str, ...] = ("WINOGRAD_TILE_4x4", "WINOGRAD_TILE_6x6", "WINOGRAD_TILE_13x13")

_LINE = re.compile(r"Plan at index (\d+):\s*(.*?)(?=\s*Plan at index \d+:|$)", re.S)
_LACKS = "Deselecting execution plan"
_HAS = "workspace violation"


@dataclasses.dataclass
class NotesResult:
    """Notes found per plan name; plans whose answer could not be read for some note are listed in ``unknown``."""

    notes: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    unknown: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    errors: list[str] = dataclasses.field(default_factory=list)

    def of(self, plan: str) -> str:
        """The notes column: ``"TENSOR_CORE,DOWN_CONVERT_INPUTS"`` ('' for none; '?' when unknown)."""
        if plan not in self.notes and plan in self.unknown:
            return "?"
        return ",".join(self.notes.get(plan, ()))


def classify(message: str) -> dict[int, bool | None]:
    """Backend plan index -> True (has the note), False (lacks it), None (failed for another reason), from the
    aggregate check_support failure message of a note-filtered graph with a -1 workspace limit."""
    out: dict[int, bool | None] = {}
    for index, reason in _LINE.findall(message):
        out[int(index)] = False if _LACKS in reason and "with name" not in reason else \
            True if _HAS in reason else None
    return out


def _one(message: str) -> bool | None:
    return False if _LACKS in message and "with name" not in message else True if _HAS in message else None


def _note_graph(spec: Any, handle: Any, modes: Sequence[str], extra: Iterable[tuple[int, dict[Any, int]]]) -> Any:
    """A fresh graph with the heuristic modes' plans and the ``extra`` (engine id, frontend knobs) plans appended."""
    import cudnn

    g = build_graph(spec, handle=handle).pygraph
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([getattr(cudnn.heur_mode, m) for m in modes])
    for engine_id, knobs in extra:
        try:
            g.create_execution_plan(engine_id, knobs)
        except Exception:  # noqa: BLE001 - a config the backend refuses has no notes to read
            pass
    return g


def _lowered(g: Any) -> Any:
    return g.__dict__.get("_lowered_graph") if hasattr(g, "__dict__") else None


def _names_by_backend_index(g: Any) -> dict[int, str]:
    """Backend (C++) plan index -> plan name. Plans of the frontend's python engines (SDPA, norms on some GPUs) have
    no backend index and no backend notes; they are left out."""
    out: dict[int, str] = {}
    for j, cfg in enumerate(getattr(g, "plans", [])):
        cpp = getattr(cfg, "cpp_index", None)
        if cpp is None:
            continue
        try:
            out[cpp] = g.get_plan_name_at_index(j)
        except Exception:  # noqa: BLE001
            continue
    lowered = _lowered(g)
    if lowered is not None:  # duplicates the pygraph dropped still sit in the backend's list
        try:
            for i in range(lowered.get_execution_plan_count()):
                if i not in out:
                    out[i] = lowered.get_plan_name_at_index(i)
        except Exception:  # noqa: BLE001
            pass
    return out


def _ask(spec: Any, handle: Any, modes: Sequence[str], extra: list[tuple[int, dict[Any, int]]], note: str
         ) -> tuple[dict[str, bool | None], str]:
    """Which backend plans carry ``note``: plan name -> True/False/None, and an error text ('' when answered)."""
    import cudnn

    member = getattr(cudnn.numerical_note, note, None)
    if member is None:
        return {}, f"{note}: not a numerical note of this frontend"
    g = _note_graph(spec, handle, modes, extra)
    names = _names_by_backend_index(g)
    if not names:
        return {}, ""  # no backend plans (a python engine serves the graph): nothing to ask the backend
    g.select_numeric_notes([member])
    g.deselect_workspace_greater_than(-1)
    lowered = _lowered(g)
    try:
        # The backend's own aggregate check visits every plan (the pygraph's may answer for a python plan instead).
        (lowered if lowered is not None else g).check_support()
    except Exception as e:  # noqa: BLE001 - the expected outcome: every plan fails fast, each with its reason
        found = classify(str(e))
        if found:
            return {names[i]: v for i, v in found.items() if i in names}, ""
    # No per-plan lines (or a plan passed): ask each backend plan once on a fresh graph.
    g = _note_graph(spec, handle, modes, extra)
    g.select_numeric_notes([member])
    g.deselect_workspace_greater_than(-1)
    out: dict[str, bool | None] = {}
    for j, cfg in enumerate(getattr(g, "plans", [])):
        if getattr(cfg, "cpp_index", None) is None:
            continue
        name = g.get_plan_name_at_index(j)
        try:
            g.build_plan_at_index(j)
            out[name] = True  # built despite the limit: not barred by the note filter
        except Exception as e:  # noqa: BLE001
            out[name] = _one(str(e))
    return out, ""


#: Answers of earlier calls without extra configurations: (spec, modes, notes, handle id) -> result.
_CACHE: dict[tuple[Any, ...], NotesResult] = {}
_CACHE_SIZE = 32


def numeric_notes(spec: Any, handle: Any, modes: Sequence[str] = ("A", "FALLBACK"),
                  extra: Iterable[tuple[int, dict[Any, int]]] = (), notes: Sequence[str] = NOTES) -> NotesResult:
    """Numerical notes of every plan the heuristic ``modes`` propose for ``spec`` (and of the ``extra`` explicit
    configurations), by plan name. Failures are recorded in the result, never raised. A repeat for the same spec,
    modes and handle (without extras) is answered from memory: notes are properties of the engine configurations."""
    extra = list(extra)
    key = (spec, tuple(modes), tuple(notes), id(handle)) if not extra else None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    result = _numeric_notes(spec, handle, modes, extra, notes)
    if key is not None and not result.errors:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = result
    return result


def _numeric_notes(spec: Any, handle: Any, modes: Sequence[str], extra: list[tuple[int, dict[Any, int]]],
                   notes: Sequence[str]) -> NotesResult:
    result = NotesResult()
    has: dict[str, list[str]] = {}
    unknown: dict[str, list[str]] = {}
    asked = list(notes)
    i = 0
    while i < len(asked):
        note = asked[i]
        i += 1
        try:
            answers, error = _ask(spec, handle, modes, extra, note)
        except Exception as e:  # noqa: BLE001
            answers, error = {}, f"{note}: {' '.join(str(e).split())[:200]}"
        if error:
            result.errors.append(error)
            continue
        for name, value in answers.items():
            has.setdefault(name, [])
            if value is True:
                has[name].append(note)
            elif value is None:
                unknown.setdefault(name, []).append(note)
        if note == "WINOGRAD" and any(v is True for v in answers.values()):
            asked += [t for t in WINOGRAD_TILES if t not in asked]
    result.notes = {n: tuple(v) for n, v in has.items()}
    result.unknown = {n: tuple(v) for n, v in unknown.items()}
    return result


# ---------------------------------------------------------------------------------------------------- determinism
@dataclasses.dataclass(frozen=True)
class Determinism:
    """Whether repeated executions on the same inputs gave bitwise-equal outputs."""

    deterministic: bool | None
    runs: int
    differing: int = 0
    error: str = ""
    #: most elements left NaN (the poison) by one run: a run that did not write its output is an execution problem
    #: (a stream or workspace race, a launch that failed quietly), not cuDNN's nondeterminism
    unwritten: int = 0


def check_determinism(call: Any, outputs: dict[str, Any], stream: Any, runs: int = 2) -> Determinism:
    """Execute ``call`` ``runs`` times on the same inputs (outputs NaN-poisoned before each) and compare the output
    bytes with the first run's. ``differing`` counts elements that differ in some run, ``unwritten`` the most
    elements one run left NaN (so a failure says whether a run did not write its output or wrote other values)."""
    import torch

    first: dict[str, Any] = {}
    differing = unwritten = 0
    try:
        for r in range(runs):
            # run_poisoned orders ``stream`` after the caller's: outputs (and inputs) made or last written there, a
            # NaN fill still queued, must not land after the run and pose as a whole output that differs
            # (scripts/probe_exit.py, H200 2026-11-29: 100,352 of 100,352 with the default stream busy)
            run_poisoned(call, outputs, stream)
            # read on ``stream`` and wait: a clone of the first run queued on the caller's stream could otherwise run
            # after the next run's NaN fill and pose as a whole output that differs (H200 2026-11-29, 8 workers)
            with torch.cuda.stream(stream):
                differing, unwritten = _compare_round(outputs, first, r, differing, unwritten)
            stream.synchronize()
    except Exception as e:  # noqa: BLE001 - a plan that fails to run has no answer
        return Determinism(None, runs, error=" ".join(str(e).split())[:240])
    return Determinism(differing == 0, runs, differing, unwritten=unwritten)


def _compare_round(outputs: dict[str, Any], first: dict[str, Any], r: int, differing: int,
                   unwritten: int) -> tuple[int, int]:
    """Keep round 0's output bytes in ``first``; for later rounds count elements whose bits differ from them."""
    import torch

    for name, t in outputs.items():
        raw = t.detach().contiguous().view(-1)
        if raw.is_floating_point():
            unwritten = max(unwritten, int(torch.isnan(raw).sum().item()))
        if r == 0:
            first[name] = raw.clone()
            continue
        a, b = first[name], raw
        if a.element_size() in (1, 2, 4, 8):  # compare bits, so NaN == NaN of the same payload
            view = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
            a, b = a.view(view), b.view(view)
        differing = max(differing, int((a != b).sum().item()))
    return differing, unwritten
