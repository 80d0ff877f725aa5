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
not match is ignored and removed, never handed to cuDNN; nothing is ever unpickled. An entry is read through
``cache_dir.read_entry``: a link, FIFO, folder or device in its place, a file without the magic (only its first bytes
read) or one larger than ``max_entry_bytes`` (never read) is skipped and set aside the same way, and the header is
parsed with the loading layer's guards (nesting, huge numbers). Writes are atomic (``cache_dir.atomic_write``); the
folder is kept under ``max_bytes`` by removing the least recently used entries (reads touch the file's mtime). A write
that fails switches the cache off with one warning. ``cudnn-lab cache --clear`` removes only files :func:`foreign`
recognizes as entries (or temporary files of a write) by their name and magic.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import stat
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import cache_dir
from ..errors import CudnnLabError, DataError
from ..files import parse_json, read_regular

__all__ = ["FORMAT", "MAGIC", "MAX_BYTES", "SERIALIZE_MIN_BUILD_MS", "PlanStore", "plan_store", "identity",
           "identity_on", "graph_key", "plan_graph_key", "RunCache", "MAX_ENTRY_BYTES", "foreign", "KernelCacheFile",
           "KernelCache", "kernel_cache_for", "kernel_identity", "MAX_KERNEL_CACHE_BYTES"]

MAGIC = b"CUDNN_LAB_PLAN\x00\x01"
FORMAT = 1
#: The plans folder is trimmed (least recently used first) to this many bytes.
MAX_BYTES = 256 << 20
#: An entry larger than this is never read (a serialized plan is a few KB to a few MB) nor written.
MAX_ENTRY_BYTES = 64 << 20
#: Plans that built faster than this are not cached: building them again costs less than reading them back.
SERIALIZE_MIN_BUILD_MS = 20.0
_LEN = struct.Struct("<I")
_MAX_HEADER = 1 << 20
#: Names of an entry and of a write's temporary file (``cache_dir.atomic_write``) below ``<folder>/<k[:2]>/``.
_ENTRY_NAME = re.compile(r"([0-9a-f]{64})\.plan")
_TEMP_NAME = re.compile(r"\.([0-9a-f]{64})\.plan\.[A-Za-z0-9_]+\.tmp")


def graph_key(spec_dict: dict[str, Any], described: Any, sm_count: int | None = None,
              kernel_cache: bool = False) -> str:
    """SHA-256 of the spec and the frontend's description of its graph (``inspect()``): what the plan runs.

    ``sm_count``: the SM carve-out the graph was made for (``cudnn.pygraph(sm_count=N)``), part of the key only when
    set, so a plan built for the whole GPU is never reused under a carve-out (nor the reverse) and the keys of
    whole-GPU graphs stay what they were."""
    body: dict[str, Any] = {"spec": spec_dict, "graph": described}
    if sm_count is not None:
        body["sm_count"] = int(sm_count)
    if kernel_cache:  # plans built with cuDNN's kernel cache are kept apart from those built without it
        body["kernel_cache"] = True
    text = json.dumps(body, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def plan_graph_key(spec: Any, lab: Any, sm_count: int | None = None, kernel_cache: bool = False) -> str:
    """:func:`graph_key` of ``spec`` and one of its built graphs (a LabGraph that proposed plans), made for
    ``sm_count`` SMs (None: the whole GPU), with cuDNN's kernel cache or not."""
    return graph_key(spec.to_dict(), lab.inspect(), sm_count, kernel_cache)


def identity_on(graph: str, plan: str, info: dict[str, Any]) -> dict[str, str]:
    """:func:`identity` with the GPU and versions read from a device record (``gpu.device.device_info``)."""
    return identity(graph, plan, info.get("gpu"), info.get("compute_capability"), info.get("cudnn_backend"),
                    info.get("cudnn_frontend"))


def identity(graph: str, plan: str, gpu: object, compute_capability: object, cudnn_backend: object,
             cudnn_frontend: object) -> dict[str, str]:
    """Everything a cached plan depends on; an entry is used only when all of it matches."""
    return {"format": str(FORMAT), "graph": graph, "plan": plan, "gpu": str(gpu), "cc": str(compute_capability),
            "cudnn_backend": str(cudnn_backend), "cudnn_frontend": str(cudnn_frontend)}


def _key(ident: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


class PlanStore:
    """Blobs with JSON headers in a folder, by identity; safe with several processes. No GPU needed."""

    def __init__(self, folder: str | Path | None = None, max_bytes: int = MAX_BYTES,
                 max_entry_bytes: int = MAX_ENTRY_BYTES) -> None:
        self.folder = Path(folder) if folder is not None else cache_dir.cache_root() / "plans"
        self.max_bytes = int(max_bytes)
        self.max_entry_bytes = int(max_entry_bytes)
        self._size: int | None = None  # bytes in the folder, counted on the first write
        #: what happened in this process: hits, misses, stored, ignored (bad entries removed), mismatched (a blob
        #: whose plan is not the one named), failed writes
        self.counts = {"hits": 0, "misses": 0, "stored": 0, "ignored": 0, "mismatched": 0, "unwritable": 0}

    @property
    def name(self) -> str:
        """The cache's name in messages: its folder's ("plans", "heuristics")."""
        return self.folder.name

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
        try:
            return PlanStore.check(data, ident, "plan cache entry")
        except DataError:
            return None

    @staticmethod
    def check(data: bytes, ident: dict[str, str], source: Any) -> tuple[bytes, dict[str, Any]]:
        """(blob, meta) of a whole, uncorrupted entry for exactly ``ident``; DataError naming the first problem."""
        n = len(MAGIC)
        if len(data) < n + _LEN.size or data[:n] != MAGIC:
            raise DataError(source, "not a plan cache entry (no magic and header length)")
        (hlen,) = _LEN.unpack_from(data, n)
        start = n + _LEN.size
        if hlen > _MAX_HEADER or start + hlen > len(data):
            raise DataError(source, f"its header length {hlen} runs past the entry (truncated?)")
        try:
            text = data[start:start + hlen].decode()
        except UnicodeDecodeError:
            raise DataError(source, "its header is not UTF-8 text") from None
        header = parse_json(text, source, "plan cache entry's header")
        if not isinstance(header, dict):
            raise DataError(source, "its header is not an object")
        if header.get("identity") != ident:
            raise DataError(source, "it is another graph's, GPU's or cuDNN's entry (its identity differs)")
        blob = data[start + hlen:]
        size, digest = header.get("blob_bytes"), header.get("sha256")
        if type(size) is not int or size != len(blob):
            raise DataError(source, f"its blob has {len(blob)} bytes, not the {size!r} its header says (truncated?)")
        if not isinstance(digest, str) or digest != hashlib.sha256(blob).hexdigest():
            raise DataError(source, "its blob's SHA-256 differs from its header's (corrupted)")
        meta = header.get("meta")
        return blob, meta if isinstance(meta, dict) else {}

    def get(self, ident: dict[str, str]) -> tuple[bytes, dict[str, Any]] | None:
        """The blob and its meta for ``ident``, or None (missing, or a bad entry, which is set aside)."""
        if not cache_dir.cache_enabled():
            return None
        path = self.path(ident)
        try:
            data = cache_dir.read_entry(path, f"{self.name} cache entry", limit=self.max_entry_bytes, magic=MAGIC)
            found = None if data is None else self.check(data, ident, path)
        except CudnnLabError as e:
            self.counts["ignored"] += 1
            cache_dir.set_aside(path, self.name, getattr(e, "problem", str(e)))
            return None
        if found is None:
            self.counts["misses"] += 1
            return None
        try:
            os.utime(path)  # least recently used goes first when the folder is trimmed
        except OSError:
            pass
        self.counts["hits"] += 1
        return found

    def discard(self, ident: dict[str, str]) -> None:
        """Remove the entry for ``ident`` (a bad entry, or a blob cuDNN refused)."""
        cache_dir.set_aside(self.path(ident), self.name, "refused")

    def put(self, ident: dict[str, str], blob: bytes, meta: dict[str, Any] | None = None) -> bool:
        """Write the entry atomically, then trim the folder; False when the cache is off, the entry is larger than
        ``max_entry_bytes`` (it would never be read) or the write failed."""
        if not cache_dir.cache_enabled():
            return False
        data = self.encode(ident, bytes(blob), dict(meta or {}))
        if len(data) > self.max_entry_bytes:
            return False
        path = self.path(ident)
        cache_dir.make_way(path, self.folder.parent, self.name)
        if not cache_dir.atomic_write(path, data):
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
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and _ENTRY_NAME.fullmatch(p.name):
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


def foreign(path: Path, rel: tuple[str, ...], is_dir: bool) -> str | None:
    """Why ``path`` (``rel``: its parts below a store's folder) is not what a PlanStore wrote: a ``<k[:2]>`` folder,
    an entry ``<k[:2]>/<k>.plan`` starting with :data:`MAGIC`, or a write's temporary file; None when it is."""
    if is_dir:
        return None if len(rel) == 1 and re.fullmatch(r"[0-9a-f]{2}", rel[0]) else "a folder the cache never makes"
    entry = _ENTRY_NAME.fullmatch(rel[-1]) if len(rel) == 2 else None
    temp = _TEMP_NAME.fullmatch(rel[-1]) if len(rel) == 2 else None
    found = entry or temp
    if found is None or found.group(1)[:2] != rel[0]:
        return "not named like an entry"
    head = read_regular(path, "cache entry", head=len(MAGIC))
    if head != MAGIC and not (temp and MAGIC.startswith(head)):  # a write cut short: a prefix of it
        return "no plan cache magic"
    return None


for _folder in ("plans", "heuristics", "kernels"):  # the folders whose entries `cudnn-lab cache --clear` may remove
    cache_dir.register(_folder, foreign)


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
                 ask: Callable[[], None] | None = None, sm_count: int | None = None,
                 kernel_cache: bool = False) -> None:
        self.spec, self.info, self.handle = spec, info, handle
        #: the SM carve-out the session's graphs were made for (None: the whole GPU), part of every plan's key
        self.sm_count = sm_count
        #: the session's graphs were made with cuDNN's kernel cache (part of every plan's key)
        self.kernel_cache = kernel_cache
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
                    self._graph_keys[gid] = plan_graph_key(self.spec, lab, self.sm_count, self.kernel_cache)
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
        if not isinstance(uids, dict) or not all(type(v) is int for v in uids.values()):
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


# ------------------------------------------------------------------------------------------------ kernel cache
#: A serialized kernel cache larger than this is neither read nor written (it holds compiled kernels: MBs).
MAX_KERNEL_CACHE_BYTES = 256 << 20


def kernel_identity(info: dict[str, Any]) -> dict[str, str]:
    """What a kept kernel cache depends on: the kit's format, the GPU (name, compute capability) and the cuDNN
    backend and frontend versions, as a plan's :func:`identity` (one kernel cache per GPU kind and cuDNN)."""
    return identity_on("kernel_cache", "kernel_cache", info)


class KernelCacheFile:
    """cuDNN's serialized kernel cache on disk beside the plans (``<root>/kernels/<k[:2]>/<k>.plan``), one per
    :func:`kernel_identity`, in the plan cache's entry format (magic, header with identity, length and SHA-256).

    :meth:`read` answers the text or None; an entry that is corrupt, foreign (another identity), too big or not a
    regular file is set aside and warned about once per process (RuntimeWarning, like the other caches'): the run goes
    on with an empty kernel cache. A write that fails switches the caches off with one warning
    (``cache_dir.atomic_write``)."""

    _warned: set[tuple[str, str]] = set()

    def __init__(self, folder: str | Path | None = None, max_bytes: int = MAX_KERNEL_CACHE_BYTES) -> None:
        self.store = PlanStore(cache_dir.cache_root() / "kernels" if folder is None else folder,
                               max_bytes=max_bytes * 2, max_entry_bytes=max_bytes)
        #: ignored: entries set aside (corrupt, foreign, refused by cuDNN); read, written
        self.counts = {"read": 0, "written": 0, "ignored": 0}

    def path(self, ident: dict[str, str]) -> Path:
        return self.store.path(ident)

    def warn(self, path: Path, problem: str) -> None:
        """Say once per process and folder that a kernel cache file was not used, and why."""
        key = (str(self.store.folder), "ignored")
        if key in KernelCacheFile._warned:
            return
        KernelCacheFile._warned.add(key)
        import warnings

        warnings.warn(f"cudnn_lab: the kernel cache file {path} was not used ({problem}); runs go on with a new "
                      f"kernel cache, written over it (nothing measured is lost).", RuntimeWarning, stacklevel=3)

    def read(self, ident: dict[str, str]) -> str | None:
        """The serialized kernel cache kept for ``ident``, or None (none kept, caches off, or a bad entry: set
        aside, warned once)."""
        if not cache_dir.cache_enabled():
            return None
        path = self.path(ident)
        try:
            data = cache_dir.read_entry(path, "kernel cache file", limit=self.store.max_entry_bytes, magic=MAGIC)
            if data is None:
                return None
            blob, _ = self.store.check(data, ident, path)
            text = blob.decode()
        except (CudnnLabError, UnicodeDecodeError) as e:
            self.discard(ident, getattr(e, "problem", None) or str(e) or "not UTF-8 text")
            return None
        self.counts["read"] += 1
        return text

    def discard(self, ident: dict[str, str], problem: str) -> None:
        """Set a bad or refused entry aside, warning once."""
        path = self.path(ident)
        self.counts["ignored"] += 1
        cache_dir.set_aside(path, "kernels", problem)
        self.warn(path, problem)

    def write(self, ident: dict[str, str], text: str, meta: dict[str, Any] | None = None) -> bool:
        """Keep ``text`` (``kernel_cache.serialize()``) for ``ident``; False when the caches are off, it is too big
        or the write failed (the caches are then off for the process, said once)."""
        ok = self.store.put(ident, text.encode(), meta)
        self.counts["written"] += int(ok)
        return ok


class KernelCache:
    """cuDNN's kernel cache (``cudnn.create_kernel_cache()``) for one GPU kind and cuDNN in this process: given to
    every graph of a run with ``kernel_cache=True`` so shapes that share a runtime-compiled kernel build it once,
    loaded from its :class:`KernelCacheFile` when first made and written back when a run added to it."""

    def __init__(self, info: dict[str, Any], file: KernelCacheFile | None = None) -> None:
        import cudnn

        self.ident = kernel_identity(info)
        self.file = file or KernelCacheFile()
        self.cache = cudnn.create_kernel_cache()
        #: 'disk' when loaded from the file, else 'new'
        self.source = "new"
        #: None until a save was tried; False (with ``why_not_kept``) when the frontend could not serialize it
        self.kept_on_disk: bool | None = None
        self.why_not_kept: str | None = None
        self._load()

    def _load(self) -> None:
        text = self.file.read(self.ident)
        #: SHA-256 of the text last loaded or written: an unchanged cache is not written again (cuDNN before 9.27 has
        #: no revision counter to tell)
        self._digest: str | None = None
        if text is not None:
            try:
                self.cache.deserialize(text)
                self.source = "disk"
                self._digest = hashlib.sha256(text.encode()).hexdigest()
            except Exception as e:  # noqa: BLE001 - cuDNN refused it (another build's, damaged): start empty
                self.file.discard(self.ident, f"cuDNN refused it: {' '.join(str(e).split())[:200]}")
                import cudnn

                self.cache = cudnn.create_kernel_cache()
        self._saved = self.revision()

    def revision(self) -> int | None:
        """cuDNN's count of changes to the cache; None where cuDNN cannot tell (before 9.27: "only available
        starting 9.27", seen on 9.19)."""
        try:
            return int(self.cache.revision())
        except Exception:  # noqa: BLE001 - a cuDNN without the counter
            return None

    def size(self) -> int | None:
        """Entries in the cache; None where cuDNN cannot tell (before 9.27, as :meth:`revision`)."""
        try:
            return int(self.cache.size())
        except Exception:  # noqa: BLE001
            return None

    def save(self) -> bool:
        """Write the cache to its file when it changed since it was loaded or last written; False when nothing was
        written (unchanged, caches off, the frontend cannot serialize it: then it is kept in this process only)."""
        rev = self.revision()
        if rev is not None and rev == self._saved:
            return False
        if not cache_dir.cache_enabled():
            self.why_not_kept = cache_dir.disabled_reason() or "the caches are off"
            return False
        try:
            text = self.cache.serialize()
        except Exception as e:  # noqa: BLE001 - kept in this process only, said in the run's settings (9.19 refuses
            # to serialize a cache no graph has filled yet: "descriptor not initialized")
            self.kept_on_disk = False
            self.why_not_kept = f"the cuDNN frontend could not serialize it: {' '.join(str(e).split())[:200]}"
            return False
        if not isinstance(text, str) or not text:
            self.kept_on_disk, self.why_not_kept = False, "the cuDNN frontend serialized it to nothing"
            return False
        digest = hashlib.sha256(text.encode()).hexdigest()
        if digest == self._digest:  # nothing new compiled since it was loaded or written
            self.kept_on_disk = self.kept_on_disk if self.kept_on_disk is not None else self.source == "disk"
            return False
        ok = self.file.write(self.ident, text, {"entries": self.size()})
        self.kept_on_disk = ok
        self.why_not_kept = None if ok else (cache_dir.disabled_reason() or "it could not be written")
        if ok:
            self._saved, self._digest = rev, digest
        return ok

    def summary(self) -> dict[str, Any]:
        """For a run's settings: where it came from, its entries, whether it is kept on disk (and why not)."""
        return {"source": self.source, "entries": self.size(), "kept_on_disk": self.kept_on_disk,
                "why_not_kept": self.why_not_kept, "file": str(self.file.path(self.ident)),
                "ignored_files": self.file.counts["ignored"]}


_KERNEL_CACHES: dict[tuple[str, str], KernelCache] = {}


def kernel_cache_for(info: dict[str, Any]) -> KernelCache:
    """The process's kernel cache for this GPU kind and cuDNN at the current cache root (made, and loaded from disk,
    on first use)."""
    key = (str(cache_dir.cache_root()), _key(kernel_identity(info)))
    if key not in _KERNEL_CACHES:
        _KERNEL_CACHES[key] = KernelCache(info)
    return _KERNEL_CACHES[key]
