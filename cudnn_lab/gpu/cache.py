"""The persistent plan cache: built plans kept on disk as cuDNN's own serialized blobs, reused by later processes.

A plan whose build is slow (runtime compilation: GEMMs, norms, attention) is serialized right after it is built
(``pygraph.serialize(as_bytes=True)``: the plan just built is the graph's selected one) and written to
``<cache root>/plans/<k[:2]>/<k>.plan``. A later run of the same graph on the same kind of GPU with the same cuDNN
deserializes it (``pygraph.deserialize(handle, blob)``) instead of building it, and executes it with
``execute(feed, workspace, handle)``. The heuristics still list the plans (the frontend cannot name plans without
them); only the build is skipped. A loaded plan is checked against the reference before it is timed, like any plan.

One entry is one file: ``MAGIC | u32 header length | JSON header | blob``. The header repeats the entry's identity
(the graph as the frontend describes it, the spec, the plan's name, the GPU, the cuDNN backend and frontend
versions, the kit's cache format) and the blob's length and SHA-256. An entry whose identity, length or digest does
not match is ignored and removed, never handed to cuDNN; nothing is ever unpickled. Writes are atomic
(``cache_dir.atomic_write``); the folder is kept under ``max_bytes`` by removing the least recently used entries
(reads touch the file's mtime). A write that fails switches the cache off with one warning.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import cache_dir

__all__ = ["FORMAT", "MAGIC", "MAX_BYTES", "SERIALIZE_MIN_BUILD_MS", "PlanStore", "plan_store", "identity",
           "identity_on", "graph_key", "plan_graph_key", "RunCache"]

MAGIC = b"CUDNN_LAB_PLAN\x00\x01"
FORMAT = 1
#: The plans folder is trimmed (least recently used first) to this many bytes.
MAX_BYTES = 256 << 20
#: Plans that built faster than this are not cached: building them again costs less than reading them back.
SERIALIZE_MIN_BUILD_MS = 20.0
_LEN = struct.Struct("<I")
_MAX_HEADER = 1 << 20


def graph_key(spec_dict: dict[str, Any], described: Any) -> str:
    """SHA-256 of the spec and the frontend's description of its graph (``inspect()``): what the plan runs."""
    text = json.dumps({"spec": spec_dict, "graph": described}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def plan_graph_key(spec: Any, lab: Any) -> str:
    """:func:`graph_key` of ``spec`` and one of its built graphs (a LabGraph that proposed plans)."""
    return graph_key(spec.to_dict(), lab.inspect())


def identity_on(graph: str, plan: str, info: dict[str, Any]) -> dict[str, str]:
    """:func:`identity` with the GPU and versions read from a device record (``gpu.device.device_info``)."""
    return identity(graph, plan, info.get("gpu"), info.get("compute_capability"), info.get("cudnn_backend"),
                    info.get("cudnn_frontend"))


def identity(graph: str, plan: str, gpu: str, compute_capability: str, cudnn_backend: Any,
             cudnn_frontend: Any) -> dict[str, str]:
    """Everything a cached plan depends on; an entry is used only when all of it matches."""
    return {"format": str(FORMAT), "graph": graph, "plan": plan, "gpu": str(gpu), "cc": str(compute_capability),
            "cudnn_backend": str(cudnn_backend), "cudnn_frontend": str(cudnn_frontend)}


def _key(ident: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


class PlanStore:
    """Blobs with JSON headers in a folder, by identity; safe with several processes. No GPU needed."""

    def __init__(self, folder: str | Path | None = None, max_bytes: int = MAX_BYTES) -> None:
        self.folder = Path(folder) if folder is not None else cache_dir.cache_root() / "plans"
        self.max_bytes = int(max_bytes)
        self._size: int | None = None  # bytes in the folder, counted on the first write
        #: what happened in this process: hits, misses, stored, ignored (bad entries removed), mismatched (a blob
        #: whose plan is not the one named), failed writes
        self.counts = {"hits": 0, "misses": 0, "stored": 0, "ignored": 0, "mismatched": 0, "unwritable": 0}

    def path(self, ident: dict[str, str]) -> Path:
        k = _key(ident)
        return self.folder / k[:2] / f"{k}.plan"

    @staticmethod
    def encode(ident: dict[str, str], blob: bytes, meta: dict[str, Any]) -> bytes:
        """One entry's bytes: magic, header length, JSON header (identity, blob size and digest, meta), blob."""
        header = {"identity": ident, "blob_bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest(),
                  "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "meta": meta}
        head = json.dumps(header, sort_keys=True).encode()
        return MAGIC + _LEN.pack(len(head)) + head + blob

    @staticmethod
    def decode(data: bytes, ident: dict[str, str]) -> tuple[bytes, dict[str, Any]] | None:
        """(blob, meta) when ``data`` is a whole, uncorrupted entry for exactly ``ident``; None otherwise."""
        n = len(MAGIC)
        if len(data) < n + _LEN.size or data[:n] != MAGIC:
            return None
        (hlen,) = _LEN.unpack_from(data, n)
        start = n + _LEN.size
        if hlen > _MAX_HEADER or start + hlen > len(data):
            return None
        try:
            header = json.loads(data[start:start + hlen].decode())
        except (UnicodeDecodeError, ValueError):
            return None
        if not isinstance(header, dict) or header.get("identity") != ident:
            return None
        blob = data[start + hlen:]
        if header.get("blob_bytes") != len(blob) or header.get("sha256") != hashlib.sha256(blob).hexdigest():
            return None
        meta = header.get("meta")
        return blob, meta if isinstance(meta, dict) else {}

    def get(self, ident: dict[str, str]) -> tuple[bytes, dict[str, Any]] | None:
        """The blob and its meta for ``ident``, or None (missing, or a bad entry, which is removed)."""
        if not cache_dir.cache_enabled():
            return None
        path = self.path(ident)
        try:
            data = path.read_bytes()
        except OSError:
            self.counts["misses"] += 1
            return None
        found = self.decode(data, ident)
        if found is None:
            self.counts["ignored"] += 1
            self.discard(ident)
            return None
        try:
            os.utime(path)  # least recently used goes first when the folder is trimmed
        except OSError:
            pass
        self.counts["hits"] += 1
        return found

    def discard(self, ident: dict[str, str]) -> None:
        """Remove the entry for ``ident`` (a bad entry, or a blob cuDNN refused)."""
        try:
            self.path(ident).unlink()
        except OSError:
            pass

    def put(self, ident: dict[str, str], blob: bytes, meta: dict[str, Any] | None = None) -> bool:
        """Write the entry atomically, then trim the folder; False when the cache is off or the write failed."""
        if not cache_dir.cache_enabled():
            return False
        data = self.encode(ident, bytes(blob), dict(meta or {}))
        if not cache_dir.atomic_write(self.path(ident), data):
            self.counts["unwritable"] += 1
            return False
        self.counts["stored"] += 1
        if self._size is None:
            self._size = cache_dir.folder_info(self.folder)[1]
        else:
            self._size += len(data)
        if self._size > self.max_bytes:
            self.trim()
        return True

    def trim(self, target: float = 0.8) -> int:
        """Remove the least recently used entries until the folder holds at most ``target * max_bytes``."""
        entries = []
        for p in self.folder.glob("*/*.plan"):
            try:
                st = p.stat()
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, p in sorted(entries):
            if total <= target * self.max_bytes:
                break
            try:
                p.unlink()
                removed += 1
            except OSError:
                pass
            total -= size
        self._size = total
        return removed


_STORES: dict[str, PlanStore] = {}


def plan_store() -> PlanStore:
    """The process's store at the current cache root."""
    root = str(cache_dir.cache_root())
    if root not in _STORES:
        _STORES[root] = PlanStore()
    return _STORES[root]


def _plan_name(g: Any) -> str | None:
    """The name of a deserialized graph's plan, where the frontend can tell it (None otherwise)."""
    try:
        name = g.get_plan_name_at_index(0)
    except Exception:  # noqa: BLE001 - not every frontend answers this for a deserialized graph
        return None
    return name if isinstance(name, str) and name else None


class RunCache:
    """The plan cache as one run of one session sees it: load a plan instead of building it, store a slow build.

    ``loaded`` maps plan name -> the deserialized ``pygraph`` that executes it (``execute(feed, ws, handle)``) with
    the tensor uids the plan was built with; ``from_cache`` names the plans that came from disk.
    """

    def __init__(self, spec: Any, info: dict[str, Any], handle: Any, enabled: bool = True,
                 ask: Callable[[], None] | None = None) -> None:
        self.spec, self.info, self.handle = spec, info, handle
        self.enabled = enabled and cache_dir.cache_enabled()
        self.store = plan_store()
        #: called before building a recalled plan the cache could not load: gives it the heuristics' graph
        self.ask = ask
        self._graph_keys: dict[int, str] = {}

    def _ident(self, entry: Any) -> dict[str, str] | None:
        key = entry.cache_key
        if key is None:
            lab = entry.graph
            if not hasattr(lab, "inspect"):  # classic-API sources: nothing to serialize
                return None
            gid = id(lab)
            if gid not in self._graph_keys:
                try:
                    self._graph_keys[gid] = plan_graph_key(self.spec, lab)
                except Exception:  # noqa: BLE001 - a graph that cannot describe itself is not cached
                    return None
            key = self._graph_keys[gid]
        return identity_on(key, entry.name, self.info)

    def build(self, entry: Any, loaded: dict[str, Any]) -> bool:
        """Build ``entry`` once (as ``PlanEntry.build``), from the cache where it holds the plan; stores slow builds
        (and every plan of a graph whose proposals are kept: ``entry.keep``).

        A loaded plan goes into ``loaded[entry.name]`` as ``(pygraph, {tensor name: uid})``.
        """
        if entry.built is not None:
            return entry.built
        ident = self._ident(entry) if self.enabled else None
        if ident is not None and self._load(entry, ident, loaded):
            return True
        if entry.recalled and self.ask is not None:  # no plan on disk after all: ask the heuristics now
            self.ask()
        if entry.recalled:  # still no graph with this plan: it cannot be built
            entry.built, entry.build_error = False, "its kept proposal could not be loaded or proposed again"
            return False
        ok = entry.build()
        if ok and ident is not None and ((entry.build_ms or 0.0) >= SERIALIZE_MIN_BUILD_MS or entry.keep):
            self._store(entry, ident)
        return ok

    def _load(self, entry: Any, ident: dict[str, str], loaded: dict[str, Any]) -> bool:
        found = self.store.get(ident)
        if found is None:
            return False
        blob, meta = found
        uids = meta.get("uids")
        if not isinstance(uids, dict) or not all(isinstance(v, int) for v in uids.values()):
            self.store.discard(ident)
            return False
        import cudnn

        t0 = time.perf_counter()
        try:
            g = cudnn.pygraph()
            g.deserialize(self.handle, blob)
            workspace = int(g.get_workspace_size())
        except Exception:  # noqa: BLE001 - cuDNN refused the blob: drop it and build as usual
            self.store.discard(ident)
            self.store.counts["ignored"] += 1
            return False
        if _plan_name(g) not in (None, entry.name):  # the blob holds another plan than its name says: never time it
            self.store.discard(ident)
            self.store.counts["mismatched"] += 1
            return False
        entry.build_ms = (time.perf_counter() - t0) * 1e3
        entry.workspace_bytes, entry.built = workspace, True
        loaded[entry.name] = (g, {str(k): int(v) for k, v in uids.items()})
        return True

    def _store(self, entry: Any, ident: dict[str, str]) -> None:
        g = entry.graph.pygraph
        try:  # the plan just built is the graph's selected plan, which is what serialize() writes
            blob = g.serialize(as_bytes=True)
            uids = {name: int(t.uid) for name, t in entry.graph.tensors.items()}
        except Exception:  # noqa: BLE001 - some engines cannot be serialized; they are built every time
            return
        self.store.put(ident, bytes(blob), {"uids": uids, "build_ms": entry.build_ms,
                                            "workspace_bytes": entry.workspace_bytes, "engine_id": entry.engine_id})

    def summary(self) -> dict[str, Any]:
        """For the run's settings: whether the cache was used and what happened in this process so far."""
        return {"enabled": self.enabled, "dir": str(self.store.folder), **self.store.counts,
                **({} if self.enabled else {"why_off": cache_dir.disabled_reason() or "plan_cache=False"})}
