"""Plotly figures of one run: latency per plan, heuristic vs measured order, numerical error, roofline.

Every function is pure: it reads a :class:`~cudnn_lab.results.RunResult` and returns a new ``plotly.graph_objects
.Figure`` (it never shows it). Each figure's title names the problem (``spec.label()``), the GPU and the cuDNN
version; hover text names the plan, its engine and knobs, its median and IQR. ``selected`` (a plan name) draws that
plan with a thicker outline and larger marker in every figure. An engine keeps one colour across figures
(:func:`engine_colors`). Plans that did not run (status other than ``ok``, or no median) are left out; a result where
no plan ran gives a figure that says so instead of an exception.

plotly is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import plotly.graph_objects as go

    from .results import RunResult

__all__ = ["engine_colors", "latency_bar", "heuristic_vs_measured", "errors_per_plan", "error_histogram",
           "roofline", "SELECTED_LINE_WIDTH", "LINE_WIDTH"]

#: Outline width of the selected plan's bar or marker, and of every other one.
SELECTED_LINE_WIDTH = 3.0
LINE_WIDTH = 0.5
_MARKER_SIZE, _SELECTED_MARKER_SIZE = 10, 16
_SELECTED_LINE_COLOR, _LINE_COLOR = "black", "rgba(40, 40, 40, 0.5)"
PASS_COLOR, FAIL_COLOR, UNKNOWN_COLOR = "#2ca02c", "#d62728", "#7f7f7f"


# --------------------------------------------------------------------------------------------------- shared parts

def engine_colors(frame: Any) -> dict[int, str]:
    """One colour per engine id of a plan table (or a RunResult), the same in every figure drawn from it.

    Engines are numbered in ascending id order over every row (plans that failed included), so which plans ran
    does not change an engine's colour.
    """
    from plotly.colors import qualitative

    plans = getattr(frame, "plans", frame)
    palette = list(qualitative.Plotly) + list(qualitative.Dark24) + list(qualitative.Light24)
    ids = sorted({int(e) for e in plans["engine_id"].dropna()})
    return {eid: palette[i % len(palette)] for i, eid in enumerate(ids)}


def _ran(result: RunResult) -> pd.DataFrame:
    """Plans that ran and were timed, fastest first (ties broken by the heuristic's order)."""
    plans = result.plans
    ran = plans[(plans["status"] == "ok") & plans["median_ms"].notna()]
    return ran.sort_values(["median_ms", "heuristic_rank"], kind="stable").reset_index(drop=True)


def _cudnn_version(value: Any) -> str:
    """cuDNN's backend version number as text: 91900 -> '9.19.0 (91900)', 8907 -> '8.9.7 (8907)'."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value) if value not in (None, "") else "unknown"
    if v >= 90000:
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100} ({v})"
    if v >= 1000:
        return f"{v // 1000}.{v % 1000 // 100}.{v % 100} ({v})"
    return str(v)


def _title(result: RunResult, what: str, extra: str = "") -> dict[str, Any]:
    device = result.device or {}
    sub = f"{device.get('gpu', 'unknown GPU')}, cuDNN {_cudnn_version(device.get('cudnn_backend'))}"
    if extra:
        sub += f"; {extra}"
    return {"text": f"{what}: {result.spec.label()}<br><sup>{sub}</sup>", "x": 0.0, "xanchor": "left"}


def _fmt(value: Any, spec: str, unit: str = "") -> str:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "n/a"
    if math.isnan(v):
        return "n/a"
    return f"{v:{spec}}{unit}"


def _hover(row: Any, *extra: str) -> str:
    """Plan, engine, knobs, median and IQR (in us), then any extra lines."""
    lines = [f"<b>{row['plan']}</b>", f"engine {_fmt(row['engine_id'], '.0f')}", f"knobs {row['knobs'] or '{}'}",
             f"median {_fmt(row['median_ms'] * 1e3 if _finite(row['median_ms']) else None, '.2f', ' us')}",
             f"IQR {_fmt(row['iqr_ms'] * 1e3 if _finite(row['iqr_ms']) else None, '.2f', ' us')}", *extra]
    return "<br>".join(lines)


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _outline(plans: Any, selected: str | None) -> dict[str, Any]:
    """Marker outline per point: thick and dark for the selected plan."""
    chosen = [p == selected for p in plans]
    return {"width": [SELECTED_LINE_WIDTH if c else LINE_WIDTH for c in chosen],
            "color": [_SELECTED_LINE_COLOR if c else _LINE_COLOR for c in chosen]}


def _sizes(plans: Any, selected: str | None) -> list[int]:
    return [_SELECTED_MARKER_SIZE if p == selected else _MARKER_SIZE for p in plans]


def _engine_groups(frame: pd.DataFrame) -> list[tuple[Any, pd.DataFrame]]:
    """Rows grouped by engine id in ascending order (so legends list engines in the colour order)."""
    return [(eid, frame[frame["engine_id"] == eid]) for eid in sorted(frame["engine_id"].dropna().unique())]


def _empty(fig: go.Figure, text: str) -> go.Figure:
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def _no_plan_text(result: RunResult) -> str:
    n = len(result.plans)
    return f"no plan ran ({n} proposed); see .plans['status'] and .plans['error']"


def _pick_and_best(result: RunResult, ran: pd.DataFrame) -> tuple[str | None, str | None]:
    """Names of the heuristic's pick and the best plan (RunResult's rules), if they are among ``ran``."""
    names = set(ran["plan"])
    out: list[str | None] = []
    for attr in ("heuristic_pick", "best"):
        try:
            name = getattr(result, attr)["plan"]
        except Exception:  # noqa: BLE001 - no plan ran: nothing to mark
            name = None
        out.append(name if name in names else None)
    return out[0], out[1]


# --------------------------------------------------------------------------------------------------- figures

def latency_bar(result: RunResult, selected: str | None = None) -> go.Figure:
    """One bar per plan that ran, sorted by median latency (us), with +-IQR/2 error bars, coloured by engine.

    The heuristic's pick and the best plan (fastest within cuDNN's tolerance band) carry text annotations;
    PyTorch's latency with ``cudnn.benchmark`` off and on (where measured) are dashed horizontal lines.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    ran = _ran(result)
    n, n_ok = len(result.plans), len(ran)
    fig.update_layout(title=_title(result, "Latency per plan", f"{n_ok} of {n} plans ran"),
                      template="plotly_white", barmode="overlay", legend_title_text="engine")
    if ran.empty:
        return _empty(fig, _no_plan_text(result))

    colors = engine_colors(result.plans)
    order = list(ran["plan"])
    for eid, group in _engine_groups(ran):
        fig.add_trace(go.Bar(
            x=list(group["plan"]), y=list(group["median_ms"] * 1e3), name=f"engine {int(eid)}",
            error_y={"type": "data", "symmetric": True, "visible": True,
                     "array": [v * 1e3 / 2 if _finite(v) else 0.0 for v in group["iqr_ms"]]},
            marker={"color": colors[int(eid)], "line": _outline(group["plan"], selected)},
            hovertext=[_hover(row, f"timing {row['timing_mode'] or 'n/a'}, {_fmt(row['samples'], '.0f')} samples")
                       for _, row in group.iterrows()],
            hoverinfo="text", customdata=list(group["plan"])))

    top = float((ran["median_ms"] + ran["iqr_ms"].fillna(0) / 2).max() * 1e3)
    labels = {"benchmark_off_ms": "PyTorch (cudnn.benchmark off)", "benchmark_on_ms": "PyTorch (cudnn.benchmark on)"}
    for (key, label), pos in zip(labels.items(), ("top left", "top right")):
        ms = (result.torch or {}).get(key)
        if _finite(ms):
            fig.add_hline(y=float(ms) * 1e3, line_dash="dash", line_color="#444", line_width=1.5, name=label,
                          annotation_text=f"{label}: {float(ms) * 1e3:.1f} us", annotation_position=pos)
            top = max(top, float(ms) * 1e3)

    low = float(ran["median_ms"].min() * 1e3)
    log_y = low > 0 and top / low > 20  # slow fallback engines would flatten every other bar
    pick, best = _pick_and_best(result, ran)
    by_plan = ran.set_index("plan")
    for name, text, ay in ((pick, "heuristic pick", -30), (best, "best", -55)):
        if name is None:
            continue
        row = by_plan.loc[name]
        y = float(row["median_ms"] + (row["iqr_ms"] if _finite(row["iqr_ms"]) else 0.0) / 2) * 1e3
        fig.add_annotation(x=name, y=math.log10(y) if log_y and y > 0 else y, text=text, showarrow=True,
                           arrowhead=2, ax=0, ay=ay, font={"size": 12}, bgcolor="rgba(255,255,255,0.8)")

    # Many plans: names go to the hover text (they would take the whole figure as tick labels).
    many = len(order) > 16
    fig.update_xaxes(title_text="plan, sorted by median latency" + (" (hover for names)" if many else ""),
                     type="category", categoryorder="array", categoryarray=order, showticklabels=not many)
    if log_y:
        fig.update_yaxes(title_text="median latency per call (us, log)", type="log",
                         range=[math.log10(low * 0.7), math.log10(top * 3)])
    else:
        fig.update_yaxes(title_text="median latency per call (us)", range=[0, top * 1.3 if top > 0 else 1])
    return fig


