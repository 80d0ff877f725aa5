"""Results: run records as frames with a documented schema, the derived metrics, the recorded datasets, the sweep
store, and the one loading layer every file the kit reads goes through.

| module | holds |
| --- | --- |
| schema | plan and sweep point columns: dtype, unit, title, meaning (PLAN_SCHEMA, POINT_SCHEMA; the one table) |
| run | RunResult, PLAN_COLUMNS, plans_frame, the result JSON schema |
| metrics | pick, best, regret, throughput, ridge and roof: the only definitions |
| backend_map | which backend wins each attention shape of a sweep (BackendMap), its JSON table and recordings |
| recordings | the one registry of recorded kinds (folder, suffix, size limit, checked reader) and its one cache |
| datasets | recorded_datasets, load_results, RECORDED_DIR, SWEEPS_DIR; registers the run and sweep kinds |
| store | Store: the append-only sweep store |
| loading | the face of the checks of every file read: json_files (bytes, text, spec and sweep JSON, Lab state), |
| | result_checks (a saved run, values by meaning, settings), sweep_checks (Parquet files, sweep frames) |
| paths | output and input paths checked before the work |
"""

from __future__ import annotations

from . import backend_map, metrics, recordings  # noqa: F401 - backend_map registers its recordings kind
from .datasets import DATASET_COLUMNS, RECORDED_DIR, SWEEPS_DIR, load_results, recorded_datasets
from .loading import (read_json, read_parquet, read_result_file, read_spec_file, read_state_file, read_sweep_file,
                      read_sweep_frame)
from .paths import check_input_path, check_output_path, check_store_path
from .run import PLAN_COLUMNS, RECORD_KEYS, SCHEMA_VERSION, RunResult, plans_frame
from .store import Store, StoreWarning

__all__ = ["RunResult", "plans_frame", "PLAN_COLUMNS", "RECORD_KEYS", "SCHEMA_VERSION", "recorded_datasets",
           "load_results", "RECORDED_DIR", "SWEEPS_DIR", "DATASET_COLUMNS", "Store", "StoreWarning", "metrics",
           "recordings",
           "read_json", "read_parquet", "read_result_file", "read_spec_file", "read_state_file", "read_sweep_file",
           "read_sweep_frame", "check_input_path", "check_output_path", "check_store_path"]
