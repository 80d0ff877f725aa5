"""The one loading layer: every file the kit reads is checked here before anything uses it.

A path is checked first (exists, a file or a store folder, readable), then its bytes (not empty, UTF-8 JSON or
Parquet, not truncated), then its content against the documented schema, the type of every field included. The first
problem found raises the kit's own error naming the file and the field: :class:`~cudnn_lab.errors.PathError` for
the path, :class:`~cudnn_lab.errors.DataError` for the content. No raw JSONDecodeError, UnicodeDecodeError,
RecursionError, KeyError, TypeError or pyarrow error leaves these functions for a bad file.

Schemas: a saved :class:`~cudnn_lab.results.run.RunResult` (``RESULT_KEYS``, each plan row typed by its column),
a sweep frame (``sweeps.POINT_COLUMNS`` plus the plan columns), a spec JSON (``Spec.to_json``), a sweep JSON
(``spec``/``specs``, ``over`` and run options) and the Lab's state (``Lab.state``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CudnnLabError, DataError, OptionError, SpecError, shorten
# The byte, JSON and field checks live one layer down (the caches read through them too); re-exported here.
from ..files import (MAX_INT_DIGITS, MAX_JSON_DEPTH, _expect, _fail, _kind, file_kind, finite_number, inflate,
                     parse_json, read_regular)
from .paths import check_input_path
from .schema import columns_of, point_columns_of
from ..specs import spec_from_dict
from ..options import RunOptions
from ..specs.base import spec_classes

__all__ = ["read_bytes", "read_text", "parse_json", "read_json", "spec_from_data", "read_spec_file",
           "check_sweep", "read_sweep_file", "check_state", "read_state_file", "check_result", "read_result_file",
           "parquet_problem", "read_parquet", "check_sweep_frame", "read_sweep_frame", "RESULT_KEYS",
           "check_sweep_columns", "sweep_row_problems", "RowProblem", "check_cell", "VALUE_RANGES", "JSON_COLUMNS",
           "MAX_ENGINE_ID",
           "SCHEMA_VERSION", "MAX_JSON_BYTES", "MAX_INT_DIGITS", "MAX_JSON_DEPTH", "read_regular", "inflate",
           "finite_number", "file_kind", "MAX_STATE_BYTES", "MAX_PLAN_NAME", "MAX_RECORDING_TEXT", "STATE_KEYS"]

#: Version of the saved-result schema this kit writes and reads.
SCHEMA_VERSION = 1
#: JSON files larger than this are refused (a result with every plan of a large sweep is a few MB).
MAX_JSON_BYTES = 256 * 2**20
PARQUET_MAGIC = b"PAR1"

#: Keys of a saved result: name -> (JSON type, required).
RESULT_KEYS: dict[str, tuple[type | tuple[type, ...], bool]] = {
    "schema": (int, True), "spec": (dict, True), "plans": (list, True), "device": (dict, True),
    "torch": (dict, True), "ceilings": (dict, True), "settings": (dict, True), "warnings": (list, False),
    "created": (str, False), "histograms": (dict, False), "engine_space": (dict, False),
}
#: Plan-row columns by JSON type, from the schema (results/schema.py: what each means).
INT_COLUMNS = columns_of("int")
FLOAT_COLUMNS = columns_of("float")
BOOL_COLUMNS = columns_of("bool")
TEXT_COLUMNS = columns_of("text")
#: Sweep-frame columns that must hold numbers where they are filled: the plan's and the point's (the schema's).
SWEEP_NUMBER_COLUMNS = (*INT_COLUMNS, *FLOAT_COLUMNS, *point_columns_of("int"), *point_columns_of("float"))
SWEEP_REQUIRED = ("point_id", "point_status")


# ------------------------------------------------------------------------------------------------ bytes and text

def read_bytes(path: Any, what: str, *, limit: int | None = None) -> tuple[Path, bytes]:
    """The checked path and its bytes; PathError for a missing, directory, special (FIFO, device, socket) or
    unreadable path, DataError if empty or larger than ``limit`` bytes (checked before reading and while reading, so a
    file that grows or lies about its size is never read whole)."""
    path = check_input_path(path, what=what)
    data = read_regular(path, what, limit=limit)
    if not data.strip():
        raise DataError(path, f"the {what} is empty")
    return path, data


def read_text(path: Any, what: str, *, limit: int = MAX_JSON_BYTES) -> tuple[Path, str]:
    """The checked path and its UTF-8 text (a BOM is allowed; at most ``limit`` bytes); DataError naming the first
    undecodable byte."""
    path, data = read_bytes(path, what, limit=limit)
    try:
        return path, data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(path, f"the {what} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                        hint="save it as UTF-8 JSON") from None


def read_json(path: Any, what: str, *, limit: int = MAX_JSON_BYTES) -> Any:
    """A JSON file's value (at most ``limit`` bytes), the path and bytes checked first (see :func:`read_bytes`,
    :func:`parse_json`)."""
    path, text = read_text(path, what, limit=limit)
    return parse_json(text, path, what)


# ------------------------------------------------------------------------------------------------ schema helpers

_NUMBER = (int, float)


_SCALAR = (str, int, float, bool)


def _scalars(source: Any, field: str, data: dict[str, Any], typed: dict[str, tuple[type, ...]]) -> None:
    """Every value of ``data`` a JSON scalar; the keys in ``typed`` of their type (or null)."""
    for key, value in data.items():
        _expect(source, f"{field}.{key}", value, typed.get(key, _SCALAR), null=True)


def spec_from_data(data: Any, source: Any, field: str = "spec") -> Any:
    """A spec from its dict; its own SpecError (naming the spec field) becomes a DataError naming the file too."""
    _expect(source, field, data, dict)
    try:
        return spec_from_dict(data)
    except SpecError as e:
        raise DataError(source, f"field {field}: {e}") from None
    except CudnnLabError:
        raise
    except (TypeError, ValueError, OverflowError, KeyError, AttributeError, RecursionError) as e:
        raise DataError(source, f"field {field}: not a valid spec ({type(e).__name__}: {shorten(str(e), 120)})") \
            from None


def read_spec_file(path: Any) -> Any:
    """A spec JSON file (``Spec.to_json``) -> Spec."""
    path = Path(path) if isinstance(path, (str, Path)) else path
    data = read_json(path, "spec JSON")
    if not isinstance(data, dict):
        raise DataError(path, f"the spec JSON must hold an object, not {_kind(data)}",
                        hint='e.g. {"op": "conv", "n": 16, ...} as Spec.to_json() writes it')
    return spec_from_data(data, path, "spec")


# ------------------------------------------------------------------------------------------------ sweep JSON

#: Keys of a sweep JSON besides run options.
SWEEP_KEYS = ("spec", "specs", "over")


def check_sweep(data: Any, source: Any) -> dict[str, Any]:
    """A sweep description -> {"spec": Spec or list of Specs, "over": dict, "options": dict of run options}."""
    if not isinstance(data, dict):
        raise DataError(source, f"a sweep JSON must hold an object, not {_kind(data)}",
                        hint='e.g. {"spec": {...}, "over": {"n": [1, 8]}, "plans": "heuristic"}')
    if ("spec" in data) == ("specs" in data):
        raise DataError(source, 'a sweep JSON must hold "spec" (one spec) or "specs" (a list), exactly one of them')
    if "spec" in data:
        spec: Any = spec_from_data(data["spec"], source, "spec")
        bases = [spec]
    else:
        specs = _expect(source, "specs", data["specs"], list)
        if not specs:
            raise _fail(source, "specs", "must hold at least one spec")
        spec = bases = [spec_from_data(d, source, f"specs[{i}]") for i, d in enumerate(specs)]
    over = _expect(source, "over", data.get("over", {}), dict, null=True) or {}
    for name, values in over.items():
        _expect(source, f"over.{name}", values, list)
        if not values:
            raise _fail(source, f"over.{name}", "must list at least one value")
        for base in bases:
            if name not in base.to_dict():
                raise _fail(source, f"over.{name}", f"is not a field of {type(base).__name__}; fields are "
                            f"{', '.join(sorted(k for k in base.to_dict() if k != 'op'))}")
    options = {k: v for k, v in data.items() if k not in SWEEP_KEYS}
    try:
        RunOptions.from_dict(options)
    except OptionError as e:
        raise DataError(source, f"run option {e.option}: {e.allowed}",
                        hint=f"keys are {', '.join(SWEEP_KEYS)} and run options ({', '.join(RunOptions.names())})") \
            from None
    return {"spec": spec, "over": over, "options": options}


def read_sweep_file(path: Any) -> dict[str, Any]:
    """A sweep JSON file -> :func:`check_sweep`'s dict."""
    return check_sweep(read_json(path, "sweep JSON"), Path(path))