def heuristic_vs_measured(result: RunResult, selected: str | None = None) -> go.Figure:
    """Heuristic rank (x) against measured rank by median (y, 1 = fastest) for the plans that ran.

    Both ranks count only plans that ran, from 1, so a heuristic that orders plans exactly by speed puts every
    point on the dashed diagonal; points above it ran slower than the heuristic expected.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    ran = _ran(result)
    fig.update_layout(title=_title(result, "Heuristic order vs measured order", f"{len(ran)} plans ran"),
                      template="plotly_white", legend_title_text="engine", legend_itemsizing="constant")
    if ran.empty:
        return _empty(fig, _no_plan_text(result))

    ran = ran.copy()
    ran["measured"] = range(1, len(ran) + 1)  # _ran sorts by median
    ran["heuristic"] = ran["heuristic_rank"].astype("float64").rank(method="first", na_option="bottom")
    ran["heuristic"] = ran["heuristic"].astype(int)
    n = len(ran)
    fig.add_trace(go.Scatter(x=[0.5, n + 0.5], y=[0.5, n + 0.5], mode="lines", name="heuristic = measured",
                             line={"dash": "dash", "color": "#999"}, hoverinfo="skip"))
    colors = engine_colors(result.plans)
    for eid, group in _engine_groups(ran):
        fig.add_trace(go.Scatter(
            x=list(group["heuristic"]), y=list(group["measured"]), mode="markers", name=f"engine {int(eid)}",
            marker={"color": colors[int(eid)], "size": _sizes(group["plan"], selected),
                    "line": _outline(group["plan"], selected)},
            hovertext=[_hover(row, f"heuristic rank {row['heuristic']} "
                                   f"(proposed at {_fmt(row['heuristic_rank'], '.0f')})",
                              f"measured rank {row['measured']}") for _, row in group.iterrows()],
            hoverinfo="text", customdata=list(group["plan"])))
    fig.update_xaxes(title_text="heuristic rank among plans that ran (1 = pick)",
                     range=[0.5, n + 0.5], dtick=max(1, n // 10))
    fig.update_yaxes(title_text="measured rank (1 = fastest median)",
                     range=[0.5, n + 0.5], dtick=max(1, n // 10))
    return fig


def errors_per_plan(result: RunResult, selected: str | None = None) -> go.Figure:
    """Relative L2 error of each plan that ran (log y), green where it passes cuDNN's band and red where not.

    Dashed lines mark the rtol of both tolerance bands for the dtype (``numerics.TOLERANCES``). A rel L2 of 0
    (exact) is drawn at the bottom as a downward triangle and an infinite one (NaN/Inf outputs) at the top as an
    upward triangle; hover text gives the true value. Plans are in the latency chart's order.
    """
    import plotly.graph_objects as go

    from .numerics import TOLERANCES, tolerance_bands

    fig = go.Figure()
    ran = _ran(result)
    fig.update_layout(title=_title(result, "Error per plan vs float64 reference"), template="plotly_white",
                      legend_title_text="cuDNN band", legend_itemsizing="constant")
    checked = ran[ran["rel_l2"].notna()]
    if checked.empty:
        return _empty(fig, _no_plan_text(result) if ran.empty else "numerics were not checked for any plan")

    bands = tolerance_bands(result.spec.dtype, result.spec.op) if result.spec.dtype in TOLERANCES else {}
    rtols = [b.rtol for b in bands.values()]
    values = checked["rel_l2"].astype("float64")
    finite_pos = values[values.map(lambda v: math.isfinite(v) and v > 0)]
    low = min([*finite_pos, *rtols], default=1e-6) / 100
    high = max([*finite_pos, *rtols, 1.0]) * 10

    def shown(v: float) -> float:
        return low if v <= 0 else (high if not math.isfinite(v) else v)

    def symbol(v: float) -> str:
        return "triangle-down" if v <= 0 else ("triangle-up" if not math.isfinite(v) else "circle")

    verdicts = checked["pass_cudnn"].astype(object).map(_verdict)
    for verdict, color in (("pass", PASS_COLOR), ("fail", FAIL_COLOR), ("unknown", UNKNOWN_COLOR)):
        group = checked[verdicts == verdict]
        if group.empty:
            continue
        rel = list(group["rel_l2"].astype("float64"))
        fig.add_trace(go.Scatter(
            x=list(group["plan"]), y=[shown(v) for v in rel], mode="markers", name=verdict,
            marker={"color": color, "symbol": [symbol(v) for v in rel], "size": _sizes(group["plan"], selected),
                    "line": _outline(group["plan"], selected)},
            hovertext=[_hover(row, f"rel L2 {row['rel_l2']:.3g}", f"max abs {_fmt(row['max_abs'], '.3g')}",
                              f"NaN {_fmt(row['nan_count'], '.0f')}, Inf {_fmt(row['inf_count'], '.0f')}",
                              f"cuDNN band: {verdict}, PyTorch band: {_verdict(row['pass_torch'])}")
                       for _, row in group.iterrows()],
            hoverinfo="text", customdata=list(group["plan"])))

    names = {"torch": "PyTorch band", "cudnn": "cuDNN band"}
    for (key, band), pos in zip(bands.items(), ("left", "right")):
        label = f"{names.get(key, key)} rtol {band.rtol:.3g}"
        fig.add_shape(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=band.rtol, y1=band.rtol,
                      line={"dash": "dash", "color": "#555" if key == "torch" else "#1f77b4", "width": 1.5},
                      name=label)
        # Annotations on a log axis take log10 of the value (shapes take the value itself).
        fig.add_annotation(xref="x domain", x=0 if pos == "left" else 1, xanchor=pos, yref="y",
                           y=math.log10(band.rtol), yanchor="bottom", text=label, showarrow=False,
                           font={"size": 11})

    many = len(ran) > 16
    fig.update_xaxes(title_text="plan, sorted by median latency" + (" (hover for names)" if many else ""),
                     type="category", categoryorder="array", categoryarray=list(ran["plan"]),
                     showticklabels=not many)
    fig.update_yaxes(title_text="relative L2 error ||out - ref|| / ||ref|| (no unit)", type="log",
                     range=[math.log10(low) - 0.3, math.log10(high) + 0.3])
    return fig


def _verdict(value: Any) -> str:
    """'pass', 'fail' or 'unknown' (NA: not checked) for a pass_torch / pass_cudnn cell."""
    import pandas as pd

    if value is None or pd.isna(value):
        return "unknown"
    return "pass" if bool(value) else "fail"


def error_histogram(result: RunResult, plan: str | None = None) -> go.Figure:
    """Histogram of one plan's element-wise log10 |out - ref| (``result.histograms[plan]``), default the pick.

    A plan without a histogram (not checked, not run, unknown name) gives a figure that says so.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    if plan is None:
        plan = _pick_and_best(result, _ran(result))[0]
    fig.update_layout(title=_title(result, f"Absolute error of {plan}" if plan else "Absolute error"),
                      template="plotly_white", showlegend=False)
    hist = (getattr(result, "histograms", None) or {}).get(plan) if plan else None
    edges = [float(e) for e in (hist or {}).get("edges", [])]
    counts = [float(c) for c in (hist or {}).get("counts", [])]
    if not hist or len(edges) != len(counts) + 1 or not counts:
        return _empty(fig, f"no error histogram for plan {plan!r}" if plan else "no plan ran, so no histogram")

    rows = result.plans[result.plans["plan"] == plan]
    row = rows.iloc[0] if not rows.empty else None
    color = UNKNOWN_COLOR
    if row is not None and _finite(row["engine_id"]):
        color = engine_colors(result.plans).get(int(row["engine_id"]), UNKNOWN_COLOR)
    head = _hover(row) if row is not None else f"<b>{plan}</b>"
    # Non-finite edges (if a producer used them) get a finite stand-in one typical bin width away.
    step = next((b - a for a, b in zip(edges, edges[1:]) if math.isfinite(a) and math.isfinite(b)), 1.0)
    fixed = list(edges)
    for i, e in enumerate(fixed):
        if not math.isfinite(e):
            fixed[i] = (fixed[i + 1] - step) if e < 0 and i + 1 < len(fixed) else fixed[i - 1] + step
    centers = [(a + b) / 2 for a, b in zip(fixed, fixed[1:])]
    widths = [b - a for a, b in zip(fixed, fixed[1:])]
    fig.add_trace(go.Bar(
        x=centers, y=counts, width=widths, marker={"color": color, "line": {"width": LINE_WIDTH,
                                                                            "color": _LINE_COLOR}},
        hovertext=[f"{head}<br>|error| in [1e{a:g}, 1e{b:g}): {int(c)} elements"
                   for a, b, c in zip(edges, edges[1:], counts)],
        hoverinfo="text", name=plan))
    fig.update_xaxes(title_text="log10 of absolute error |out - ref| (output units; -3 = 1e-3)",
                     tickvals=fixed, ticktext=[f"1e{e:g}" for e in edges])
    fig.update_yaxes(title_text="elements (count)")
    return fig


