"""A saved run's checks (``RunResult.save``'s JSON): its keys and device, every plan row's columns by type and by
meaning (``VALUE_RANGES``, the JSON cells of ``JSON_COLUMNS``), the histograms, the engine space and the run's
settings (partial, parallel builds, cuDNN's kernel cache, what the kit decided for the run). Part of the loading layer
(:mod:`cudnn_lab.results.loading` re-exports every name).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ..errors import DataError, shorten
from ..files import _expect, _fail, _kind, finite_number, parse_json
from .json_files import _NUMBER, _scalars, read_json, read_text, spec_from_data
from .schema import columns_of

__all__ = ["SCHEMA_VERSION", "RESULT_KEYS", "INT_COLUMNS", "FLOAT_COLUMNS", "BOOL_COLUMNS", "TEXT_COLUMNS",
           "VALUE_RANGES", "JSON_COLUMNS", "MAX_ENGINE_ID", "CLASSIC_ENGINE_ID", "MAX_COUNT", "MAX_BYTES", "KNOB_LOW",
           "KNOB_HIGH", "MAX_CELL_CHARS", "MAX_CELL_DEPTH", "check_cell", "check_settings", "check_result",
           "read_result_file", "read_result_head"]

#: Version of the saved-result schema this kit writes and reads.
SCHEMA_VERSION = 1

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
    # span minus summed kernel time: negative where a plan's kernels overlap (programmatic dependent launch)
    "kernel_gap_ms": (None, None),
}
#: Text columns that hold JSON: ``knobs`` (knob -> integer), ``kernels`` (a list of launches: name, kind, count, us,
#: total_us), a sweep's ``spec`` (``Spec.to_json``) and its ``baselines`` (name -> {ms, iqr_ms} or {error}).
JSON_COLUMNS = ("knobs", "kernels", "spec", "baselines")


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
    elif col == "baselines":
        _expect(source, field, data, dict)
        for name, item in data.items():
            where = f"{field}.{name}"
            if not name or len(name) > 64:
                raise _fail(source, field, f"has a baseline named {shorten(name, 40)}; baseline names are short text")
            _expect(source, where, item, dict)
            if "error" in item:
                _expect(source, f"{where}.error", item["error"], str)
                continue
            for key in ("ms", "iqr_ms"):
                _expect(source, f"{where}.{key}", item.get(key), _NUMBER)
                finite_number(source, f"{where}.{key}", item[key], low=0)
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
    check_settings(data["settings"], source)
    checked: dict[str, Any] = data
    return checked


#: ``settings["parallel_build"]`` (gpu/parallel_build.BuildReport.to_dict): counts, seconds (``saved_s`` may be
#: negative: the helpers cost more than they saved), the plans' builds, problems and why the builds were skipped.
_BUILD_COUNTS = ("workers", "helpers", "built")
_BUILD_SECONDS = ("wall_s", "start_s", "serial_s", "waited_s")
#: What ``RunResult.summary`` shows of a prebuild that was not skipped: these must be there.
_BUILD_SHOWN = ("helpers", "built", "wall_s", "serial_s", "saved_s")


def _check_parallel_build(source: Any, pb: Any) -> None:
    """A run's parallel-build report, each field by meaning."""
    field = "settings.parallel_build"
    _expect(source, field, pb, dict)
    skipped = _expect(source, f"{field}.skipped", pb.get("skipped"), str, null=True)
    for key in _BUILD_COUNTS:
        _expect(source, f"{field}.{key}", pb.get(key), int, null=True)
        finite_number(source, f"{field}.{key}", pb.get(key), high=MAX_COUNT)
    for key in _BUILD_SECONDS:
        finite_number(source, f"{field}.{key}", pb.get(key))
    finite_number(source, f"{field}.saved_s", pb.get("saved_s"), low=None)
    if not skipped:
        for key in _BUILD_SHOWN:
            if pb.get(key) is None:
                raise _fail(source, f"{field}.{key}", "is missing (a prebuild that was not skipped reports it)")
    for i, build in enumerate(_expect(source, f"{field}.plans", pb.get("plans", []), list, null=True) or []):
        at = f"{field}.plans[{i}]"
        _expect(source, at, build, dict)
        _expect(source, f"{at}.plan", build.get("plan"), str)
        _expect(source, f"{at}.status", build.get("status"), str)
        _expect(source, f"{at}.helper", build.get("helper"), int, null=True)
        finite_number(source, f"{at}.helper", build.get("helper"), low=-1, high=MAX_COUNT)
        finite_number(source, f"{at}.build_ms", build.get("build_ms"))
        _expect(source, f"{at}.error", build.get("error"), str, null=True)
    for i, text in enumerate(_expect(source, f"{field}.problems", pb.get("problems", []), list, null=True) or []):
        _expect(source, f"{field}.problems[{i}]", text, str)


