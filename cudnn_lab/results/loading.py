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

import json
from pathlib import Path
from typing import Any

from ..errors import CudnnLabError, DataError, OptionError, PathError, SpecError, shorten
from .paths import check_input_path

__all__ = ["read_bytes", "read_text", "parse_json", "read_json", "spec_from_data", "read_spec_file",
           "check_sweep", "read_sweep_file", "check_state", "read_state_file", "check_result", "read_result_file",
           "parquet_problem", "read_parquet", "check_sweep_frame", "read_sweep_frame", "RESULT_KEYS",
           "SCHEMA_VERSION", "MAX_JSON_BYTES", "MAX_INT_DIGITS"]

#: Version of the saved-result schema this kit writes and reads.
SCHEMA_VERSION = 1
#: JSON files larger than this are refused (a result with every plan of a large sweep is a few MB).
MAX_JSON_BYTES = 256 * 2**20
#: Integers with more digits than this (beyond 64-bit) are refused: no field of the kit holds one.
MAX_INT_DIGITS = 20
PARQUET_MAGIC = b"PAR1"

#: Keys of a saved result: name -> (JSON type, required).
RESULT_KEYS: dict[str, tuple[type | tuple[type, ...], bool]] = {
    "schema": (int, True), "spec": (dict, True), "plans": (list, True), "device": (dict, True),
    "torch": (dict, True), "ceilings": (dict, True), "settings": (dict, True), "warnings": (list, False),
    "created": (str, False), "histograms": (dict, False), "engine_space": (dict, False),
}
#: Plan-row columns by JSON type (see results.run for what each means).
INT_COLUMNS = ("heuristic_rank", "rank_A", "rank_B", "rank_FALLBACK", "engine_id", "workspace_bytes", "samples",
               "calls_per_sample", "nan_count", "inf_count")
FLOAT_COLUMNS = ("build_ms", "median_ms", "iqr_ms", "min_ms", "host_ms", "tflops", "gbps", "pct_of_ceiling",
                 "rel_l2", "max_abs", "max_rel", "within_torch", "within_cudnn",
                 "kernel_count", "kernel_ms", "launch_gap_ms", "replay_over_kernel")
BOOL_COLUMNS = ("capped", "screened", "pass_torch", "pass_cudnn", "proposed", "deterministic", "reused", "from_cache")
TEXT_COLUMNS = ("plan", "knobs", "behavior_notes", "status", "error", "timing_mode",
                "knob_names", "origin", "kernels", "numeric_notes")
#: Sweep-frame columns that must hold numbers where they are filled.
SWEEP_NUMBER_COLUMNS = (*INT_COLUMNS, *FLOAT_COLUMNS, "flops", "min_bytes", "torch_off_ms", "torch_on_ms",
                        "ceiling_tflops", "ceiling_gbps", "sm_count", "point_s")
SWEEP_REQUIRED = ("point_id", "point_status")


# ------------------------------------------------------------------------------------------------ bytes and text

def read_bytes(path: Any, what: str, *, limit: int | None = None) -> tuple[Path, bytes]:
    """The checked path and its bytes; PathError for a missing, directory or unreadable path, DataError if empty."""
    path = check_input_path(path, what=what)
    try:
        size = path.stat().st_size
        if limit is not None and size > limit:
            raise DataError(path, f"the {what} is {size / 2**20:.0f} MiB, more than the {limit / 2**20:.0f} MiB "
                                  "the kit reads")
        data = path.read_bytes()
    except CudnnLabError:
        raise
    except OSError as e:
        raise PathError(path, f"the {what} could not be read ({e.strerror or e})") from None
    if not data.strip():
        raise DataError(path, f"the {what} is empty")
    return path, data


def read_text(path: Any, what: str) -> tuple[Path, str]:
    """The checked path and its UTF-8 text (a BOM is allowed); DataError naming the first undecodable byte."""
    path, data = read_bytes(path, what, limit=MAX_JSON_BYTES)
    try:
        return path, data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(path, f"the {what} is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})",
                        hint="save it as UTF-8 JSON") from None


def _big_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {digits} digits (at most {MAX_INT_DIGITS} are read)")
    return int(text)


def parse_json(text: str, source: Any, what: str) -> Any:
    """JSON text -> value; DataError naming ``source`` for invalid JSON, deep nesting and integers beyond 64 bits."""
    if not isinstance(text, str):
        raise OptionError(what, text, "must be JSON text (a str)")
    try:
        return json.loads(text, parse_int=_big_int)
    except json.JSONDecodeError as e:
        problem = "ends early (truncated?)" if e.pos >= len(text.rstrip()) else f"has {e.msg}"
        raise DataError(source, f"the {what} is not valid JSON: it {problem} at line {e.lineno} column {e.colno}",
                        hint="write it with Spec.to_json(), RunResult.save() or json.dump") from None
    except RecursionError:
        raise DataError(source, f"the {what} is nested too deeply to be read") from None
    except ValueError as e:  # _big_int, or int() refusing a 5000-digit literal
        raise DataError(source, f"the {what} holds a number the kit cannot use: {shorten(str(e), 120)}") from None


def read_json(path: Any, what: str) -> Any:
    """A JSON file's value, the path and bytes checked first (see :func:`read_bytes`, :func:`parse_json`)."""
    path, text = read_text(path, what)
    return parse_json(text, path, what)


# ------------------------------------------------------------------------------------------------ schema helpers

