"""Run results as tidy pandas frames with a fixed schema, saved and loaded as JSON (never pickle).

``RunResult.plans`` has one row per engine configuration; its columns (``PLAN_COLUMNS``), each with its dtype,
unit, title and meaning, are in :mod:`cudnn_lab.results.schema` (``schema.doc_table()`` prints them).

Saved as JSON (``RunResult.save``): an object with ``schema`` (1), ``spec`` (``Spec.to_dict``), ``plans`` (one object
per row, the columns above), ``device``, ``torch``, ``ceilings`` (objects of scalars), ``settings`` (``RunOptions``
plus what the run recorded; ``partial`` is True for a run stopped before its end, ``stopped`` says why), and
optionally ``warnings`` (texts), ``created`` (ISO time) and ``histograms`` (plan -> {"edges", "counts"}) and
``engine_space`` (the engines of the graph with their knob ranges, what was sampled, and
whether a configuration outside the proposals beat the heuristics' best). The JSON is standard: a NaN or infinite
number is written as null. ``loading.check_result`` checks every field on load, its type and its value (latencies
finite and not negative, sizes and ranks in range, plan names unique, ``knobs`` and ``kernels`` JSON of their shape).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, TypeVar

from ..errors import CudnnLabError, DataError, OptionError
from ..specs import Spec
from . import metrics
from .anatomy import answer_text, beat_heuristics
from .loading import (BOOL_COLUMNS, FLOAT_COLUMNS, INT_COLUMNS, SCHEMA_VERSION, check_result, read_result_file,
                      spec_from_data)
from .paths import check_output_path, write_text
from .schema import PLAN_COLUMNS
from ..provenance import cudnn_version_text

__all__ = ["PLAN_COLUMNS", "SCHEMA_VERSION", "RECORD_KEYS", "RunResult", "json_ready", "plans_frame"]

_T = TypeVar("_T")

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


def _found(value: _T | None, missing: str) -> _T:
    """``value`` (a metric of the plans), or a CudnnLabError saying why it is missing and where to look."""
    if value is None:
        raise CudnnLabError(f"{missing}; see .plans['error'].")
    return value


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
        return _found(metrics.pick(self.plans), "No plan ran, so there is no heuristic pick")

    @property
    def best(self) -> Any:
        """The fastest plan among those that pass cuDNN's tolerance band (the fastest plan if none passes)."""
        return _found(metrics.best(self.plans), "No plan ran, so there is no best plan")

    @property
    def regret(self) -> float:
        """Heuristic pick's median time over the best plan's (1.0 = the heuristic chose the fastest)."""
        return _found(metrics.regret(self.plans), "No plan ran with a median time, so there is no regret")

    @property
    def exploration(self) -> dict[str, Any]:
        """Did a configuration sampled beyond the proposals beat the heuristics' best (``results.anatomy``)?"""
        return beat_heuristics(self.plans)

    @property
    def partial(self) -> bool:
        """True for a run that was stopped before its end (``settings['partial']``; ``settings['stopped']`` says
        why): its plan table holds the plans it reached, and the steps after them did not run."""
        return bool(self.settings.get("partial", False))

    @property
    def torch_ms(self) -> float | None:
        """PyTorch's latency for the same op (cudnn.benchmark off)."""
        return self.torch.get("benchmark_off_ms")

    def summary(self) -> str:
        """A few lines for a terminal or a log."""
        cudnn = cudnn_version_text(self.device.get("cudnn_backend", self.device.get("cudnn")))
        lines = [f"{self.spec.label()} on {self.device.get('gpu')} (cuDNN {cudnn})"]
        n_ok, n = len(self.ok), len(self.plans)
        lines.append(f"plans: {n} proposed, {n_ok} ran")
        if self.partial:
            lines.append(f"PARTIAL: {self.settings.get('stopped') or 'stopped'}; {n} of "
                         f"{self.settings.get('proposed', n)} proposed plans reached")
        if pb := self.settings.get("parallel_build"):  # gpu/parallel_build.py's report
            lines.append(f"parallel builds: skipped ({pb['skipped']})" if pb.get("skipped") else
                         f"parallel builds: {pb['helpers']} helpers built {pb['built']} plans in {pb['wall_s']:.1f} s "
                         f"(serial {pb['serial_s']:.1f} s, saved {pb['saved_s']:.1f} s)")
        regret = metrics.regret(self.plans)
        if regret is not None:
            h, b = self.heuristic_pick, self.best
            failed = metrics.none_passed(self.plans)  # a failing plan is never called best
            lines.append(f"heuristic pick {h['plan']}: {h['median_ms'] * 1e3:.1f} us; "
                         f"{'fastest' if failed else 'best'} {b['plan']}: {b['median_ms'] * 1e3:.1f} us"
                         + ("; no plan passed cuDNN's band, so none is best" if failed else f"; regret {regret:.2f}x"))
            kc = self.settings.get("kernel_cache_run") or {}
            if kc.get("used"):  # cuDNN's kernel cache can change the heuristics' pick: say what it would have been
                without = kc.get("pick_without")
                lines.append("  with cuDNN's kernel cache; without it the pick would have been "
                             + (f"{without}" + (" too" if without == h["plan"] else "") if without else "unknown"))
            tied = metrics.tied_with_best(self.plans)
            if len(tied) > 1:
                lines.append(f"tied: {', '.join(tied)} (within spread)")
        if self.ceilings.get("source"):
            source = str(self.ceilings["source"])  # "measured now" is stored: now was the run's time, not the reader's
            when = str(self.ceilings.get("measured") or self.created)[:10]
            lines.append("ceilings: " + (f"measured during the run ({when})" if source == "measured now" else source))
        if self.exploration["explored"]:
            lines.append(f"explored beyond the proposals: {answer_text(self.exploration)}")
        if metrics.is_finite(self.torch_ms):
            on = self.torch.get("benchmark_on_ms")
            lines.append(f"PyTorch: {self.torch_ms * 1e3:.1f} us (cudnn.benchmark off), "
                         f"{(on if metrics.is_finite(on) else float('nan')) * 1e3:.1f} us (on)")
        extras = [f"{title} {ms * 1e3:.1f} us" for name, title, ms in metrics.baseline_lines(self.torch)
                  if name not in ("benchmark_off", "benchmark_on")]
        if extras:
            lines.append("beside it: " + ", ".join(extras))
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the spec, the plan table as records, and the context of the run; NaN and infinite numbers
        are None (null) and numpy scalars plain Python, so it is standard JSON and reads back (:meth:`from_dict`)."""
        frame = self.plans.astype(object).where(self.plans.notna(), None)
        out: dict[str, Any] = json_ready({
            "schema": SCHEMA_VERSION, "spec": self.spec.to_dict(), "plans": frame.to_dict("records"),
            "device": self.device, "torch": self.torch, "ceilings": self.ceilings, "settings": self.settings,
            "warnings": list(self.warnings), "created": self.created, "histograms": self.histograms,
            "engine_space": self.engine_space})
        return out

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

        table: str = self.plans.to_html(max_rows=60, na_rep="")
        return f"<pre>{html.escape(self.summary())}</pre>" + table


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
