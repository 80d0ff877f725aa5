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
| status | ok, build_failed, run_failed or not_built (heuristic-choice policy builds only the pick) |
| error | the reason a plan failed, one line |
| timing_mode, calls_per_sample | cuda_graph (replay of captured calls) or events; calls per timed sample |
| median_ms, iqr_ms, min_ms, samples, capped | latency per call; capped is True when the time cap stopped sampling |
| host_ms | host time to enqueue one call (launch overhead, apart from GPU time) |
| tflops, gbps | throughput from the spec's FLOP count and minimal bytes at the median |
| pct_of_ceiling | share of the measured roofline bound at this plan's arithmetic intensity |
| rel_l2, max_abs, max_rel | error against the float64 PyTorch reference |
| nan_count, inf_count | non-finite outputs (outputs are NaN-poisoned before the checked run) |
| within_torch, within_cudnn | share of elements within torch.testing's and cuDNN's tolerance bands |
| pass_torch, pass_cudnn | every element within the band and no NaN/Inf |
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from .errors import CudnnLabError, SpecError
from .specs import Spec, spec_from_dict

PLAN_COLUMNS: tuple[str, ...] = (
    "plan", "engine_id", "knobs", "heuristic_rank", "rank_A", "rank_B", "rank_FALLBACK", "behavior_notes",
    "workspace_bytes", "build_ms", "status", "error", "timing_mode", "calls_per_sample", "median_ms", "iqr_ms",
    "min_ms", "samples", "capped", "host_ms", "tflops", "gbps", "pct_of_ceiling", "rel_l2", "max_abs", "max_rel",
    "nan_count", "inf_count", "within_torch", "within_cudnn", "pass_torch", "pass_cudnn",
)
SCHEMA_VERSION = 1


def plans_frame(rows: list[dict[str, Any]]) -> Any:
    """Rows -> DataFrame with exactly PLAN_COLUMNS, in order (missing values as NA)."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(PLAN_COLUMNS))
    # One dtype per column whatever the rows hold, so a column that no row filled (a key left out, or None in every
    # row, as after a JSON round trip) has the same dtype either way.
    for col in _INT_COLUMNS:
        frame[col] = frame[col].astype("Int64")
    for col in _FLOAT_COLUMNS:
        frame[col] = frame[col].astype("float64")
    for col in _BOOL_COLUMNS:
        frame[col] = frame[col].astype("boolean")
    for col in _TEXT_COLUMNS:
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return frame


_INT_COLUMNS = ("heuristic_rank", "rank_A", "rank_B", "rank_FALLBACK", "engine_id", "workspace_bytes", "samples",
                "calls_per_sample", "nan_count", "inf_count")
_FLOAT_COLUMNS = ("build_ms", "median_ms", "iqr_ms", "min_ms", "host_ms", "tflops", "gbps", "pct_of_ceiling",
                  "rel_l2", "max_abs", "max_rel", "within_torch", "within_cudnn")
_BOOL_COLUMNS = ("capped", "pass_torch", "pass_cudnn")
_TEXT_COLUMNS = ("plan", "knobs", "behavior_notes", "status", "error", "timing_mode")


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

    @property
    def ok(self) -> Any:
        """Plans that ran."""
        return self.plans[self.plans["status"] == "ok"]

    @property
    def heuristic_pick(self) -> Any:
        """The plan the heuristics would run: the first proposed plan that built and ran (a Series)."""
        ok = self.ok.sort_values("heuristic_rank")
        if ok.empty:
            raise CudnnLabError("No plan ran, so there is no heuristic pick; see .plans['error'].")
        return ok.iloc[0]

    @property
    def best(self) -> Any:
        """The fastest plan among those that pass cuDNN's tolerance band (the fastest plan if none passes)."""
        ok = self.ok
        if ok.empty:
            raise CudnnLabError("No plan ran, so there is no best plan; see .plans['error'].")
        passing = ok[ok["pass_cudnn"].fillna(True).astype(bool)]
        pool = passing if not passing.empty else ok
        return pool.sort_values("median_ms").iloc[0]

    @property
    def regret(self) -> float:
        """Heuristic pick's median time over the best plan's (1.0 = the heuristic chose the fastest)."""
        return float(self.heuristic_pick["median_ms"] / self.best["median_ms"])

    @property
    def torch_ms(self) -> float | None:
        """PyTorch's latency for the same op (cudnn.benchmark off)."""
        return self.torch.get("benchmark_off_ms")

    def summary(self) -> str:
        """A few lines for a terminal or a log."""
        lines = [f"{self.spec.label()} on {self.device.get('gpu')} (cuDNN {self.device.get('cudnn_backend')})"]
        n_ok, n = len(self.ok), len(self.plans)
        lines.append(f"plans: {n} proposed, {n_ok} ran")
        if n_ok:
            h, b = self.heuristic_pick, self.best
            lines.append(f"heuristic pick {h['plan']}: {h['median_ms'] * 1e3:.1f} us; best {b['plan']}: "
                         f"{b['median_ms'] * 1e3:.1f} us; regret {self.regret:.2f}x")
        if self.torch_ms is not None:
            lines.append(f"PyTorch: {self.torch_ms * 1e3:.1f} us (cudnn.benchmark off), "
                         f"{(self.torch.get('benchmark_on_ms') or float('nan')) * 1e3:.1f} us (on)")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the spec, the plan table as records, and the context of the run."""
        frame = self.plans.astype(object).where(self.plans.notna(), None)
        return {"schema": SCHEMA_VERSION, "spec": self.spec.to_dict(), "plans": frame.to_dict("records"),
                "device": self.device, "torch": self.torch, "ceilings": self.ceilings, "settings": self.settings,
                "warnings": list(self.warnings), "created": self.created, "histograms": self.histograms}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
            raise SpecError("schema", data.get("schema") if isinstance(data, dict) else data,
                            f"must be {SCHEMA_VERSION}; this file was written by another version of cudnn_lab")
        return cls(spec=spec_from_dict(data["spec"]), plans=plans_frame(data["plans"]), device=data["device"],
                   torch=data["torch"], ceilings=data["ceilings"], settings=data["settings"],
                   warnings=list(data.get("warnings", [])), created=data.get("created", ""),
                   histograms=dict(data.get("histograms", {})))

    def save(self, path: str | Path) -> Path:
        """Write the result as JSON."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1, default=_json_default))
        return path

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def _repr_html_(self) -> str:
        return f"<pre>{self.summary()}</pre>" + self.plans.to_html(max_rows=60, na_rep="")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


