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
ships); otherwise, where the target's pick is an engine never measured in the source, or where the predictors
disagree by more than 25%, the answer is "measure this" with the reason.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from cudnn_lab.errors import CudnnLabError, DataError, OptionError, PathError
from cudnn_lab.whatif.gpu_facts import GpuFacts, gpu, load_gpu_facts
from cudnn_lab.whatif.published import PublishedRow, load_published

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
RECORDED_DIR = DATA_DIR / "recorded"
SCALING_DIR = DATA_DIR / "whatif" / "sm_scaling"
BASELINE_PATH = DATA_DIR / "forecast" / "validation_baseline.json"
DISAGREEMENT = 0.25
PREDICTORS = ("transfer", "roofline", "same", "peak_ratio", "bandwidth_ratio")
ALPHAS = tuple(i / 20 for i in range(21))
SCALES = tuple(0.95 + i / 200 for i in range(21))
#: The issue's targets: (dataset, target or "*", scope) -> the largest allowed MAPE (%) of the transfer predictor.
TARGETS: dict[tuple[str, str, str], float] = {
    ("h100_h200", "h200", "best"): 3.5, ("h100_h200", "h100", "best"): 3.5,
    ("h100_h200", "h200", "every"): 6.0, ("h100_h200", "h100", "every"): 6.0,
    ("sm_scaling", "*", "every"): 8.0,
    **{("published", t, "every"): 10.0 for t in ("a100_80gb_pcie", "b200", "b300", "gb200", "gb300")},
    ("published", "rtx_pro_6000", "every"): 20.0,
}


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


# ------------------------------------------------------------------------------------------------------- predictors
def _bytes_and_flops(plan: Mapping[str, Any]) -> tuple[float, float]:
    """The plan's compulsory bytes and FLOPs as the kit recorded them (GB/s and TFLOP/s times its median time)."""
    ms = float(plan["median_ms"])
    return float(plan.get("gbps") or 0.0) * ms * 1e6, float(plan.get("tflops") or 0.0) * ms * 1e9


def _roof_ms(flops: float, nbytes: float, peak_tflops: float, gbps: float) -> float:
    return max(flops / (peak_tflops * 1e9), nbytes / (gbps * 1e6))


def _memory_share(plan: Mapping[str, Any], src: GpuFacts) -> float:
    """The share of the source time that streams from HBM: zero when the bytes fit the source's L2, else the
    bandwidth-bound time over the measured time (at most 1)."""
    nbytes, _ = _bytes_and_flops(plan)
    if src.l2_mib is not None and nbytes <= src.l2_mib * 2**20:
        return 0.0
    return min(1.0, nbytes / (float(src.hbm_gbps or 1.0) * 1e6) / float(plan["median_ms"]))


def _dtype(spec: Mapping[str, Any]) -> str:
    return str(spec.get("dtype") or spec.get("data_type") or "fp16")


