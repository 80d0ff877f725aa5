"""The one definition of every derived number: the heuristic's pick, the best plan, regret, throughput, the roofline.

Two shapes of input share these rules. A *plan table* is ``RunResult.plans`` (one run, ``PLAN_COLUMNS``); a *sweep
frame* is what ``cl.sweep`` or ``load_results`` of a store returns (the plan columns plus ``sweeps.POINT_COLUMNS``
and ``spec_<field>`` columns, one row per plan per point). Plots, the report, the CLI and the Lab call these rather
than restating them, so "pick", "best" and "regret" mean the same thing everywhere.

- pick: the first plan in the heuristic's order that ran (what cuDNN itself would run).
- best: the fastest plan that passes cuDNN's tolerance band (unchecked counts as passing); the fastest plan if none
  passes, which is then never called best (:func:`none_passed`: say none passed).
- regret: pick's median over best's median (1.0 = the heuristic chose the fastest).
- throughput: FLOPs / median -> TFLOP/s, minimal bytes / median -> GB/s.
- roofline: ridge = peak TFLOP/s / bandwidth (FLOP/byte where the roofs meet); roof(I) = min(peak, bandwidth * I).
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard
from ..errors import OptionError
from .anatomy import is_proposed

__all__ = ["BASELINE_TITLES", "baseline_lines", "is_finite", "is_missing", "is_set", "cell_text", "tflops", "gbps",
           "throughput", "intensity", "ridge", "roof",
           "pct_of_roof", "ran", "timed", "pick", "best", "none_passed", "tied_with_best", "TIE_REL", "regret",
           "point_key",
           "sweep_ran", "sweep_chosen",
           "sweep_regret", "row_tflops", "row_gbps", "row_intensity", "WHICH"]

#: Plans whose medians differ by less than this share are tied (a repeated run may name either as best).
TIE_REL = 0.03
#: Which plan of each sweep point a figure draws.
WHICH: tuple[str, ...] = ("pick", "best", "all")


# ------------------------------------------------------------------------------------------------------ cells

#: The PyTorch baselines a result's ``torch`` dict may hold (``<name>_ms``), with the titles plots give them: the
#: eager op with cudnn.benchmark off and on, and a family's extra baselines (gpu/baseline.py EXTRA_BASELINES).
BASELINE_TITLES: dict[str, str] = {"benchmark_off": "PyTorch", "benchmark_on": "cudnn.benchmark",
                                   "dense_gemm": "dense GEMM, same FLOPs", "grouped_mm": "torch._grouped_mm",
                                   "sdpa_flash": "PyTorch flash", "sdpa_efficient": "PyTorch memory-efficient",
                                   "sdpa_cudnn": "PyTorch cuDNN", "sdpa_math": "PyTorch math"}


def baseline_lines(torch_info: Any) -> list[tuple[str, str, float]]:
    """(name, title, median ms) of every PyTorch baseline measured in a result's ``torch`` dict, in
    :data:`BASELINE_TITLES`' order, then any other ``<name>_ms`` under its own name."""
    info = torch_info or {}
    names = [k[:-3] for k in info if k.endswith("_ms") and not k.endswith("_iqr_ms")]
    order = [n for n in BASELINE_TITLES if n in names] + sorted(n for n in names if n not in BASELINE_TITLES)
    return [(n, BASELINE_TITLES.get(n, n.replace("_", " ")), float(info[f"{n}_ms"])) for n in order
            if is_finite(info[f"{n}_ms"]) and float(info[f"{n}_ms"]) > 0]


def is_finite(value: Any) -> TypeGuard[float]:
    """Whether a cell holds a finite number (None, NA, text and bools count as not)."""
    if isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return False


def is_missing(value: Any) -> bool:
    """True for a missing cell (None, NaN, NA); False for anything else, a list cell pandas cannot judge too."""
    import pandas as pd

    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def is_set(value: Any) -> bool:
    """True for a set flag; False for False, None and NA (rows of failed points have no flags)."""
    return not is_missing(value) and bool(value)


def cell_text(value: Any) -> str | None:
    """A cell as text, or None when missing."""
    return None if is_missing(value) else str(value)


# ------------------------------------------------------------------------------------------------ throughput

def tflops(flops: Any, ms: Any) -> float | None:
    """TFLOP/s of ``flops`` done in ``ms`` milliseconds (None when either is missing or ms is not positive)."""
    if not (is_finite(flops) and is_finite(ms)) or float(ms) <= 0:
        return None
    return float(flops) / (float(ms) * 1e-3) / 1e12


def gbps(nbytes: Any, ms: Any) -> float | None:
    """GB/s of ``nbytes`` moved in ``ms`` milliseconds (None when either is missing or ms is not positive)."""
    if not (is_finite(nbytes) and is_finite(ms)) or float(ms) <= 0:
        return None
    return float(nbytes) / (float(ms) * 1e-3) / 1e9