def roofline(result: RunResult, selected: str | None = None) -> go.Figure:
    """Log-log roofline: each plan that ran at (FLOP/byte, TFLOP/s) under the measured compute and memory roofs.

    Arithmetic intensity is the spec's FLOP count over its minimal bytes, so every plan shares one x and differs
    in height. Without measured ceilings (``result.ceilings`` empty) only the points are drawn, with a note.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    spec = result.spec
    ran = _ran(result)
    fig.update_layout(title=_title(result, "Roofline"), template="plotly_white", legend_itemsizing="constant")
    intensity = spec.flops() / spec.min_bytes()
    ceilings = result.ceilings or {}
    peak, bw = ceilings.get("tflops"), ceilings.get("gbps")
    peak = float(peak) if _finite(peak) and float(peak) > 0 else None
    bw = float(bw) if _finite(bw) and float(bw) > 0 else None
    ridge = peak * 1e3 / bw if peak and bw else None  # FLOP/byte where the two roofs meet
    xs = [intensity] + ([ridge] if ridge else [])
    x_lo, x_hi = min(xs) / 20, max(xs) * 20

    if bw:
        x_end = ridge if ridge else x_hi
        fig.add_trace(go.Scatter(x=[x_lo, x_end], y=[bw * x_lo / 1e3, bw * x_end / 1e3], mode="lines",
                                 name=f"memory roof ({bw:.0f} GB/s, measured)", line={"color": "#555", "width": 2},
                                 hovertemplate="memory roof: %{y:.3g} TFLOP/s at %{x:.3g} FLOP/byte<extra></extra>"))
    if peak:
        x_start = ridge if ridge else x_lo
        fig.add_trace(go.Scatter(x=[x_start, x_hi], y=[peak, peak], mode="lines",
                                 name=f"compute roof ({peak:.1f} TFLOP/s, measured)",
                                 line={"color": "#222", "width": 2},
                                 hovertemplate="compute roof: %{y:.3g} TFLOP/s<extra></extra>"))
    if not (peak or bw):
        fig.add_annotation(text="ceilings not measured", xref="paper", yref="paper", x=0.02, y=0.98,
                           showarrow=False, xanchor="left", yanchor="top", font={"size": 13})

    if ran.empty:
        fig.add_annotation(text=_no_plan_text(result), xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
    colors = engine_colors(result.plans)
    for eid, group in _engine_groups(ran):
        tflops = [float(t) if _finite(t) else spec.flops() / (float(m) * 1e-3) / 1e12
                  for t, m in zip(group["tflops"], group["median_ms"])]
        fig.add_trace(go.Scatter(
            x=[intensity] * len(group), y=tflops, mode="markers", name=f"engine {int(eid)}",
            marker={"color": colors[int(eid)], "size": _sizes(group["plan"], selected),
                    "line": _outline(group["plan"], selected)},
            hovertext=[_hover(row, f"{t:.3g} TFLOP/s, {_fmt(row['gbps'], '.3g', ' GB/s')}",
                              f"{_fmt(row['pct_of_ceiling'], '.1f', '% of roof')}")
                       for t, (_, row) in zip(tflops, group.iterrows())],
            hoverinfo="text", customdata=list(group["plan"])))
    for key, label in (("benchmark_off_ms", "PyTorch (cudnn.benchmark off)"),
                       ("benchmark_on_ms", "PyTorch (cudnn.benchmark on)")):
        ms = (result.torch or {}).get(key)
        if _finite(ms) and float(ms) > 0:
            t = spec.flops() / (float(ms) * 1e-3) / 1e12
            fig.add_trace(go.Scatter(x=[intensity], y=[t], mode="markers", name=label,
                                     marker={"symbol": "diamond-open", "size": 12, "color": "#444"},
                                     hovertext=[f"<b>{label}</b><br>{float(ms) * 1e3:.1f} us, {t:.3g} TFLOP/s"],
                                     hoverinfo="text"))

    fig.update_xaxes(title_text="arithmetic intensity (FLOP/byte)", type="log",
                     range=[math.log10(x_lo), math.log10(x_hi)])
    fig.update_yaxes(title_text="throughput (TFLOP/s)", type="log")
    return fig


# --------------------------------------------------------------------------------------------------- sweep figures
#
# Figures of a sweep frame (``cl.sweep`` or ``load_results`` of a store): the plan table's columns plus
# ``sweeps.POINT_COLUMNS`` and one ``spec_<field>`` column per spec field, one row per plan per point. Points that
# failed or were invalid, and plans that did not run, are left out (the subtitle counts them); a frame with nothing
# to draw gives a figure that says so. A size axis or colour names a spec field ('n' -> column spec_n) or a column.

_WHICH = ("pick", "best")
_WHICH_TEXT = {"pick": "heuristic's pick", "best": "best plan", "all": "every plan"}
_Y_AXES = {"median_ms": ("latency", "median latency per call (us)", 1e3),
           "tflops": ("throughput", "throughput (TFLOP/s)", 1.0),
           "gbps": ("bandwidth", "bandwidth at minimal bytes (GB/s)", 1.0)}
_NHWC_FASTER_SCALE = "RdBu"  # red: NCHW faster (ratio < 1), blue: NHWC faster (ratio > 1)


def _ratio_colorscale(zmin: float, zmax: float, scale: str = _NHWC_FASTER_SCALE) -> list[list[Any]]:
    """A diverging colour scale over [zmin, zmax] whose neutral middle colour sits at a ratio of exactly 1.

    Plotly's ``zmid`` has no effect once zmin and zmax are set, and a plain scale over [1/m, m] puts its middle at
    (1/m + m) / 2, not 1; this one maps the scale's low half onto [zmin, 1] and its high half onto [1, zmax].
    """
    from plotly.colors import get_colorscale

    stops = get_colorscale(scale)
    w = (1.0 - zmin) / (zmax - zmin)
    out: list[list[Any]] = []
    for pos, color in stops:
        at = pos * 2 * w if pos <= 0.5 else w + (pos - 0.5) * 2 * (1 - w)
        if out and at <= out[-1][0]:
            continue
        out.append([min(max(at, 0.0), 1.0), color])
    return out
_GROUP_PALETTE: list[str] = []


def _palette() -> list[str]:
    from plotly.colors import qualitative

    if not _GROUP_PALETTE:
        _GROUP_PALETTE.extend(list(qualitative.Plotly) + list(qualitative.Dark24) + list(qualitative.Light24))
    return _GROUP_PALETTE


def _is_true(value: Any) -> bool:
    """True for a set flag; False for False, None and NA (rows of failed points have no flags)."""
    import pandas as pd

    try:
        if value is None or pd.isna(value):
            return False
    except (TypeError, ValueError):
        pass
    return bool(value)


def _text(value: Any) -> str | None:
    """A cell as text, or None when missing."""
    import pandas as pd

    try:
        if value is None or pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def _point_key_col(frame: pd.DataFrame) -> str:
    return "point_id" if "point_id" in frame.columns else "spec"


def _sweep_ran(frame: Any) -> pd.DataFrame:
    """Rows of plans that ran and were timed, in points that ran (a frame without a column counts as passing it)."""
    import pandas as pd

    if frame is None or not isinstance(frame, pd.DataFrame) or frame.empty or "median_ms" not in frame.columns:
        return pd.DataFrame()
    keep = pd.Series(True, index=frame.index)
    if "point_status" in frame.columns:
        keep &= frame["point_status"].map(_text) == "ok"
    if "status" in frame.columns:
        keep &= frame["status"].map(_text) == "ok"
    keep &= frame["median_ms"].map(_finite) & (pd.to_numeric(frame["median_ms"], errors="coerce") > 0)
    return frame[keep].copy()


def _chosen(frame: Any, which: str) -> pd.DataFrame:
    """One row per point that ran: the heuristic's pick ('pick'), the best plan ('best'), or every plan ('all').

    The frame's is_pick / is_best flags decide; without the flag column, the pick is the lowest heuristic rank
    and the best the fastest plan among those passing cuDNN's band (RunResult's rules).
    """
    if which not in (*_WHICH, "all"):
        from .errors import SpecError

        raise SpecError("which", which, "must be 'pick', 'best' or 'all'")
    ran = _sweep_ran(frame)
    if ran.empty or which == "all":
        return ran
    key = _point_key_col(ran)
    flag = "is_pick" if which == "pick" else "is_best"
    if flag in ran.columns:
        chosen = ran[ran[flag].map(_is_true)]
    elif which == "pick" and "heuristic_rank" in ran.columns:
        chosen = ran.sort_values("heuristic_rank", kind="stable", na_position="last")
    else:
        # RunResult.best: the fastest plan passing cuDNN's band (unchecked counts as passing), else the fastest.
        order = ran.assign(_fails=ran["pass_cudnn"].map(lambda v: _text(v) is not None and not _is_true(v))
                           if "pass_cudnn" in ran.columns else False)
        chosen = order.sort_values(["_fails", "median_ms"], kind="stable").drop(columns="_fails")
    return chosen.drop_duplicates(subset=[key], keep="first")


def _column(frame: pd.DataFrame, name: str, role: str) -> str:
    """The column a field name means: spec_<name> if the frame has it, else the column itself."""
    from .errors import SpecError

    if not isinstance(name, str):
        raise SpecError(role, name, "must be a spec field name (e.g. 'n') or a column name")
    for col in (f"spec_{name}", name):
        if col in frame.columns:
            return col
    fields = sorted(c[len("spec_"):] for c in frame.columns if str(c).startswith("spec_"))
    raise SpecError(role, name, f"is neither a spec field of this sweep ({', '.join(fields) or 'none'}) nor a column")


def _field_name(col: str) -> str:
    return col[len("spec_"):] if col.startswith("spec_") else col


def _numeric(values: Any) -> bool:
    """Whether every value is a real number (not bool, not text)."""
    import numbers

    vals = list(values)
    return bool(vals) and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and _finite(v) for v in vals)


def _sorted_values(values: Any) -> list[Any]:
    """Distinct values, numerically sorted when they are numbers, else by their text."""
    distinct = list(dict.fromkeys(v for v in values if _text(v) is not None))
    if _numeric(distinct):
        return sorted(distinct, key=float)
    return sorted(distinct, key=str)


def _log_span(values: Any) -> bool:
    """True when the values are positive numbers spanning more than 10x."""
    vals = [float(v) for v in values] if _numeric(values) else []
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) > 10


def _plain(value: Any) -> Any:
    """A numpy scalar as its Python value (so figures hold plain ints, floats and strings)."""
    return value.item() if hasattr(value, "item") else value


def _sweep_devices(frame: Any) -> list[str]:
    """'GPU, cuDNN x.y.z (n)' for each distinct GPU and cuDNN version among the frame's rows that name one."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty or "gpu" not in frame.columns:
        return []
    out = []
    for _, row in frame.iterrows():
        gpu = _text(row["gpu"])
        if gpu is None:
            continue
        name = f"{gpu}, cuDNN {_cudnn_version(row['cudnn'] if 'cudnn' in frame.columns else None)}"
        if name not in out:
            out.append(name)
    return out