def _kind(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {shorten(value, 40)}"


def _fail(source: Any, field: str, problem: str) -> DataError:
    return DataError(source, f"field {field}: {problem}")


def _expect(source: Any, field: str, value: Any, types: type | tuple[type, ...], *, null: bool = False) -> Any:
    """``value`` if it is of ``types`` (bool is never an int or a number here), else DataError naming the field."""
    if value is None and null:
        return value
    kinds = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = {int: "an integer", float: "a number", str: "text", bool: "true or false", dict: "an object",
                 list: "a list"}
        want = " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in kinds))
        raise _fail(source, field, f"must be {want}{' or null' if null else ''}, not {_kind(value)}")
    return value


_NUMBER = (int, float)
_SCALAR = (str, int, float, bool)


def _scalars(source: Any, field: str, data: dict[str, Any], typed: dict[str, tuple[type, ...]]) -> None:
    """Every value of ``data`` a JSON scalar; the keys in ``typed`` of their type (or null)."""
    for key, value in data.items():
        _expect(source, f"{field}.{key}", value, typed.get(key, _SCALAR), null=True)


def spec_from_data(data: Any, source: Any, field: str = "spec") -> Any:
    """A spec from its dict; its own SpecError (naming the spec field) becomes a DataError naming the file too."""
    from ..specs import spec_from_dict

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
    from ..options import RunOptions

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

def check_state(state: Any, source: Any, *, version: int = 1, views: tuple[str, ...] = ()) -> dict[str, Any]:
    """A Lab state (``Lab.state()``) checked: version, spec, view, selected plan, run options, source, recording."""
    from ..options import RunOptions

    if not isinstance(state, dict):
        raise DataError(source, f"a Lab state must be an object as Lab.state() makes it, not {_kind(state)}")
    if state.get("version") != version:
        raise _fail(source, "version", f"must be {version} (a state saved by this kit's Lab), "
                    f"not {_kind(state.get('version'))}")
    if "spec" not in state:
        raise _fail(source, "spec", "is missing")
    spec_from_data(state["spec"], source, "spec")
    view = _expect(source, "view", state.get("view"), str, null=True)
    if view is not None and views and view not in views:
        raise _fail(source, "view", f"must be one of {', '.join(views)}, not {shorten(view)}")
    _expect(source, "selected", state.get("selected"), str, null=True)
    _expect(source, "recorded", state.get("recorded"), str, null=True)
    if state.get("source") is not None and state["source"] not in ("live", "recorded"):
        raise _fail(source, "source", f"must be 'live' or 'recorded', not {_kind(state['source'])}")
    run = _expect(source, "run", state.get("run", {}), dict, null=True) or {}
    try:
        RunOptions.from_dict(run)
    except OptionError as e:
        raise _fail(source, f"run.{e.option}", e.allowed) from None
    return state


def read_state_file(path: Any, *, version: int = 1, views: tuple[str, ...] = ()) -> dict[str, Any]:
    """A file written by ``Lab.save`` -> its checked state dict."""
    return check_state(read_json(path, "Lab state JSON"), Path(path), version=version, views=views)


# ------------------------------------------------------------------------------------------------ result JSON

def _check_row(source: Any, i: int, row: Any) -> None:
    field = f"plans[{i}]"
    _expect(source, field, row, dict)
    for col in ("plan", "status"):
        if col not in row:
            raise _fail(source, f"{field}.{col}", "is missing")
    if not isinstance(row["plan"], str) or not row["plan"]:
        raise _fail(source, f"{field}.plan", f"must be a plan name (non-empty text), not {_kind(row['plan'])}")
    for cols, types in ((INT_COLUMNS, int), (FLOAT_COLUMNS, _NUMBER), (BOOL_COLUMNS, bool), (TEXT_COLUMNS, str)):
        for col in cols:
            if col in row:
                _expect(source, f"{field}.{col}", row[col], types, null=col != "status")


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
    """A saved result's dict checked against the schema (``RESULT_KEYS``, plan columns, device, histograms)."""
    _check_head(data, source, RESULT_KEYS)
    for i, row in enumerate(data["plans"]):
        _check_row(source, i, row)
    _scalars(source, "torch", data["torch"], {k: _NUMBER for k in data["torch"] if k.endswith("_ms")})
    _scalars(source, "ceilings", data["ceilings"], {"tflops": _NUMBER, "gbps": _NUMBER})
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
        if counts and len(edges) != len(counts) + 1:
            raise _fail(source, field, f"has {len(edges)} edges for {len(counts)} counts (needs one more edge)")
    space = data.get("engine_space", {})
    for i, engine in enumerate(_expect(source, "engine_space.engines", space.get("engines", []), list)):
        _expect(source, f"engine_space.engines[{i}]", engine, dict)
        _expect(source, f"engine_space.engines[{i}].engine_id", engine.get("engine_id"), int)
        _expect(source, f"engine_space.engines[{i}].knobs", engine.get("knobs", []), list)
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


def check_sweep_frame(frame: Any, source: Any) -> Any:
    """A sweep frame checked: it has point_id and point_status, and number columns hold numbers."""
    import pandas as pd
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

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


def read_sweep_frame(path: Any) -> Any:
    """A sweep saved as one Parquet file -> its checked frame."""
    frame = read_parquet(path, "sweep Parquet file")
    return check_sweep_frame(frame, Path(path))
