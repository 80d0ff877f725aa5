"""How fast on a GPU not in hand: cuDNN's own plan choice for the target, with times from named predictors.

For each plan cuDNN proposes on the target (:func:`cudnn_lab.whatif.plans_for`), the forecast gives a time from
predictors that each state what they assumed:

- ``transfer``: the same plan's measured source time, scaled by what differs between the GPUs (bandwidth for the
  share of the time that streams more bytes than the L2 holds, SM count with a waves term for tiled kernels, tensor
  peak for attention, with an efficiency factor fitted on shipped data and validated out of sample);
- ``roofline``: the source time scaled by the ratio of the two GPUs' datasheet rooflines (Habitat-style);
- ``nvidia_estimator``: NVIDIA's ``nvidia-matmul-heuristics`` for GEMMs, where that optional package is installed;
- and the naive baselines ``same`` (the source time), ``peak_ratio`` and ``bandwidth_ratio``.

A number is given only where a validation row for the family and target kind exists (:func:`validate`, on data that
ships); otherwise, where the target's pick is an engine never measured in the source, where the problem lies outside
the validated family (attention: no published row of its dtype, pass and head dim on the target), or where the
predictors disagree by more than 25% (the transfer faster than the target's datasheet roofline bound, a lower bound,
or NVIDIA's GEMM estimator off it; the naive baselines never vote), the answer is "measure this" with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cudnn_lab.errors import CudnnLabError, DataError, OptionError
from cudnn_lab.whatif import speed_nvmmh
from cudnn_lab.whatif.gpu_facts import GpuFacts, gpu
from cudnn_lab.whatif.speed_models import (PREDICTORS, RECORDED_DIR, _gpu_of, _ok_plans, _read_recording,
                                           check_recording, disagreement, recorded_predictions, sm_predictions)
from cudnn_lab.whatif.speed_validation import (BASELINE_PATH, SM_GATE, TARGETS, ValidationRow, _dtype_published,
                                               _fit_pairs_all, _sm_fit, _spec_efficiency, baseline_errors,
                                               check_baseline, format_validation, target_checks, validate,
                                               validation_frame)

__all__ = ["forecast", "forecast_many", "Forecast", "PlanForecast", "check_recording", "validate",
           "validation_frame", "format_validation", "target_checks", "baseline_errors", "check_baseline",
           "ValidationRow", "TARGETS", "BASELINE_PATH", "PREDICTORS", "RECORDED_DIR", "source_run"]


# ---------------------------------------------------------------------------------------------------------- answers
@dataclass(frozen=True)
class PlanForecast:
    """One proposed plan on the target: its predicted time and interval (None with ``measure_this`` set when no
    validated number can be given), the predictor used, and every predictor's value with what it assumed."""

    plan: str
    engine_id: int
    rank: int
    predicted_ms: float | None
    low_ms: float | None
    high_ms: float | None
    predictor: str
    measure_this: str = ""
    predictions: dict[str, float] = field(default_factory=dict)
    assumptions: dict[str, str] = field(default_factory=dict)
    validation_mape: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanForecast:
        return cls(**dict(data))