def recorded_predictions(plan: Mapping[str, Any], spec: Mapping[str, Any], src: GpuFacts, tgt: GpuFacts,
                         alpha: float, scale: float) -> tuple[dict[str, float], dict[str, str]]:
    """Every predictor's time for one recorded plan moved from ``src`` to ``tgt`` (same architecture family)."""
    t = float(plan["median_ms"])
    dtype = _dtype(spec)
    ps, pt = src.peak_tflops(dtype) or 1.0, tgt.peak_tflops(dtype) or 1.0
    bws, bwt = float(src.hbm_gbps or 1.0), float(tgt.hbm_gbps or 1.0)
    nbytes, flops = _bytes_and_flops(plan)
    m = alpha * _memory_share(plan, src)
    clock = (src.boost_mhz or 1.0) / (tgt.boost_mhz or 1.0) * (src.sm_count or 1) / (tgt.sm_count or 1)
    pred = {"same": t, "peak_ratio": t * ps / pt, "bandwidth_ratio": t * bws / bwt,
            "transfer": t * scale * ((1 - m) * clock + m * bws / bwt)}
    roof_s = _roof_ms(flops, nbytes, ps, bws)
    pred["roofline"] = t * _roof_ms(flops, nbytes, pt, bwt) / roof_s if roof_s > 0 else t
    notes = {"same": "the source time unchanged",
             "peak_ratio": f"time scales with the {dtype} tensor peak ({ps:g} -> {pt:g} TFLOP/s)",
             "bandwidth_ratio": f"time scales with HBM bandwidth ({bws:g} -> {bwt:g} GB/s)",
             "transfer": (f"the share of the time streaming more bytes than L2 ({src.l2_mib} MiB) holds, times "
                          f"alpha={alpha:g}, scales with bandwidth; the rest with SMs x clock; times {scale:g} "
                          "(both fitted leave-one-out on the kit's H100/H200 pairs)"),
             "roofline": "the ratio of the two datasheet rooflines at the plan's recorded FLOPs and bytes"}
    return pred, notes


# ------------------------------------------------------------------------------------------------ validation data
def _recorded_pairs() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, h100 recording, h200 recording) of the same problem, from the shipped recordings."""
    return list(_pairs_cached())


@lru_cache(maxsize=1)
def _pairs_cached() -> tuple[tuple[str, dict[str, Any], dict[str, Any]], ...]:
    pairs = []
    for h100 in sorted(RECORDED_DIR.glob("h100_*.json")):
        h200 = RECORDED_DIR / ("h200_" + h100.name[5:])
        if not h200.exists():
            continue
        a, b = _read_recording(h100), _read_recording(h200)
        if a["spec"] != b["spec"]:
            raise DataError(h200, f"spec differs from {h100.name}'s", hint="a pair must record the same problem")
        pairs.append((h100.name[5:-5], a, b))
    return tuple(pairs)


def _read_recording(path: Any) -> dict[str, Any]:
    """A shipped or user run recording, checked for what the forecast reads (spec, device, plans with times)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise PathError(p, "no such recording") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(p, f"not readable JSON ({exc})") from None
    return check_recording(data, p)


def check_recording(data: Any, where: Any) -> dict[str, Any]:
    """``data`` if it is a run recording the forecast can read; DataError naming ``where`` and the field if not."""
    if not isinstance(data, dict):
        raise DataError(where, f"is {type(data).__name__}, not a run recording")
    for key, kind in (("spec", dict), ("device", dict), ("plans", list)):
        if not isinstance(data.get(key), kind):
            raise DataError(where, f"field {key} is missing or not a{'n object' if kind is dict else ' list'}")
    if not isinstance(data["spec"].get("op"), str):
        raise DataError(where, "field spec.op is missing")
    if not isinstance(data["device"].get("gpu"), str):
        raise DataError(where, "field device.gpu is missing")
    for i, plan in enumerate(data["plans"]):
        if not isinstance(plan, dict) or not isinstance(plan.get("plan"), str):
            raise DataError(where, f"field plans[{i}].plan is missing")
        if plan.get("status") == "ok":
            ms = plan.get("median_ms")
            if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not math.isfinite(ms) or ms <= 0:
                raise DataError(where, f"field plans[{i}].median_ms={ms!r}: an ok plan needs a positive time")
    return data


def _ok_plans(rec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["plan"]: p for p in rec["plans"] if p.get("status") == "ok" and p.get("median_ms")}


def _best(rec: Mapping[str, Any]) -> dict[str, Any] | None:
    ok = list(_ok_plans(rec).values())
    return min(ok, key=lambda p: float(p["median_ms"])) if ok else None


def _gpu_of(device: Mapping[str, Any]) -> GpuFacts:
    name = str(device.get("gpu", ""))
    for item in load_gpu_facts().values():
        if item.name == name:
            return item
    raise DataError("recording", f"device.gpu={name!r} is not a GPU of the kit's GPU facts")