# ------------------------------------------------------------------------------------------------ Lab state

#: A Lab state is a few KB: larger files (and state codes inflating past this) are refused.
MAX_STATE_BYTES = 2**20
#: Longest plan name a state's ``selected`` holds, and recording name or path its ``recorded`` holds.
MAX_PLAN_NAME = 1024
MAX_RECORDING_TEXT = 4096
#: The keys ``Lab.state()`` writes.
STATE_KEYS = ("version", "spec", "view", "selected", "run", "source", "recorded")


def _name(source: Any, field: str, value: Any, limit: int) -> str | None:
    """``value`` if it is null or non-empty text of at most ``limit`` characters, else DataError naming the field."""
    _expect(source, field, value, str, null=True)
    if value is not None and not 0 < len(value) <= limit:
        raise _fail(source, field, f"must be a name of 1 to {limit} characters, not {len(value)}")
    return value


def check_state(state: Any, source: Any, *, version: int = 1, views: tuple[str, ...] = ()) -> dict[str, Any]:
    """A Lab state (``Lab.state()``) checked whole: keys, version, spec, view, selected plan, run options, source,
    recording; the first problem raises DataError naming ``source`` and the field."""
    if not isinstance(state, dict):
        raise DataError(source, f"a Lab state must be an object as Lab.state() makes it, not {_kind(state)}")
    for key in state:
        if key not in STATE_KEYS:
            raise _fail(source, _field_text(key), f"is not a Lab state key (keys are {', '.join(STATE_KEYS)})")
    if "version" not in state:
        raise _fail(source, "version", f"is missing (a state saved by this kit's Lab has version {version})")
    got = state["version"]
    if not isinstance(got, int) or isinstance(got, bool) or got != version:
        raise _fail(source, "version", f"must be {version} (a state saved by this kit's Lab), not {_kind(got)}")
    if "spec" not in state:
        raise _fail(source, "spec", "is missing (a Lab state holds the problem shown, as Spec.to_dict() writes it)")
    spec_from_data(state["spec"], source, "spec")
    view = _expect(source, "view", state.get("view"), str, null=True)
    if view is not None and views and view not in views:
        raise _fail(source, "view", f"must be one of {', '.join(views)}, not {shorten(view)}")
    _name(source, "selected", state.get("selected"), MAX_PLAN_NAME)
    _name(source, "recorded", state.get("recorded"), MAX_RECORDING_TEXT)
    if state.get("source") is not None and state["source"] not in ("live", "recorded"):
        raise _fail(source, "source", f"must be 'live' or 'recorded', not {_kind(state['source'])}")
    run = _expect(source, "run", state.get("run", {}), dict, null=True) or {}
    try:
        RunOptions.from_dict(run)
    except OptionError as e:
        raise _fail(source, f"run.{_field_text(e.option)}", e.allowed) from None
    return state


