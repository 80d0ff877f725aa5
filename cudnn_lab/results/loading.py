"""The one loading layer: every file the kit reads is checked here before anything uses it.

A path is checked first (exists, a file or a store folder, readable), then its bytes (not empty, UTF-8 JSON or
Parquet, not truncated), then its content against the documented schema, the type of every field included. The first
problem found raises the kit's own error naming the file and the field: :class:`~cudnn_lab.errors.PathError` for
the path, :class:`~cudnn_lab.errors.DataError` for the content. No raw JSONDecodeError, UnicodeDecodeError,
RecursionError, KeyError, TypeError or pyarrow error leaves these functions for a bad file.

Schemas: a saved :class:`~cudnn_lab.results.run.RunResult` (``RESULT_KEYS``, each plan row typed by its column),
a sweep frame (``sweeps.POINT_COLUMNS`` plus the plan columns), a spec JSON (``Spec.to_json``), a sweep JSON
(``spec``/``specs``, ``over`` and run options) and the Lab's state (``Lab.state``).

The checks live in three modules by concern, this one the face every caller imports from:
:mod:`~cudnn_lab.results.json_files` (bytes and text, spec JSON, sweep JSON, Lab state),
:mod:`~cudnn_lab.results.result_checks` (a saved run, its plan rows, values by meaning, settings) and
:mod:`~cudnn_lab.results.sweep_checks` (Parquet files and sweep frames).
"""

from __future__ import annotations

# The byte, JSON and field checks live one layer down (the caches read through them too); re-exported here.
from ..files import (MAX_INT_DIGITS, MAX_JSON_DEPTH, _expect, _fail, _kind, file_kind, finite_number, inflate,
                     parse_json, read_regular)
from .json_files import (MAX_JSON_BYTES, MAX_PLAN_NAME, MAX_RECORDING_TEXT, MAX_STATE_BYTES, STATE_KEYS, SWEEP_KEYS,
                         check_state, check_sweep, read_bytes, read_json, read_spec_file, read_state_file,
                         read_sweep_file, read_text, spec_from_data)
from .result_checks import (BOOL_COLUMNS, CLASSIC_ENGINE_ID, FLOAT_COLUMNS, INT_COLUMNS, JSON_COLUMNS, KNOB_HIGH,
                            KNOB_LOW, MAX_BYTES, MAX_CELL_CHARS, MAX_CELL_DEPTH, MAX_COUNT, MAX_ENGINE_ID, RESULT_KEYS,
                            SCHEMA_VERSION, TEXT_COLUMNS, VALUE_RANGES, check_cell, check_result, check_settings,
                            read_result_file, read_result_head)
from .sweep_checks import (PARQUET_MAGIC, SWEEP_NUMBER_COLUMNS, SWEEP_REQUIRED, RowProblem, check_sweep_columns,
                           check_sweep_frame, parquet_problem, read_parquet, read_sweep_frame, sweep_row_problems)

__all__ = ["read_bytes", "read_text", "parse_json", "read_json", "spec_from_data", "read_spec_file",
           "check_sweep", "read_sweep_file", "check_state", "read_state_file", "check_result", "read_result_file",
           "read_result_head", "check_settings", "parquet_problem", "read_parquet", "check_sweep_frame",
           "read_sweep_frame", "RESULT_KEYS", "check_sweep_columns", "sweep_row_problems", "RowProblem", "check_cell",
           "VALUE_RANGES", "JSON_COLUMNS", "MAX_ENGINE_ID", "CLASSIC_ENGINE_ID", "MAX_COUNT", "MAX_BYTES", "KNOB_LOW",
           "KNOB_HIGH", "MAX_CELL_CHARS", "MAX_CELL_DEPTH", "INT_COLUMNS", "FLOAT_COLUMNS", "BOOL_COLUMNS",
           "TEXT_COLUMNS", "SWEEP_NUMBER_COLUMNS", "SWEEP_REQUIRED", "SWEEP_KEYS", "PARQUET_MAGIC",
           "SCHEMA_VERSION", "MAX_JSON_BYTES", "MAX_INT_DIGITS", "MAX_JSON_DEPTH", "read_regular", "inflate",
           "finite_number", "file_kind", "MAX_STATE_BYTES", "MAX_PLAN_NAME", "MAX_RECORDING_TEXT", "STATE_KEYS",
           "_expect", "_fail", "_kind"]
