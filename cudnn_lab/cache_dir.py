"""Where the kit's caches live on disk, how they are turned off, how an entry is read, and what `--clear` removes.

The root is ``$CUDNN_LAB_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/cudnn_lab``, else ``~/.cache/cudnn_lab``.
``CUDNN_LAB_NO_CACHE=1`` turns every cache off (nothing is read or written). Each cache keeps its files in its own
folder below the root (``plans/``, ``ceilings/``, ``heuristics/``, ``kernels/``). A cache that cannot be written
(full disk, read-only folder) is switched off for the rest of the process with one warning; the run itself goes on
without it.

Every entry is read through :func:`read_entry` (:func:`cudnn_lab.files.read_regular`: regular files only, never
blocking on a FIFO, the kit's header checked on the first bytes, a size bound per cache). An entry that is corrupt,
foreign, too big or not a regular file is skipped and set aside (:func:`set_aside`) so it is rebuilt; only when that
fails does the process warn, once per cache. :func:`clear` removes only the entries the kit wrote (each cache
recognizes its own by name and header), never follows a symbolic link, and says what it removed and what it left.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import CudnnLabError, DataError, PathError
from .files import file_kind, read_regular

__all__ = ["ENV_DIR", "ENV_OFF", "cache_root", "cache_enabled", "disable", "disabled_reason", "reset", "atomic_write",
           "folder_info", "clear", "info", "Cleared", "read_entry", "set_aside", "make_way", "root_problem",
           "warn_once", "register"]

ENV_DIR = "CUDNN_LAB_CACHE_DIR"
ENV_OFF = "CUDNN_LAB_NO_CACHE"
#: The cache folders this kit writes below the root (``clear`` looks only in these).
FOLDERS: tuple[str, ...] = ("plans", "ceilings", "heuristics", "kernels")
#: A recognizer: why the path (its parts below the cache folder; a folder when the flag is set) is not the kit's,
#: or None when the cache wrote it (a folder: one the cache makes, looked into).
Recognizer = Callable[[Path, tuple[str, ...], bool], "str | None"]
#: Each cache folder's recognizer, registered by the cache that writes it (gpu/cache.py, gpu/ceilings.py).
_RECOGNIZERS: dict[str, Recognizer] = {}

_lock = threading.Lock()
_disabled: dict[str, str] = {}  # cache root -> why it was switched off in this process
_warned: set[tuple[str, str]] = set()  # (cache root, cache folder) that warned about an entry it could not set aside


def cache_root() -> Path:
    """The cache root (not created here)."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "cudnn_lab"


def _env_off() -> bool:
    return os.environ.get(ENV_OFF, "").strip().lower() not in ("", "0", "false", "no", "off")


def cache_enabled() -> bool:
    """False when ``CUDNN_LAB_NO_CACHE`` is set or this process switched the cache off after a failed write."""
    return not _env_off() and str(cache_root()) not in _disabled


def disabled_reason() -> str | None:
    """Why the caches are off in this process (None when they are on)."""
    if _env_off():
        return f"{ENV_OFF} is set"
    return _disabled.get(str(cache_root()))


def disable(problem: str) -> None:
    """Switch the cache at the current root off for this process, warning once (full disk, unwritable folder)."""
    root = str(cache_root())
    with _lock:
        if root in _disabled:
            return
        _disabled[root] = problem
    warnings.warn(f"cudnn_lab: the cache in {root} is switched off for this process ({problem}); runs go on "
                  f"without it. Set {ENV_DIR} to a writable folder, or {ENV_OFF}=1 to silence this.",
                  RuntimeWarning, stacklevel=3)


def warn_once(cache: str, message: str) -> None:
    """Warn about ``cache``'s folder at most once per process and root (an entry it cannot set aside)."""
    key = (str(cache_root()), cache)
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(f"cudnn_lab: the {cache} cache {message}. Remove it by hand, or run `cudnn-lab cache --clear`.",
                  RuntimeWarning, stacklevel=3)


def reset() -> None:
    """Forget that a cache was switched off or warned in this process (after the user fixed the folder; tests)."""
    with _lock:
        _disabled.clear()
        _warned.clear()