def _field_text(name: Any) -> str:
    """A field name from a file as a message shows it: as it is, or shortened when long (or not text)."""
    return name if isinstance(name, str) and len(name) <= 60 else shorten(name, 60)


def read_state_file(path: Any, *, version: int = 1, views: tuple[str, ...] = ()) -> dict[str, Any]:
    """A file written by ``Lab.save`` (at most :data:`MAX_STATE_BYTES`) -> its checked state dict."""
    return check_state(read_json(path, "Lab state JSON", limit=MAX_STATE_BYTES), Path(path), version=version,
                       views=views)


# ------------------------------------------------------------------------------------------------ values by meaning

#: Engine ids a plan may hold: the backend's engines (0 to MAX_ENGINE_ID), or -1 for a classic call (pooling,
#: softmax, activation, transform, RNN through the legacy API: no engine).
MAX_ENGINE_ID = 10_000
CLASSIC_ENGINE_ID = -1
#: Largest count or rank a field may hold (samples, launches, NaN counts, heuristic ranks): far beyond any run.
MAX_COUNT = 2**48
#: Largest size in bytes a field may hold (a plan's workspace): far beyond any GPU's memory.
MAX_BYTES = 2**50
#: Knob values are 32-bit integers in the backend.
KNOB_LOW, KNOB_HIGH = -2**31, 2**31 - 1
#: Longest JSON text one cell (``JSON_COLUMNS``) may hold, and how deep it may nest (kit cells nest 2-3 levels).
MAX_CELL_CHARS = 4 * 2**20
MAX_CELL_DEPTH = 8
#: Number columns of plan rows and sweep frames -> (low, high) of their values (None: open on that side). Every value
#: must also be finite; NaN/null is a missing value.
VALUE_RANGES: dict[str, tuple[float | None, float | None]] = {
    "engine_id": (CLASSIC_ENGINE_ID, MAX_ENGINE_ID),
    "workspace_bytes": (0, MAX_BYTES),
    **dict.fromkeys(("heuristic_rank", "rank_A", "rank_B", "rank_FALLBACK", "samples", "calls_per_sample",
                     "nan_count", "inf_count", "kernel_count", "sm_count"), (0, MAX_COUNT)),
    **dict.fromkeys(("build_ms", "median_ms", "iqr_ms", "min_ms", "host_ms", "kernel_ms", "tflops", "gbps",
                     "pct_of_ceiling", "rel_l2", "max_abs", "max_rel", "replay_over_kernel", "flops", "min_bytes",
                     "torch_off_ms", "torch_on_ms", "ceiling_tflops", "ceiling_gbps", "point_s"), (0, None)),
    **dict.fromkeys(("within_torch", "within_cudnn"), (0, 1)),
    # median minus CUPTI kernel time: negative where the kernels' summed time exceeds the replayed median
    "launch_gap_ms": (None, None),
}
#: Text columns that hold JSON: ``knobs`` (knob -> integer), ``kernels`` (a list of launches: name, kind, count, us,
#: total_us) and a sweep's ``spec`` (``Spec.to_json``).
JSON_COLUMNS = ("knobs", "kernels", "spec")


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType"