@dataclass(frozen=True)
class Forecast:
    """A what-if answer with times: per plan cuDNN proposes on ``target``, a forecast from ``source``'s run."""

    spec: dict[str, Any]
    family: str
    target: str
    source: str
    source_gpu: str
    plans_from: str
    plans: tuple[PlanForecast, ...] = ()
    measure_this: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.plans, tuple):
            object.__setattr__(self, "plans", tuple(self.plans))

    @property
    def pick(self) -> PlanForecast | None:
        """cuDNN's first choice on the target (rank 0), if any plan was proposed."""
        return min(self.plans, key=lambda p: p.rank) if self.plans else None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["plans"] = [p.to_dict() for p in self.plans]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Forecast:
        d = dict(data)
        d["plans"] = tuple(PlanForecast.from_dict(p) for p in d.get("plans", ()))
        return cls(**d)

    def frame(self) -> Any:
        """One row per proposed plan: rank, engine, predicted time and interval, predictor, or the reason."""
        import pandas as pd
        rows = [{"rank": p.rank, "plan": p.plan, "engine_id": p.engine_id, "predicted_ms": p.predicted_ms,
                 "low_ms": p.low_ms, "high_ms": p.high_ms, "predictor": p.predictor,
                 "validation_mape": p.validation_mape, "measure_this": p.measure_this,
                 **{f"{k}_ms": v for k, v in p.predictions.items()}} for p in self.plans]
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """A few lines: the target, the source, and cuDNN's pick with its forecast or the reason to measure."""
        head = f"Forecast for {self.family} on {self.target} from {self.source} ({self.source_gpu}); {self.plans_from}"
        if self.measure_this:
            return f"{head}\nMeasure this: {self.measure_this}"
        pick = self.pick
        if pick is None:
            return f"{head}\nNo plan proposed."
        if pick.predicted_ms is None:
            return f"{head}\ncuDNN's pick {pick.plan}: measure this ({pick.measure_this})"
        return (f"{head}\ncuDNN's pick {pick.plan}: {pick.predicted_ms:.4g} ms "
                f"({pick.low_ms:.4g}-{pick.high_ms:.4g}) by {pick.predictor}, validated at "
                f"{pick.validation_mape:.1f}% mean absolute error for this family and target")