def _point_counts(frame: Any, shown: int) -> str:
    """'4 of 6 points ran; 1 failed, 1 invalid' (or '4 points') for a subtitle."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return "no points"
    key = _point_key_col(frame) if _point_key_col(frame) in frame.columns else None
    if key is None:
        return f"{shown} points"
    per_point = frame.drop_duplicates(subset=[key])
    total = len(per_point)
    statuses = (per_point["point_status"].map(_text).value_counts() if "point_status" in frame.columns
                else pd.Series(dtype=int))
    skipped = [f"{int(statuses[s])} {s}" for s in ("failed", "invalid") if s in statuses]
    text = f"{shown} of {total} points shown" if shown != total else f"{total} points"
    return text + (f"; {', '.join(skipped)}" if skipped else "")


def _sweep_title(frame: Any, what: str, extra: str = "") -> dict[str, Any]:
    """Title naming what is drawn and where: the ops, the GPU(s) and cuDNN version(s), then ``extra``."""
    import pandas as pd

    ops = []
    if isinstance(frame, pd.DataFrame) and "op" in frame.columns:
        ops = [o for o in dict.fromkeys(_text(v) for v in frame["op"]) if o]
    head = f"{what}: {', '.join(ops)}" if ops else what
    devices = _sweep_devices(_sweep_ran(frame)) or _sweep_devices(frame)
    sub = " vs ".join(devices) if devices else "unknown GPU, cuDNN unknown"
    if extra:
        sub += f"; {extra}"
    return {"text": f"{head}<br><sup>{sub}</sup>", "x": 0.0, "xanchor": "left"}


def _sweep_hover(row: Any, *extra: str) -> str:
    """Point label, plan, engine, knobs, median and IQR (in us), then any extra lines."""
    get = row.get
    med, iqr = get("median_ms"), get("iqr_ms")
    lines = [f"<b>{_text(get('label')) or _text(get('point_id')) or 'point'}</b>",
             f"plan {_text(get('plan')) or 'n/a'}, engine {_fmt(get('engine_id'), '.0f')}",
             f"knobs {_text(get('knobs')) or '{}'}",
             f"median {_fmt(float(med) * 1e3 if _finite(med) else None, '.2f', ' us')}, "
             f"IQR {_fmt(float(iqr) * 1e3 if _finite(iqr) else None, '.2f', ' us')}", *extra]
    return "<br>".join(lines)


def _row_rate(row: Any, column: str, amount: str, unit: float) -> float | None:
    """The row's rate column, or the point's amount (FLOPs or bytes) over its median when the column is empty."""
    value = row.get(column)
    if _finite(value):
        return float(value)
    total, med = row.get(amount), row.get("median_ms")
    if _finite(total) and _finite(med) and float(med) > 0:
        return float(total) / (float(med) * 1e-3) / unit
    return None


def _row_tflops(row: Any) -> float | None:
    """The row's TFLOP/s, or the point's FLOPs over its median when the column is empty."""
    return _row_rate(row, "tflops", "flops", 1e12)


def _row_gbps(row: Any) -> float | None:
    """The row's GB/s, or the point's minimal bytes over its median when the column is empty."""
    return _row_rate(row, "gbps", "min_bytes", 1e9)


def _y_value(row: Any, y: str) -> float | None:
    if y == "median_ms":
        return float(row["median_ms"]) * 1e3
    return _row_tflops(row) if y == "tflops" else _row_gbps(row)


def _shared_x_note(groups: list[tuple[Any, pd.DataFrame]], xcol: str) -> str:
    """A note when points of one line share an x (other spec fields vary): the line then zigzags."""
    if any(g[xcol].duplicated().any() for _, g in groups):
        return "points of one line share an x (other fields vary: pass color=)"
    return ""


def _annotation_x(value: Any, log: bool) -> Any:
    """An annotation's x: log10 of the value on a log axis (shapes and traces take the value itself)."""
    return math.log10(float(value)) if log else value