def check_cell(source: Any, field: str, col: str, value: Any) -> Any:
    """An embedded-JSON text cell of ``JSON_COLUMNS`` parsed with :func:`parse_json`'s guards (size, depth, numbers)
    and its shape checked; returns the parsed value (None when missing) or raises DataError naming ``field``."""
    if _is_missing(value) or (isinstance(value, str) and not value and col != "spec"):
        return None
    _expect(source, field, value, str)
    if len(value) > MAX_CELL_CHARS:
        raise _fail(source, field, f"holds {len(value)} characters, more than the {MAX_CELL_CHARS} a cell may")
    try:
        data = parse_json(value, source, f"{col} cell", max_depth=MAX_CELL_DEPTH)
    except DataError as e:
        raise _fail(source, field, e.problem) from None
    if col == "knobs":
        _expect(source, field, data, dict)
        for key, v in data.items():
            if not key or len(key) > 64:
                raise _fail(source, field, f"has a knob named {shorten(key, 40)}; knob names are short text")
            _expect(source, f"{field}.{key}", v, int)
            finite_number(source, f"{field}.{key}", v, low=KNOB_LOW, high=KNOB_HIGH)
    elif col == "kernels":
        _expect(source, field, data, list)
        for j, item in enumerate(data):
            where = f"{field}[{j}]"
            _expect(source, where, item, dict)
            if not isinstance(item.get("name"), str) or not item["name"]:
                raise _fail(source, f"{where}.name", f"must be a kernel name (non-empty text), not "
                            f"{_kind(item.get('name'))}")
            _expect(source, f"{where}.kind", item.get("kind"), str, null=True)
            for key in ("count", "us", "total_us"):
                finite_number(source, f"{where}.{key}", item.get(key))
    elif col == "spec":
        spec_from_data(data, source, field)
    return data


