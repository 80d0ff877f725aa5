"""An append-only results store for sweeps: a folder of Parquet files, one per finished point.

Each point is written to a temporary file and renamed into place, so a crash loses at most the point in flight and
never leaves a half-written file; a point's id names its file, so re-running a sweep skips what is done and never
duplicates a row. ``pandas.read_parquet(folder)`` reads the whole store too.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import SpecError

PART_PREFIX = "point-"
FAILED_PREFIX = "failed-"


class Store:
    """A folder of ``point-<id>.parquet`` files (the folder may be named ``results.parquet``).

    A point that failed is kept as ``failed-<id>.parquet``: it shows in :meth:`read` but not in :meth:`done`, so a
    re-run tries it again and, if it then succeeds, its failure record is removed.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise SpecError("store", str(path), "must be a folder (a store holds one Parquet file per point), "
                            "not an existing file")

    def _part(self, point_id: str, failed: bool = False) -> Path:
        return self.path / f"{FAILED_PREFIX if failed else PART_PREFIX}{point_id}.parquet"

    def done(self) -> set[str]:
        """Ids of the points already stored."""
        if not self.path.is_dir():
            return set()
        return {p.name[len(PART_PREFIX):-len(".parquet")] for p in self.path.glob(f"{PART_PREFIX}*.parquet")}

    def append(self, point_id: str, frame: Any, failed: bool = False) -> Path:
        """Write one point's rows atomically (temporary file, fsync, rename)."""
        self.path.mkdir(parents=True, exist_ok=True)
        final = self._part(point_id, failed)
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".tmp-", suffix=".parquet")
        try:
            with os.fdopen(fd, "wb") as f:
                frame.to_parquet(f, index=False)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        if not failed:
            self._part(point_id, failed=True).unlink(missing_ok=True)
        return final

    def read(self) -> Any:
        """Every stored row, points in the order they finished."""
        import pandas as pd

        parts = sorted((p for prefix in (PART_PREFIX, FAILED_PREFIX) for p in self.path.glob(f"{prefix}*.parquet")),
                       key=lambda p: p.stat().st_mtime_ns) if self.path.is_dir() else []
        if not parts:
            return pd.DataFrame()
        return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
