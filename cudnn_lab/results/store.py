"""An append-only results store for sweeps: a folder of Parquet files, one per finished point.

Each point is written to a temporary file (``.tmp-*.parquet``) and renamed into place, so a crash loses at most the
point in flight and never leaves a half-written part; a point's id names its file, so re-running a sweep skips what
is done and never duplicates a row. The invariant :meth:`Store.read` keeps, even with several writers on one store:
each point has exactly one record (the rows of one part file), and an ok record beats a failure record.

A part's name is checked against its contents: a part holding no rows, or rows of another point, is no record of its
point. It is set aside (renamed ``_aside-<name>``, never deleted; readers of the folder skip names starting with
``_``) with one :class:`StoreWarning`, and its point counts as not done, so a resumed sweep runs it again.
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

__all__ = ["Store", "StoreWarning", "PART_PREFIX", "FAILED_PREFIX", "TMP_PREFIX", "ASIDE_PREFIX", "STALE_TMP_S"]

PART_PREFIX = "point-"
FAILED_PREFIX = "failed-"
TMP_PREFIX = ".tmp-"
#: A part whose rows are not its point's is renamed with this prefix (kept for a person to look at, never read).
ASIDE_PREFIX = "_aside-"
SUFFIX = ".parquet"
#: A temporary file older than this (seconds) belongs to a killed write and is removed.
STALE_TMP_S = 60.0


class StoreWarning(UserWarning):
    """A store holds part files that cannot be read (skipped, rewritten when their point is re-run) or that do not
    hold their point's rows (set aside, their point re-run)."""


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

    def _set_aside(self, part: Path, stamp: tuple[int, int] | None) -> Path | None:
        """Rename a part that is no record of its point to ``_aside-<name>`` (never deleted), if it is still the
        file that was read (same modification time and size: another writer may have replaced it since); returns
        where it went, or None when it changed or went meanwhile."""
        try:
            if stamp is not None and _stamp(part) != stamp:
                return None
            for n in range(1000):
                target = self.path / f"{ASIDE_PREFIX}{part.stem}{f'.{n}' if n else ''}{SUFFIX}"
                if not target.exists():
                    os.rename(part, target)
                    return target
        except OSError:
            return None
        return None

    def _aside_all(self, mislabelled: list[tuple[Path, tuple[int, int] | None, str]]) -> list[str]:
        """Set each mislabelled part aside; one line per part moved (for the warning)."""
        lines = []
        for part, stamp, problem in mislabelled:
            moved = self._set_aside(part, stamp)
            if moved is not None:
                lines.append(f"{part.name} ({problem}; set aside as {moved.name})")
        return lines

    def _warn(self, unreadable: list[str], aside: list[str]) -> None:
        """One StoreWarning for the parts skipped and set aside by one read of the store."""
        said = []
        for count, what, items in ((len(unreadable), "unreadable part file(s)", unreadable),
                                   (len(aside), "part file(s) that do not hold their point's rows", aside)):
            if count:
                said.append(f"{'skipped' if items is unreadable else 'set aside'} {count} {what}: "
                            f"{'; '.join(items[:5])}{' ...' if count > 5 else ''}")
        if said:
            warnings.warn(f"{self.path}: {'; '.join(said)}. Their points run again on resume.", StoreWarning,
                          stacklevel=3)

    # ---------------------------------------------------------------------------------------------- resume

    def done(self) -> set[str]:
        """Ids of the points stored as ok (readable parts whose rows are their point's). Failure records of those
        points are stale and are removed; temporary files of killed writes too. A part holding no rows or another
        point's rows is set aside with one :class:`StoreWarning`, and its point is not done."""
        self.clean_tmp()
        ids = set()
        mislabelled = []
        for part in self.path.glob(f"{PART_PREFIX}*{SUFFIX}") if self.path.is_dir() else []:
            if self._usable(part):
                pid = self._point_id(part)
                stamp = _stamp(part)
                problem = _label_problem_on_disk(part, pid)
                if problem is not None:
                    if problem is not UNREADABLE:
                        mislabelled.append((part, stamp, problem))
                    continue
                ids.add(pid)
                self._part(pid, failed=True).unlink(missing_ok=True)
        self._warn([], self._aside_all(mislabelled))
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

    def _read_part(self, part: Path) -> tuple[Any, str | None, bool, tuple[int, int] | None]:
        """(rows, None, False, stamp) for a good part, else (None, why, whether it is mislabelled, stamp)."""
        ahead = self._ahead.pop(part, None)
        if ahead is not None:
            stamp, rows = ahead
            if _stamp(part) == stamp:
                frame, problem, mislabelled = rows.result()
                if problem is None or mislabelled:
                    return frame, problem, mislabelled, stamp
        now = _stamp(part)
        return (*_read_part(part), now)

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
        mislabelled: list[tuple[Path, tuple[int, int] | None, str]] = []
        for parts in by_point.values():
            for failed in (False, True):
                found = parts.get(failed)
                if found is None:
                    continue
                part = found
                frame, problem, wrong, stamp = self._read_part(part)
                if problem is None:
                    frames.append((stamp[0] if stamp else 0, frame))
                    break
                if wrong:
                    mislabelled.append((part, stamp, problem))
                elif problem != "gone":
                    bad.append(f"{part.name} ({problem})")
        self._warn(bad, self._aside_all(mislabelled))
        if self._reader is not None and not self._ahead:
            self._reader.shutdown(wait=False)
            self._reader = None
        if not frames:
            return pd.DataFrame()
        frames.sort(key=lambda item: item[0])
        return pd.concat([f for _, f in frames], ignore_index=True)