def _check_engine_space(source: Any, space: dict[str, Any]) -> None:
    """The engine space's counts, budget and statuses by meaning, and each engine's id and knob ranges."""
    for key in ("space_size", "sampled", "budget"):
        _expect(source, f"engine_space.{key}", space.get(key), int, null=True)
        finite_number(source, f"engine_space.{key}", space.get(key))
    finite_number(source, "engine_space.time_budget_s", space.get("time_budget_s"))
    _expect(source, "engine_space.error", space.get("error"), str, null=True)
    statuses = _expect(source, "engine_space.statuses", space.get("statuses", {}), dict, null=True) or {}
    for key, n in statuses.items():
        _expect(source, f"engine_space.statuses.{key}", n, int)
        finite_number(source, f"engine_space.statuses.{key}", n, high=MAX_COUNT)
    for i, engine in enumerate(_expect(source, "engine_space.engines", space.get("engines", []), list)):
        where = f"engine_space.engines[{i}]"
        _expect(source, where, engine, dict)
        _expect(source, f"{where}.engine_id", engine.get("engine_id"), int)
        finite_number(source, f"{where}.engine_id", engine["engine_id"], low=CLASSIC_ENGINE_ID, high=MAX_ENGINE_ID)
        _expect(source, f"{where}.runnable", engine.get("runnable"), bool, null=True)
        _expect(source, f"{where}.reason", engine.get("reason"), str, null=True)
        for key in ("configs", "unnamed_knobs"):
            _expect(source, f"{where}.{key}", engine.get(key), int, null=True)
            finite_number(source, f"{where}.{key}", engine.get(key))
        for j, knob in enumerate(_expect(source, f"{where}.knobs", engine.get("knobs", []), list)):
            at = f"{where}.knobs[{j}]"
            _expect(source, at, knob, dict)
            _expect(source, f"{at}.name", knob.get("name"), str)
            for key in ("min", "max", "stride"):
                _expect(source, f"{at}.{key}", knob.get(key), int)
                finite_number(source, f"{at}.{key}", knob[key], low=0 if key == "stride" else KNOB_LOW,
                              high=KNOB_HIGH)
            if knob["min"] > knob["max"]:
                raise _fail(source, at, f"has min {knob['min']} above max {knob['max']}")


# ------------------------------------------------------------------------------------------------ result JSON

def _check_row(source: Any, i: int, row: Any, seen: dict[str, int]) -> None:
    """One plan row: its columns' types, then their values by meaning (ranges, embedded JSON), its name unique."""
    field = f"plans[{i}]"
    _expect(source, field, row, dict)
    for col in ("plan", "status"):
        if col not in row:
            raise _fail(source, f"{field}.{col}", "is missing")
    name = row["plan"]
    if not isinstance(name, str) or not name:
        raise _fail(source, f"{field}.plan", f"must be a plan name (non-empty text), not {_kind(name)}")
    try:
        if name in seen:
            raise _fail(source, f"{field}.plan", f"repeats the name of plans[{seen[name]}]; a result lists each "
                        "plan once")
        seen[name] = i
        for cols, types in ((INT_COLUMNS, int), (FLOAT_COLUMNS, _NUMBER), (BOOL_COLUMNS, bool),
                            (TEXT_COLUMNS, str)):
            for col in cols:
                if col in row:
                    _expect(source, f"{field}.{col}", row[col], types, null=col != "status")
        for col, (low, high) in VALUE_RANGES.items():
            if row.get(col) is not None:
                finite_number(source, f"{field}.{col}", row[col], low=low, high=high)
        for col in JSON_COLUMNS:
            if col in row:
                check_cell(source, f"{field}.{col}", col, row[col])
    except DataError as e:
        raise DataError(source, f"plan {shorten(name, 60)}: {e.problem}") from None