def throughput(flops: Any, nbytes: Any, ms: Any) -> tuple[float | None, float | None]:
    """(TFLOP/s, GB/s) of a problem of ``flops`` and minimal ``nbytes`` that took ``ms``."""
    return tflops(flops, ms), gbps(nbytes, ms)


def intensity(flops: Any, nbytes: Any) -> float | None:
    """Arithmetic intensity in FLOP/byte (None without positive bytes)."""
    if not (is_finite(flops) and is_finite(nbytes)) or float(nbytes) <= 0:
        return None
    return float(flops) / float(nbytes)


def _positive(value: Any) -> float | None:
    return float(value) if is_finite(value) and float(value) > 0 else None


def ridge(peak_tflops: Any, bandwidth_gbps: Any) -> float | None:
    """FLOP/byte where the memory roof meets the compute roof (None unless both ceilings are positive numbers)."""
    peak, bw = _positive(peak_tflops), _positive(bandwidth_gbps)
    return peak * 1e3 / bw if peak and bw else None


def roof(at_intensity: Any, peak_tflops: Any, bandwidth_gbps: Any) -> float | None:
    """The attainable TFLOP/s at an arithmetic intensity: min(compute roof, bandwidth x intensity), from the ceilings
    that are known (None when neither is, or the intensity is not a positive number)."""
    x, peak, bw = _positive(at_intensity), _positive(peak_tflops), _positive(bandwidth_gbps)
    if x is None:
        return None
    bounds = [v for v in (peak, bw * x / 1e3 if bw else None) if v]
    return min(bounds) if bounds else None


def pct_of_roof(rate_tflops: Any, at_intensity: Any, peak_tflops: Any, bandwidth_gbps: Any) -> float | None:
    """The share (in %) of the roof at this intensity that a measured TFLOP/s reaches."""
    bound = roof(at_intensity, peak_tflops, bandwidth_gbps)
    if bound is None or not is_finite(rate_tflops):
        return None
    return 100.0 * float(rate_tflops) / bound


# ------------------------------------------------------------------------------------------------ plan tables

def ran(plans: Any) -> Any:
    """Plans that ran (status ok)."""
    return plans[plans["status"] == "ok"]


def timed(plans: Any) -> Any:
    """Plans that ran and have a positive median, fastest first (ties broken by the heuristic's order)."""
    import pandas as pd

    ok = ran(plans)
    median = pd.to_numeric(ok["median_ms"], errors="coerce")
    ok = ok[median.notna() & (median > 0)]
    return ok.sort_values(["median_ms", "heuristic_rank"], kind="stable").reset_index(drop=True)


def pick(plans: Any) -> Any | None:
    """The heuristic's pick: the first plan in the heuristic's order that ran (a Series), or None. Configurations
    sampled beyond the proposals (``proposed`` False) are never the pick."""
    ok = ran(plans)
    if "proposed" in ok.columns:
        ok = ok[ok["proposed"].astype(object).map(is_proposed).astype(bool)]
    ok = ok.sort_values("heuristic_rank", kind="stable", na_position="last")
    return None if ok.empty else ok.iloc[0]


def _fails_band(value: Any) -> bool:
    """A pass_cudnn cell that says 'failed' (NA: not checked, counts as passing)."""
    return cell_text(value) is not None and not is_set(value)


def best(plans: Any) -> Any | None:
    """The fastest plan passing cuDNN's band (unchecked counts as passing), else the fastest that ran; or None.

    Plans within the measured spread of it are as good: a repeated run may name any of them (see
    :func:`tied_with_best`); only a plan more than ``TIE_REL`` faster than the others is a clear winner.
    """
    ok = ran(plans)
    if ok.empty:
        return None
    order = ok.assign(_fails=ok["pass_cudnn"].map(_fails_band) if "pass_cudnn" in ok.columns else False)
    order = order.sort_values(["_fails", "median_ms"], kind="stable", na_position="last")
    return order.drop(columns="_fails").iloc[0]


def none_passed(plans: Any) -> bool:
    """True when plans ran and every one failed cuDNN's band: then :func:`best` is only the fastest, and nothing may
    be called the best plan (say none passed)."""
    ok = ran(plans)
    return bool(not ok.empty and "pass_cudnn" in ok.columns and ok["pass_cudnn"].map(_fails_band).all())