# ----------------------------------------------------------------------------------------------------- forecasting
def source_run(source: Any, spec_dict: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The measured run to transfer from and its label: a recording path, a loaded recording, a RunResult (its
    ``to_dict``), or None for the shipped H200 (else H100) recording of the same problem."""
    if source is None:
        for prefix in ("h200", "h100"):
            for path in sorted(RECORDED_DIR.glob(f"{prefix}_*.json")):
                data = _read_recording(path)
                if _same_spec(data["spec"]) == dict(spec_dict):
                    return data, path.name
        raise OptionError("source", None, "a recording or run of this spec (no shipped recording matches it)")
    if isinstance(source, (str, Path)):
        p = Path(source)
        if not p.exists() and (RECORDED_DIR / f"{source}.json").exists():
            p = RECORDED_DIR / f"{source}.json"
        return _read_recording(p), p.name
    data = source.to_dict() if hasattr(source, "to_dict") else source
    return check_recording(data, "source run"), "a live run"


def _validation_for(dataset: str, family: str, src: str, tgt: str, scope: str = "every") -> ValidationRow | None:
    for r in validate():
        if r.dataset == dataset and r.source == src and r.target == tgt and r.family == family \
                and r.scope == scope and r.n > 0:
            return r
    return None


def _measure(plan: Mapping[str, Any], rank: int, why: str, pred: dict[str, float] | None = None,
             notes: dict[str, str] | None = None) -> PlanForecast:
    return PlanForecast(plan=str(plan["plan"]), engine_id=int(plan.get("engine_id", -1)), rank=rank,
                        predicted_ms=None, low_ms=None, high_ms=None, predictor="", measure_this=why,
                        predictions=pred or {}, assumptions=notes or {})


def _proposals(spec: Any, target: str, rec: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """cuDNN's proposals on ``target`` (asked or recorded) or, where it cannot answer, the source's, labelled."""
    from cudnn_lab.whatif.heuristics import plans_for
    try:
        answer = plans_for(spec, target)
        if answer.ok:
            return [dict(p) for p in answer.proposals], f"plans: cuDNN's heuristics' answer for {target} " \
                f"({answer.source})"
        why = f"cuDNN declined on {target}: {answer.refused}"
    except CudnnLabError as exc:
        why = f"cuDNN's answer for {target} not available ({str(exc)[:120]})"
    ranked = sorted((p for p in rec["plans"] if p.get("heuristic_rank") is not None),
                    key=lambda p: int(p["heuristic_rank"]))
    return [dict(p) for p in ranked], f"plans: the source run's proposals ({why})"


def forecast(spec: Any, target: Any, source: Any = None) -> Forecast:
    """For each plan cuDNN proposes on ``target`` (a GPU such as ``"h100"``, ``"gb200"``, ``"sm100"``, or an SM
    count), a predicted time with an interval from ``source`` (a recording path or name, a loaded recording, a
    RunResult; default: the shipped recording of ``spec``), or "measure this" with the reason."""
    from cudnn_lab.specs.base import Spec
    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.ConvSpec(...))")
    spec_dict = spec.to_dict()
    rec, label = source_run(source, spec_dict)
    if _same_spec(rec["spec"]) != spec_dict:
        raise DataError(label, f"field spec is for {rec['spec'].get('op')} {rec['spec']}, not the spec asked",
                        hint="give a recording of the same problem")
    family = str(spec_dict["op"])
    src = _gpu_of(rec["device"])
    measured = _ok_plans(rec)
    measured_engines = {int(p.get("engine_id", -1)) for p in measured.values()}
    if isinstance(target, int) and not isinstance(target, bool):
        return _forecast_sms(spec, spec_dict, rec, label, family, src, int(target))
    tgt = gpu(str(target))
    proposals, plans_from = _proposals(spec, tgt.key if tgt.key in ("h100", "h200") else tgt.arch, rec)
    base: dict[str, Any] = dict(spec=spec_dict, family=family, target=tgt.key, source=label, source_gpu=src.key,
                plans_from=plans_from)
    if tgt.key in ("h100", "h200") and src.key in ("h100", "h200") and tgt.key != src.key:
        val = _validation_for("h100_h200", family, src.key, tgt.key)
        alpha, scale = _fit_pairs_all(src.key, tgt.key)
        best_val = _validation_for("h100_h200", family, src.key, tgt.key, "best")

        def predict(q: Mapping[str, Any]) -> tuple[dict[str, float], dict[str, str]]:
            pred, notes = recorded_predictions(q, spec_dict, src, tgt, alpha, scale)
            extra, extra_notes = speed_nvmmh.predictions(spec_dict, src.key, tgt.key, float(q["median_ms"]))
            for k in extra:  # labelled beside the transfer with its validation error, never the answer
                err = best_val.mape.get(k) if best_val is not None else None
                extra_notes[k] += f"; validated at {err:.1f}% (matmul best plans)" if err is not None else \
                    "; not validated"
            return {**pred, **extra}, {**notes, **extra_notes}
        return Forecast(**base, plans=tuple(_plan_forecast(p, i, measured, measured_engines, val, predict)
                                            for i, p in enumerate(proposals)))
    if family == "sdpa" and src.key == "h200":
        val = _validation_for("published", "sdpa", "h200", tgt.key)
        if val is None or val.measure_this_share >= 1.0:
            return Forecast(**base, measure_this=f"no validated forecast of attention from h200 to {tgt.key}: "
                            + (val.note if val else "no published rows for it"))
        eff, why = _spec_efficiency(spec_dict, tgt.key)
        if eff is None:
            return Forecast(**base, measure_this=f"this attention lies outside the validated family on {tgt.key}: "
                            + why)
        return Forecast(**base, plans=tuple(_plan_forecast(
            p, i, measured, measured_engines, val,
            lambda q: _recorded_as_published(q, spec_dict, src, tgt, eff)) for i, p in enumerate(proposals)))
    if src.key == tgt.key:  # e.g. the Lab's model lines for a problem recorded on this GPU alone
        return Forecast(**base, measure_this=f"the source run of this {family} problem is on {tgt.key} itself: a "
                        "forecast needs a measurement on another GPU (record the problem on the H100 or H200 to pair "
                        "it)")
    return Forecast(**base, measure_this=f"no validation row for {family} from {src.key} to {tgt.key}: the kit "
                    "has validated H100<->H200 (every recorded family), SM carve-outs (conv) and attention from "
                    "H200 to the published GPUs only")


def _same_spec(data: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded spec as the kit's spec writes it today (defaults filled), or the raw dict if it does not parse."""
    from cudnn_lab.specs.base import spec_from_dict
    try:
        return spec_from_dict(dict(data)).to_dict()
    except (CudnnLabError, TypeError, ValueError, KeyError):
        return dict(data)


def _recorded_as_published(plan: Mapping[str, Any], spec: Mapping[str, Any], src: GpuFacts, tgt: GpuFacts,
                           eff: float) -> tuple[dict[str, float], dict[str, str]]:
    pred, notes = recorded_predictions(plan, spec, src, tgt, 1.0, 1.0)
    dtype = _dtype_published(spec)
    ps, pt = src.published_peak(dtype) or 1.0, tgt.published_peak(dtype) or tgt.peak_tflops(dtype) or 1.0
    pred["peak_ratio"] = float(plan["median_ms"]) * ps / pt
    pred["transfer"] = pred["peak_ratio"] * eff
    notes["transfer"] = (f"NVIDIA's published peak ratio ({ps:g} -> {pt:g}) times {tgt.key}'s efficiency relative "
                         f"to H200 ({eff:.3f}, over NVIDIA's two published {dtype} rows nearest in shape of the same "
                         "pass, head dim and mask, as validated)")
    return pred, notes


def _plan_forecast(p: Mapping[str, Any], rank: int, measured: Mapping[str, Mapping[str, Any]],
                   engines: set[int], val: ValidationRow | None,
                   predict: Callable[[Mapping[str, Any]], tuple[dict[str, float], dict[str, str]]]) -> PlanForecast:
    name = str(p["plan"])
    if name not in measured:
        eng = int(p.get("engine_id", -1))
        why = (f"engine {eng} was never measured in the source run" if eng not in engines
               else "this plan (engine with these knobs) was not measured in the source run")
        return _measure(p, rank, why)
    pred, notes = predict(measured[name])
    if val is None:
        return _measure(p, rank, "no validation row for this family and target kind", pred, notes)
    why = disagreement(pred)
    if why:
        return _measure(p, rank, why, pred, notes)
    err = val.mape["transfer"] / 100.0
    t = pred["transfer"]
    return PlanForecast(plan=name, engine_id=int(p.get("engine_id", -1)), rank=rank, predicted_ms=t,
                        low_ms=t * (1 - err), high_ms=t * (1 + err), predictor="transfer", predictions=pred,
                        assumptions=notes, validation_mape=val.mape["transfer"])


def _forecast_sms(spec: Any, spec_dict: dict[str, Any], rec: Mapping[str, Any], label: str, family: str,
                  src: GpuFacts, sms: int) -> Forecast:
    full = int(rec["device"].get("sm_count") or src.sm_count or 0)
    if not 0 < sms <= full:
        raise OptionError("target", sms, f"an SM count from 1 to {full} (the source GPU's)")
    base: dict[str, Any] = dict(spec=spec_dict, family=family, target=f"{sms} SMs", source=label, source_gpu=src.key,
                plans_from="plans: the source run's proposals (cuDNN's choice under a carve-out is the whole GPU's "
                           "list filtered by the engines that take one)")
    vals = [r for r in validate() if r.dataset == "sm_scaling" and r.family == family]
    if not vals:
        return Forecast(**base, measure_this=f"no SM carve-out validation for {family} (only "
                        + ", ".join(sorted({r.family for r in validate() if r.dataset == 'sm_scaling'})) + ")")
    if sms / full < SM_GATE:
        errs = ", ".join(f"{r.target} {r.mape['transfer']:.1f}%" for r in vals)
        return Forecast(**base, measure_this=f"{sms} of {full} SMs is below {SM_GATE:.0%} of the GPU, where the "
                        f"carve-out forecast is not validated under 8% (transfer's error: {errs})")
    answered = [r for r in vals if r.answered_mape is not None]
    worst = max(answered or vals, key=lambda r: r.mape["transfer"])
    measured = _ok_plans(rec)
    ranked = sorted((p for p in rec["plans"] if p.get("heuristic_rank") is not None),
                    key=lambda p: int(p["heuristic_rank"]))
    engines = {int(p.get("engine_id", -1)) for p in measured.values()}
    fit = _sm_fit(None)
    return Forecast(**base, plans=tuple(_plan_forecast(p, i, measured, engines, worst,
                                                       lambda q: sm_predictions(q, spec_dict, full, sms, src, fit))
                                        for i, p in enumerate(ranked)))


def forecast_many(spec: Any, targets: Iterable[Any], source: Any = None) -> list[Forecast]:
    """:func:`forecast` for several targets from one source."""
    return [forecast(spec, t, source) for t in targets]