def _ape(pred: float, actual: float) -> float:
    return abs(pred / actual - 1.0) * 100.0


@dataclass(frozen=True)
class ValidationRow:
    """One line of the validation table: a dataset, direction and scope, and every predictor's error (MAPE, %)."""

    dataset: str
    family: str
    source: str
    target: str
    scope: str
    n: int
    mape: dict[str, float]
    measure_this_share: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fit_pairs(items: Sequence[tuple[dict[str, Any], dict[str, Any], dict[str, Any], GpuFacts, GpuFacts]],
               skip: int | None) -> tuple[float, float]:
    """(alpha, scale) minimising the transfer's MAPE over ``items`` except ``skip`` (leave-one-out), on a grid."""
    import numpy as np
    rows = [(float(p["median_ms"]), _memory_share(p, src),
             (src.boost_mhz or 1.0) / (tgt.boost_mhz or 1.0) * (src.sm_count or 1) / (tgt.sm_count or 1),
             float(src.hbm_gbps or 1.0) / float(tgt.hbm_gbps or 1.0), float(q["median_ms"]))
            for i, (p, q, _spec, src, tgt) in enumerate(items) if i != skip]
    if not rows:
        return 1.0, 1.0
    t, m, clock, bwr, actual = (np.array(c) for c in zip(*rows))
    a = np.array(ALPHAS)[:, None, None]
    s = np.array(SCALES)[None, :, None]
    pred = t * s * (clock + a * m * (bwr - clock))
    err = np.abs(pred / actual - 1.0).mean(axis=2)
    i, j = np.unravel_index(int(np.argmin(err)), err.shape)
    return float(ALPHAS[i]), float(SCALES[j])


def _validate_pairs() -> list[ValidationRow]:
    """H100 -> H200 and H200 -> H100 on the shipped pairs, best plan and every plan both cards measured."""
    rows: list[ValidationRow] = []
    facts = load_gpu_facts()
    for src_key, tgt_key in (("h100", "h200"), ("h200", "h100")):
        src, tgt = facts[src_key], facts[tgt_key]
        for scope in ("best", "every"):
            items = []
            families = []
            problems = []
            for name, a, b in _recorded_pairs():
                s_rec, t_rec = (a, b) if src_key == "h100" else (b, a)
                if scope == "best":
                    p, q = _best(s_rec), _best(t_rec)
                    found = [(p, q)] if p and q else []
                else:
                    sp, tp = _ok_plans(s_rec), _ok_plans(t_rec)
                    found = [(sp[k], tp[k]) for k in sorted(set(sp) & set(tp))]
                for p, q in found:
                    items.append((p, q, s_rec["spec"], src, tgt))
                    families.append(str(s_rec["spec"]["op"]))
                    problems.append(name)
            # leave one problem out: its rows never see parameters fitted on themselves
            fitted: dict[str, tuple[float, float]] = {}
            errs: dict[str, list[float]] = {k: [] for k in PREDICTORS}
            per_family: dict[str, dict[str, list[float]]] = {}
            for i, (p, q, spec, s, t) in enumerate(items):
                prob = problems[i]
                if prob not in fitted:
                    keep = [it for j, it in enumerate(items) if problems[j] != prob]
                    fitted[prob] = _fit_pairs(keep, None)
                alpha, scale = fitted[prob]
                pred, _ = recorded_predictions(p, spec, s, t, alpha, scale)
                actual = float(q["median_ms"])
                fam = per_family.setdefault(families[i], {k: [] for k in PREDICTORS})
                for k in PREDICTORS:
                    e = _ape(pred[k], actual)
                    errs[k].append(e)
                    fam[k].append(e)
            note = "transfer's alpha and scale fitted leave-one-problem-out"
            rows.append(ValidationRow("h100_h200", "all", src_key, tgt_key, scope, len(items),
                                      {k: statistics.fmean(v) for k, v in errs.items() if v}, 0.0, note))
            for famname, fe in sorted(per_family.items()):
                rows.append(ValidationRow("h100_h200", famname, src_key, tgt_key, scope, len(fe["same"]),
                                          {k: statistics.fmean(v) for k, v in fe.items() if v}, 0.0, note))
    return rows