#: What a list of recordings shows of a result (:func:`read_result_head`).
_HEAD_KEYS = ("schema", "spec", "device", "created")


def _check_head(data: Any, source: Any, keys: Any) -> None:
    """The result is an object, ``keys`` of ``RESULT_KEYS`` have their types (the required ones are there), the
    schema is this kit's, and the device's fields have theirs."""
    if not isinstance(data, dict):
        raise DataError(source, f"a result must be an object as RunResult.save() writes it, not {_kind(data)}")
    for key in keys:
        types, required = RESULT_KEYS[key]
        if key not in data:
            if required:
                raise _fail(source, key, "is missing" + (" (is this a result written by RunResult.save()?)"
                                                         if key == "schema" else ""))
            continue
        _expect(source, key, data[key], types)
    if data["schema"] != SCHEMA_VERSION:
        raise _fail(source, "schema", f"must be {SCHEMA_VERSION}; this file was written by another version of "
                    f"cudnn_lab (schema {shorten(data['schema'])})")
    _scalars(source, "device", data["device"], {"gpu": (str,), "cudnn_backend": (int, str), "sm_count": (int,),
                                               "driver": (str,), "cuda": (str,), "cudnn_frontend": (str,)})


def check_result(data: Any, source: Any) -> dict[str, Any]:
    """A saved result's dict checked against the schema (``RESULT_KEYS``, plan columns, device, histograms) and by
    meaning: numbers finite and in range (``VALUE_RANGES``), plan names unique, JSON cells (``JSON_COLUMNS``) parsed
    and of their shape, the engine space's ids and knob ranges sane. DataError names the file, the plan and the
    field."""
    _check_head(data, source, RESULT_KEYS)
    seen: dict[str, int] = {}
    for i, row in enumerate(data["plans"]):
        _check_row(source, i, row, seen)
    _scalars(source, "torch", data["torch"], {k: _NUMBER for k in data["torch"] if k.endswith("_ms")})
    _scalars(source, "ceilings", data["ceilings"], {"tflops": _NUMBER, "gbps": _NUMBER})
    for group, keys in (("torch", [k for k in data["torch"] if k.endswith("_ms")]),
                        ("ceilings", ["tflops", "gbps", "tflops_iqr", "gbps_iqr"]), ("device", ["sm_count"])):
        for key in keys:
            finite_number(source, f"{group}.{key}", data[group].get(key), high=VALUE_RANGES.get(key, (0, None))[1])
    for i, w in enumerate(data.get("warnings", [])):
        _expect(source, f"warnings[{i}]", w, str)
    for plan, hist in data.get("histograms", {}).items():
        field = f"histograms.{plan}"
        _expect(source, field, hist, dict)
        edges = _expect(source, f"{field}.edges", hist.get("edges"), list)
        counts = _expect(source, f"{field}.counts", hist.get("counts"), list)
        for name, values in (("edges", edges), ("counts", counts)):
            for j, v in enumerate(values):
                _expect(source, f"{field}.{name}[{j}]", v, _NUMBER)
                finite_number(source, f"{field}.{name}[{j}]", v, low=None if name == "edges" else 0, null=False)
        if counts and len(edges) != len(counts) + 1:
            raise _fail(source, field, f"has {len(edges)} edges for {len(counts)} counts (needs one more edge)")
    _check_engine_space(source, data.get("engine_space", {}))
    return data


def read_result_file(path: Any) -> dict[str, Any]:
    """A result JSON (``RunResult.save``) -> its checked dict."""
    return check_result(read_json(path, "result JSON"), Path(path))


def read_result_head(path: Any) -> dict[str, Any]:
    """What a list of recordings shows of a result JSON (schema, spec, device, created), checked; the plans are
    checked when the result is loaded (:func:`read_result_file`), not to list it."""
    data = read_json(path, "result JSON")
    _check_head(data, Path(path), _HEAD_KEYS)
    return {k: data[k] for k in _HEAD_KEYS if k in data}


