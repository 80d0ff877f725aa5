"""The forecast's model lines for a run's Latency and Roofline views (issue 35): what each validated predictor says
this run's plans take on this run's GPU, forecast from the shipped recording of the same problem on the other
recorded GPU, each with its validation error for the run's family, and the GPU's datasheet roofs.

The plots draw these numbers; they do not recompute them (one owner per rule: :mod:`cudnn_lab.whatif.speed` and
:mod:`cudnn_lab.whatif.speed_validation`). Where no validated forecast exists (a GPU outside H100/H200, a problem
without a shipped recording on the other card) :func:`model_lines` says why in ``note`` and carries no line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cudnn_lab.errors import CudnnLabError
from cudnn_lab.whatif.forecasts import forecasts_for
from cudnn_lab.whatif.gpu_facts import load_gpu_facts
from cudnn_lab.whatif.speed import _validation_for

__all__ = ["ModelLine", "ModelLines", "model_lines"]

#: predictor -> what the views call it
NAMES = {"transfer": "transfer model", "roofline": "datasheet roofline ratio",
         "nvidia_estimator": "NVIDIA GEMM estimator", "nvidia_estimator_ratio": "NVIDIA estimator ratio"}


@dataclass(frozen=True)
class ModelLine:
    """One predictor's times (ms) per plan of the run, with its validation error (MAPE, %) for the run's family."""

    predictor: str
    label: str
    mape: float | None
    times_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ModelLines:
    """A run's model lines: the GPU, the recording they were forecast from, the datasheet roofs (TFLOP/s for the
    run's dtype, GB/s) with the datasheet roofline's validation error, and one :class:`ModelLine` per predictor."""

    gpu: str
    family: str
    source: str = ""
    datasheet_tflops: float | None = None
    datasheet_gbps: float | None = None
    roofline_mape: float | None = None
    lines: tuple[ModelLine, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lines"] = [line.to_dict() for line in self.lines]
        return d


def _label(predictor: str, mape: float | None, family: str) -> str:
    how = "held out" if predictor == "transfer" else "no fitted parameter"
    err = "not validated" if mape is None else f"±{mape:.1f}% on {family}, {how}"
    return f"{NAMES.get(predictor, predictor)} ({err})"


def model_lines(result: Any) -> ModelLines:
    """The model lines of ``result`` (a RunResult) on its own GPU, or a ModelLines whose ``note`` says why none."""
    spec = result.spec
    family = str(spec.to_dict()["op"])
    name = str((result.device or {}).get("gpu", ""))
    facts = next((g for g in load_gpu_facts().values() if g.name == name), None)
    if facts is None:
        return ModelLines(gpu=name, family=family, note=f"{name or 'this GPU'} is not in the kit's GPU facts: no "
                          "datasheet, no validated model")
    dtype = str(spec.to_dict().get("dtype") or "fp16")
    base: dict[str, Any] = dict(gpu=facts.key, family=family, datasheet_tflops=facts.peak_tflops(dtype),
                                datasheet_gbps=facts.hbm_gbps)
    try:
        found = forecasts_for(spec, [facts.key])[0]
    except CudnnLabError as exc:
        return ModelLines(**base, note=f"no forecast of this problem: {str(exc)[:160]}")
    val = _validation_for("h100_h200", family, found.source_gpu, facts.key)
    best = _validation_for("h100_h200", family, found.source_gpu, facts.key, "best")
    roof_mape = val.mape.get("roofline") if val is not None else None
    base.update(source=found.source, roofline_mape=roof_mape)
    if found.measure_this or val is None:
        return ModelLines(**base, note=found.measure_this or "no validation row for this family and GPU")
    answered = [p for p in found.plans if p.predicted_ms is not None]
    lines = [ModelLine("transfer", _label("transfer", val.mape.get("transfer"), family), val.mape.get("transfer"),
                       {p.plan: float(p.predicted_ms) for p in answered if p.predicted_ms is not None}),
             ModelLine("roofline", _label("roofline", roof_mape, family), roof_mape,
                       {p.plan: p.predictions["roofline"] for p in answered if "roofline" in p.predictions})]
    for key in ("nvidia_estimator",):
        times = {p.plan: p.predictions[key] for p in found.plans if key in p.predictions}
        if times:
            mape = best.mape.get(key) if best is not None else None
            lines.append(ModelLine(key, _label(key, mape, family), mape, times))
    note = f"forecast of {facts.key} from {found.source} ({found.source_gpu})"
    return ModelLines(**base, lines=tuple(line for line in lines if line.times_ms), note=note)