#: What :func:`_label_problem_on_disk` says of a part removed or damaged while it was read.
UNREADABLE = "unreadable"


def _stamp(part: Path) -> tuple[int, int] | None:
    """A part's (modification time, size), to tell whether it is still the file read; None when it is gone."""
    try:
        st = part.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _label_problem(part: Path, ids: list[Any]) -> str | None:
    """Why rows with point ids ``ids`` are no record of ``part``'s point (none, or another point's), or None."""
    pid = Store._point_id(part)
    if not ids:
        return "holds no rows"
    others = sorted({str(i) for i in ids if isinstance(i, str) and i != pid})
    blank = sum(1 for i in ids if not isinstance(i, str))
    if not others and not blank:
        return None
    own = "besides its own" if pid in ids else f"not of point {shorten(pid, 40)}"
    if not others:
        return f"holds {blank} row(s) without a point id, {own}"
    more = f" and {len(others) - 1} other(s)" if len(others) > 1 else ""
    return f"holds rows of point {shorten(others[0], 40)}{more}, {own}"


def _label_problem_on_disk(part: Path, pid: str) -> str | None:
    """:func:`_label_problem` of a part on disk from its footer's row count and point_id statistics (min = max =
    the point's id, no nulls), reading the point_id column only where they do not settle it; ``UNREADABLE`` when
    the part went or was damaged meanwhile."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(part)
        if meta.num_rows == 0:
            return "holds no rows"
        settled = True
        for r in range(meta.num_row_groups):
            group = meta.row_group(r)
            column = next((group.column(j) for j in range(group.num_columns)
                           if group.column(j).path_in_schema == "point_id"), None)
            stats = column.statistics if column is not None else None
            if (stats is None or not stats.has_min_max or stats.null_count != 0
                    or stats.min != pid or stats.max != pid):
                settled = False
                break
        if settled:
            return None
        ids = pq.read_table(part, columns=["point_id"]).column("point_id").to_pylist()
    except Exception:  # noqa: BLE001 - removed or damaged meanwhile: not done, and not set aside
        return UNREADABLE
    return _label_problem(part, ids)


def _read_part(part: Path) -> tuple[Any, str | None, bool]:
    """A part's rows, or why it cannot be used ('gone' when another writer removed it meanwhile) and whether it is
    mislabelled (readable, but holding no rows or another point's)."""
    import pandas as pd

    if not part.exists():
        return None, "gone", False
    problem = parquet_problem(part)
    if problem is not None:
        return None, "gone" if not part.exists() else problem, False
    try:
        frame = pd.read_parquet(part)
    except FileNotFoundError:
        return None, "gone", False
    except Exception as e:  # noqa: BLE001 - a damaged part is skipped, not fatal
        return None, f"{type(e).__name__}: {shorten(str(e), 80)}", False
    if "point_id" not in frame.columns:
        return None, "no point_id column: not a part written by a sweep", False
    problem = _label_problem(part, frame["point_id"].tolist())
    if problem is not None:
        return None, problem, True
    return frame, None, False