def _group_colors(values: list[Any], col: str | None, frame: pd.DataFrame) -> dict[Any, str]:
    if col == "engine_id":
        colors = engine_colors(frame)
        return {v: colors.get(int(v), UNKNOWN_COLOR) if _finite(v) else UNKNOWN_COLOR for v in values}
    pal = _palette()
    return {v: pal[i % len(pal)] for i, v in enumerate(values)}


def _groups(rows: pd.DataFrame, col: str | None) -> list[tuple[Any, pd.DataFrame]]:
    """Rows split by the value of ``col`` (sorted; one group, key None, without a column)."""
    if col is None:
        return [(None, rows)]
    return [(v, rows[rows[col].map(_plain) == v]) for v in _sorted_values(rows[col].map(_plain))]


def _group_name(col: str | None, value: Any) -> str:
    if col is None:
        return "all points"
    if col == "engine_id" and _finite(value):
        return f"engine {int(float(value))}"
    return f"{_field_name(col)}={value}" if _numeric([value]) else str(value)


def sweep_latency(frame: Any, x: str, *, color: str | None = None, y: str = "median_ms",
                  which: str = "pick") -> go.Figure:
    """Latency (us), or with ``y='tflops'`` TFLOP/s (``'gbps'``: GB/s), against a spec field ``x`` of a sweep.

    One line per value of ``color`` (a spec field such as 'layout' or 'dtype', or a column such as 'plan' or
    'engine_id'), drawn from the heuristic's pick of each point (``which='pick'``), its best plan ('best') or
    every plan that ran ('all', one line per plan unless ``color`` says otherwise). Markers and lines follow x in
    order; x is logarithmic when its values span more than 10x.
    """
    import plotly.graph_objects as go

    from .errors import SpecError

    if y not in _Y_AXES:
        raise SpecError("y", y, f"must be one of {', '.join(_Y_AXES)}")
    what, y_title, _ = _Y_AXES[y]
    rows = _chosen(frame, which)
    if which == "all" and color is None:
        color = "plan"
    fig = go.Figure()
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title=_sweep_title(frame, f"{what.capitalize()} along {x} ({_WHICH_TEXT[which]})",
                                         _point_counts(frame, rows[_point_key_col(rows)].nunique()
                                                       if not rows.empty else 0)))
    if rows.empty:
        return _empty(fig, "nothing to plot: no point of this sweep ran")
    xcol = _column(rows, x, "x")
    ccol = _column(rows, color, "color") if color is not None else None
    rows = rows[rows[xcol].map(_text).notna()]
    rows = rows.assign(_y=[_y_value(r, y) for _, r in rows.iterrows()])
    rows = rows[rows["_y"].map(_finite)]
    if rows.empty:
        return _empty(fig, f"nothing to plot: no point that ran has both {x} and {what}")
    rows = rows.assign(**{xcol: rows[xcol].map(_plain)})
    numeric_x = _numeric(rows[xcol])
    groups = _groups(rows, ccol)
    colors = _group_colors([g for g, _ in groups], ccol, rows)
    for value, group in groups:
        group = group.sort_values(xcol, key=lambda s: s.astype(float) if numeric_x else s.astype(str),
                                  kind="stable")
        fig.add_trace(go.Scatter(
            x=list(group[xcol]), y=[float(v) for v in group["_y"]], mode="lines+markers",
            name=_group_name(ccol, value), line={"color": colors.get(value, UNKNOWN_COLOR) if ccol else "#1f77b4"},
            marker={"size": _MARKER_SIZE, "line": {"width": LINE_WIDTH, "color": _LINE_COLOR}},
            hovertext=[_sweep_hover(r, f"{_field_name(xcol)} = {r[xcol]}", f"{what}: {r['_y']:.4g}")
                       for _, r in group.iterrows()],
            hoverinfo="text", customdata=list(group[_point_key_col(group)])))
    note = _shared_x_note(groups, xcol)
    if note:
        fig.update_layout(title=_sweep_title(frame, f"{what.capitalize()} along {x} ({_WHICH_TEXT[which]})", note))
    if ccol is not None:
        fig.update_layout(legend_title_text=_field_name(ccol))
    if numeric_x:
        fig.update_xaxes(type="log" if _log_span(rows[xcol]) else "linear")
    else:
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=_sorted_values(rows[xcol]))
    fig.update_xaxes(title_text=f"{_field_name(xcol)} (spec field)" if xcol.startswith("spec_") else xcol)
    fig.update_yaxes(title_text=y_title, rangemode="tozero" if y == "median_ms" else "normal")
    return fig


def sweep_roofline(frame: Any, *, which: str = "best") -> go.Figure:
    """Log-log roofline of a sweep: each point's chosen plan at (FLOP/byte, TFLOP/s), coloured by op.

    The roofs are the median of the frame's measured ceilings (``ceiling_tflops``, ``ceiling_gbps``) per GPU; a GPU
    without measured ceilings gets none and a note.
    """
    import plotly.graph_objects as go

    rows = _chosen(frame, which)
    fig = go.Figure()
    fig.update_layout(template="plotly_white", legend_itemsizing="constant", legend_title_text="op",
                      title=_sweep_title(frame, f"Roofline ({_WHICH_TEXT[which]} per point)",
                                         _point_counts(frame, len(rows))))
    if rows.empty:
        return _empty(fig, "nothing to plot: no point of this sweep ran")
    rows = rows.assign(_x=[float(r["flops"]) / float(r["min_bytes"]) if _finite(r.get("flops"))
                           and _finite(r.get("min_bytes")) and float(r["min_bytes"]) > 0 else None
                           for _, r in rows.iterrows()],
                       _y=[_row_tflops(r) for _, r in rows.iterrows()])
    rows = rows[rows["_x"].map(lambda v: _finite(v) and v > 0) & rows["_y"].map(lambda v: _finite(v) and v > 0)]
    if rows.empty:
        return _empty(fig, "nothing to plot: no point that ran has FLOPs, bytes and a throughput")

    gpu_col = rows["gpu"].map(_text) if "gpu" in rows.columns else None
    gpus = list(dict.fromkeys(gpu_col.fillna("unknown GPU"))) if gpu_col is not None else ["unknown GPU"]
    roofs = []
    for gpu in gpus:
        sub = rows if gpu_col is None else rows[gpu_col.fillna("unknown GPU") == gpu]
        vals = {}
        for col in ("ceiling_tflops", "ceiling_gbps"):
            s = sub[col].map(lambda v: float(v) if _finite(v) and float(v) > 0 else None).dropna() \
                if col in sub.columns else []
            vals[col] = float(s.median()) if len(s) else None
        roofs.append((gpu, vals["ceiling_tflops"], vals["ceiling_gbps"]))
    ridges = [p * 1e3 / b for _, p, b in roofs if p and b]
    xs = [*rows["_x"], *ridges]
    x_lo, x_hi = min(xs) / 20, max(xs) * 20
    dashes = ["solid", "dash", "dot", "dashdot"]
    for i, (gpu, peak, bw) in enumerate(roofs):
        tag = f"{gpu}: " if len(gpus) > 1 else ""
        ridge = peak * 1e3 / bw if peak and bw else None
        line = {"color": "#555", "width": 2, "dash": dashes[i % len(dashes)]}
        if bw:
            x_end = ridge if ridge else x_hi
            fig.add_trace(go.Scatter(x=[x_lo, x_end], y=[bw * x_lo / 1e3, bw * x_end / 1e3], mode="lines",
                                     name=f"{tag}memory roof ({bw:.0f} GB/s, measured)", line=line,
                                     hovertemplate=f"{tag}memory roof: %{{y:.3g}} TFLOP/s at %{{x:.3g}} FLOP/byte"
                                                   "<extra></extra>"))
        if peak:
            x_start = ridge if ridge else x_lo
            fig.add_trace(go.Scatter(x=[x_start, x_hi], y=[peak, peak], mode="lines",
                                     name=f"{tag}compute roof ({peak:.1f} TFLOP/s, measured)",
                                     line={**line, "color": "#222"},
                                     hovertemplate=f"{tag}compute roof: %{{y:.3g}} TFLOP/s<extra></extra>"))
    unmeasured = [gpu for gpu, p, b in roofs if not (p or b)]
    if unmeasured:
        fig.add_annotation(text=f"ceilings not measured ({', '.join(unmeasured)})", xref="paper", yref="paper",
                           x=0.02, y=0.98, showarrow=False, xanchor="left", yanchor="top", font={"size": 13})

    symbols = ["circle", "square", "diamond", "triangle-up", "cross", "x"]
    op_col = rows["op"].map(_text).fillna("unknown op") if "op" in rows.columns else None
    ops = _sorted_values(op_col) if op_col is not None else ["unknown op"]
    colors = _group_colors(ops, None, rows)
    for op in ops:
        group = rows if op_col is None else rows[op_col == op]
        sym = ([symbols[gpus.index(g) % len(symbols)] for g in group["gpu"].map(_text).fillna("unknown GPU")]
               if gpu_col is not None else "circle")
        fig.add_trace(go.Scatter(
            x=[float(v) for v in group["_x"]], y=[float(v) for v in group["_y"]], mode="markers", name=op,
            marker={"color": colors[op], "size": _MARKER_SIZE, "symbol": sym,
                    "line": {"width": LINE_WIDTH, "color": _LINE_COLOR}},
            hovertext=[_sweep_hover(r, f"{r['_x']:.3g} FLOP/byte, {r['_y']:.3g} TFLOP/s",
                                    f"{_fmt(r.get('pct_of_ceiling'), '.1f', '% of roof')}",
                                    _text(r.get("gpu")) or "unknown GPU") for _, r in group.iterrows()],
            hoverinfo="text", customdata=list(group[_point_key_col(group)])))
    fig.update_xaxes(title_text="arithmetic intensity (FLOP/byte, at minimal bytes)", type="log",
                     range=[math.log10(x_lo), math.log10(x_hi)])
    fig.update_yaxes(title_text="throughput (TFLOP/s)", type="log")
    return fig


