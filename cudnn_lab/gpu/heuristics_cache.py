"""The heuristics' answers kept on disk: a graph's proposed plans and their numerical notes, per GPU and cuDNN.

Asking cuDNN's heuristics is the slow part of a warm run for some graphs: a GEMM's first query in a process takes
0.3-0.7 s (the frontend's Python GEMM engine builds its tile catalogue on import), and the numerical notes ask again,
note by note. When proposing a graph's plans took at least :data:`MIN_PROPOSE_S`, the proposals (plan names,
engines, knobs, ranks per mode, behaviour notes) are written here, and every one of the graph's plans is kept in
the plan cache (``gpu/cache.py``), not only the slow builds. A later process that finds the proposals *and* every
plan on disk recalls them instead of asking (:func:`recall`); its plans are loaded from the plan cache and checked
against the reference like any plan. If a plan cannot be loaded after all, the session asks the heuristics then
(``Session.ask_heuristics``) and builds as usual. The numerical notes of such a graph are kept beside them.

Entries are JSON in the plan store's format (``PlanStore``: identity in the header, length and SHA-256 checked, atomic
writes, never unpickled, at most :data:`MAX_ENTRY_BYTES`), under ``<cache root>/heuristics``; a corrupt, truncated,
foreign, oversized or special (FIFO, folder) entry is ignored and removed, and its JSON is parsed with the loading
layer's guards and checked by meaning (names, engine ids, ranks, knob values) before any of it is used.
``plan_cache=False`` or ``CUDNN_LAB_NO_CACHE=1`` turns this off with the plan cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .. import cache_dir
from ..errors import DataError
from .cache import PlanStore, graph_key, identity_on, plan_store
from ..files import parse_json
from .notes import NotesResult

__all__ = ["MIN_PROPOSE_S", "MAX_ENTRY_BYTES", "heuristics_store", "proposals_ident", "remember", "recall",
           "remember_notes", "recall_notes"]

#: Proposals that took at least this many seconds are kept (a conv's take ~0.07 s: asking again is cheaper).
MIN_PROPOSE_S = 0.2
#: An entry larger than this is never read nor written (a GEMM's proposals are a few KB).
MAX_ENTRY_BYTES = 4 << 20
_STORES: dict[str, PlanStore] = {}


def heuristics_store() -> PlanStore:
    """The process's store of heuristics' answers at the current cache root."""
    root = str(cache_dir.cache_root())
    if root not in _STORES:
        _STORES[root] = PlanStore(cache_dir.cache_root() / "heuristics", max_bytes=16 << 20,
                                  max_entry_bytes=MAX_ENTRY_BYTES)
    return _STORES[root]


def proposals_ident(spec: Any, described: Any, what: str, modes: tuple[str, ...],
                    info: dict[str, Any], sm_count: int | None = None) -> dict[str, str]:
    """The identity of one answer (``what``: 'proposals' or 'notes') for ``spec``'s graph as ``described`` by the
    frontend before planning, asked in heuristic ``modes`` on this GPU with these cuDNN versions, on ``sm_count``
    SMs (an SM carve-out; None, the whole GPU, leaves the identity as it always was)."""
    return identity_on(graph_key(spec.to_dict(), described, sm_count), f"{what}:{','.join(modes)}", info)


def _entry_record(entry: Any, plan_graph_key: str) -> dict[str, Any]:
    return {"name": entry.name, "engine_id": int(entry.engine_id), "knobs": dict(entry.knobs),
            "ranks": dict(entry.ranks), "behavior_notes": list(entry.behavior_notes), "graph_key": plan_graph_key}


def remember(ident: dict[str, str], entries: list[Any], plan_graph_keys: list[str]) -> bool:
    """Write the proposals (``entries`` in heuristic order, each with its plan-cache graph key)."""
    records = [_entry_record(e, k) for e, k in zip(entries, plan_graph_keys)]
    return heuristics_store().put(ident, json.dumps({"entries": records}, sort_keys=True).encode(),
                                  {"kind": "proposals", "plans": len(records)})


def _read(ident: dict[str, str], valid: Callable[[Any], bool]) -> Any:
    """The JSON kept for ``ident`` when it parses (the loading layer's guards) and ``valid`` accepts it; None
    otherwise (a bad entry is removed)."""
    store = heuristics_store()
    found = store.get(ident)
    if found is None:
        return None
    try:
        data = parse_json(found[0].decode(), store.path(ident), "heuristics cache entry")
    except (UnicodeDecodeError, DataError):
        data = None
    if data is None or not valid(data):
        store.counts["ignored"] += 1
        store.discard(ident)
        return None
    return data


def recall(ident: dict[str, str], info: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The proposals kept for ``ident`` when they are whole and every plan they name is in the plan cache (so no
    plan needs the heuristics' graph to be built); None otherwise (a bad entry is removed)."""
    data = _read(ident, lambda d: isinstance(d, dict) and isinstance(d.get("entries"), list) and bool(d["entries"])
                 and all(_valid(e) for e in d["entries"])
                 and len({e["name"] for e in d["entries"]}) == len(d["entries"]))
    if data is None:
        return None
    plans = plan_store()
    if not all(plans.path(identity_on(e["graph_key"], e["name"], info)).is_file() for e in data["entries"]):
        return None
    return data["entries"]


def _int(v: Any, low: int | None = None) -> bool:
    """An integer (never a bool), at least ``low`` where given."""
    return type(v) is int and (low is None or v >= low)


def _texts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _valid(e: Any) -> bool:
    """One kept proposal as :func:`_entry_record` writes it: a plan name, an engine id and ranks >= 0, integer knob
    values, text notes and a plan-cache graph key (a SHA-256)."""
    return (isinstance(e, dict) and isinstance(e.get("name"), str) and bool(e["name"])
            and _int(e.get("engine_id"), 0)
            and isinstance(e.get("knobs"), dict) and all(_int(v) for v in e["knobs"].values())
            and isinstance(e.get("ranks"), dict) and all(_int(v, 0) for v in e["ranks"].values())
            and _texts(e.get("behavior_notes"))
            and isinstance(e.get("graph_key"), str) and re.fullmatch(r"[0-9a-f]{64}", e["graph_key"]) is not None)


def remember_notes(ident: dict[str, str], result: Any) -> bool:
    """Write a NotesResult (notes and unknowns per plan) that came back without errors."""
    if result.errors:
        return False
    body = {"notes": {k: list(v) for k, v in result.notes.items()},
            "unknown": {k: list(v) for k, v in result.unknown.items()}}
    return heuristics_store().put(ident, json.dumps(body, sort_keys=True).encode(), {"kind": "notes"})


def recall_notes(ident: dict[str, str]) -> Any:
    """The NotesResult kept for ``ident``, or None."""
    data = _read(ident, lambda d: isinstance(d, dict) and all(
        isinstance(d.get(k), dict) and all(_texts(v) for v in d[k].values()) for k in ("notes", "unknown")))
    if data is None:
        return None
    return NotesResult(notes={k: tuple(v) for k, v in data["notes"].items()},
                       unknown={k: tuple(v) for k, v in data["unknown"].items()})