def _tiles(spec: Mapping[str, Any], tile: str) -> int | None:
    """CTA tiles of an implicit-GEMM conv fprop for a ``MxNxK`` tile text, or None when not derivable."""
    try:
        tm, tn = (int(x) for x in str(tile).split("x")[:2])
    except ValueError:
        return None
    if spec.get("op") != "conv" or spec.get("direction") != "fprop":
        return None
    ph = (int(spec["h"]) + 2 * int(spec["padding"]) - int(spec["r"])) // int(spec["stride"]) + 1
    pw = (int(spec["w"]) + 2 * int(spec["padding"]) - int(spec["s"])) // int(spec["stride"]) + 1
    return math.ceil(int(spec["n"]) * ph * pw / tm) * math.ceil(int(spec["k"]) / tn)


def sm_predictions(row: Mapping[str, Any], spec: Mapping[str, Any], full: int, sms: int,
                   src: GpuFacts, beta: float | None = None) -> tuple[dict[str, float], dict[str, str]]:
    """Every predictor's time for one plan moved from the whole GPU (``full`` SMs) to ``sms`` SMs."""
    t = float(row["median_ms"])
    m = _memory_share(row, src)
    tiles = _tiles(spec, str(row.get("tile") or ""))
    if tiles:
        compute = math.ceil(tiles / sms) / math.ceil(tiles / full)
        how = f"{tiles} tiles in waves: ceil(tiles/SMs) ({math.ceil(tiles / full)} -> {math.ceil(tiles / sms)})"
    else:
        compute = full / sms
        how = "the compute share scales with 1/SMs (tile count unknown)"
    pred = {"same": t, "peak_ratio": t * full / sms, "bandwidth_ratio": t,
            "transfer": t * ((1 - m) * compute + m), "roofline": t * full / sms if m < 1 else t}
    notes = {"transfer": f"{how}; the HBM-bound share ({m:.0%}) unchanged (bandwidth and L2 are the whole GPU's)",
             "peak_ratio": "time scales with 1/SMs", "bandwidth_ratio": "bandwidth is the whole GPU's: unchanged",
             "same": "the whole GPU's time", "roofline": "compute roof scales with SMs, memory roof unchanged"}
    if beta is not None:
        pred["transfer"] = t * (compute ** beta)
        notes["transfer"] = (f"{how}, raised to beta={beta:g} (fitted leave-one-plan-out on the shipped carve-out "
                             "runs: kernels do not fill the freed SMs' share)")
    return pred, notes


def _fit_beta(items: Sequence[tuple[float, float, float]]) -> float:
    """The exponent on the waves ratio minimising the MAPE over (time, waves ratio, measured) items."""
    best = (1.0, math.inf)
    for b in ALPHAS:
        e = statistics.fmean(_ape(t * w ** b, a) for t, w, a in items) if items else 0.0
        if e < best[1] - 1e-12:
            best = (b, e)
    return best[0]


def _sm_items(path: Path) -> tuple[dict[str, Any], int, GpuFacts, list[tuple[str, int, dict[str, Any], float]]]:
    data = json.loads(path.read_text())
    frame, spec = data.get("frame"), data.get("spec")
    full = data.get("full_sm_count")
    if not isinstance(frame, list) or not isinstance(spec, dict) or not isinstance(full, int):
        raise DataError(path, "frame, spec or full_sm_count missing")
    src = _gpu_of(data.get("device") or {})
    whole = {r["plan"]: r for r in frame if r.get("sm_count") is None and r.get("status") == "ok"}
    items = [(str(r["plan"]), int(r["sms"]), whole[r["plan"]], float(r["median_ms"])) for r in frame
             if r.get("sm_count") is not None and r.get("status") == "ok" and r["plan"] in whole]
    return spec, full, src, items