def _check_kernel_cache_run(source: Any, kc: Any) -> None:
    """What a run made with cuDNN's kernel cache recorded of it (gpu/run.kernel_cache_facts), each field by meaning."""
    field = "settings.kernel_cache_run"
    _expect(source, field, kc, dict)
    _expect(source, f"{field}.used", kc.get("used"), bool)
    _expect(source, f"{field}.pick_without", kc.get("pick_without"), str, null=True)
    for i, plan in enumerate(_expect(source, f"{field}.order_without", kc.get("order_without"), list, null=True)
                             or []):
        _expect(source, f"{field}.order_without[{i}]", plan, str)
    _expect(source, f"{field}.entries", kc.get("entries"), int, null=True)
    finite_number(source, f"{field}.entries", kc.get("entries"), high=MAX_COUNT)
    _expect(source, f"{field}.ignored_files", kc.get("ignored_files"), int, null=True)
    finite_number(source, f"{field}.ignored_files", kc.get("ignored_files"), high=MAX_COUNT)
    _expect(source, f"{field}.kept_on_disk", kc.get("kept_on_disk"), bool, null=True)
    for key in ("source", "file", "why_not_kept", "kept"):
        _expect(source, f"{field}.{key}", kc.get(key), str, null=True)


#: ``settings["decisions"]`` (gpu/defaults.Decision.to_dict): per option the kit may decide, what was asked, what
#: was used (of this JSON type) and why.
DECISION_USED: dict[str, type | tuple[type, ...]] = {"parallel_builds": int, "kernel_cache": bool}


def _check_decisions(source: Any, decisions: Any) -> None:
    """What a run decided for the options it may decide itself, each field by meaning."""
    field = "settings.decisions"
    _expect(source, field, decisions, dict)
    for name, decision in decisions.items():
        at = f"{field}.{str(name)[:40]}"
        if name not in DECISION_USED:
            raise _fail(source, at, f"is not an option the kit decides ({', '.join(DECISION_USED)})")
        _expect(source, at, decision, dict)
        asked = decision.get("asked")
        if asked is not None and not isinstance(asked, (bool, int, str)):
            raise _fail(source, f"{at}.asked", f"must be the option's value as given (text, a number, true/false "
                        f"or null), not {_kind(asked)}")
        if isinstance(asked, str) and len(asked) > 40:
            raise _fail(source, f"{at}.asked", "must be at most 40 characters")
        used = decision.get("used")
        if used is None:
            raise _fail(source, f"{at}.used", "is missing (what the run used)")
        _expect(source, f"{at}.used", used, DECISION_USED[name])
        if DECISION_USED[name] is int:
            finite_number(source, f"{at}.used", used, high=MAX_COUNT)
        why = _expect(source, f"{at}.why", decision.get("why"), str)
        if not why.strip() or len(why) > 1000:
            raise _fail(source, f"{at}.why", "must say why in 1 to 1000 characters")


def check_settings(settings: dict[str, Any], source: Any) -> dict[str, Any]:
    """A run's settings that the kit reads back (``RunResult.partial``, ``summary``, the figures, the report, the
    Lab): ``partial`` true or false, ``stopped`` text, ``proposed`` a count, and the ``parallel_build``,
    ``kernel_cache_run`` and ``decisions`` records each field by meaning; DataError naming ``source`` and the
    field."""
    _expect(source, "settings.partial", settings.get("partial"), bool, null=True)
    _expect(source, "settings.stopped", settings.get("stopped"), str, null=True)
    _expect(source, "settings.proposed", settings.get("proposed"), int, null=True)
    finite_number(source, "settings.proposed", settings.get("proposed"), high=MAX_COUNT)
    if settings.get("parallel_build") is not None:
        _check_parallel_build(source, settings["parallel_build"])
    if settings.get("kernel_cache_run") is not None:
        _check_kernel_cache_run(source, settings["kernel_cache_run"])
    if settings.get("decisions") is not None:
        _check_decisions(source, settings["decisions"])
    return settings


def read_result_file(path: Any) -> dict[str, Any]:
    """A result JSON (``RunResult.save``) -> its checked dict."""
    path, text = read_text(path, "result JSON")
    try:
        data = parse_json(text, path, "result JSON")
    except DataError as e:
        raise _with_plan(e, text) from None
    return check_result(data, path)


def _with_plan(error: DataError, text: str) -> DataError:
    """``error`` with the plan it is in named ("plan eng0_k2=1: field plans[3].median_ms: ..."), as the row checks
    name it, when it names a plan row's field (a refused number is found while parsing, before the rows are known)."""
    found = re.match(r"field plans\[(\d+)\]", error.problem)
    if found is None:
        return error
    try:
        name = json.loads(text)["plans"][int(found[1])]["plan"]  # plain parse: the error path only
    except Exception:  # noqa: BLE001 - any reason the name cannot be read: the error stands as it is
        return error
    return DataError(error.path, f"plan {shorten(name, 60)}: {error.problem}")


def read_result_head(path: Any) -> dict[str, Any]:
    """What a list of recordings shows of a result JSON (schema, spec, device, created), checked; the plans are
    checked when the result is loaded (:func:`read_result_file`), not to list it."""
    data = read_json(path, "result JSON")
    _check_head(data, Path(path), _HEAD_KEYS)
    return {k: data[k] for k in _HEAD_KEYS if k in data}


