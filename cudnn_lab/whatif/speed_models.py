"""The forecast's predictors and the measured data they read (issue 35): same-plan transfer, roofline, and the naive
baselines, for recorded H100/H200 plans, SM carve-outs and NVIDIA's published attention rows.

:mod:`cudnn_lab.whatif.speed` answers with them; :mod:`cudnn_lab.whatif.speed_validation` checks them on data that
ships. Each predictor returns its times with a note of what it assumed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from cudnn_lab.errors import DataError, PathError
from cudnn_lab.whatif.gpu_facts import GpuFacts, load_gpu_facts
from cudnn_lab.whatif.published import PublishedRow

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
RECORDED_DIR = DATA_DIR / "recorded"
SCALING_DIR = DATA_DIR / "whatif" / "sm_scaling"
DISAGREEMENT = 0.25
PREDICTORS = ("transfer", "roofline", "same", "peak_ratio", "bandwidth_ratio")
#: The target's datasheet roofline time (predictor (b) of issue 35): a lower bound, in every predictions dict beside
#: the predictors; not in the table (a bound is not a forecast). "same", "peak_ratio", "bandwidth_ratio" and the
#: roofline *ratio* ("roofline", Habitat-style) are naive baselines: shown, never consulted by :func:`disagreement`.
BOUND = "roofline_bound"
#: The predictors that vote in :func:`disagreement` besides the bound (NVIDIA's GEMM estimator, where installed).
VOTERS = ("nvidia_estimator_ratio",)
_BOUND_NOTE = ("the target's datasheet roofline (FLOPs at the tensor peak; bytes beyond its L2 at HBM bandwidth): a "
               "lower bound, so a transfer slower than it agrees with it")


# ------------------------------------------------------------------------------------------------------- predictors
def _bytes_and_flops(plan: Mapping[str, Any]) -> tuple[float, float]:
    """The plan's compulsory bytes and FLOPs as the kit recorded them (GB/s and TFLOP/s times its median time)."""
    ms = float(plan["median_ms"])
    return float(plan.get("gbps") or 0.0) * ms * 1e6, float(plan.get("tflops") or 0.0) * ms * 1e9


def _roof_ms(flops: float, nbytes: float, peak_tflops: float, gbps: float) -> float:
    return max(flops / (peak_tflops * 1e9), nbytes / (gbps * 1e6))


def bound_ms(flops: float, nbytes: float, facts: GpuFacts, dtype: str, share: float = 1.0) -> float:
    """The datasheet roofline time on ``facts`` (``share`` of its SMs): the FLOPs at the dense tensor peak, and the
    bytes at HBM bandwidth where they exceed its L2 (the kit and NVIDIA time with a warm L2); 0 where unknown."""
    peak = (facts.peak_tflops(dtype) or 0.0) * share
    compute = flops / (peak * 1e9) if peak > 0 else 0.0
    in_l2 = facts.l2_mib is not None and nbytes <= facts.l2_mib * 2**20
    memory = nbytes / (float(facts.hbm_gbps) * 1e6) if facts.hbm_gbps and not in_l2 else 0.0
    return max(compute, memory)


def disagreement(pred: Mapping[str, float]) -> str:
    """Why the transfer is not given as a number ("" when it is): it predicts faster than the target's datasheet
    roofline bound by more than :data:`DISAGREEMENT`, or a voting predictor (:data:`VOTERS`) differs from it by more.
    Slower than the bound is consistent with it; the naive baselines never vote."""
    t = pred["transfer"]
    bound = pred.get(BOUND, 0.0)
    if bound > 0 and t < (1 - DISAGREEMENT) * bound:
        return (f"the transfer ({t:.4g} ms) is faster than the target's datasheet roofline bound ({bound:.4g} ms) "
                f"by more than {DISAGREEMENT:.0%}")
    for k in VOTERS:
        if k in pred and abs(t / pred[k] - 1.0) > DISAGREEMENT:
            return f"the transfer and {k} ({pred[k]:.4g} ms) disagree by more than {DISAGREEMENT:.0%}"
    return ""


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
    pred[BOUND] = bound_ms(flops, nbytes, tgt, dtype)
    notes = {"same": "the source time unchanged", BOUND: _BOUND_NOTE,
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


#: (e, p, q) of the carve-out model when nothing was fitted: per-SM efficiency, blend exponent, floor share
SM_DEFAULT = (0.95, 2.0, 0.8)


def sm_predictions(row: Mapping[str, Any], spec: Mapping[str, Any], full: int, sms: int,
                   src: GpuFacts, fit: tuple[float, float, float] | None = None
                   ) -> tuple[dict[str, float], dict[str, str]]:
    """Every predictor's time for one plan moved from the whole GPU (``full`` SMs) to ``sms`` SMs.

    The transfer: the plan's FLOPs at a per-SM efficiency ``e`` of the SM's share of the tensor peak on the SMs its
    tile waves keep busy (tiles / ceil(tiles / SMs)), blended (exponent ``p``) with a floor of ``q`` times the whole
    GPU's time (what SMs do not buy: latency, memory, the epilogue); ``fit`` = (e, p, q), fitted leave-one-plan-out."""
    t = float(row["median_ms"])
    m = _memory_share(row, src)
    tiles = _tiles(spec, str(row.get("tile") or ""))
    e, p, q = fit if fit is not None else SM_DEFAULT
    _, flops = _bytes_and_flops(row)
    per_sm = (src.peak_tflops(_dtype(spec)) or 1.0) / float(src.sm_count or full)
    busy = tiles / math.ceil(tiles / sms) if tiles else float(sms)
    how = (f"{tiles} tiles in waves keep {busy:.1f} of {sms} SMs busy" if tiles
           else "tile count unknown: every SM counted busy")
    compute = flops / (e * per_sm * 1e9 * busy) / t if flops > 0 else full / sms
    pred = {"same": t, "peak_ratio": t * full / sms, "bandwidth_ratio": t,
            "transfer": t * (compute ** p + q ** p) ** (1 / p), "roofline": t * full / sms if m < 1 else t,
            BOUND: bound_ms(flops, _bytes_and_flops(row)[0], src, _dtype(spec), sms / float(src.sm_count or full))}
    notes = {"transfer": (f"{how}; the FLOPs at {e:.0%} of the SM's share of the tensor peak, blended (p={p:g}) "
                          f"with a floor of {q:g}x the whole GPU's time (e, p, q fitted leave-one-plan-out on the "
                          "shipped carve-out runs)"),
             "peak_ratio": "time scales with 1/SMs", "bandwidth_ratio": "bandwidth is the whole GPU's: unchanged",
             "same": "the whole GPU's time", "roofline": "compute roof scales with SMs, memory roof unchanged",
             BOUND: _BOUND_NOTE + " (the tensor peak scaled to the SMs kept)"}
    return pred, notes


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
            "transfer": t * ps / pt * (efficiency if efficiency is not None else 1.0),
            BOUND: bound_ms(src_row.flops, nbytes, tgt, src_row.data_type)}
    notes = {BOUND: _BOUND_NOTE, "peak_ratio": f"time scales with NVIDIA's published peak ({ps:g} -> {pt:g} TFLOP/s)",
             "transfer": (f"peak ratio times the target's efficiency relative to the source ({efficiency:.3f}), the "
                          "mean over the two other published rows nearest in shape of the same dtype, pass and head "
                          "dim (leave-one-out)"
                          if efficiency is not None else "peak ratio (no efficiency factor available)"),
             "roofline": "the ratio of the two datasheet rooflines", "same": "the source time unchanged",
             "bandwidth_ratio": "time scales with HBM bandwidth"}
    return pred, notes


