"""Results recorded on real GPUs and shipped with the kit, and :func:`load_results` for those and any saved file.

Single runs are JSON files (``RunResult.save``) in ``RECORDED_DIR``; sweeps are Parquet files in ``SWEEPS_DIR``.
Both are kinds of the one recordings registry (:mod:`cudnn_lab.results.recordings`: ``run`` and ``sweep``), so every
file goes through its guards, the loading layer's checks and its one cache: a damaged one is named in a DataError,
never a raw traceback.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, PathError
from . import recordings
from .loading import MAX_JSON_BYTES, check_sweep_frame, parquet_problem, read_parquet, read_result_head, spec_from_data
from .loading import read_sweep_frame
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
#: Sweep Parquet files larger than this are refused before they are read (the shipped ones are a few hundred KB).
MAX_SWEEP_BYTES = 2**32


def dataset_prefix(gpu: str) -> str:
    """The short GPU name a recording's file name starts with: 'NVIDIA H100 80GB HBM3' -> 'h100', 'NVIDIA H200'
    -> 'h200'; a name without a model number keeps its whole slug ('NVIDIA GeForce RTX 4090' -> 'geforce-rtx-4090')."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(gpu).lower()).strip("-").removeprefix("nvidia-")
    first = slug.split("-", 1)[0]
    return first if re.fullmatch(r"[a-z]{1,3}\d{2,4}[a-z]?", first) else (slug or "gpu")


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
    rows = [dict(row) for k in DATASET_KINDS if kind in (None, k) for row in recordings.heads(k, _folders()[k])]
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)


def _names() -> str:
    return ", ".join(sorted(p.stem for k, f in _folders().items() for p in recordings.files(k, f))) or "none shipped"


def _folders() -> dict[str, Path]:
    """Each kind's folder as this module names it now (a test may point one elsewhere)."""
    return {"run": RECORDED_DIR, "sweep": SWEEPS_DIR}


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
        return _fresh(recordings.read_one("run", path))
    if path.suffix.lower() == ".parquet" or parquet_problem(path) is None:
        return _fresh(recordings.read_one("sweep", path))
    raise DataError(path, "is neither a result JSON (.json) nor a sweep (.parquet file or store folder)")


def _fresh(value: Any) -> Any:
    """A caller's own copy of a cached recording (a RunResult's plan table or a sweep frame may be changed by its
    caller; the registry's copy is not)."""
    if isinstance(value, RunResult):
        out = copy.copy(value)
        out.plans = value.plans.copy()
        return out
    return value.copy()


def _load_run(path: Path) -> RunResult:
    return RunResult.load(path)


RUN = recordings.register(recordings.RecordingKind(
    name="run", folder=RECORDED_DIR, suffix=".json", max_bytes=MAX_JSON_BYTES, load=_load_run, title="result JSON",
    head=_run_row))
SWEEP = recordings.register(recordings.RecordingKind(
    name="sweep", folder=SWEEPS_DIR, suffix=".parquet", max_bytes=MAX_SWEEP_BYTES, load=read_sweep_frame,
    title="sweep Parquet file", head=_sweep_row))