# ------------------------------------------------------------------------------------------------ entries

def read_entry(path: Path, what: str, *, limit: int, magic: bytes = b"") -> bytes | None:
    """A cache entry's bytes, or None when there is none. An entry that is a link or not a regular file (PathError),
    does not start with ``magic`` (only its first bytes read) or is larger than ``limit`` bytes (never read; both
    DataError) raises: the caller skips it and sets it aside."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise PathError(path, f"the {what} could not be read ({e.strerror or e})") from None
    if stat.S_ISLNK(mode):
        raise PathError(path, f"the {what} is a symbolic link; the kit's caches hold only files the kit wrote")
    if magic and read_regular(path, what, head=len(magic)) != magic:
        raise DataError(path, f"the {what} was not written by the kit (it does not start with the kit's header)")
    return read_regular(path, what, limit=limit)


def set_aside(path: Path, cache: str, problem: str, *, keep: bool = False) -> bool:
    """Take a bad entry out of the way so it is rebuilt: a folder (or, with ``keep``, any file) is renamed aside,
    anything else unlinked (a link itself, never its target). False, with one warning per cache, when that fails."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISDIR(mode) or (keep and stat.S_ISREG(mode)):
            os.rename(path, path.with_name(f"{path.name}.aside-{secrets.token_hex(4)}"))
        else:
            os.unlink(path)
    except FileNotFoundError:
        return True
    except OSError as e:
        warn_once(cache, f"skips {path} ({problem}) but could not set it aside ({e.strerror or e})")
        return False
    return True


def make_way(path: Path, top: Path, cache: str) -> None:
    """Before writing ``path``: set aside whatever blocks it below ``top`` (a file where a folder goes, a folder where
    the entry goes). Folders reached through a link are used as they are."""
    parts = path.relative_to(top).parts
    for i in range(1, len(parts)):
        folder = top.joinpath(*parts[:i])
        try:
            if stat.S_ISDIR(os.stat(folder).st_mode):
                continue
        except OSError:
            return  # missing: mkdir makes the rest; else (a dangling link) atomic_write says what is wrong
        set_aside(folder, cache, "not a folder", keep=True)
        return
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            set_aside(path, cache, "a folder where an entry goes")
    except OSError:
        pass


def atomic_write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a unique temporary file and ``os.replace`` (readers never see a partial
    file; two writers of the same path both leave a whole file). On an OSError the cache is switched off (one
    warning) and False returned."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError as e:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        disable(f"cannot write {path}: {e.strerror or e}")
        return False


# ------------------------------------------------------------------------------------------------ info and clear

def root_problem(root: Path | None = None) -> str | None:
    """Why the cache root cannot be used (not a folder, unreadable, cannot be made); None when it can."""
    root = cache_root() if root is None else root
    try:
        mode = os.stat(root).st_mode
    except (FileNotFoundError, NotADirectoryError):
        parent = root.parent
        while not os.path.lexists(parent) and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            return f"it cannot be made: {parent} is not a folder"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"it cannot be made: {parent} is not writable"
        return None
    except OSError as e:
        return f"it cannot be read ({e.strerror or e})"
    if not stat.S_ISDIR(mode):
        return f"it is {file_kind(mode)}, not a folder"
    if not os.access(root, os.R_OK | os.W_OK | os.X_OK):
        return "it is not readable and writable by this user"
    return None


def folder_info(folder: Path) -> tuple[int, int]:
    """(files, bytes) of the regular files below ``folder`` (0, 0 when it does not exist); links are not followed."""
    files = size = 0
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return 0, 0
    except OSError:
        return 0, 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                files += 1
                size += st.st_size
    return files, size


def _folder_note(folder: Path) -> str | None:
    """Why a cache folder is not looked into (a link, not a folder); None when it is a folder or missing."""
    try:
        mode = os.lstat(folder).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    if stat.S_ISLNK(mode):
        return f"a symbolic link to {os.readlink(folder)}: not followed"
    return None if stat.S_ISDIR(mode) else f"{file_kind(mode)}, not a folder"