def _spec_dict(row: Any) -> dict[str, Any]:
    """The point's spec fields: from its ``spec`` JSON, else from its spec_<field> columns."""
    import json

    text = _text(row.get("spec"))
    if text:
        try:
            data = json.loads(text)
            if isinstance(data, dict):
                return data
        except ValueError:
            pass
    return {str(k)[len("spec_"):]: _plain(v) for k, v in row.items() if str(k).startswith("spec_")}


def _spec_key(row: Any, drop: tuple[str, ...] = ()) -> str:
    """The point's spec as canonical JSON, without the fields in ``drop``."""
    import json

    data = {k: v for k, v in _spec_dict(row).items() if k not in drop}
    return json.dumps(data, sort_keys=True, default=str)


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def layout_speedup_heatmap(frame: Any, x: str, y: str, *, which: str = "best") -> go.Figure:
    """NHWC's speedup over NCHW (median NCHW / median NHWC; > 1: NHWC faster) over two spec fields of a sweep.

    NCHW and NHWC points are paired when their specs differ only in layout (on the same GPU and cuDNN version).
    A cell holds its pair's ratio, or the geometric mean when other fields vary too (hover text counts the
    pairs); a cell lacking either layout is blank. The colour scale is diverging and centred at 1.
    """
    import plotly.graph_objects as go

    rows = _chosen(frame, which)
    what = f"NHWC speedup over NCHW ({_WHICH_TEXT[which]})"
    fig = go.Figure()
    fig.update_layout(template="plotly_white", title=_sweep_title(frame, what, _point_counts(frame, len(rows))))
    if rows.empty:
        return _empty(fig, "nothing to plot: no point of this sweep ran")
    if "spec_layout" not in rows.columns:
        return _empty(fig, "nothing to plot: this sweep has no layout field")
    xcol, ycol = _column(rows, x, "x"), _column(rows, y, "y")
    rows = rows[rows[xcol].map(_text).notna() & rows[ycol].map(_text).notna()]
    rows = rows.assign(_layout=rows["spec_layout"].map(_text),
                       _pair=[_spec_key(r, ("layout",)) + "|" + str(_text(r.get("gpu"))) + "|"
                              + str(_text(r.get("cudnn"))) for _, r in rows.iterrows()],
                       **{xcol: rows[xcol].map(_plain), ycol: rows[ycol].map(_plain)})
    xs, ys = _sorted_values(rows[xcol]), _sorted_values(rows[ycol])
    cells: dict[tuple[Any, Any], list[tuple[float, Any, Any]]] = {}
    for _, pair in rows.groupby("_pair", sort=False):
        nchw, nhwc = pair[pair["_layout"] == "NCHW"], pair[pair["_layout"] == "NHWC"]
        if nchw.empty or nhwc.empty:
            continue
        a, b = nchw.iloc[0], nhwc.iloc[0]
        ratio = float(a["median_ms"]) / float(b["median_ms"])
        cells.setdefault((a[xcol], a[ycol]), []).append((ratio, a, b))
    if not cells:
        return _empty(fig, "nothing to plot: no point ran in both NCHW and NHWC")

    z, text, hover = [], [], []
    for yv in ys:
        z_row, t_row, h_row = [], [], []
        for xv in xs:
            pairs = cells.get((xv, yv))
            if not pairs:
                z_row.append(None)
                t_row.append("")
                h_row.append(f"{_field_name(xcol)}={xv}, {_field_name(ycol)}={yv}: not run in both layouts")
                continue
            ratio = _geomean([p[0] for p in pairs])
            z_row.append(ratio)
            t_row.append(f"{ratio:.2f}x")
            lines = [f"<b>{_field_name(xcol)}={xv}, {_field_name(ycol)}={yv}</b>",
                     f"NCHW / NHWC = {ratio:.3f} ({'NHWC' if ratio > 1 else 'NCHW'} faster)"
                     + (f", geometric mean of {len(pairs)} pairs" if len(pairs) > 1 else "")]
            for r, a, b in pairs[:4]:
                lines.append(f"{_text(a.get('label')) or 'NCHW'}: {float(a['median_ms']) * 1e3:.2f} us "
                             f"({_text(a.get('plan')) or 'n/a'}) vs NHWC {float(b['median_ms']) * 1e3:.2f} us "
                             f"({_text(b.get('plan')) or 'n/a'})")
            h_row.append("<br>".join(lines))
        z.append(z_row)
        text.append(t_row)
        hover.append(h_row)
    finite = [v for r in z for v in r if v is not None]
    spread = max(max(abs(math.log(v)) for v in finite), math.log(1.1))
    zmin, zmax = math.exp(-spread), math.exp(spread)  # 0.5x and 2x get equally strong, opposite colours
    fig.add_trace(go.Heatmap(
        x=[str(v) for v in xs], y=[str(v) for v in ys], z=z, text=text, texttemplate="%{text}",
        hovertext=hover, hoverinfo="text", colorscale=_ratio_colorscale(zmin, zmax),
        zmin=zmin, zmax=zmax, hoverongaps=False,
        colorbar={"title": {"text": "NCHW / NHWC<br>(>1: NHWC faster)"}}))
    if any(len(p) > 1 for p in cells.values()):
        fig.update_layout(title=_sweep_title(frame, what, "cells are geometric means over the other fields"))
    fig.update_xaxes(title_text=f"{_field_name(xcol)} (spec field)", type="category")
    fig.update_yaxes(title_text=f"{_field_name(ycol)} (spec field)", type="category")
    return fig


