"""The one registry of recorded kinds: every kind of recording the kit ships (single runs, sweeps, what-if answers, SM
scaling, version runs, block formats) registered once with its folder, format, size limit and checked reader, and
read by one function through one cache.

A file is refused before it is read when it is not a regular file (PathError) or is larger than its kind's
``max_bytes`` (DataError naming the file and the limit); then the kind's ``load`` reads and checks it (DataError
naming the file and the field). Files of a kind are read in sorted name order. The cache is keyed by (kind, resolved
path, size, mtime_ns), so a file changed on disk is read again.

Other layers register their kinds against it (``whatif/`` its answers); :mod:`cudnn_lab.results.datasets` registers
the two this layer owns, ``run`` and ``sweep`` (importing ``cudnn_lab.results`` imports it). A kind's ``title`` names
its files in messages ("result JSON": "the result JSON is 300 MiB, more than ...").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import OptionError, PathError
from ..files import regular_size
from .paths import check_input_path

__all__ = ["RecordingKind", "register", "kind", "kinds", "read", "read_one", "files", "heads", "clear",
           "CACHE_ENTRIES"]

#: Most files the cache keeps (least recently read dropped first): far above what the kit ships.
CACHE_ENTRIES = 1024


@dataclass(frozen=True)
class RecordingKind:
    """One kind of recording: where it ships, its file suffix, its size limit and its checked reader."""

    name: str                    # unique: "run", "sweep", "whatif", "sm_scaling", "version_run", "block_scale"
    folder: Path                 # the shipped folder under cudnn_lab/data/
    suffix: str                  # ".json" or ".parquet"
    max_bytes: int               # a larger file is refused with DataError naming file and limit
    load: Callable[[Path], Any]  # reads and checks one file; DataError naming file and field
    title: str                   # a few words for people (messages say "the {title}")
    #: optional cheaper reader for listings (what a list of recordings shows: a run's head, not its plans); None:
    #: ``load`` serves listings too
    head: Callable[[Path], Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise OptionError("name", self.name, "must be a short identifier such as 'run' or 'sm_scaling'")
        if not isinstance(self.folder, Path):
            raise OptionError("folder", self.folder, "must be a pathlib.Path", where=f"recording kind {self.name}")
        if not isinstance(self.suffix, str) or not self.suffix.startswith("."):
            raise OptionError("suffix", self.suffix, "must be a file suffix such as '.json' or '.parquet'",
                              where=f"recording kind {self.name}")
        if not isinstance(self.max_bytes, int) or isinstance(self.max_bytes, bool) or self.max_bytes <= 0:
            raise OptionError("max_bytes", self.max_bytes, "must be a positive integer",
                              where=f"recording kind {self.name}")
        if not callable(self.load) or (self.head is not None and not callable(self.head)):
            raise OptionError("load", self.load, "must be a function of one path", where=f"recording kind {self.name}")


_KINDS: dict[str, RecordingKind] = {}
#: The one cache: (kind, part, resolved path, size, mtime_ns) -> what the reader returned.
_CACHE: OrderedDict[tuple[str, str, str, int, int], Any] = OrderedDict()
_LOCK = threading.RLock()


def register(kind: RecordingKind) -> RecordingKind:
    """Add ``kind`` to the registry (registering the same kind again is a no-op); a second, different kind of the
    same name is refused with OptionError."""
    if not isinstance(kind, RecordingKind):
        raise OptionError("kind", type(kind).__name__, "must be a RecordingKind")
    with _LOCK:
        known = _KINDS.get(kind.name)
        if known is not None and known != kind:
            raise OptionError("kind", kind.name, f"is already registered ({known.title}, {known.folder}); names are "
                              "unique")
        _KINDS[kind.name] = kind
    return kind


def kind(name: str) -> RecordingKind:
    """The registered kind ``name``; OptionError listing the registered names for any other."""
    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        raise OptionError("kind", name, f"must be a recorded kind: {', '.join(sorted(_KINDS)) or 'none'}") from None


def kinds() -> tuple[RecordingKind, ...]:
    """Every registered kind, in the order they were registered."""
    return tuple(_KINDS.values())


def files(name: str, folder: Path | None = None) -> list[Path]:
    """The files of kind ``name`` in ``folder`` (its shipped folder by default), sorted by name; none for a folder
    that does not exist."""
    k = kind(name)
    where = k.folder if folder is None else Path(folder)
    if not where.is_dir():
        return []
    return sorted((p for p in where.iterdir() if p.name.endswith(k.suffix) and not p.name.startswith(".")),
                  key=lambda p: p.name)


def read(name: str, folder: Path | None = None) -> list[Any]:
    """Every file of kind ``name`` (in ``folder``, its shipped folder by default), each checked, in name order."""
    return _each(kind(name), "load", folder)


def heads(name: str, folder: Path | None = None) -> list[Any]:
    """What a list of recordings shows of each file of kind ``name`` (its ``head`` reader, else ``load``), checked
    through the same guards and cache."""
    k = kind(name)
    return _each(k, "head" if k.head is not None else "load", folder)


def _each(k: RecordingKind, part: str, folder: Path | None) -> list[Any]:
    """The reader's answer for every file of ``k`` in ``folder``: listed paths need no existence check, and their
    folder is resolved once (a Lab lists the recordings at every start and refresh)."""
    listed = files(k.name, folder)
    if not listed:
        return []
    base = listed[0].parent.resolve()
    return [_cached(k, part, p, resolved=str(base / p.name)) for p in listed]


def read_one(name: str, path: Any) -> Any:
    """One file of kind ``name`` through the registry's guards, checks and cache."""
    return _cached(kind(name), "load", path)


def clear() -> None:
    """Forget every file read (the next read reads the files again)."""
    with _LOCK:
        _CACHE.clear()


def _cached(k: RecordingKind, part: str, path: Any, *, resolved: str | None = None) -> Any:
    """The reader's answer for ``path``: from the cache when the file's size and time are unchanged, else read after
    the guards (regular file, at most ``max_bytes``). ``resolved``: a listed file's resolved path (its existence
    is known); a caller's path is checked and resolved here."""
    if resolved is None:
        path = check_input_path(path, what=k.title)
        try:
            resolved = str(path.resolve())
        except (OSError, RuntimeError) as e:
            raise PathError(path, f"the {k.title} could not be resolved ({e})") from None
    path = Path(path)
    st = regular_size(path, k.title, limit=k.max_bytes)
    key = (k.name, part, resolved, st.st_size, st.st_mtime_ns)
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    reader = k.head if part == "head" and k.head is not None else k.load
    value = reader(path)
    with _LOCK:
        for old in [o for o in _CACHE if o[:3] == key[:3]]:  # an older version of the file
            del _CACHE[old]
        _CACHE[key] = value
        while len(_CACHE) > CACHE_ENTRIES:
            _CACHE.popitem(last=False)
    return value

