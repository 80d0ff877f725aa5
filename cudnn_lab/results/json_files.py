"""The JSON files a user hands the kit, checked before use: the bytes and text of any JSON file (path, size, UTF-8,
the parse guards of :mod:`cudnn_lab.files`), a spec JSON (``Spec.to_json``), a sweep JSON (``spec``/``specs``,
``over`` and run options) and the Lab's state (``Lab.state``). Part of the loading layer
(:mod:`cudnn_lab.results.loading` re-exports every name).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import CudnnLabError, DataError, OptionError, SpecError, shorten
from ..files import _expect, _fail, _kind, parse_json, read_regular
from ..options import RunOptions
from ..specs import spec_from_dict
from .paths import check_input_path

__all__ = ["read_bytes", "read_text", "read_json", "spec_from_data", "read_spec_file", "check_sweep",
           "read_sweep_file", "check_state", "read_state_file", "MAX_JSON_BYTES", "MAX_STATE_BYTES", "MAX_PLAN_NAME",
           "MAX_RECORDING_TEXT", "STATE_KEYS", "SWEEP_KEYS"]

#: JSON files larger than this are refused (a result with every plan of a large sweep is a few MB).
MAX_JSON_BYTES = 256 * 2**20


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
    path, text = read_text(path, "spec JSON")
    try:
        data = parse_json(text, path, "spec JSON")
    except DataError as e:
        _refused_number_range(text, path, str(e))
        raise
    if not isinstance(data, dict):
        raise DataError(path, f"the spec JSON must hold an object, not {_kind(data)}",
                        hint='e.g. {"op": "conv", "n": 16, ...} as Spec.to_json() writes it')
    return spec_from_data(data, path, "spec")


def _refused_number_range(text: str, path: Any, message: str) -> None:
    """Where parse_json refused a number at a top-level spec field, raise a DataError naming the file, the field and
    what the spec allows there (the spec's own check run again with that field infinite)."""
    found = re.search(r"field ([A-Za-z_][A-Za-z0-9_]*): ", message)
    if found is None:
        return
    field = found.group(1)
    try:  # the refused numbers read as infinity (sizes the kit refused are read leniently here, never kept)
        data = json.loads(text, parse_int=lambda t: float("inf") if len(t.lstrip("-")) > 20 else int(t),
                          parse_float=float, parse_constant=lambda name: float("inf"))
    except (ValueError, RecursionError):
        return
    if not isinstance(data, dict) or field not in data:
        return
    try:
        spec_from_dict({**data, field: float("inf")})
    except SpecError as e:
        if field in str(e):
            raise DataError(path, f"field {field}: {message[found.end():][:160]}; {e}") from None
    except (CudnnLabError, TypeError, ValueError, OverflowError, KeyError, AttributeError, RecursionError):
        return


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
    name: str | None = _expect(source, field, value, str, null=True)
    if name is not None and not 0 < len(name) <= limit:
        raise _fail(source, field, f"must be a name of 1 to {limit} characters, not {len(name)}")
    return name


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