def _regret_rows(frame: Any) -> pd.DataFrame:
    """One row per point that ran: the pick's row with its regret (pick median / best median) and best plan."""
    import pandas as pd

    picks, bests = _chosen(frame, "pick"), _chosen(frame, "best")
    if picks.empty or bests.empty:
        return pd.DataFrame()
    key = _point_key_col(picks)
    best_by = {k: r for k, r in zip(bests[key], (r for _, r in bests.iterrows()))}
    out = []
    for _, row in picks.iterrows():
        best = best_by.get(row[key])
        if best is None:
            continue
        row = row.copy()
        row["_regret"] = float(row["median_ms"]) / float(best["median_ms"])
        row["_best_plan"] = _text(best.get("plan"))
        row["_best_ms"] = float(best["median_ms"])
        out.append(row)
    return pd.DataFrame(out)


def regret_along(frame: Any, x: str, *, color: str | None = None) -> go.Figure:
    """The heuristic's regret (pick median / best median; 1 = it chose the fastest) per point along spec field x.

    A star marks each point where the pick's engine differs from the previous point's (in x order, within a line
    of ``color``), annotated 'engine N -> M'.
    """
    import plotly.graph_objects as go

    rows = _regret_rows(frame)
    fig = go.Figure()
    what = f"Heuristic regret along {x}"
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title=_sweep_title(frame, what, _point_counts(frame, len(rows))))
    if rows.empty:
        return _empty(fig, "nothing to plot: no point of this sweep ran")
    xcol = _column(rows, x, "x")
    ccol = _column(rows, color, "color") if color is not None else None
    rows = rows[rows[xcol].map(_text).notna()]
    if rows.empty:
        return _empty(fig, f"nothing to plot: no point that ran has {x}")
    rows = rows.assign(**{xcol: rows[xcol].map(_plain)})
    numeric_x = _numeric(rows[xcol])
    log_x = numeric_x and _log_span(rows[xcol])
    groups = _groups(rows, ccol)
    colors = _group_colors([g for g, _ in groups], ccol, rows)
    changes: list[tuple[Any, float, str, Any]] = []
    for value, group in groups:
        group = group.sort_values(xcol, key=lambda s: s.astype(float) if numeric_x else s.astype(str),
                                  kind="stable")
        fig.add_trace(go.Scatter(
            x=list(group[xcol]), y=[float(v) for v in group["_regret"]], mode="lines+markers",
            name=_group_name(ccol, value) if ccol else "regret",
            line={"color": colors.get(value, UNKNOWN_COLOR) if ccol else "#1f77b4"},
            marker={"size": _MARKER_SIZE - 2},
            hovertext=[_sweep_hover(r, f"regret {r['_regret']:.3f}x",
                                    f"best {r['_best_plan']}: {r['_best_ms'] * 1e3:.2f} us")
                       for _, r in group.iterrows()],
            hoverinfo="text", customdata=list(group[_point_key_col(group)])))
        prev = None
        for _, r in group.iterrows():
            eng = int(float(r["engine_id"])) if _finite(r.get("engine_id")) else None
            if prev is not None and eng is not None and eng != prev:
                changes.append((r[xcol], float(r["_regret"]), f"engine {prev} -> {eng}", r))
            if eng is not None:
                prev = eng
    if changes:
        fig.add_trace(go.Scatter(
            x=[c[0] for c in changes], y=[c[1] for c in changes], mode="markers", name="pick's engine changes",
            marker={"symbol": "star", "size": 16, "color": "#ff7f0e", "line": {"width": 1, "color": "black"}},
            hovertext=[_sweep_hover(c[3], c[2]) for c in changes], hoverinfo="text",
            customdata=[c[3][_point_key_col(rows)] for c in changes]))
        for xv, yv, label, _ in changes:
            fig.add_annotation(x=_annotation_x(xv, log_x), y=yv, text=label, showarrow=True, arrowhead=2,
                               ax=0, ay=-35, font={"size": 11}, bgcolor="rgba(255,255,255,0.8)")
    fig.add_hline(y=1.0, line_dash="dash", line_color="#999", line_width=1,
                  annotation_text="pick = best", annotation_position="bottom left")
    if ccol is not None:
        fig.update_layout(legend_title_text=_field_name(ccol))
    note = _shared_x_note(groups, xcol)
    if note:
        fig.update_layout(title=_sweep_title(frame, what, note))
    if numeric_x:
        fig.update_xaxes(type="log" if log_x else "linear")
    else:
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=_sorted_values(rows[xcol]))
    top = max(float(rows["_regret"].max()), 1.0)
    fig.update_xaxes(title_text=f"{_field_name(xcol)} (spec field)" if xcol.startswith("spec_") else xcol)
    fig.update_yaxes(title_text="regret: pick median / best median (1 = optimal)",
                     range=[min(0.8, float(rows["_regret"].min()) * 0.9), top * 1.15])
    return fig


def error_by_dtype(frame: Any) -> go.Figure:
    """Relative L2 error of every plan that ran, per dtype (box and points, log y), with cuDNN's band per dtype.

    Each dtype's cuDNN band rtol (``numerics.TOLERANCES``) is a short horizontal marker across its box. An exact
    result (0) is drawn at the bottom as a downward triangle and a non-finite one (NaN/Inf outputs) at the top as
    an upward triangle; hover text gives the true value.
    """
    import plotly.graph_objects as go

    from .numerics import TOLERANCES

    ran = _sweep_ran(frame)
    fig = go.Figure()
    if not ran.empty and "rel_l2" in ran.columns and "spec_dtype" in ran.columns:
        ran = ran[ran["rel_l2"].map(lambda v: _text(v) is not None) & ran["spec_dtype"].map(_text).notna()]
    else:
        ran = ran.iloc[0:0] if not ran.empty else ran
    fig.update_layout(template="plotly_white", legend_itemsizing="constant", showlegend=True,
                      title=_sweep_title(frame, "Error vs float64 reference per dtype (plans that ran)",
                                         f"{len(ran)} plans checked; "
                                         + _point_counts(frame, ran[_point_key_col(ran)].nunique()
                                                         if not ran.empty else 0)))
    if ran.empty:
        return _empty(fig, "nothing to plot: no plan that ran was checked against the reference")

    ran = ran.assign(_rel=ran["rel_l2"].astype("float64"), _dtype=ran["spec_dtype"].map(_text))
    known = [d for d in TOLERANCES if d in set(ran["_dtype"])]
    dtypes = known + sorted(set(ran["_dtype"]) - set(known))
    rtols = [TOLERANCES[d]["cudnn"].rtol for d in dtypes if d in TOLERANCES and "cudnn" in TOLERANCES[d]]
    finite_pos = [v for v in ran["_rel"] if math.isfinite(v) and v > 0]
    low = min([*finite_pos, *rtols], default=1e-6) / 100
    high = max([*finite_pos, *rtols, 1.0]) * 10
    pal = _palette()
    for i, dtype in enumerate(dtypes):
        group = ran[ran["_dtype"] == dtype]
        normal = group[group["_rel"].map(lambda v: math.isfinite(v) and v > 0)]
        if normal.empty:
            continue
        fig.add_trace(go.Box(
            x=[dtype] * len(normal), y=[float(v) for v in normal["_rel"]], name=dtype, boxpoints="all",
            jitter=0.4, pointpos=0, marker={"color": pal[i % len(pal)], "size": 6}, line={"width": 1.5},
            hovertext=[_sweep_hover(r, f"rel L2 {r['_rel']:.3g}", f"cuDNN band: {_verdict(r.get('pass_cudnn'))}")
                       for _, r in normal.iterrows()],
            hoverinfo="text", customdata=list(normal[_point_key_col(normal)])))
    for label, test, at, symbol in (("exact (rel L2 = 0)", lambda v: v <= 0, low, "triangle-down"),
                                    ("NaN/Inf outputs", lambda v: not math.isfinite(v), high, "triangle-up")):
        odd = ran[ran["_rel"].map(test)]
        if odd.empty:
            continue
        fig.add_trace(go.Scatter(
            x=list(odd["_dtype"]), y=[at] * len(odd), mode="markers", name=label,
            marker={"symbol": symbol, "size": 11, "color": FAIL_COLOR if at == high else PASS_COLOR},
            hovertext=[_sweep_hover(r, f"rel L2 {r['_rel']:.3g}") for _, r in odd.iterrows()], hoverinfo="text"))
    banded = [d for d in dtypes if d in TOLERANCES and "cudnn" in TOLERANCES[d]]
    if banded:
        bands = [TOLERANCES[d]["cudnn"] for d in banded]
        fig.add_trace(go.Scatter(
            x=banded, y=[b.rtol for b in bands], mode="markers", name="cuDNN band rtol",
            marker={"symbol": "line-ew-open", "size": 60, "color": "#1f77b4", "line": {"width": 3,
                                                                                        "color": "#1f77b4"}},
            hovertext=[f"<b>{d} cuDNN band</b><br>rtol {b.rtol:.3g}, atol {b.atol:.3g}<br>{b.source}"
                       for d, b in zip(banded, bands)], hoverinfo="text"))
    fig.update_xaxes(title_text="data type (spec dtype)", type="category", categoryorder="array",
                     categoryarray=dtypes)
    fig.update_yaxes(title_text="relative L2 error ||out - ref|| / ||ref|| (no unit)", type="log",
                     range=[math.log10(low) - 0.3, math.log10(high) + 0.3])
    return fig