def info() -> dict[str, Any]:
    """Where the caches are, whether they are on or the root is unusable (``problem``), and each one's files and
    bytes (``note`` when its folder is a link or not a folder), for ``cudnn-lab cache --info``."""
    root = cache_root()
    out: dict[str, Any] = {"root": str(root), "enabled": cache_enabled(), "why_off": disabled_reason(),
                           "problem": root_problem(root)}
    for name in FOLDERS:
        files, size = folder_info(root / name)
        out[name] = {"files": files, "bytes": size, "note": _folder_note(root / name)}
    return out


@dataclasses.dataclass(frozen=True)
class Cleared:
    """What :func:`clear` did: files and bytes removed per cache, and every path left with why (``left``: not the
    kit's, a link not followed; ``failed``: the kit's but could not be removed)."""

    root: str
    removed: dict[str, int]
    bytes: int = 0
    left: tuple[tuple[str, str], ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    problem: str | None = None


def register(folder: str, recognize: Recognizer) -> None:
    """Let :func:`clear` remove ``folder``'s entries that ``recognize`` says the kit wrote (called by each cache
    when its module loads, so this layer never imports the caches above it)."""
    if folder not in FOLDERS:
        raise ValueError(f"cache folder {folder!r} is not one of {', '.join(FOLDERS)}")
    _RECOGNIZERS[folder] = recognize


def clear() -> Cleared:
    """Remove the entries the kit wrote in its cache folders (each recognized by its name and header), then the
    folders left empty; never anything else, never through a link."""
    root = cache_root()
    removed = dict.fromkeys(FOLDERS, 0)
    state: dict[str, Any] = {"bytes": 0, "left": [], "failed": []}
    try:
        root_ok = stat.S_ISDIR(os.stat(root).st_mode)
    except OSError:
        root_ok = False
    if not root_ok:
        return Cleared(str(root), removed, problem=root_problem(root) or "it does not exist")
    for name in FOLDERS:
        recognize, top = _RECOGNIZERS.get(name), root / name
        if recognize is None:  # its cache's module is not loaded: nothing tells the kit's entries from others
            if top.exists():
                state["left"].append((str(top), "no cache of this process recognizes its entries (import "
                                                "cudnn_lab.gpu.cache and cudnn_lab.gpu.ceilings first)"))
            continue
        note = _folder_note(top)
        if note:
            state["left"].append((str(top), note))
        elif top.exists():
            removed[name] = _clear_folder(top, (), recognize, state)
    return Cleared(str(root), removed, state["bytes"], tuple(state["left"]), tuple(state["failed"]))


def _clear_folder(folder: Path, rel: tuple[str, ...], recognize: Recognizer, state: dict[str, Any]) -> int:
    """Remove the kit's entries below ``folder`` (recursing into the folders the cache makes); the count removed."""
    count = 0
    try:
        with os.scandir(folder) as it:
            found = list(it)
    except OSError as e:
        state["failed"].append((str(folder), f"could not be listed ({e.strerror or e})"))
        return 0
    for entry in sorted(found, key=lambda e: e.name):
        path = Path(entry.path)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # removed meanwhile
        parts = (*rel, entry.name)
        if stat.S_ISLNK(st.st_mode):
            state["left"].append((str(path), f"a symbolic link to {os.readlink(path)}: not followed"))
            continue
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            state["left"].append((str(path), f"{file_kind(st.st_mode)}, not written by the kit"))
            continue
        try:
            why = recognize(path, parts, stat.S_ISDIR(st.st_mode))
        except FileNotFoundError:
            continue  # removed meanwhile
        except CudnnLabError as e:
            why = getattr(e, "problem", str(e))
        if why is not None:
            state["left"].append((str(path), f"not written by the kit ({why})"))
        elif stat.S_ISDIR(st.st_mode):
            count += _clear_folder(path, parts, recognize, state)
        else:
            try:
                os.unlink(path)
            except OSError as e:
                state["failed"].append((str(path), f"could not be removed ({e.strerror or e})"))
                continue
            count += 1
            state["bytes"] += st.st_size
    try:
        os.rmdir(folder)  # only when empty: whatever was left keeps it
    except OSError:
        pass
    return count
