"""Results recorded on real GPUs and shipped with the kit, and :func:`load_results` for those and any saved file.

Single runs are JSON files (``RunResult.save``) in ``RECORDED_DIR``; sweeps are Parquet files in ``SWEEPS_DIR``.
Every file goes through the loading layer, so a damaged one is named in a DataError, never a raw traceback.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, PathError
from .loading import (check_sweep_frame, parquet_problem, read_parquet, read_result_head, read_sweep_frame,
                      spec_from_data)
from .paths import as_path
from .run import RunResult
from .store import Store

__all__ = ["RECORDED_DIR", "SWEEPS_DIR", "DATASET_COLUMNS", "DATASET_KINDS", "recorded_datasets", "load_results",
           "dataset_prefix"]

_DATA = Path(__file__).resolve().parent.parent / "data"
#: Results recorded on real GPUs and shipped with the package, for use without a GPU.
RECORDED_DIR = _DATA / "recorded"
SWEEPS_DIR = _DATA / "sweeps"
DATASET_COLUMNS = ["name", "kind", "op", "gpu", "driver", "cuda", "cudnn", "date", "label", "path"]
DATASET_KINDS = ("run", "sweep")
_SWEEP_META = ["gpu", "driver", "cuda", "cudnn", "created", "point_id"]


def dataset_prefix(gpu: str) -> str:
    """The short GPU name a recording's file name starts with: 'NVIDIA H100 80GB HBM3' -> 'h100', 'NVIDIA H200'
    -> 'h200'; a name without a model number keeps its whole slug ('NVIDIA GeForce RTX 4090' -> 'geforce-rtx-4090')."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(gpu).lower()).strip("-").removeprefix("nvidia-")
    first = slug.split("-", 1)[0]
    return first if re.fullmatch(r"[a-z]{1,3}\d{2,4}[a-z]?", first) else (slug or "gpu")


def _row(path: Path, kind: str) -> dict[str, Any]:
    """One dataset's row, read once per file version: the Lab lists the recordings at every start and refresh."""
    stat = path.stat()
    return dict(_row_of(str(path), kind, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=512)
def _row_of(path: str, kind: str, mtime_ns: int, size: int) -> tuple[tuple[str, Any], ...]:
    return tuple((_run_row if kind == "run" else _sweep_row)(Path(path)).items())


def _run_row(path: Path) -> dict[str, Any]:
    data = read_result_head(path)
    dev = data["device"]
    spec = spec_from_data(data["spec"], path)
    return {"name": path.stem, "kind": "run", "op": spec.op, "gpu": dev.get("gpu"), "driver": dev.get("driver"),
            "cuda": dev.get("cuda"), "cudnn": dev.get("cudnn_backend"), "date": data.get("created", "")[:10],
            "label": spec.label(), "path": str(path)}


def _sweep_row(path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    try:
        names = set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 - read_parquet names what is wrong with the file
        names = set(_SWEEP_META)
    if "point_id" not in names:
        raise DataError(path, "the sweep Parquet file has no point_id column (is it a sweep written by cl.sweep?)")
    meta = read_parquet(path, "sweep Parquet file", columns=[c for c in _SWEEP_META if c in names])
    ok = meta.dropna(subset=["gpu"]) if "gpu" in meta.columns else meta.iloc[0:0]
    first = ok.iloc[0] if len(ok) else (meta.iloc[0] if len(meta) else {})
    get = first.get if hasattr(first, "get") else (lambda _k: None)
    return {"name": path.stem, "kind": "sweep", "op": None, "gpu": get("gpu"), "driver": get("driver"),
            "cuda": get("cuda"), "cudnn": get("cudnn"), "date": str(get("created") or "")[:10],
            "label": f"sweep of {meta['point_id'].nunique()} points", "path": str(path)}


def recorded_datasets(kind: str | None = None) -> Any:
    """The recordings shipped with the kit: name, kind ('run' or 'sweep'), op (a run's operation), gpu, driver, cuda,
    cudnn, date, label, path."""
    import pandas as pd

    if kind is not None and kind not in DATASET_KINDS:
        raise OptionError("kind", kind, "must be 'run', 'sweep' or None")
    rows = []
    if kind in (None, "run"):
        rows += [_row(p, "run") for p in sorted(RECORDED_DIR.glob("*.json"))]
    if kind in (None, "sweep"):
        rows += [_row(p, "sweep") for p in sorted(SWEEPS_DIR.glob("*.parquet"))]
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)


def _names() -> str:
    return ", ".join(sorted([p.stem for p in RECORDED_DIR.glob("*.json")]
                            + [p.stem for p in SWEEPS_DIR.glob("*.parquet")])) or "none shipped"


def load_results(name_or_path: str | Path) -> Any:
    """Load a recording by its name in :func:`recorded_datasets`, or a file: a RunResult (.json) or a sweep frame
    (.parquet file or store folder). PathError / DataError / OptionError name what is wrong."""
    if isinstance(name_or_path, (str, os.PathLike)) and not str(os.fspath(name_or_path)).strip():
        raise OptionError("name_or_path", name_or_path, f"must name a recorded dataset ({_names()}) or a file")
    path = as_path(name_or_path, what="name_or_path")
    if not path.exists() and not path.suffix and len(path.parts) == 1:
        for candidate in (RECORDED_DIR / f"{path.name}.json", SWEEPS_DIR / f"{path.name}.parquet"):
            if candidate.is_file():
                path = candidate
                break
        else:
            raise OptionError("name_or_path", str(name_or_path),
                              f"is neither a recorded dataset ({_names()}) nor an existing file")
    if not path.exists():
        raise PathError(path, "does not exist", hint=f"recorded datasets are {_names()}")
    if path.is_dir():
        store = Store(path)
        if not store.parts():
            raise DataError(path, "is a folder but not a sweep store (no point-*.parquet files in it)")
        frame = store.read()
        if frame.empty:
            raise DataError(path, "holds no readable point (every part file is damaged)")
        return check_sweep_frame(frame, path)
    if path.suffix.lower() == ".json":
        return RunResult.load(path)
    if path.suffix.lower() == ".parquet":
        return read_sweep_frame(path)
    problem = parquet_problem(path)
    if problem is None:
        return read_sweep_frame(path)
    raise DataError(path, "is neither a result JSON (.json) nor a sweep (.parquet file or store folder)")