@lru_cache(maxsize=4)
def _sm_beta(skip_plan: str | None) -> float:
    """beta fitted on every shipped carve-out run except the plan ``skip_plan`` (None: all of them)."""
    pts = []
    for path in sorted(SCALING_DIR.glob("*.json")):
        spec, full, src, items = _sm_items(path)
        for plan, sms, w, actual in items:
            if plan != skip_plan:
                pred = sm_predictions(w, spec, full, sms, src, 1.0)[0]["transfer"]
                pts.append((float(w["median_ms"]), pred / float(w["median_ms"]), actual))
    return _fit_beta(pts)


def _validate_sm() -> list[ValidationRow]:
    rows = []
    for path in sorted(SCALING_DIR.glob("*.json")):
        spec, full, src, items = _sm_items(path)
        by_sms: dict[int, dict[str, list[float]]] = {}
        for plan, sms, w, actual in items:
            pred, _ = sm_predictions(w, spec, full, sms, src, _sm_beta(plan))
            sub = by_sms.setdefault(sms, {k: [] for k in PREDICTORS})
            for k in PREDICTORS:
                sub[k].append(_ape(pred[k], actual))
        for sms, sub in sorted(by_sms.items()):
            rows.append(ValidationRow("sm_scaling", str(spec["op"]), f"{src.key} {full} SMs", f"{sms} SMs", "every",
                                      len(sub["same"]), {k: statistics.fmean(v) for k, v in sub.items()}, 0.0,
                                      f"{path.name}; transfer's beta fitted leave-one-plan-out"))
    return rows


def published_predictions(src_row: PublishedRow, tgt: GpuFacts, src: GpuFacts,
                          efficiency: float | None) -> tuple[dict[str, float], dict[str, str]]:
    """Every predictor's time for a published attention row moved from ``src`` to ``tgt``."""
    t = src_row.time_ms
    ps = src.published_peak(src_row.data_type) or src_row.peak_mma_tflops
    pt = tgt.published_peak(src_row.data_type) or tgt.peak_tflops(src_row.data_type) or ps
    ds, dt = src.peak_tflops(src_row.data_type) or ps, tgt.peak_tflops(src_row.data_type) or pt
    bws, bwt = float(src.hbm_gbps or 1.0), float(tgt.hbm_gbps or 1.0)
    esize = 1 if src_row.data_type == "fp8" else 2
    nbytes = esize * src_row.batch * src_row.head_dim * (2 * src_row.heads_q * src_row.seq_q
                                                         + 2 * src_row.heads_kv * src_row.seq_kv)
    nbytes *= 2 if src_row.pass_ == "bwd" else 1
    roof_s = _roof_ms(src_row.flops, nbytes, ds, bws)
    pred = {"same": t, "peak_ratio": t * ps / pt, "bandwidth_ratio": t * bws / bwt,
            "roofline": t * _roof_ms(src_row.flops, nbytes, dt, bwt) / roof_s,
            "transfer": t * ps / pt * (efficiency if efficiency is not None else 1.0)}
    notes = {"peak_ratio": f"time scales with NVIDIA's published peak ({ps:g} -> {pt:g} TFLOP/s)",
             "transfer": (f"peak ratio times the target's efficiency relative to the source ({efficiency:.3f}), the "
                          "median over the other published rows of the same dtype and pass (leave-one-out)"
                          if efficiency is not None else "peak ratio (no efficiency factor available)"),
             "roofline": "the ratio of the two datasheet rooflines", "same": "the source time unchanged",
             "bandwidth_ratio": "time scales with HBM bandwidth"}
    return pred, notes


