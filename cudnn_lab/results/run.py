"""Run results as tidy pandas frames with a fixed schema, saved and loaded as JSON (never pickle).

``RunResult.plans`` has one row per engine configuration; its columns (``PLAN_COLUMNS``) are:

| column | meaning |
| --- | --- |
| plan | the plan's name as cuDNN gives it (engine id and knobs, e.g. ``eng4_k24=27``) |
| engine_id, knobs | the engine and its knob settings (JSON text); together they pin the plan across versions |
| heuristic_rank | position in the order the chosen heuristic modes proposed plans (0 = the heuristic's pick) |
| rank_A, rank_B, rank_FALLBACK | the plan's index in each mode's own list (missing where a mode did not propose it) |
| behavior_notes | cuDNN's behavior notes (e.g. RUNTIME_COMPILATION), comma separated |
| workspace_bytes | scratch memory the plan needs |
| build_ms | time to build (finalize, compile) the plan, apart from run time |
| status | ok, build_failed, run_failed, not_built (the heuristic policy builds only the pick); explored: refused, not_tried |
| error | the reason a plan failed, one line |
| timing_mode, calls_per_sample | cuda_graph (replay of captured calls) or events; calls per timed sample |
| median_ms, iqr_ms, min_ms, samples, capped | latency per call; capped is True when the time cap stopped sampling |
| screened | far slower than the best plan timed before it (``screen_ratio``): a few event samples only |
| host_ms | host time to enqueue one call (launch overhead, apart from GPU time) |
| tflops, gbps | throughput from the spec's FLOP count and minimal bytes at the median |
| pct_of_ceiling | share of the measured roofline bound at this plan's arithmetic intensity |
| rel_l2, max_abs, max_rel | error against the float64 PyTorch reference |
| nan_count, inf_count | non-finite outputs (outputs are NaN-poisoned before the checked run) |
| within_torch, within_cudnn | share of elements within torch.testing's and cuDNN's tolerance bands |
| pass_torch, pass_cudnn | every element within the band and no NaN/Inf |
| knob_names | the plan's knobs by name from the backend knob table (``TILE_SIZE=0, TILEK=1``; see ``cudnn_lab.knobs``) |
| proposed, origin | False for configurations sampled beyond the heuristics' proposals (``explore``); origin says why |
| kernels | JSON list of the kernels one execution launches (CUPTI): {name, kind, count, us, total_us} |
| kernel_count, kernel_ms | launches per execution, and their summed GPU time (CUPTI kernel time) |
| launch_gap_ms | median_ms minus kernel_ms: launch gaps and host-side time between a plan's kernels |
| numeric_notes | cuDNN's numerical notes (TENSOR_CORE, DOWN_CONVERT_INPUTS, FFT, ...), found by note filters |
| deterministic | repeated executions on the same inputs gave bitwise-equal outputs |
| replay_over_kernel | median_ms over kernel_ms: the timer's launch-gap overhead (1.0 = none; cupti timing: 1.0) |
| reused | this run reused the plan's check and time from an earlier run in the process (``resample=True``: not) |
| from_cache | the plan was loaded from the plan cache on disk instead of built (build_ms is the load time) |

Saved as JSON (``RunResult.save``): an object with ``schema`` (1), ``spec`` (``Spec.to_dict``), ``plans`` (one object
per row, the columns above), ``device``, ``torch``, ``ceilings`` (objects of scalars), ``settings`` (``RunOptions``
plus what the run recorded), and optionally ``warnings`` (texts), ``created`` (ISO time) and ``histograms`` (plan ->
{"edges", "counts"}) and ``engine_space`` (the engines of the graph with their knob ranges, what was sampled, and
whether a configuration outside the proposals beat the heuristics' best). The JSON is standard: a NaN or infinite
number is written as null. ``loading.check_result`` checks every field on load, its type and its value (latencies
finite and not negative, sizes and ranks in range, plan names unique, ``knobs`` and ``kernels`` JSON of their shape).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from ..errors import CudnnLabError, DataError, OptionError
from ..specs import Spec
from . import metrics
from .loading import (BOOL_COLUMNS, FLOAT_COLUMNS, INT_COLUMNS, SCHEMA_VERSION, TEXT_COLUMNS, check_result,
                      read_result_file, spec_from_data)
from .paths import check_output_path, write_text

__all__ = ["PLAN_COLUMNS", "SCHEMA_VERSION", "RECORD_KEYS", "RunResult", "json_ready", "plans_frame"]

PLAN_COLUMNS: tuple[str, ...] = (
    "plan", "engine_id", "knobs", "heuristic_rank", "rank_A", "rank_B", "rank_FALLBACK", "behavior_notes",
    "workspace_bytes", "build_ms", "status", "error", "timing_mode", "calls_per_sample", "median_ms", "iqr_ms",
    "min_ms", "samples", "capped", "screened", "host_ms", "tflops", "gbps", "pct_of_ceiling", "rel_l2", "max_abs",
    "max_rel", "nan_count", "inf_count", "within_torch", "within_cudnn", "pass_torch", "pass_cudnn",
    "knob_names", "proposed", "origin", "kernels", "kernel_count", "kernel_ms", "launch_gap_ms", "numeric_notes",
    "deterministic", "replay_over_kernel", "reused", "from_cache",
)
#: What the GPU layer hands :meth:`RunResult.from_records`: key -> type (plans: a list of row dicts).
RECORD_KEYS: dict[str, type] = {"plans": list, "device": dict, "torch": dict, "ceilings": dict, "settings": dict,
                                "warnings": list, "histograms": dict, "created": str, "engine_space": dict}


def plans_frame(rows: list[dict[str, Any]]) -> Any:
    """Rows -> DataFrame with exactly PLAN_COLUMNS, in order (missing values as NA)."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    # One dtype per column whatever the rows hold, so a column that no row filled (a key left out, or None in every
    # row, as after a JSON round trip) has the same dtype either way.
    return typed_columns(frame, INT_COLUMNS, FLOAT_COLUMNS, BOOL_COLUMNS)