def tied_with_best(plans: Any, rel: float | None = None) -> list[str]:
    """Names of the plans tied with :func:`best` (best first, then by median): on the same side of cuDNN's band,
    and either within ``rel`` (``TIE_REL``, 3%) of its median or with overlapping spreads (median +- IQR/2 ranges
    meet). One name: a clear winner; none: nothing ran."""
    b = best(plans)
    if b is None or not is_finite(b["median_ms"]):
        return []
    rel = TIE_REL if rel is None else rel
    b_ms, b_top, fails = float(b["median_ms"]), float(b["median_ms"]) + _half_iqr(b), _fails_band(b.get("pass_cudnn"))
    tied: list[tuple[float, str]] = []
    for _, row in ran(plans).iterrows():
        if str(row["plan"]) == str(b["plan"]) or not is_finite(row["median_ms"]) \
                or _fails_band(row.get("pass_cudnn")) != fails:
            continue
        ms = float(row["median_ms"])
        if ms <= b_ms * (1 + rel) or ms - _half_iqr(row) <= b_top:
            tied.append((ms, str(row["plan"])))
    return [str(b["plan"])] + [name for _, name in sorted(tied)]


def _half_iqr(row: Any) -> float:
    value = row.get("iqr_ms") if hasattr(row, "get") else None
    return float(value) / 2 if is_finite(value) else 0.0


def regret(plans: Any) -> float | None:
    """Pick's median over best's median (1.0 = the heuristic chose the fastest); None when it cannot be told."""
    p, b = pick(plans), best(plans)
    if p is None or b is None or not is_finite(p["median_ms"]) or not is_finite(b["median_ms"]) \
            or float(b["median_ms"]) <= 0:
        return None
    return float(p["median_ms"]) / float(b["median_ms"])


# ------------------------------------------------------------------------------------------------ sweep frames

def point_key(frame: Any) -> str:
    """The column that tells a sweep's points apart."""
    return "point_id" if "point_id" in frame.columns else "spec"


def sweep_ran(frame: Any) -> Any:
    """Rows of plans that ran with a positive median, in points that ran (a missing column counts as passing)."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty or "median_ms" not in frame.columns:
        return pd.DataFrame()
    keep = pd.Series(True, index=frame.index)
    if "point_status" in frame.columns:
        keep &= frame["point_status"].map(cell_text) == "ok"
    if "status" in frame.columns:
        keep &= frame["status"].map(cell_text) == "ok"
    keep &= frame["median_ms"].map(is_finite) & (pd.to_numeric(frame["median_ms"], errors="coerce") > 0)
    return frame[keep].copy()


def sweep_chosen(frame: Any, which: str) -> Any:
    """One row per point that ran: its pick ('pick'), its best plan ('best'); or every plan that ran ('all').

    The frame's is_pick / is_best flags (written by the sweep with :func:`pick` and :func:`best`) decide; without
    them the same rules are applied here.
    """
    if which not in WHICH:
        raise OptionError("which", which, "must be 'pick', 'best' or 'all'")
    rows = sweep_ran(frame)
    if rows.empty or which == "all":
        return rows
    key = point_key(rows)
    flag = "is_pick" if which == "pick" else "is_best"
    if flag in rows.columns:
        chosen = rows[rows[flag].map(is_set)]
    elif which == "pick" and "heuristic_rank" in rows.columns:
        chosen = rows.sort_values("heuristic_rank", kind="stable", na_position="last")
    else:
        fails = rows["pass_cudnn"].map(_fails_band) if "pass_cudnn" in rows.columns else False
        chosen = rows.assign(_fails=fails).sort_values(["_fails", "median_ms"], kind="stable").drop(columns="_fails")
    return chosen.drop_duplicates(subset=[key], keep="first")


def sweep_regret(frame: Any) -> Any:
    """One row per point that ran: the pick's row with ``regret``, ``best_plan`` and ``best_ms`` added."""
    import pandas as pd

    picks, bests = sweep_chosen(frame, "pick"), sweep_chosen(frame, "best")
    if picks.empty or bests.empty:
        return pd.DataFrame()
    key = point_key(picks)
    best_by = bests.set_index(key)
    rows = picks[picks[key].isin(best_by.index)].copy()
    best_ms = rows[key].map(best_by["median_ms"]).astype("float64")
    rows["regret"] = rows["median_ms"].astype("float64") / best_ms
    rows["best_plan"] = rows[key].map(best_by["plan"].map(cell_text)) if "plan" in best_by else None
    rows["best_ms"] = best_ms
    return rows


def _row_rate(row: Any, column: str, amount: str, rate: Any) -> float | None:
    value = row.get(column)
    if is_finite(value):
        return float(value)
    derived: float | None = rate(row.get(amount), row.get("median_ms"))
    return derived


def row_tflops(row: Any) -> float | None:
    """A sweep row's TFLOP/s: its column, else the point's FLOPs over its median."""
    return _row_rate(row, "tflops", "flops", tflops)


def row_gbps(row: Any) -> float | None:
    """A sweep row's GB/s: its column, else the point's minimal bytes over its median."""
    return _row_rate(row, "gbps", "min_bytes", gbps)


def row_intensity(row: Any) -> float | None:
    """A sweep row's arithmetic intensity (FLOP/byte at minimal bytes)."""
    return intensity(row.get("flops"), row.get("min_bytes"))
