"""Where the kit's caches live on disk, how they are turned off, and the one warning when they cannot be written.

The root is ``$CUDNN_LAB_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/cudnn_lab``, else ``~/.cache/cudnn_lab``.
``CUDNN_LAB_NO_CACHE=1`` turns every cache off (nothing is read or written). Each cache keeps its files in its own
folder below the root (``plans/``, ``ceilings/``, ``heuristics/``). A cache that cannot be written (full disk,
read-only folder) is switched off for the rest of the process with one warning; the run itself goes on without it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

__all__ = ["ENV_DIR", "ENV_OFF", "cache_root", "cache_enabled", "disable", "disabled_reason", "reset", "atomic_write",
           "folder_info", "clear", "info"]

ENV_DIR = "CUDNN_LAB_CACHE_DIR"
ENV_OFF = "CUDNN_LAB_NO_CACHE"
#: The cache folders this kit writes below the root (``clear`` removes only these).
FOLDERS: tuple[str, ...] = ("plans", "ceilings", "heuristics")

_lock = threading.Lock()
_disabled: dict[str, str] = {}  # cache root -> why it was switched off in this process


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


def reset() -> None:
    """Forget that a cache was switched off in this process (after the user fixed the folder; tests)."""
    with _lock:
        _disabled.clear()


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


def folder_info(folder: Path) -> tuple[int, int]:
    """(files, bytes) of the regular files below ``folder`` (0, 0 when it does not exist)."""
    files = size = 0
    if folder.is_dir():
        for p in folder.rglob("*"):
            try:
                if p.is_file():
                    files += 1
                    size += p.stat().st_size
            except OSError:
                continue
    return files, size


def info() -> dict[str, Any]:
    """Where the caches are, whether they are on, and each one's files and bytes (for ``cudnn-lab cache --info``)."""
    root = cache_root()
    out: dict[str, Any] = {"root": str(root), "enabled": cache_enabled(), "why_off": disabled_reason()}
    for name in FOLDERS:
        files, size = folder_info(root / name)
        out[name] = {"files": files, "bytes": size}
    return out


def clear() -> dict[str, int]:
    """Remove the kit's cache folders below the root (never anything else); returns files removed per folder."""
    root = cache_root()
    removed = {}
    for name in FOLDERS:
        files, _ = folder_info(root / name)
        shutil.rmtree(root / name, ignore_errors=True)
        removed[name] = files
    return removed
