"""An append-only results store for sweeps: a folder of Parquet files, one per finished point.

Each point is written to a temporary file (``.tmp-*.parquet``) and renamed into place, so a crash loses at most the
point in flight and never leaves a half-written part; a point's id names its file, so re-running a sweep skips what
is done and never duplicates a row. The invariant :meth:`Store.read` keeps, even with several writers on one store:
each point has exactly one record (the rows of one part file), and an ok record beats a failure record.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from ..errors import DataError, PathError, shorten
from .loading import parquet_problem
from .paths import as_path

__all__ = ["Store", "StoreWarning", "PART_PREFIX", "FAILED_PREFIX", "TMP_PREFIX", "STALE_TMP_S"]

PART_PREFIX = "point-"
FAILED_PREFIX = "failed-"
TMP_PREFIX = ".tmp-"
SUFFIX = ".parquet"
#: A temporary file older than this (seconds) belongs to a killed write and is removed.
STALE_TMP_S = 60.0


class StoreWarning(UserWarning):
    """A store holds part files that cannot be read; they are skipped (and rewritten when their point is re-run)."""


class Store:
    """A folder of ``point-<id>.parquet`` files (the folder may be named ``results.parquet``).

    A point that failed is kept as ``failed-<id>.parquet``: it shows in :meth:`read` but not in :meth:`done`, so a
    re-run tries it again and, if it then succeeds, its failure record is removed. Opening a store removes the
    temporary files of writes that were killed.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = as_path(path, what="store")
        if self.path.exists() and not self.path.is_dir():
            raise PathError(self.path, "a store must be a folder (it holds one Parquet file per point), "
                                       "not an existing file")
        #: parts read ahead on a thread (:meth:`read_ahead`): part -> ((mtime_ns, size) when read, its rows' future)
        self._ahead: dict[Path, tuple[tuple[int, int], cf.Future[Any]]] = {}
        self._reader: cf.ThreadPoolExecutor | None = None
        self.clean_tmp()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # ---------------------------------------------------------------------------------------------- files

    def _part(self, point_id: str, failed: bool = False) -> Path:
        return self.path / f"{FAILED_PREFIX if failed else PART_PREFIX}{point_id}{SUFFIX}"

    def parts(self) -> list[Path]:
        """Every ``point-*`` and ``failed-*`` part file, readable or not."""
        if not self.path.is_dir():
            return []
        return sorted(p for prefix in (PART_PREFIX, FAILED_PREFIX) for p in self.path.glob(f"{prefix}*{SUFFIX}")
                      if p.is_file())

    def clean_tmp(self, older_than_s: float = STALE_TMP_S) -> list[Path]:
        """Remove temporary files of killed writes older than ``older_than_s``; returns those removed."""
        if not self.path.is_dir():
            return []
        now, removed = time.time(), []
        for tmp in self.path.glob(f"{TMP_PREFIX}*{SUFFIX}"):
            try:
                if now - tmp.stat().st_mtime >= older_than_s:
                    tmp.unlink()
                    removed.append(tmp)
            except OSError:  # another process removed or renamed it first
                continue
        return removed

    @staticmethod
    def _point_id(part: Path) -> str:
        name = part.name[:-len(SUFFIX)]
        return name[len(PART_PREFIX):] if name.startswith(PART_PREFIX) else name[len(FAILED_PREFIX):]

    def _usable(self, part: Path) -> bool:
        """Whether a part reads as Parquet with a point_id column (a damaged or foreign part is not a record)."""
        import pyarrow.parquet as pq

        if not part.is_file() or parquet_problem(part) is not None:
            return False
        try:
            return "point_id" in pq.read_schema(part).names
        except Exception:  # noqa: BLE001 - removed or damaged meanwhile
            return False

    # ---------------------------------------------------------------------------------------------- resume

    def done(self) -> set[str]:
        """Ids of the points stored as ok (readable parts only). Failure records of those points are stale and are
        removed; temporary files of killed writes too."""
        self.clean_tmp()
        ids = set()
        for part in self.path.glob(f"{PART_PREFIX}*{SUFFIX}") if self.path.is_dir() else []:
            if self._usable(part):
                pid = self._point_id(part)
                ids.add(pid)
                self._part(pid, failed=True).unlink(missing_ok=True)
        return ids

    def append(self, point_id: str, frame: Any, failed: bool = False) -> Path:
        """Write one point's rows atomically (temporary file, fsync, rename); returns the part that holds the point.

        An ok record removes the point's failure record; a failure record is not written over an ok one (an ok
        beats a failure, whichever writer comes last).
        """
        if not isinstance(point_id, str) or not point_id or any(c in point_id for c in "/\\\x00"):
            raise DataError(self.path, f"point id {shorten(point_id)} must be non-empty text without a path "
                                       "separator")
        ok_part = self._part(point_id)
        if failed and self._usable(ok_part):
            return ok_part
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise PathError(self.path, f"cannot create the store folder ({e.strerror or e})") from None
        final = self._part(point_id, failed)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path, prefix=TMP_PREFIX, suffix=SUFFIX)
            with os.fdopen(fd, "wb") as f:
                frame.to_parquet(f, index=False)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        except OSError as e:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            raise PathError(final, f"could not write this point to the store ({e.strerror or e})") from None
        except BaseException:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            raise
        if not failed:
            self._part(point_id, failed=True).unlink(missing_ok=True)
        elif self._usable(ok_part):  # another writer stored this point as ok meanwhile
            final.unlink(missing_ok=True)
            return ok_part
        return final

    # ---------------------------------------------------------------------------------------------- reading

    def read_ahead(self, part: Path) -> None:
        """Read ``part`` (just written) on a background thread while the sweep goes on; :meth:`read` takes those
        rows if the file is still the one read (same modification time and size), so a sweep's final read does not
        read every part again at the end."""
        try:
            st = part.stat()
        except OSError:
            return
        if self._reader is None:
            self._reader = cf.ThreadPoolExecutor(1, thread_name_prefix="cudnn_lab-store")
        self._ahead[part] = ((st.st_mtime_ns, st.st_size), self._reader.submit(_read_part, part))

    def _read_part(self, part: Path) -> tuple[Any, str | None]:
        ahead = self._ahead.pop(part, None)
        if ahead is not None:
            stamp, rows = ahead
            try:
                st = part.stat()
                same = (st.st_mtime_ns, st.st_size) == stamp
            except OSError:
                same = False
            if same:
                frame, problem = rows.result()
                if problem is None:
                    return frame, None
        return _read_part(part)

    def read(self) -> Any:
        """Every stored point's rows, one record per point (ok beats failure), points in the order they finished.

        Part files that cannot be read are skipped with one :class:`StoreWarning` naming them.
        """
        import pandas as pd

        by_point: dict[str, dict[bool, Path]] = {}
        for part in self.parts():
            by_point.setdefault(self._point_id(part), {})[part.name.startswith(FAILED_PREFIX)] = part
        frames: list[tuple[int, Any]] = []
        bad: list[str] = []
        for parts in by_point.values():
            for failed in (False, True):
                part = parts.get(failed)
                if part is None:
                    continue
                frame, problem = self._read_part(part)
                if problem is None:
                    frames.append((part.stat().st_mtime_ns, frame))
                    break
                if problem != "gone":
                    bad.append(f"{part.name} ({problem})")
        if bad:
            warnings.warn(f"{self.path}: skipped {len(bad)} unreadable part file(s): {'; '.join(bad[:5])}"
                          + (" ..." if len(bad) > 5 else "") + ". Their points run again on resume.",
                          StoreWarning, stacklevel=2)
        if self._reader is not None and not self._ahead:
            self._reader.shutdown(wait=False)
            self._reader = None
        if not frames:
            return pd.DataFrame()
        frames.sort(key=lambda item: item[0])
        return pd.concat([f for _, f in frames], ignore_index=True)


def _read_part(part: Path) -> tuple[Any, str | None]:
    """A part's rows, or why it cannot be used ('gone' when another writer removed it meanwhile)."""
    import pandas as pd

    if not part.exists():
        return None, "gone"
    problem = parquet_problem(part)
    if problem is not None:
        return None, "gone" if not part.exists() else problem
    try:
        frame = pd.read_parquet(part)
    except FileNotFoundError:
        return None, "gone"
    except Exception as e:  # noqa: BLE001 - a damaged part is skipped, not fatal
        return None, f"{type(e).__name__}: {shorten(str(e), 80)}"
    if "point_id" not in frame.columns:
        return None, "no point_id column: not a part written by a sweep"
    return frame, None