# ------------------------------------------------------------------------------------------------ Parquet

def parquet_problem(path: Path) -> str | None:
    """Why ``path`` is not a readable Parquet file (None when its header, footer and schema read)."""
    import pyarrow.parquet as pq

    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(4)
            f.seek(max(size - 4, 0))
            tail = f.read(4)
    except OSError as e:
        return f"could not be read ({e.strerror or e})"
    if size == 0:
        return "is empty"
    if head != PARQUET_MAGIC:
        return "is not a Parquet file (no PAR1 header)"
    if size < 12 or tail != PARQUET_MAGIC:
        return "is a truncated Parquet file (no PAR1 footer: the write was cut short?)"
    try:
        pq.read_schema(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a damaged footer
        return f"is a damaged Parquet file ({type(e).__name__}: {shorten(str(e), 120)})"
    return None


def read_parquet(path: Any, what: str = "Parquet file", columns: list[str] | None = None) -> Any:
    """A Parquet file as a DataFrame; PathError for the path, DataError for a truncated or damaged file."""
    import pandas as pd

    path = check_input_path(path, what=what)
    problem = parquet_problem(path)
    if problem:
        raise DataError(path, f"the {what} {problem}")
    try:
        return pd.read_parquet(path, columns=columns)
    except Exception as e:  # noqa: BLE001 - pyarrow's errors are not the kit's
        raise DataError(path, f"the {what} could not be decoded ({type(e).__name__}: {shorten(str(e), 120)})") \
            from None


def check_sweep_columns(frame: Any, source: Any) -> Any:
    """A sweep frame's columns checked: it has point_id and point_status, point_id is filled, and the number columns
    hold numbers (the values themselves: :func:`sweep_row_problems`)."""
    import pandas as pd
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if not isinstance(frame, pd.DataFrame):
        raise DataError(source, f"is not a sweep frame (a pandas DataFrame), but {_kind(frame)}")
    missing = [c for c in SWEEP_REQUIRED if c not in frame.columns]
    if missing:
        raise DataError(source, f"is not a sweep frame: column {missing[0]} is missing",
                        hint="a sweep store or a file written from cl.sweep(...) has point_id and point_status")
    if frame["point_id"].isna().any():
        raise _fail(source, "point_id", "is empty in some rows")
    for col in SWEEP_NUMBER_COLUMNS:
        if col in frame.columns:
            s = frame[col]
            if (is_bool_dtype(s) or not is_numeric_dtype(s)) and s.notna().any():
                bad = pd.to_numeric(s, errors="coerce").isna() & s.notna()
                if bad.any() or is_bool_dtype(s):
                    raise _fail(source, col, f"must hold numbers, not {_kind(s[s.notna()].iloc[0])}")
    return frame


@dataclasses.dataclass(frozen=True)
class RowProblem:
    """Rows of a sweep frame that fail one check: the field, what is wrong with them (a phrase for a summary), the
    rows (a bool array, one per row) and ``detail(pos)``, the problem of the row at position ``pos`` in words."""

    field: str
    what: str
    rows: Any
    detail: Callable[[int], str]


def _problem_of(check: Callable[[], Any]) -> str | None:
    """The problem ``check`` raises as DataError, or None when it passes."""
    try:
        check()
    except DataError as e:
        return e.problem
    return None


def _plain(value: Any) -> Any:
    """A frame's cell as a plain Python value (numpy and pandas scalars unwrapped, missing as None)."""
    if _is_missing(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (TypeError, ValueError):  # an array of several values: left as it is (and refused as not text)
            return value
    return value


def sweep_row_problems(frame: Any) -> list[RowProblem]:
    """Every check of a sweep frame's values that some rows fail (columns checked first,
    :func:`check_sweep_columns`): numbers not finite or out of range (``VALUE_RANGES``), an operation the kit does not
    know, a plan repeated within its point (a point stored twice), a second pick or best plan in a point, and JSON
    cells (``JSON_COLUMNS``) that do not parse or are not of their shape."""
    import numpy as np
    import pandas as pd

    out: list[RowProblem] = []

    def cell(col: str, pos: int) -> Any:
        return _plain(frame[col].iloc[pos])

    for col, (low, high) in VALUE_RANGES.items():
        if col not in frame.columns:
            continue
        values = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = np.isinf(values)
            if low is not None:
                bad |= values < low
            if high is not None:
                bad |= values > high
        if bad.any():
            out.append(RowProblem(col, "with impossible values", bad, lambda pos, col=col, low=low, high=high: (
                _problem_of(lambda: finite_number("", col, cell(col, pos), low=low, high=high)) or "")))
    if "op" in frame.columns:
        ops = spec_classes()
        bad = frame["op"].map(lambda v: not _is_missing(v) and not (isinstance(v, str) and v in ops)).to_numpy(bool)
        if bad.any():
            out.append(RowProblem("op", "of an unknown operation", bad, lambda pos: (
                f"field op: must be one of {', '.join(ops)}, not {shorten(cell('op', pos), 40)}")))
    keys = ["point_id", "plan"] if "plan" in frame.columns else ["point_id"]
    try:
        bad = frame.duplicated(subset=keys).to_numpy(bool)
    except TypeError:  # unhashable cells: the plan column's type is not text
        bad = np.zeros(len(frame), bool)
    if bad.any():
        out.append(RowProblem("plan", "repeating a plan already in its point", bad, lambda pos: (
            "field plan: repeats a row of the same point and plan (the point is stored twice?)")))
    for col, role in (("is_pick", "heuristic pick"), ("is_best", "best plan")):
        if col in frame.columns:
            flag = frame[col].map(lambda v: v is True or (type(v).__name__ == "bool_" and bool(v))).to_numpy(bool)
            ids = pd.Series(frame["point_id"].to_numpy(), dtype=object).where(flag)
            bad = flag & ids.duplicated().to_numpy(bool)
            if bad.any():
                said = f"field {col}: marks a second {role} in its point"
                out.append(RowProblem(col, f"marking a second {role} in its point", bad, lambda pos, said=said: said))
    for col in JSON_COLUMNS:
        if col not in frame.columns:
            continue
        found: dict[Any, str | None] = {}

        def problem(value: Any, col: str = col, found: dict[Any, str | None] = found) -> str | None:
            try:
                return found[value]
            except KeyError:
                found[value] = p = _problem_of(lambda: check_cell("", col, col, _plain(value)))
                return p
            except TypeError:  # an unhashable cell (a list): checked each time
                return _problem_of(lambda: check_cell("", col, col, value))

        problems = [problem(v) for v in frame[col]]
        bad = np.array([p is not None for p in problems], bool)
        if bad.any():
            out.append(RowProblem(col, "with unreadable JSON", bad, lambda pos, problems=problems: problems[pos] or ""))
    return out


def _row_label(frame: Any, pos: int) -> str:
    """'row 12 (point 3f2a..., plan eng4_k24=45)': where a sweep frame's row is, for a message."""
    def value(col: str) -> Any:
        return _plain(frame[col].iloc[pos]) if col in frame.columns else None

    plan = value("plan")
    return (f"row {pos} (point {shorten(value('point_id'), 40)}"
            + (f", plan {shorten(plan, 60)}" if plan is not None else "") + ")")


def check_sweep_frame(frame: Any, source: Any) -> Any:
    """A sweep frame checked: its columns (:func:`check_sweep_columns`), then its values by meaning
    (:func:`sweep_row_problems`); DataError names the file, the first bad row (position, point, plan) and the field."""
    import numpy as np

    check_sweep_columns(frame, source)
    for problem in sweep_row_problems(frame):
        pos = int(np.flatnonzero(problem.rows)[0])
        raise DataError(source, f"{_row_label(frame, pos)}: {problem.detail(pos)}")
    return frame


def read_sweep_frame(path: Any) -> Any:
    """A sweep saved as one Parquet file -> its checked frame."""
    frame = read_parquet(path, "sweep Parquet file")
    return check_sweep_frame(frame, Path(path))