#: Results recorded on real GPUs and shipped with the package, for use without a GPU: single runs (JSON) and
#: sweeps (Parquet).
RECORDED_DIR = Path(__file__).parent / "data" / "recorded"
SWEEPS_DIR = Path(__file__).parent / "data" / "sweeps"
DATASET_COLUMNS = ["name", "kind", "gpu", "driver", "cuda", "cudnn", "date", "label", "path"]


def recorded_datasets(kind: str | None = None) -> Any:
    """The recordings shipped with the kit: name, kind ('run' or 'sweep'), gpu, driver, cuda, cudnn, date, label."""
    import pandas as pd

    rows = []
    if kind in (None, "run"):
        for path in sorted(RECORDED_DIR.glob("*.json")):
            data = json.loads(path.read_text())
            dev = data.get("device", {})
            rows.append({"name": path.stem, "kind": "run", "gpu": dev.get("gpu"), "driver": dev.get("driver"),
                         "cuda": dev.get("cuda"), "cudnn": dev.get("cudnn_backend"),
                         "date": data.get("created", "")[:10], "label": spec_from_dict(data["spec"]).label(),
                         "path": str(path)})
    if kind in (None, "sweep"):
        for path in sorted(SWEEPS_DIR.glob("*.parquet")):
            meta = pd.read_parquet(path, columns=["gpu", "driver", "cuda", "cudnn", "created", "point_id"])
            ok = meta.dropna(subset=["gpu"])
            first = ok.iloc[0] if len(ok) else meta.iloc[0]
            rows.append({"name": path.stem, "kind": "sweep", "gpu": first["gpu"], "driver": first["driver"],
                         "cuda": first["cuda"], "cudnn": first["cudnn"], "date": str(first["created"])[:10],
                         "label": f"sweep of {meta['point_id'].nunique()} points", "path": str(path)})
    if kind not in (None, "run", "sweep"):
        raise SpecError("kind", kind, "must be 'run', 'sweep' or None")
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)


def load_results(name_or_path: str | Path) -> Any:
    """Load a recording by its name in :func:`recorded_datasets`, or a file: a RunResult (.json) or a sweep frame
    (.parquet file or store folder)."""
    import pandas as pd

    path = Path(name_or_path)
    if not path.exists() and not path.suffix:
        for candidate in (RECORDED_DIR / f"{name_or_path}.json", SWEEPS_DIR / f"{name_or_path}.parquet"):
            if candidate.is_file():
                path = candidate
    if not path.exists():
        names = ", ".join(recorded_datasets()["name"]) or "none shipped"
        raise SpecError("name_or_path", str(name_or_path), f"is neither a recorded dataset ({names}) nor a file")
    if path.suffix == ".json":
        return RunResult.load(path)
    return pd.read_parquet(path)
