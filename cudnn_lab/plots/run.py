"""Plotly figures of one run: latency per plan, heuristic vs measured order, numerical error, roofline.

Every function is pure: it reads a :class:`~cudnn_lab.results.RunResult` and returns a new ``plotly.graph_objects
.Figure`` (it never shows it). Each figure's title names the problem (``spec.label()``), the GPU and the cuDNN
version; hover text names the plan, its engine and knobs, its median and IQR. ``selected`` (a plan name) draws that
plan with a thicker outline and larger marker in every figure. An engine keeps one colour across figures
(:func:`~cudnn_lab.plots.style.engine_colors`). Plans that did not run (status other than ``ok``, or no median) are
left out; a result where no plan ran gives a figure that says so instead of an exception. Pick, best, throughput
and the roofs come from :mod:`cudnn_lab.results.metrics`.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

from .. import knobs as knob_table
from ..results import metrics
from ..results.metrics import is_finite
from .style import (FAIL_COLOR, LINE_COLOR, LINE_WIDTH, PASS_COLOR, UNKNOWN_COLOR, cudnn_version, empty,
                    engine_colors, fitted, fmt, legend_line, log_ticks, outline, require_plan, require_run, sizes,
                    positive, title_block, us, verdict_of)
from ..results.loading import CLASSIC_ENGINE_ID
from ..numerics import TOLERANCES, VERDICT_METRIC_TITLE, band_rule, outside_share, tolerance_bands
from ..whatif.speed_lines import model_lines

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import plotly.graph_objects as go

    from ..results import RunResult

__all__ = ["latency_bar", "heuristic_vs_measured", "errors_per_plan", "error_histogram", "roofline"]


def _ran(result: RunResult) -> pd.DataFrame:
    """Plans that ran and were timed, fastest first (ties broken by the heuristic's order)."""
    return metrics.timed(result.plans)


def _pick_and_best(result: RunResult, ran: pd.DataFrame) -> tuple[str | None, str | None]:
    """Names of the heuristic's pick and the best plan (metrics' rules), if they are among ``ran``."""
    names = set(ran["plan"])
    out = [row["plan"] if row is not None else None for row in (metrics.pick(result.plans), metrics.best(result.plans))]
    return tuple(name if name in names else None for name in out)  # type: ignore[return-value]


def _device(result: RunResult) -> str:
    device = result.device or {}
    return f"{device.get('gpu', 'unknown GPU')}, cuDNN {cudnn_version(device.get('cudnn_backend'))}"


def _title(result: RunResult, what: str, extra: str = "", *, own_line: bool = False) -> dict[str, Any]:
    """What is drawn, then the problem, then the GPU and cuDNN version (and ``extra``, after them or on a line of its
    own: the device line is long enough to be cut beside it in a 430 px pane), one line each."""
    if own_line:
        return title_block(what, result.spec.label(), _device(result), extra)
    return title_block(what, result.spec.label(), _device(result) + (f"; {extra}" if extra else ""))


def _knob_text(row: Any) -> str:
    """The plan's knobs by name (``TILE_SIZE=1, TILEK=0``): the recorded ``knob_names``, else decoded from the
    plan's name or its knob JSON (shown as it is where it cannot be decoded); 'none' for a plan without knobs."""
    named = row.get("knob_names")
    if not (isinstance(named, str) and named):
        named = knob_table.plan_label(row["plan"]) or knob_table.safe_label(row.get("knobs"))
    return named or "none"


def _hover(row: Any, *extra: str) -> str:
    """Plan, engine, knobs by name, median and IQR (in us), then any extra lines."""
    lines = [f"<b>{row['plan']}</b>", f"engine {fmt(row['engine_id'], '.0f')}", f"knobs {_knob_text(row)}",
             f"median {us(row['median_ms'])}", f"IQR {us(row['iqr_ms'])}", *extra]
    return "<br>".join(lines)


def _engine_groups(frame: pd.DataFrame) -> list[tuple[Any, pd.DataFrame]]:
    """Rows grouped by engine id in ascending order (so legends list engines in the colour order)."""
    return [(eid, frame[frame["engine_id"] == eid]) for eid in sorted(frame["engine_id"].dropna().unique())]


def classic_call(result: RunResult) -> str | None:
    """The classic cuDNN call a result's plans run through ('cudnnPoolingForward'; pooling, softmax, activation,
    transform 'convert', RNN), or None for a result of frontend graph plans (engines the heuristics rank)."""
    plans = result.plans
    if plans is None or plans.empty:
        return None
    names = [str(p) for p in plans["plan"]]
    engines = [e for e in plans["engine_id"] if is_finite(e)] if "engine_id" in plans.columns else []
    if not all(n.startswith("classic ") for n in names) and not (
            engines and len(engines) == len(plans) and all(int(float(e)) == CLASSIC_ENGINE_ID for e in engines)):
        return None
    calls = [n.split()[1] for n in names if n.startswith("classic ") and n.split()[1:2] != [] and
             n.split()[1].startswith("cudnn")]
    if calls:
        return calls[0]
    named = result.spec.classic_calls()  # 'classic RNN fwd+bwd ...': the RNN API's calls in order
    if named:
        return " + ".join(named)
    return "a classic cuDNN call"


def _engine_name(eid: Any) -> str:
    """A legend's name for an engine id: 'classic call' for the classic API's marker id, never 'engine -1'."""
    return "classic call" if int(eid) == CLASSIC_ENGINE_ID else f"engine {int(eid)}"


def no_heuristics_text(result: RunResult) -> str:
    """One sentence for a classic call's Heuristics view: there are no heuristics, and which call runs instead."""
    call = classic_call(result) or "a classic cuDNN call"
    n = len(result.plans)
    algos = f" (its {n} plans are the algorithms it offers, each timed)" if n > 1 else ""
    return (f"A classic call has no heuristics: cuDNN runs this problem through {call}, with no engine to "
            f"choose{algos}.")


def _no_plan_text(result: RunResult) -> str:
    n = len(result.plans)
    return f"no plan ran ({n} proposed); see .plans['status'] and .plans['error']"


@fitted
def latency_bar(result: RunResult, selected: str | None = None, models: bool = False) -> go.Figure:
    """One bar per plan that ran, sorted by median latency (us), with +-IQR/2 error bars, coloured by engine.

    The heuristic's pick and the best plan (fastest within cuDNN's tolerance band) carry text annotations;
    PyTorch's latency with ``cudnn.benchmark`` off and on (where measured) are dashed horizontal lines. With
    ``models``, the forecast's model points beside the bars (:func:`cudnn_lab.whatif.speed_lines.model_lines`: the
    transfer model, the datasheet roofline ratio, NVIDIA's GEMM estimator where installed), each named with its
    validation error for the family, or a note saying why there are none.
    """
    result = require_run(result, "latency_bar")
    selected = require_plan(selected, "latency_bar")
    import plotly.graph_objects as go

    fig = go.Figure()
    ran = _ran(result)
    n, n_ok = len(result.plans), len(ran)
    fig.update_layout(title=_title(result, "Latency per plan", f"{n_ok} of {n} plans ran"),
                      template="plotly_white", barmode="overlay", legend_title_text="engine")
    if ran.empty:
        return empty(fig, _no_plan_text(result))

    colors = engine_colors(result.plans)
    order = list(ran["plan"])
    for eid, group in _engine_groups(ran):
        fig.add_trace(go.Bar(
            x=list(group["plan"]), y=list(group["median_ms"] * 1e3), name=_engine_name(eid),
            error_y={"type": "data", "symmetric": True, "visible": True,
                     "array": [v * 1e3 / 2 if is_finite(v) else 0.0 for v in group["iqr_ms"]]},
            marker={"color": colors[int(eid)], "line": outline(group["plan"], selected)},
            hovertext=[_hover(row, f"timing {row['timing_mode'] or 'n/a'}, {fmt(row['samples'], '.0f')} samples")
                       for _, row in group.iterrows()],
            hoverinfo="text", customdata=list(group["plan"])))

    top = float((ran["median_ms"] + ran["iqr_ms"].fillna(0) / 2).max() * 1e3)
    dashes = ("dash", "dot", "dashdot", "longdash", "longdashdot")
    for i, (_, label, ms) in enumerate(metrics.baseline_lines(result.torch)):
        dash, color = dashes[i % len(dashes)], "#444" if i < 2 else "#8c564b"  # a family's extras in brown
        # named in the legend (a label on the line would cover bars)
        fig.add_hline(y=ms * 1e3, line_dash=dash, line_color=color, line_width=1.5, name=label)
        legend_line(fig, f"{label} {ms * 1e3:.3g} µs", {"dash": dash, "color": color, "width": 1.5})
        top = max(top, ms * 1e3)

    if models:
        top = max(top, _latency_models(fig, result, order))
    low = float(ran["median_ms"].min() * 1e3)
    log_y = low > 0 and top / low > 20  # slow fallback engines would flatten every other bar
    pick, best = _pick_and_best(result, ran)
    by_plan = ran.set_index("plan")
    kc = (getattr(result, "settings", None) or {}).get("kernel_cache_run") or {}
    without = kc.get("pick_without") if kc.get("used") else None  # the kernel cache can change the pick
    top_text = "fastest (no plan passed)" if metrics.none_passed(result.plans) else "best"  # a failing plan: not best
    marks = [(pick, "heuristic pick" + (" (kernel cache)" if kc.get("used") else ""), -30), (best, top_text, -55)]
    if classic_call(result) is not None:  # a classic call: no heuristics picked anything, only the fastest is marked
        marks = [(best, top_text, -55)]
    if without is not None and without != pick:
        marks.append((without, "pick without kernel cache", -80))
    for name, text, ay in marks:
        if name is None or name not in by_plan.index:
            continue
        row = by_plan.loc[name]
        y = float(row["median_ms"] + (row["iqr_ms"] if is_finite(row["iqr_ms"]) else 0.0) / 2) * 1e3
        fig.add_annotation(x=name, y=math.log10(y) if log_y and y > 0 else y, text=text, showarrow=True,
                           arrowhead=2, ax=0, ay=ay, font={"size": 12}, bgcolor="rgba(255,255,255,0.8)")

    # Many plans: names go to the hover text (they would take the whole figure as tick labels).
    many = len(order) > 16
    fig.update_xaxes(title_text="plan, sorted by median latency" + (" (hover for names)" if many else ""),
                     type="category", categoryorder="array", categoryarray=order, showticklabels=not many)
    if log_y:
        lo, hi = low * 0.7, top * 3
        fig.update_yaxes(title_text="median latency per call (µs, log)", type="log",
                         range=[math.log10(lo), math.log10(hi)], **log_ticks(lo, hi))
    else:
        fig.update_yaxes(title_text="median latency per call (µs)", range=[0, top * 1.3 if top > 0 else 1])
    return fig


#: Marker of each model line (open symbols: a forecast, not a measurement)
_MODEL_MARKS = {"transfer": ("circle-open", "#d62728"), "roofline": ("square-open", "#7f7f7f"),
                "nvidia_estimator": ("diamond-open", "#76b900")}


#: Longest line of the model lines' note under a figure's title (characters; the title's other lines are as long):
#: one line of 80 was cut at the right of a 460 px pane (the Lab at 1280 px with the file browser open).
NOTE_LINE = 60
#: How far right of the run's intensity each predictor's points are drawn in the roofline (a factor on the log x
#: axis): beside the measured points they forecast instead of on them.
_ROOF_SHIFT = 1.3


def _models_note(fig: go.Figure, text: str) -> None:
    """``text`` under the figure's title, wrapped, as its last lines (the top margin grows with them: fit_width)."""
    lines = "".join(f"<br><span style='font-size:11px;color:#555'>{line}</span>"
                    for line in textwrap.wrap(f"model lines: {text}", NOTE_LINE))
    fig.update_layout(title_text=(fig.layout.title.text or "") + lines)


def _latency_models(fig: go.Figure, result: RunResult, order: list[str]) -> float:
    """The model points (µs) of the plans in ``order``; the largest drawn (0 when none), a note when none."""
    import plotly.graph_objects as go
    lines = model_lines(result)
    top = 0.0
    for line in lines.lines:
        plans = [p for p in order if p in line.times_ms]
        if not plans:
            continue
        ys = [line.times_ms[p] * 1e3 for p in plans]
        symbol, color = _MODEL_MARKS.get(line.predictor, ("x-thin-open", "#444"))
        fig.add_trace(go.Scatter(x=plans, y=ys, mode="markers", name=line.label,
                                 marker={"symbol": symbol, "size": 11, "color": color, "line": {"width": 2}},
                                 hovertemplate=f"{line.label}<br>%{{y:.4g}} µs<extra>forecast</extra>"))
        top = max(top, *ys)
    _models_note(fig, lines.note if lines.lines else f"none ({lines.note})")
    return top


@fitted
def heuristic_vs_measured(result: RunResult, selected: str | None = None) -> go.Figure:
    """Heuristic rank (x) against measured rank by median (y, 1 = fastest) for the plans that ran.

    A classic call (pooling, softmax, activation, transform, RNN: :func:`classic_call`) has no heuristics: the
    figure says so, and which call runs, instead of ranking plans (and shows no engine).

    Both ranks count only plans that ran, from 1, so a heuristic that orders plans exactly by speed puts every
    point on the dashed diagonal; points above it ran slower than the heuristic expected.
    """
    result = require_run(result, "heuristic_vs_measured")
    selected = require_plan(selected, "heuristic_vs_measured")
    import plotly.graph_objects as go

    fig = go.Figure()
    ran = _ran(result)
    call = classic_call(result)
    if call is not None:  # a classic call: no heuristics, no engine (the plans' engine_id -1 is no engine)
        fig.update_layout(title=_title(result, "No heuristics: a classic cuDNN call", f"{len(ran)} plans ran"),
                          template="plotly_white")
        return empty(fig, f"no heuristics: cuDNN's classic {call} runs this problem")
    fig.update_layout(title=_title(result, "Heuristic order vs measured order", f"{len(ran)} plans ran"),
                      template="plotly_white", legend_title_text="engine", legend_itemsizing="constant")
    if ran.empty:
        return empty(fig, _no_plan_text(result))

    ran = ran.copy()
    ran["measured"] = range(1, len(ran) + 1)  # metrics.timed sorts by median
    ran["heuristic"] = ran["heuristic_rank"].astype("float64").rank(method="first", na_option="bottom")
    ran["heuristic"] = ran["heuristic"].astype(int)
    n = len(ran)
    fig.add_trace(go.Scatter(x=[0.5, n + 0.5], y=[0.5, n + 0.5], mode="lines", name="heuristic = measured",
                             line={"dash": "dash", "color": "#999"}, hoverinfo="skip"))
    colors = engine_colors(result.plans)
    for eid, group in _engine_groups(ran):
        fig.add_trace(go.Scatter(
            x=list(group["heuristic"]), y=list(group["measured"]), mode="markers", name=_engine_name(eid),
            marker={"color": colors[int(eid)], "size": sizes(group["plan"], selected),
                    "line": outline(group["plan"], selected)},
            hovertext=[_hover(row, f"heuristic rank {row['heuristic']} "
                                   f"(proposed at {fmt(row['heuristic_rank'], '.0f')})",
                              f"measured rank {row['measured']}") for _, row in group.iterrows()],
            hoverinfo="text", customdata=list(group["plan"])))
    fig.update_xaxes(title_text="heuristic rank among plans that ran (1 = pick)",
                     range=[0.5, n + 0.5], dtick=max(1, n // 10))
    fig.update_yaxes(title_text="measured rank (1 = fastest median)",
                     range=[0.5, n + 0.5], dtick=max(1, n // 10))
    return fig


@fitted
def errors_per_plan(result: RunResult, selected: str | None = None) -> go.Figure:
    """The error of each plan that ran (log y), green where it passes cuDNN's band and red where not, on the metric
    the verdict reads: the share of output elements outside cuDNN's band (``numerics.outside_share``), with the pass
    line drawn for it (a rel L2 under rtol can still fail element by element: issue 39).

    A result without that share plots rel L2, with dashed lines at the rtol of both bands (``numerics.TOLERANCES``).
    A 0 (exact, or no element outside) is drawn at the bottom as a downward triangle and an infinite one (NaN/Inf
    outputs) at the top as an upward triangle; hover text gives the true value. Plans are in the latency chart's order.
    """
    result = require_run(result, "errors_per_plan")
    selected = require_plan(selected, "errors_per_plan")
    import plotly.graph_objects as go

    fig = go.Figure()
    ran = _ran(result)
    fig.update_layout(title=_title(result, "Error per plan vs float64 reference"), template="plotly_white",
                      legend_title_text="cuDNN band", legend_itemsizing="constant")
    checked = ran[ran["rel_l2"].notna()]
    if checked.empty:
        return empty(fig, _no_plan_text(result) if ran.empty else "numerics were not checked for any plan")

    bands = tolerance_bands(result.spec.dtype, result.spec.op) if result.spec.dtype in TOLERANCES else {}
    # The verdict is per element: where the share within cuDNN's band was recorded, plot that metric (numerics')
    # with the pass line drawn for it; older results without it keep rel L2 against the bands' rtol lines.
    per_element = "within_cudnn" in checked.columns and bool(checked["within_cudnn"].notna().all())
    metric = (checked["within_cudnn"].map(outside_share) if per_element else checked["rel_l2"]).astype("float64")
    checked = checked.assign(_y=metric)
    rtols = [] if per_element else [b.rtol for b in bands.values()]
    values = checked["_y"]
    finite_pos = values[values.map(lambda v: math.isfinite(v) and v > 0)]
    low = min([*finite_pos, *rtols], default=1e-6) / 100
    high = max([*finite_pos, *rtols, 1.0]) * 10

    def shown(v: float) -> float:
        return low if v <= 0 else (high if not math.isfinite(v) else v)

    def symbol(v: float) -> str:
        return "triangle-down" if v <= 0 else ("triangle-up" if not math.isfinite(v) else "circle")

    verdicts = checked["pass_cudnn"].astype(object).map(verdict_of)
    for verdict, color in (("pass", PASS_COLOR), ("fail", FAIL_COLOR), ("unknown", UNKNOWN_COLOR)):
        group = checked[verdicts == verdict]
        if group.empty:
            continue
        rel = list(group["_y"])
        fig.add_trace(go.Scatter(
            x=list(group["plan"]), y=[shown(v) for v in rel], mode="markers", name=verdict,
            marker={"color": color, "symbol": [symbol(v) for v in rel], "size": sizes(group["plan"], selected),
                    "line": outline(group["plan"], selected)},
            hovertext=[_hover(row, *([f"{100 * row['_y']:.3g}% of elements outside cuDNN's band"]
                                     if per_element else []),
                              f"rel L2 {row['rel_l2']:.3g}", f"max abs {fmt(row['max_abs'], '.3g')}",
                              f"NaN {fmt(row['nan_count'], '.0f')}, Inf {fmt(row['inf_count'], '.0f')}",
                              f"cuDNN band: {verdict}, PyTorch band: {verdict_of(row['pass_torch'])}")
                       for _, row in group.iterrows()],
            hoverinfo="text", customdata=list(group["plan"])))

    if per_element and "cudnn" in bands:  # 0 outside is drawn at the bottom; every share > 0 lies above this line
        label = f"cuDNN band: pass = no element outside ({band_rule(bands['cudnn'])})"
        line = {"dash": "dot", "color": "#1f77b4", "width": 1.5}
        fig.add_shape(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=low * 3, y1=low * 3, line=line,
                      name=label)
        legend_line(fig, label, line)
        bands = {}
    names = {"torch": "PyTorch band", "cudnn": "cuDNN band"}
    for key, band in bands.items():
        label = f"{names.get(key, key)} rtol {band.rtol:.3g}"
        line = {"dash": "dash" if key == "torch" else "dot", "color": "#555" if key == "torch" else "#1f77b4",
                "width": 1.5}
        fig.add_shape(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=band.rtol, y1=band.rtol, line=line,
                      name=label)
        legend_line(fig, label, line)  # named in the legend, not over the points

    many = len(ran) > 16
    fig.update_xaxes(title_text="plan, sorted by median latency" + (" (hover for names)" if many else ""),
                     type="category", categoryorder="array", categoryarray=list(ran["plan"]),
                     showticklabels=not many)
    fig.update_yaxes(title_text=(f"{VERDICT_METRIC_TITLE} (0: passes)" if per_element else
                                 "relative L2 error ||out − ref|| / ||ref|| (no unit)"), type="log",
                     range=[math.log10(low) - 0.3, math.log10(high) + 0.3], **log_ticks(low, high))
    return fig


@fitted
def error_histogram(result: RunResult, plan: str | None = None) -> go.Figure:
    """Histogram of one plan's element-wise log10 |out - ref| (``result.histograms[plan]``), default the pick.

    A plan without a histogram (not checked, not run, unknown name) gives a figure that says so.
    """
    result = require_run(result, "error_histogram")
    plan = require_plan(plan, "error_histogram", "plan")
    import plotly.graph_objects as go

    fig = go.Figure()
    if plan is None:
        plan = _pick_and_best(result, _ran(result))[0]
    fig.update_layout(title=title_block("Absolute error per element", result.spec.label(), _device(result),
                                        f"plan {plan}" if plan else ""),
                      template="plotly_white", showlegend=False)
    hist = (getattr(result, "histograms", None) or {}).get(plan) if plan else None
    edges = [float(e) for e in (hist or {}).get("edges", [])]
    counts = [float(c) for c in (hist or {}).get("counts", [])]
    if not hist or len(edges) != len(counts) + 1 or not counts:
        return empty(fig, f"no error histogram for plan {plan!r}" if plan else "no plan ran, so no histogram")

    rows = result.plans[result.plans["plan"] == plan]
    row = rows.iloc[0] if not rows.empty else None
    color = UNKNOWN_COLOR
    if row is not None and is_finite(row["engine_id"]):
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
                                                                            "color": LINE_COLOR}},
        hovertext=[f"{head}<br>|error| in [1e{a:g}, 1e{b:g}): {int(c)} elements"
                   for a, b, c in zip(edges, edges[1:], counts)],
        hoverinfo="text", name=plan))
    every = max(1, math.ceil(len(fixed) / 8))  # at most about 8 labels: they stay level and legible
    fig.update_xaxes(title_text="absolute error |out − ref| per element (output units, log bins)",
                     tickvals=fixed[::every], ticktext=[f"1e{e:g}" for e in edges][::every], tickangle=0)
    fig.update_yaxes(title_text="elements (count)")
    return fig


@fitted
def roofline(result: RunResult, selected: str | None = None, models: bool = False) -> go.Figure:
    """Log-log roofline: each plan that ran at (FLOP/byte, TFLOP/s) under the measured compute and memory roofs.

    Arithmetic intensity is the spec's FLOP count over its minimal bytes, so every plan shares one x and differs
    in height. Without measured ceilings (``result.ceilings`` empty) only the points are drawn, with a note. With
    ``models``, the GPU's datasheet roofs (dashed) and the forecast's model points (open markers, a column per
    predictor just right of the run's intensity), each named with its validation error for the family
    (:func:`cudnn_lab.whatif.speed_lines.model_lines`).
    """
    result = require_run(result, "roofline")
    selected = require_plan(selected, "roofline")
    import plotly.graph_objects as go

    fig = go.Figure()
    spec = result.spec
    ran = _ran(result)
    fig.update_layout(title=_title(result, "Roofline", "roofs measured on this GPU", own_line=True),
                      template="plotly_white", legend_itemsizing="constant")
    intensity = metrics.intensity(spec.flops(), spec.min_bytes()) or 1.0
    ceilings = result.ceilings or {}
    peak, bw = ceilings.get("tflops"), ceilings.get("gbps")
    peak, bw = positive(peak), positive(bw)
    ridge = metrics.ridge(peak, bw)
    xs = [intensity] + ([ridge] if ridge else [])
    x_lo, x_hi = min(xs) / 20, max(xs) * 20

    if bw:
        x_end = ridge if ridge else x_hi
        fig.add_trace(go.Scatter(x=[x_lo, x_end], y=[metrics.roof(x_lo, None, bw), metrics.roof(x_end, None, bw)],
                                 mode="lines", name=f"memory {bw:.0f} GB/s", line={"color": "#555", "width": 2},
                                 hovertemplate="memory roof: %{y:.3g} TFLOP/s at %{x:.3g} FLOP/byte<extra></extra>"))
    if peak:
        x_start = ridge if ridge else x_lo
        fig.add_trace(go.Scatter(x=[x_start, x_hi], y=[peak, peak], mode="lines",
                                 name=f"compute {peak:.0f} TFLOP/s",
                                 line={"color": "#222", "width": 2},
                                 hovertemplate="compute roof: %{y:.3g} TFLOP/s<extra></extra>"))
    if not (peak or bw):
        fig.add_annotation(text="ceilings not measured", xref="paper", yref="paper", x=0.02, y=0.98,
                           showarrow=False, xanchor="left", yanchor="top", font={"size": 13})

    if ran.empty:
        fig.add_annotation(text=_no_plan_text(result), xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
    colors = engine_colors(result.plans)
    for eid, group in _engine_groups(ran):
        tflops = [float(t) if is_finite(t) else metrics.tflops(spec.flops(), m)
                  for t, m in zip(group["tflops"], group["median_ms"])]
        fig.add_trace(go.Scatter(
            x=[intensity] * len(group), y=tflops, mode="markers", name=_engine_name(eid),
            marker={"color": colors[int(eid)], "size": sizes(group["plan"], selected),
                    "line": outline(group["plan"], selected)},
            hovertext=[_hover(row, f"{t:.3g} TFLOP/s, {fmt(row['gbps'], '.3g', ' GB/s')}",
                              f"{fmt(row['pct_of_ceiling'], '.1f', '% of roof')}")
                       for t, (_, row) in zip(tflops, group.iterrows())],
            hoverinfo="text", customdata=list(group["plan"])))
    for _, label, ms in metrics.baseline_lines(result.torch):
        t = metrics.tflops(spec.flops(), ms)
        fig.add_trace(go.Scatter(x=[intensity], y=[t], mode="markers", name=label,
                                 marker={"symbol": "diamond-open", "size": 12, "color": "#444"},
                                 hovertext=[f"<b>{label}</b><br>{ms * 1e3:.1f} us, {t:.3g} TFLOP/s"],
                                 hoverinfo="text"))

    if models:
        _roofline_models(fig, result, intensity, x_lo, x_hi)
    fig.update_xaxes(title_text="arithmetic intensity (FLOP/byte)", type="log",
                     range=[math.log10(x_lo), math.log10(x_hi)], **log_ticks(x_lo, x_hi))
    ys = [y for t in fig.data for y in map(positive, t.y or ()) if y is not None]
    if ys:
        y_lo, y_hi = min(ys) / 2, max(ys) * 2
        fig.update_yaxes(range=[math.log10(y_lo), math.log10(y_hi)], **log_ticks(y_lo, y_hi))
    fig.update_yaxes(title_text="throughput (TFLOP/s)", type="log")
    return fig


def _roofline_models(fig: go.Figure, result: RunResult, intensity: float, x_lo: float, x_hi: float) -> None:
    """The datasheet roofs (dashed) and the model points at the run's intensity (TFLOP/s of each forecast time)."""
    import plotly.graph_objects as go
    lines = model_lines(result)
    peak, bw = positive(lines.datasheet_tflops), positive(lines.datasheet_gbps)
    if peak or bw:
        ridge = metrics.ridge(peak, bw)
        xs = [x for x in (x_lo, ridge, x_hi) if x]
        err = "" if lines.roofline_mape is None else f", ratio ±{lines.roofline_mape:.1f}% on {lines.family}"
        fig.add_trace(go.Scatter(x=xs, y=[metrics.roof(x, peak, bw) for x in xs], mode="lines",
                                 name=f"datasheet roofline {lines.gpu}{err}",
                                 line={"color": "#7f7f7f", "width": 1.5, "dash": "dash"},
                                 hovertemplate="datasheet roof: %{y:.3g} TFLOP/s at %{x:.3g} FLOP/byte<extra></extra>"))
    flops = result.spec.flops()
    for i, line in enumerate(lines.lines, start=1):
        ys = [metrics.tflops(flops, ms) for ms in line.times_ms.values()]
        symbol, color = _MODEL_MARKS.get(line.predictor, ("x-thin-open", "#444"))
        fig.add_trace(go.Scatter(x=[intensity * _ROOF_SHIFT ** i] * len(ys), y=ys, mode="markers", name=line.label,
                                 marker={"symbol": symbol, "size": 11, "color": color, "line": {"width": 2}},
                                 hovertemplate=f"{line.label}<br>%{{y:.3g}} TFLOP/s at {intensity:.3g} FLOP/byte "
                                               "(drawn beside it)<extra>forecast</extra>"))
    _models_note(fig, lines.note if lines.lines else f"none ({lines.note})")