def _efficiency(pairs: Sequence[tuple[PublishedRow, PublishedRow]], src: GpuFacts, tgt: GpuFacts,
                like: PublishedRow, skip: PublishedRow | None) -> float | None:
    """Measured / peak-ratio time over ``pairs`` of ``like``'s dtype and pass (its mask where there are such), the
    two nearest in sequence length, leaving ``skip`` out: the target's efficiency relative to the source."""
    cand = [(s, t) for s, t in pairs if t is not skip and s.data_type == like.data_type and s.pass_ == like.pass_]
    same_mask = [(s, t) for s, t in cand if s.attn_mask == like.attn_mask]
    cand = same_mask or cand
    if not cand:
        return None
    cand.sort(key=lambda st: abs(math.log(st[0].seq_q / like.seq_q)))
    vals = [t.time_ms / published_predictions(s, tgt, src, None)[0]["peak_ratio"] for s, t in cand[:2]]
    return statistics.fmean(vals)


def _published_pairs(rows: Sequence[PublishedRow], src_key: str, tgt_key: str
                     ) -> list[tuple[PublishedRow, PublishedRow]]:
    source = {r.problem: r for r in rows if r.gpu == src_key}
    return [(source[r.problem], r) for r in rows if r.gpu == tgt_key and r.problem in source]


def _validate_published() -> list[ValidationRow]:
    rows = load_published()
    facts = load_gpu_facts()
    src = facts["h200"]
    out = []
    for tgt_key in ("a100_80gb_pcie", "b200", "b300", "gb200", "gb300", "rtx_pro_6000"):
        tgt = facts[tgt_key]
        pairs = _published_pairs(rows, "h200", tgt_key)
        if not pairs:
            out.append(ValidationRow("published", "sdpa", "h200", tgt_key, "every", 0, {}, 1.0,
                                     "no published rows imported for this GPU: every forecast says measure this"))
            continue
        errs: dict[str, list[float]] = {k: [] for k in PREDICTORS}
        refused = 0
        for s, t in pairs:
            eff = _efficiency(pairs, src, tgt, s, t)
            pred, _ = published_predictions(s, tgt, src, eff)
            if eff is None or abs(eff - 1.0) > DISAGREEMENT:
                refused += 1
            for k in PREDICTORS:
                errs[k].append(_ape(pred[k], t.time_ms))
        out.append(ValidationRow("published", "sdpa", "h200", tgt_key, "every", len(pairs),
                                 {k: statistics.fmean(v) for k, v in errs.items()}, refused / len(pairs),
                                 "efficiency factor leave-one-out; 'measure this' when transfer and peak ratio "
                                 "disagree by more than 25%"))
    return out


@lru_cache(maxsize=1)
def _validation_cached() -> tuple[ValidationRow, ...]:
    return tuple(_validate_pairs() + _validate_sm() + _validate_published())


def validate() -> list[ValidationRow]:
    """The validation table recomputed on CPU from the data that ships (pairs, SM carve-outs, published rows)."""
    return list(_validation_cached())


def validation_frame() -> Any:
    """The validation table as a frame: one row per dataset, family, direction and scope, a column per predictor."""
    import pandas as pd
    return pd.DataFrame([{"dataset": r.dataset, "family": r.family, "source": r.source, "target": r.target,
                          "scope": r.scope, "n": r.n, **{f"{k}_mape": r.mape.get(k) for k in PREDICTORS},
                          "measure_this_share": r.measure_this_share, "note": r.note} for r in validate()])


