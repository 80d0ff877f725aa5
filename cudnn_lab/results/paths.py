"""Paths a user hands the kit, checked before any work is done with them.

``check_output_path`` runs before a GPU run, a sweep or a report is started, so a path that cannot be written fails
at once with a :class:`~cudnn_lab.errors.PathError` instead of after minutes of work; ``write_text`` writes
atomically and, if the write still fails, says where it could not write (the caller keeps its object).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import OptionError, PathError
from ..files import as_path

__all__ = ["as_path", "check_output_path", "check_input_path", "check_store_path", "write_text"]


def _writable_dir(folder: Path, path: Path, what: str) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PathError(path, f"cannot write the {what} here: folder {folder} is not writable",
                        hint="choose a folder you can write to")


def _nearest_existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def check_output_path(path: object, *, what: str, suffixes: tuple[str, ...] = (), make_parents: bool = True) -> Path:
    """A path the kit will write a file to, checked before the work: not empty, not a directory, its folder exists
    (or is made, with ``make_parents``) and is writable, and an existing file there is writable.

    ``suffixes`` (e.g. ``(".json",)``) are the endings allowed; ``what`` names the file in messages
    ("result JSON", "report"). Returns the path; raises PathError (OptionError for a value that is not a path).
    """
    path = as_path(path, what=what)
    if suffixes and path.suffix.lower() not in suffixes:
        raise OptionError(what, str(path), f"must end in {' or '.join(suffixes)}")
    if path.is_dir():
        example = path / ("out" + (suffixes[0] if suffixes else ""))
        raise PathError(path, f"is a directory; the {what} needs a file name", hint=f"e.g. {example}")
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise PathError(path, f"cannot write the {what}: {folder} is a file, not a folder")
    if not folder.exists():
        base = _nearest_existing(folder)
        if not base.is_dir():
            raise PathError(path, f"cannot write the {what}: {base} is a file, not a folder")
        if not make_parents:
            raise PathError(path, f"cannot write the {what}: folder {folder} does not exist",
                            hint="create it first")
        _writable_dir(base, path, what)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise PathError(path, f"cannot create folder {folder} for the {what} ({e.strerror or e})") from None
    _writable_dir(folder, path, what)
    if path.exists() and not os.access(path, os.W_OK):
        raise PathError(path, f"the {what} exists and is not writable")
    return path


def check_input_path(path: object, *, what: str, folder: bool = False) -> Path:
    """A path the kit will read, checked: it exists, is a file (a folder with ``folder=True``, e.g. a store) and is
    readable. Returns the path; raises PathError (OptionError for a value that is not a path)."""
    path = as_path(path, what=what)
    if not path.exists():
        hint = f"{path.parent} does not exist either" if not path.parent.exists() else ""
        raise PathError(path, f"the {what} does not exist", hint=hint)
    if path.is_dir() and not folder:
        raise PathError(path, f"is a directory; the {what} must be a file")
    if not path.is_dir() and not path.is_file():
        raise PathError(path, f"the {what} is not a regular file")
    if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
        raise PathError(path, f"the {what} is not readable (permission denied)")
    return path


def check_store_path(path: object, *, what: str = "store") -> Path:
    """A sweep store's folder, checked before a sweep: not a file, and it exists or can be made, writable."""
    path = as_path(path, what=what)
    if path.exists() and not path.is_dir():
        raise PathError(path, f"the {what} must be a folder (a store holds one Parquet file per point), "
                              "not an existing file")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise PathError(path, f"cannot make the {what} here: {base} is a file, not a folder")
    _writable_dir(base, path, what)
    return path


def write_text(path: Path, text: str, *, what: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (temporary file, rename); PathError saying where if it fails."""
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)  # mkstemp's 0600 is too strict
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise PathError(path, f"could not write the {what} ({e.strerror or e}); nothing was lost in memory, "
                              "save it again elsewhere") from None
    return path