def _frame_name(frame: Any, fallback: str) -> str:
    devices = _sweep_devices(_sweep_ran(frame)) or _sweep_devices(frame)
    return " + ".join(devices) if devices else fallback


def compare_gpus(frame_a: Any, frame_b: Any, *, x: str | None = None, kind: str = "auto") -> go.Figure:
    """Best-plan latency of the points two sweeps share (same spec), e.g. two GPUs or two cuDNN versions.

    Points are matched on their spec. ``kind='bars'`` draws grouped bars (us) per point label (or per value of
    spec field ``x``, in its order) with the ratio b/a as markers on a right axis; ``kind='scatter'`` draws a's
    latency against b's on log-log axes with the diagonal (points above it are slower on b); ``'auto'`` takes
    bars up to 24 shared points. Legend names are each frame's GPU and cuDNN version.
    """
    import plotly.graph_objects as go

    from .errors import SpecError

    if kind not in ("auto", "bars", "scatter"):
        raise SpecError("kind", kind, "must be 'auto', 'bars' or 'scatter'")
    base_a, base_b = _frame_name(frame_a, "a"), _frame_name(frame_b, "b")
    name_a, name_b = (f"{base_a} (a)", f"{base_b} (b)") if base_a == base_b else (base_a, base_b)
    best: list[dict[str, Any]] = []
    for f in (frame_a, frame_b):
        rows = _chosen(f, "best")
        by_spec: dict[str, Any] = {}
        for _, r in rows.iterrows():
            key = _spec_key(r)
            if key not in by_spec or float(r["median_ms"]) < float(by_spec[key]["median_ms"]):
                by_spec[key] = r
        best.append(by_spec)
    common = [k for k in best[0] if k in best[1]]
    pairs = [(best[0][k], best[1][k]) for k in common]
    ratios = [float(b["median_ms"]) / float(a["median_ms"]) for a, b in pairs]

    fig = go.Figure()
    extra = f"{len(pairs)} shared points (a: {len(best[0])}, b: {len(best[1])} ran)"
    if ratios:
        extra += f"; geometric-mean ratio b/a {_geomean(ratios):.3f}"
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title={"text": f"Best-plan latency: {base_a} (a) vs {base_b} (b)<br><sup>{extra}</sup>",
                             "x": 0.0, "xanchor": "left"})
    if not pairs:
        return _empty(fig, "nothing to plot: no point ran in both sweeps" if best[0] and best[1]
                      else "nothing to plot: no point ran in " + ("either sweep" if not (best[0] or best[1])
                                                                   else "sweep a" if not best[0] else "sweep b"))
    if x is not None:
        import pandas as pd

        xcol = _column(pd.DataFrame([a for a, _ in pairs]), x, "x")
        xvals = [_plain(a.get(xcol)) for a, _ in pairs]
        order = sorted(range(len(pairs)), key=lambda i: (_text(xvals[i]) is None,
                                                         float(xvals[i]) if _numeric([xvals[i]]) else 0.0,
                                                         str(xvals[i])))
        pairs, ratios, xvals = [pairs[i] for i in order], [ratios[i] for i in order], [xvals[i] for i in order]
        unique = len(set(map(str, xvals))) == len(xvals)
        cats = [f"{_field_name(xcol)}={v}" if unique else f"{_field_name(xcol)}={v}: {_text(a.get('label'))}"
                for v, (a, _) in zip(xvals, pairs)]
    else:
        cats = [_text(a.get("label")) or _text(a.get("point_id")) or f"point {i}" for i, (a, _) in enumerate(pairs)]
        seen: dict[str, int] = {}
        for i, c in enumerate(cats):  # two points with one label (e.g. different epilogues) stay apart
            seen[c] = seen.get(c, 0) + 1
            if seen[c] > 1:
                cats[i] = f"{c} ({seen[c]})"
    hover = [_sweep_hover(a, f"a ({name_a}): {float(a['median_ms']) * 1e3:.2f} us, {_text(a.get('plan'))}",
                          f"b ({name_b}): {float(b['median_ms']) * 1e3:.2f} us, {_text(b.get('plan'))}",
                          f"ratio b/a {r:.3f} ({'b' if r < 1 else 'a'} faster)")
             for (a, b), r in zip(pairs, ratios)]
    us_a = [float(a["median_ms"]) * 1e3 for a, _ in pairs]
    us_b = [float(b["median_ms"]) * 1e3 for _, b in pairs]
    if kind == "scatter" or (kind == "auto" and len(pairs) > 24):
        lo, hi = min(us_a + us_b) / 1.5, max(us_a + us_b) * 1.5
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="b = a", hoverinfo="skip",
                                 line={"dash": "dash", "color": "#999"}))
        fig.add_trace(go.Scatter(
            x=us_a, y=us_b, mode="markers", name="shared points", customdata=ratios, hovertext=hover,
            hoverinfo="text",
            marker={"size": _MARKER_SIZE, "color": [math.log2(r) for r in ratios], "colorscale": "RdBu_r",
                    "cmid": 0.0, "line": {"width": LINE_WIDTH, "color": _LINE_COLOR},
                    "colorbar": {"title": {"text": "log2(b/a)<br>(>0: b slower)"}}}))
        fig.update_layout(legend={"orientation": "h", "y": -0.2})
        fig.update_xaxes(title_text=f"a: {name_a}, best-plan median latency (us)", type="log",
                         range=[math.log10(lo), math.log10(hi)])
        fig.update_yaxes(title_text=f"b: {name_b}, best-plan median latency (us)", type="log",
                         range=[math.log10(lo), math.log10(hi)])
        return fig
    fig.add_trace(go.Bar(x=cats, y=us_a, name=f"a: {name_a}", marker={"color": "#1f77b4"}, hovertext=hover,
                         hoverinfo="text", offsetgroup="a"))
    fig.add_trace(go.Bar(x=cats, y=us_b, name=f"b: {name_b}", marker={"color": "#ff7f0e"}, hovertext=hover,
                         hoverinfo="text", offsetgroup="b"))
    fig.add_trace(go.Scatter(x=cats, y=ratios, mode="markers+text", name="ratio b/a (right axis)", yaxis="y2",
                             text=[f"{r:.2f}x" for r in ratios], textposition="top center", hovertext=hover,
                             hoverinfo="text", marker={"symbol": "diamond", "size": 11, "color": "#222"}))
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": -0.25},
                      yaxis2={"title": {"text": "ratio b/a of latencies (>1: b slower)"}, "overlaying": "y",
                              "side": "right", "range": [0, max(*ratios, 1.0) * 1.25], "showgrid": False})
    fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y2", y0=1, y1=1,
                  line={"dash": "dot", "color": "#999", "width": 1})
    fig.update_xaxes(title_text="point" if x is None else f"{_field_name(xcol)} (spec field)", type="category")
    fig.update_layout(yaxis={"title": {"text": "best-plan median latency per call (us)"}, "rangemode": "tozero"})
    return fig


__all__ += ["sweep_latency", "sweep_roofline", "layout_speedup_heatmap", "regret_along", "error_by_dtype",
            "compare_gpus"]
