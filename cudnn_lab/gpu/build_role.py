"""The plan-building role of the kit's worker (``cudnn_lab.gpu.build_role:build``, run by
:mod:`cudnn_lab.gpu.workers` at a lower CPU priority; the pool is :mod:`cudnn_lab.gpu.build_pool`, the scheduling
:mod:`cudnn_lab.gpu.parallel_build`). At start it imports torch and cuDNN and makes its CUDA context and cuDNN handle
on the device named by :data:`DEVICE_ENV`, so a later run finds it ready; then it builds a graph's plans through
:class:`~cudnn_lab.gpu.cache.RunCache` exactly as a run would: same identity and keys, same rule for what is stored.

Ready info: the identity fields of its device record (:data:`IDENTITY_FIELDS`).
Messages: ``{"cmd": "propose", ...}`` -> ``{"plans": [...]}`` (or ``{"error": ...}``); ``{"cmd": "build", "plans":
[...]}`` -> one part per plan; ``{"cmd": "share", ..., "slot": i, "slots": n, "leave": k}`` -> ``{"plans": [...],
"share": [...]}`` then one part per plan of its round-robin share, at once; with ``"claims": folder`` the helpers
take plans as they become free instead (:mod:`cudnn_lab.gpu.workers.claims`): its round-robin first, then the
lowest plan no helper has taken, so one slow compile no longer holds up the plans dealt after it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from .. import cache_dir
from ..specs import spec_from_dict
from .cache import SERIALIZE_MIN_BUILD_MS, RunCache
from .device import device_info
from .frontend import graph_plans
from .session import cudnn_handle, require_gpu
from .workers import role
from .workers.claims import claimed

__all__ = ["build", "TARGET", "DEVICE_ENV", "IDENTITY_FIELDS", "identity_fields", "split_shares"]

#: The role's worker target.
TARGET = "cudnn_lab.gpu.build_role:build"
#: The environment variable naming the helper's device (set by the pool).
DEVICE_ENV = "CUDNN_LAB_BUILD_DEVICE"
#: Identity fields a helper must share with the run's process (else its plans would go under other keys).
IDENTITY_FIELDS = ("gpu", "compute_capability", "cudnn_backend", "cudnn_frontend")

#: The helper's state between messages: its handle and device record, and the last graph's plans and RunCache.
_STATE: dict[str, Any] = {}


def identity_fields(info: dict[str, Any]) -> dict[str, str]:
    """The fields of a device record that decide the plan cache's keys, as text."""
    return {k: str(info.get(k)) for k in IDENTITY_FIELDS}


def split_shares(plans: Sequence[str], helpers: int) -> list[list[str]]:
    """Round-robin shares of ``plans`` (heuristic order) for ``helpers`` helpers: every helper's first plan is among
    the heuristics' first choices; no helper gets more than one plan above another's count."""
    if helpers < 1:
        return []
    return [list(plans[i::helpers]) for i in range(helpers)]


def _start() -> dict[str, Any]:
    """Import torch and cuDNN, make the CUDA context and the cuDNN handle on the device; its identity fields."""
    import torch

    device = int(os.environ.get(DEVICE_ENV, "0"))
    require_gpu(device)
    torch.cuda.set_device(device)
    torch.zeros(1, device=f"cuda:{device}")  # the CUDA context, now rather than on the first build
    info = device_info(device)
    _STATE.update(handle=cudnn_handle(device), info=info, entries={}, cache=None)
    return identity_fields(info)


def _error(e: Exception) -> dict[str, Any]:
    return {"error": f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"}


@role(start=_start)
def build(message: dict[str, Any]) -> dict[str, Any] | Iterator[dict[str, Any]]:
    """One message of the pool: list the plans (``propose``), build some (``build``) or both at once (``share``)."""
    cmd = message.get("cmd")
    if cmd == "propose":
        try:
            _STATE["entries"], _STATE["cache"] = _propose(message, _STATE.get("handle"), _STATE.get("info") or {})
        except Exception as e:  # noqa: BLE001 - the run goes on without this helper
            return _error(e)
        return {"plans": list(_STATE["entries"])}
    if cmd == "build":
        return _build_all([str(p) for p in message.get("plans") or []])
    if cmd == "share":
        return _share(message)
    return {"error": f"unknown command {cmd!r}"}


def _build_all(names: list[str]) -> Iterator[dict[str, Any]]:
    entries, cache = _STATE.get("entries") or {}, _STATE.get("cache")
    for name in names:
        yield _build_one(entries.get(name), name, cache)


def _share(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """List, then build this slot's round-robin share at once (the asynchronous prebuild)."""
    try:
        _STATE["entries"], _STATE["cache"] = _propose(message, _STATE.get("handle"), _STATE.get("info") or {})
    except Exception as e:  # noqa: BLE001 - the run goes on without this helper
        yield _error(e)
        return
    entries = _STATE["entries"]
    names = list(entries)[:message["max_plans"]] if message.get("max_plans") else list(entries)
    slots, slot = int(message.get("slots") or 1), int(message.get("slot") or 0)
    rest = names[int(message.get("leave") or 0):]
    share = split_shares(rest, slots)[slot] if slot < slots else []
    folder = message.get("claims")
    if folder:  # plans taken as this helper becomes free; its first is its round-robin first
        yield {"plans": names, "share": share[:1]}
        for i in claimed(str(folder), len(rest), slot):
            yield _build_one(entries.get(rest[i]), rest[i], _STATE["cache"])
        return
    yield {"plans": names, "share": share}
    for name in share:
        yield _build_one(entries.get(name), name, _STATE["cache"])


def _propose(query: dict[str, Any], handle: Any, info: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The graph's plans as the run lists them (same source, modes and carve-out) and the RunCache that builds and
    stores them under the run's keys."""
    os.environ[cache_dir.ENV_DIR] = str(query["cache_root"])  # the run's plan cache, wherever it is
    spec = spec_from_dict(query["spec"])
    sm_count = query.get("sm_count")
    options = {"sm_count": int(sm_count)} if sm_count is not None else None
    found = graph_plans(spec, handle, tuple(query["modes"]), str(info.get("gpu")), str(info.get("cudnn_backend")),
                        graph_options=options)
    cache = RunCache(spec, query.get("info") or info, handle, True, sm_count=sm_count)
    return {e.name: e for e in found}, cache


def _build_one(entry: Any, name: str, cache: Any) -> dict[str, Any]:
    """Build one plan as a run would (RunCache.build: from the cache if there, stored if slow) and say how it went."""
    if entry is None or cache is None:
        return {"plan": name, "status": "failed", "error": "this helper does not list the plan"}
    store = cache.store
    before_hits, before_stored = store.counts["hits"], store.counts["stored"]
    try:
        ok = cache.build(entry, {})
    except Exception as e:  # noqa: BLE001 - one plan failing must not stop the others
        return {"plan": name, "status": "failed", "error": " ".join(str(e).split())[:300]}
    if not ok:
        return {"plan": name, "status": "failed", "error": entry.build_error}
    if store.counts["hits"] > before_hits:
        return {"plan": name, "status": "cached", "build_ms": None}
    stored = store.counts["stored"] > before_stored
    status = "stored" if stored else "fast" if (entry.build_ms or 0.0) < SERIALIZE_MIN_BUILD_MS else "not_stored"
    return {"plan": name, "status": status, "build_ms": entry.build_ms}
