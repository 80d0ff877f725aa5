"""One point of a sweep: its stable id, and its rows (the plan table plus the spec, device and baseline columns).

:func:`run_point` is what an executor runs (picklable: a spec dict, an options dict and an id in, a frame out).
"""

from __future__ import annotations

import datetime
import hashlib
import json
from typing import Any

from ..errors import CudnnLabError, SpecError, shorten
from ..options import RunOptions, options_where
from ..results.run import typed_columns
from ..results.schema import POINT_COLUMNS, point_columns_of
from ..specs import Spec, spec_from_dict
from .grid import cell
from ..runs import run

__all__ = ["POINT_COLUMNS", "ID_SETTINGS_EXCLUDED", "ID_SETTINGS_NEW", "point_id", "invalid_id", "run_point",
           "invalid_row", "id_settings", "other_baselines"]

#: Columns a sweep adds to the plan table's (results.PLAN_COLUMNS): results/schema.py's POINT_SCHEMA, which gives
#: each its dtype, unit, title and meaning.
_POINT_DTYPES = {dtype: point_columns_of(dtype) for dtype in ("int", "float", "bool")}
#: Run options that do not change a point's numbers, left out of its id (their metadata's ``point_id`` is "never"):
#: the device index (the GPU's name is in the id; a worker of GPUExecutor sees its GPU as device 0).
ID_SETTINGS_EXCLUDED = options_where("point_id", "never")


#: Run options added after sweeps were first stored, left out of a point's id while at their default, so that a store
#: written before they existed still resumes (a point run with another value gets an id of its own); their
#: metadata's ``point_id`` is "not_default".
ID_SETTINGS_NEW = options_where("point_id", "not_default")


def id_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The run options that go into a point's id."""
    return {k: v for k, v in options.items() if k not in ID_SETTINGS_EXCLUDED
            and not (k in ID_SETTINGS_NEW and v == getattr(RunOptions, k))}


def point_id(spec: Spec, settings: dict[str, Any], device_key: str) -> str:
    """A stable id for one point: the spec, the run settings that change the numbers, and the GPU's name."""
    blob = json.dumps({"spec": spec.to_dict(), "settings": settings, "device": device_key}, sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def invalid_id(error: SpecError) -> str:
    """The id of a point the spec refused (its base spec and axis values)."""
    blob = json.dumps(getattr(error, "point", {"error": str(error)}), sort_keys=True, default=shorten)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def typed_point(frame: Any) -> Any:
    """``frame`` with its point columns of the schema's dtypes (the plan columns keep theirs)."""
    cols = [c for c in POINT_COLUMNS if c in frame.columns]
    frame[cols] = typed_columns(frame[cols].copy(), _POINT_DTYPES["int"], _POINT_DTYPES["float"], _POINT_DTYPES["bool"])
    return frame


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def invalid_row(error: SpecError) -> Any:
    """The one row recording a point the spec refused."""
    import pandas as pd

    return typed_point(pd.DataFrame([{"point_id": invalid_id(error), "point_status": "invalid",
                                      "point_error": str(error)[:500], "created": now()}]))


def other_baselines(torch_info: dict[str, Any]) -> str | None:
    """A run's PyTorch baselines beyond the eager op (``torch_off_ms``/``torch_on_ms``) as one JSON cell: name ->
    {ms, iqr_ms}, or {error} for one that failed (a backend refusing the shape); None when there are none."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in torch_info.items():
        name = key[:-len("_error")] if key.endswith("_error") else key[:-3] if (
            key.endswith("_ms") and not key.endswith("_iqr_ms")) else None
        if name is None or name in ("benchmark_off", "benchmark_on"):
            continue
        if key.endswith("_error"):
            out[name] = {"error": str(value)}
        else:
            out[name] = {"ms": value, "iqr_ms": torch_info.get(f"{name}_iqr_ms")}
    return json.dumps(out, sort_keys=True) if out else None


def run_point(spec_dict: dict[str, Any], options: dict[str, Any], pid: str) -> Any:
    """Run one point and return its rows (a DataFrame); a failure becomes one row saying why. Picklable.

    With plan policy 'heuristic' the point has one row, the heuristics' pick (or, if none ran, the plans tried);
    with 'all', one row per plan tried.
    """
    import pandas as pd

    spec = spec_from_dict(spec_dict)
    base = {"point_id": pid, "op": spec.op, "label": spec.label(), "spec": spec.to_json(), "flops": spec.flops(),
            "min_bytes": spec.min_bytes(), **{f"spec_{k}": cell(v) for k, v in spec.to_dict().items() if k != "op"}}
    try:
        result = run(spec, options)
    except CudnnLabError as e:
        return typed_point(pd.DataFrame([{**base, "point_status": "failed",
                                          "point_error": str(e).split("\n")[0][:500], "created": now()}]))
    frame = result.plans[result.plans["status"] != "not_built"].copy()
    pick = result.heuristic_pick["plan"] if len(result.ok) else None
    best = result.best["plan"] if len(result.ok) else None
    if result.settings.get("plans") == "heuristic" and pick is not None:
        frame = frame[frame["plan"] == pick]
    dev, ceil = result.device, result.ceilings
    extra = {**base, "point_status": "ok", "point_error": "",
             "torch_off_ms": result.torch.get("benchmark_off_ms"), "torch_on_ms": result.torch.get("benchmark_on_ms"),
             "baselines": other_baselines(result.torch),
             "gpu": dev.get("gpu"), "driver": dev.get("driver"), "cuda": dev.get("cuda"),
             "cudnn": dev.get("cudnn_backend"), "cudnn_frontend": dev.get("cudnn_frontend"),
             "sm_count": dev.get("sm_count"), "ceiling_tflops": ceil.get("tflops"),
             "ceiling_gbps": ceil.get("gbps"), "point_s": (result.settings.get("phase_s") or {}).get("total"),
             "created": result.created}
    for key, value in extra.items():
        frame[key] = value
    frame["is_pick"] = frame["plan"] == pick
    frame["is_best"] = frame["plan"] == best
    return typed_point(frame.reset_index(drop=True))