def typed_columns(frame: Any, ints: Any, floats: Any, bools: Any) -> Any:
    """``frame`` with the kit's dtypes: whole numbers Int64, numbers float64, flags boolean, any other column text
    (object, missing as None). Used for plan frames and the SM-scaling frames."""
    for col in frame.columns:
        if col in ints:
            frame[col] = frame[col].astype("Int64")
        elif col in floats:
            frame[col] = frame[col].astype("float64")
        elif col in bools:
            frame[col] = frame[col].astype("boolean")
        else:
            frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return frame


def _with_throughput(spec: Spec, rows: list[dict[str, Any]], ceilings: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows with tflops, gbps and pct_of_ceiling filled from the median where the GPU layer left them out."""
    at = metrics.intensity(spec.flops(), spec.min_bytes())
    out = []
    for row in rows:
        row = dict(row)
        ms = row.get("median_ms")
        if row.get("tflops") is None:
            row["tflops"] = metrics.tflops(spec.flops(), ms)
        if row.get("gbps") is None:
            row["gbps"] = metrics.gbps(spec.min_bytes(), ms)
        if row.get("pct_of_ceiling") is None:
            row["pct_of_ceiling"] = metrics.pct_of_roof(row["tflops"], at, ceilings.get("tflops"),
                                                        ceilings.get("gbps"))
        out.append(row)
    return out


@dataclasses.dataclass
class RunResult:
    """What one ``cl.run`` measured: every plan, PyTorch's latency, the device and the ceilings used."""

    spec: Spec
    plans: Any  # pandas.DataFrame with PLAN_COLUMNS
    device: dict[str, Any]
    torch: dict[str, Any]
    ceilings: dict[str, Any]
    settings: dict[str, Any]
    warnings: list[str] = dataclasses.field(default_factory=list)
    created: str = ""
    #: plan -> {"edges": log10 |error| bin edges, "counts": elements per bin} for plans that were checked
    histograms: dict[str, dict[str, list[float]]] = dataclasses.field(default_factory=dict)
    #: the graph's engines with their knob ranges, the sample explored beyond the proposals and its answer
    engine_space: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the file this result was loaded from (:meth:`load`, ``cl.load_results``; its stem is a recording's name), so
    #: :func:`cudnn_lab.provenance.provenance` says RECORDED on its own; None for a run made here. Not saved.
    loaded_from: Path | None = dataclasses.field(default=None, compare=False, repr=False)

    @classmethod
    def from_records(cls, spec: Spec, records: dict[str, Any]) -> RunResult:
        """A result from the GPU layer's plain records: {"plans": [row dicts], "device", "torch", "ceilings",
        "settings", "warnings", "histograms", "created"}; throughput columns the rows lack are derived here."""
        if not isinstance(spec, Spec):
            raise OptionError("spec", spec, "must be a cudnn_lab spec")
        if not isinstance(records, dict):
            raise OptionError("records", records, f"must be a dict with keys {', '.join(RECORD_KEYS)}")
        for key, kind in RECORD_KEYS.items():
            value = records.get(key)
            if key in ("plans", "device", "settings") and value is None:
                raise OptionError(f"records[{key!r}]", value, "is missing")
            if value is not None and not isinstance(value, kind):
                raise OptionError(f"records[{key!r}]", value, f"must be a {kind.__name__}")
        ceilings = dict(records.get("ceilings") or {})
        return cls(spec=spec, plans=plans_frame(_with_throughput(spec, records["plans"], ceilings)),
                   device=dict(records["device"]), torch=dict(records.get("torch") or {}), ceilings=ceilings,
                   settings=dict(records["settings"]), warnings=list(records.get("warnings") or []),
                   created=records.get("created") or "", histograms=dict(records.get("histograms") or {}),
                   engine_space=dict(records.get("engine_space") or {}))

    @property
    def ok(self) -> Any:
        """Plans that ran."""
        return metrics.ran(self.plans)

    @property
    def heuristic_pick(self) -> Any:
        """The plan the heuristics would run: the first proposed plan that built and ran (a Series)."""
        row = metrics.pick(self.plans)
        if row is None:
            raise CudnnLabError("No plan ran, so there is no heuristic pick; see .plans['error'].")
        return row

    @property
    def best(self) -> Any:
        """The fastest plan among those that pass cuDNN's tolerance band (the fastest plan if none passes)."""
        row = metrics.best(self.plans)
        if row is None:
            raise CudnnLabError("No plan ran, so there is no best plan; see .plans['error'].")
        return row

    @property
    def regret(self) -> float:
        """Heuristic pick's median time over the best plan's (1.0 = the heuristic chose the fastest)."""
        value = metrics.regret(self.plans)
        if value is None:
            raise CudnnLabError("No plan ran with a median time, so there is no regret; see .plans['error'].")
        return value

    @property
    def exploration(self) -> dict[str, Any]:
        """Did a configuration sampled beyond the proposals beat the heuristics' best (``results.anatomy``)?"""
        from .anatomy import beat_heuristics

        return beat_heuristics(self.plans)

    @property
    def torch_ms(self) -> float | None:
        """PyTorch's latency for the same op (cudnn.benchmark off)."""
        return self.torch.get("benchmark_off_ms")

    def summary(self) -> str:
        """A few lines for a terminal or a log."""
        from ..provenance import cudnn_version_text

        cudnn = cudnn_version_text(self.device.get("cudnn_backend", self.device.get("cudnn")))
        lines = [f"{self.spec.label()} on {self.device.get('gpu')} (cuDNN {cudnn})"]
        n_ok, n = len(self.ok), len(self.plans)
        lines.append(f"plans: {n} proposed, {n_ok} ran")
        regret = metrics.regret(self.plans)
        if regret is not None:
            h, b = self.heuristic_pick, self.best
            lines.append(f"heuristic pick {h['plan']}: {h['median_ms'] * 1e3:.1f} us; best {b['plan']}: "
                         f"{b['median_ms'] * 1e3:.1f} us; regret {regret:.2f}x")
            tied = metrics.tied_with_best(self.plans)
            if len(tied) > 1:
                lines.append(f"tied: {', '.join(tied)} (within spread)")
        if self.ceilings.get("source"):
            source = str(self.ceilings["source"])  # "measured now" is stored: now was the run's time, not the reader's
            when = str(self.ceilings.get("measured") or self.created)[:10]
            lines.append("ceilings: " + (f"measured during the run ({when})" if source == "measured now" else source))
        if self.exploration["explored"]:
            from .anatomy import answer_text

            lines.append(f"explored beyond the proposals: {answer_text(self.exploration)}")
        if metrics.is_finite(self.torch_ms):
            on = self.torch.get("benchmark_on_ms")
            lines.append(f"PyTorch: {self.torch_ms * 1e3:.1f} us (cudnn.benchmark off), "
                         f"{(on if metrics.is_finite(on) else float('nan')) * 1e3:.1f} us (on)")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the spec, the plan table as records, and the context of the run; NaN and infinite numbers
        are None (null) and numpy scalars plain Python, so it is standard JSON and reads back (:meth:`from_dict`)."""
        frame = self.plans.astype(object).where(self.plans.notna(), None)
        return json_ready({"schema": SCHEMA_VERSION, "spec": self.spec.to_dict(), "plans": frame.to_dict("records"),
                           "device": self.device, "torch": self.torch, "ceilings": self.ceilings,
                           "settings": self.settings, "warnings": list(self.warnings), "created": self.created,
                           "histograms": self.histograms, "engine_space": self.engine_space})

    @classmethod
    def from_dict(cls, data: Any, *, source: Any = "result dict") -> RunResult:
        """Inverse of :meth:`to_dict`, every field checked (DataError naming ``source`` and the field)."""
        data = check_result(data, source)
        return cls(spec=spec_from_data(data["spec"], source), plans=plans_frame(data["plans"]),
                   device=data["device"], torch=data["torch"], ceilings=data["ceilings"], settings=data["settings"],
                   warnings=list(data.get("warnings", [])), created=data.get("created", ""),
                   histograms=dict(data.get("histograms", {})), engine_space=dict(data.get("engine_space", {})))

    def save(self, path: str | Path) -> Path:
        """Write the result as standard JSON (the path is checked first; PathError says where a failed write went):
        never NaN or Infinity, which strict readers refuse: a non-finite number is written as null."""
        path = check_output_path(path, what="result JSON")
        try:
            text = json.dumps(self.to_dict(), indent=1, default=_json_default, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise DataError(path, f"this result cannot be written as JSON ({e})") from None
        return write_text(path, text, what="result JSON")

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        """A result saved by :meth:`save`; PathError / DataError naming the file for anything wrong with it."""
        data = read_result_file(path)
        result = cls.from_dict(data, source=Path(path))
        result.loaded_from = Path(path)
        return result

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.summary())}</pre>" + self.plans.to_html(max_rows=60, na_rep="")


def json_ready(value: Any) -> Any:
    """``value`` (dicts, lists, tuples, scalars) with NaN, Infinity and pandas' NA as None and numpy scalars as
    Python ones: what ``json.dumps(..., allow_nan=False)`` writes as standard JSON."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):  # an array of several values: left to json's default
            return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    return value


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")