def target_checks() -> list[tuple[str, float | None, float, bool]]:
    """(what, reached MAPE or None, the issue's target, met) for each of the issue's targets."""
    out = []
    for (dataset, target, scope), limit in TARGETS.items():
        fam = {"h100_h200": "all", "sm_scaling": "conv", "published": "sdpa"}[dataset]
        rows = [r for r in validate() if r.dataset == dataset and r.scope == scope and r.family == fam
                and (target == "*" or r.target == target)]
        if not rows:
            continue
        for r in rows:
            reached = r.mape.get("transfer")
            if dataset == "published":
                met = reached is not None and r.measure_this_share < 1.0 and reached <= limit \
                    and reached < r.mape.get("peak_ratio", math.inf)
                if r.n == 0:
                    met = False  # no published rows: every forecast says "measure this", nothing was validated
                elif target == "rtx_pro_6000":
                    met = r.measure_this_share == 1.0 or (reached is not None and reached <= limit)
            else:
                met = reached is not None and reached <= limit
            out.append((f"{dataset} {r.source}->{r.target} {scope}", reached, limit, met))
    return out


def format_validation() -> str:
    """The validation table and the issue's targets, met or missed, as text for the CLI."""
    lines = ["dataset      family          source          target          scope  n     " +
             "  ".join(f"{k:>9}" for k in PREDICTORS) + "  measure"]
    for r in validate():
        vals = "  ".join(f"{r.mape[k]:8.1f}%" if k in r.mape else f"{'-':>9}" for k in PREDICTORS)
        lines.append(f"{r.dataset:<12} {r.family:<15} {r.source:<15} {r.target:<15} {r.scope:<6} {r.n:<5} {vals}"
                     f"  {r.measure_this_share:6.0%}")
    lines.append("")
    lines.append("MAPE = mean absolute percentage error; fitted parameters validated leave-one-out (see notes).")
    lines.append("Issue 35 targets (transfer predictor):")
    for what, reached, limit, met in target_checks():
        got = "measure this" if reached is None else f"{reached:.1f}%"
        lines.append(f"  {'met   ' if met else 'MISSED'} {what}: {got} (target <= {limit:g}%)")
    return "\n".join(lines)


def baseline_errors() -> dict[str, float]:
    """The transfer predictor's MAPE per validation line, keyed for the checked-in baseline file."""
    return {f"{r.dataset}|{r.family}|{r.source}|{r.target}|{r.scope}": round(r.mape["transfer"], 3)
            for r in validate() if "transfer" in r.mape}


def check_baseline(path: Any = None) -> list[str]:
    """Lines whose error grew beyond the checked-in baseline (errors may only go down); empty when none did."""
    p = Path(path) if path is not None else BASELINE_PATH
    try:
        base = json.loads(p.read_text())["transfer_mape"]
    except FileNotFoundError:
        raise PathError(p, "no validation baseline") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(p, f"not a validation baseline ({exc})") from None
    now = baseline_errors()
    grew = [f"{k}: {now[k]:.3f}% > baseline {v:.3f}%" for k, v in base.items() if k in now and now[k] > v + 0.001]
    grew += [f"{k}: in the baseline but no longer computed" for k in base if k not in now]
    return grew


# ----------------------------------------------------------------------------------------------------- forecasting
def _source(source: Any, spec_dict: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
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


def _validation_for(dataset: str, family: str, src: str, tgt: str) -> ValidationRow | None:
    for r in validate():
        if r.dataset == dataset and r.source == src and r.target == tgt and r.family == family \
                and r.scope == "every" and r.n > 0:
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
    rec, label = _source(source, spec_dict)
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
        return Forecast(**base, plans=tuple(_plan_forecast(
            p, i, measured, measured_engines, val,
            lambda q: recorded_predictions(q, spec_dict, src, tgt, alpha, scale)) for i, p in enumerate(proposals)))
    if family == "sdpa" and src.key == "h200":
        val = _validation_for("published", "sdpa", "h200", tgt.key)
        if val is None or val.measure_this_share >= 1.0:
            return Forecast(**base, measure_this=f"no validated forecast of attention from h200 to {tgt.key}: "
                            + (val.note if val else "no published rows for it"))
        eff = _target_efficiency(tgt.key, _dtype_published(spec_dict))
        if eff is None or abs(eff - 1.0) > DISAGREEMENT:
            return Forecast(**base, measure_this=f"the transfer (efficiency {eff}) and the peak ratio disagree by "
                            f"more than {DISAGREEMENT:.0%} on {tgt.key}")
        return Forecast(**base, plans=tuple(_plan_forecast(
            p, i, measured, measured_engines, val,
            lambda q: _recorded_as_published(q, spec_dict, src, tgt, eff)) for i, p in enumerate(proposals)))
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


def _dtype_published(spec: Mapping[str, Any]) -> str:
    return "fp8" if "fp8" in _dtype(spec) else "bfloat16"


@lru_cache(maxsize=16)
def _target_efficiency(tgt_key: str, dtype: str) -> float | None:
    rows = load_published()
    pairs = [(s, t) for s, t in _published_pairs(rows, "h200", tgt_key) if s.data_type == dtype]
    if not pairs:
        return None
    facts = load_gpu_facts()
    vals = [t.time_ms / published_predictions(s, facts[tgt_key], facts["h200"], None)[0]["peak_ratio"]
            for s, t in pairs]
    return statistics.median(vals)


def _recorded_as_published(plan: Mapping[str, Any], spec: Mapping[str, Any], src: GpuFacts, tgt: GpuFacts,
                           eff: float) -> tuple[dict[str, float], dict[str, str]]:
    pred, notes = recorded_predictions(plan, spec, src, tgt, 1.0, 1.0)
    dtype = _dtype_published(spec)
    ps, pt = src.published_peak(dtype) or 1.0, tgt.published_peak(dtype) or tgt.peak_tflops(dtype) or 1.0
    pred["peak_ratio"] = float(plan["median_ms"]) * ps / pt
    pred["transfer"] = pred["peak_ratio"] * eff
    notes["transfer"] = (f"NVIDIA's published peak ratio ({ps:g} -> {pt:g}) times {tgt.key}'s efficiency relative "
                         f"to H200 ({eff:.3f}, the median over NVIDIA's published {dtype} rows)")
    return pred, notes


@lru_cache(maxsize=4)
def _fit_pairs_all(src_key: str, tgt_key: str) -> tuple[float, float]:
    facts = load_gpu_facts()
    src, tgt = facts[src_key], facts[tgt_key]
    items = []
    for _, a, b in _recorded_pairs():
        s_rec, t_rec = (a, b) if src_key == "h100" else (b, a)
        p, q = _best(s_rec), _best(t_rec)
        if p and q:
            items.append((p, q, s_rec["spec"], src, tgt))
    return _fit_pairs(items, None)


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
    others = [pred[k] for k in ("roofline", "peak_ratio") if k in pred]
    spread = max(abs(pred["transfer"] / o - 1.0) for o in others) if others else 0.0
    if spread > DISAGREEMENT and min(abs(pred["transfer"] / o - 1.0) for o in others) > DISAGREEMENT:
        return _measure(p, rank, f"the predictors disagree by more than {DISAGREEMENT:.0%}", pred, notes)
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
    worst = max(vals, key=lambda r: r.mape["transfer"])
    measured = _ok_plans(rec)
    ranked = sorted((p for p in rec["plans"] if p.get("heuristic_rank") is not None),
                    key=lambda p: int(p["heuristic_rank"]))
    engines = {int(p.get("engine_id", -1)) for p in measured.values()}
    beta = _sm_beta(None)
    return Forecast(**base, plans=tuple(_plan_forecast(p, i, measured, engines, worst,
                                                       lambda q: sm_predictions(q, spec_dict, full, sms, src, beta))
                                        for i, p in enumerate(ranked)))


def forecast_many(spec: Any, targets: Iterable[Any], source: Any = None) -> list[Forecast]:
    """:func:`forecast` for several targets from one source."""
    return [forecast(spec, t, source) for t in targets]
