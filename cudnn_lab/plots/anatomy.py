"""Plotly figures and tables of a plan's anatomy: the engine space explored beyond the heuristics' proposals
(latency by engine, and by one knob's value) and the kernels each plan launches.

Pure like the other figure modules: they read a :class:`~cudnn_lab.results.RunResult` and return a new figure,
frame or HTML string. The answer to 'did a configuration outside the proposals beat the heuristics' best?' and the
knob decoding are :mod:`cudnn_lab.results.anatomy`'s. A result recorded without exploration (``explore=0``) has no
engine-space sample: the figures raise an OptionError saying how to get one; the kernel table says so in a sentence.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

from ..errors import OptionError
from ..results import anatomy, metrics
from ..results.metrics import is_finite
from .run import _device, _knob_text, _pick_and_best, classic_call
from .style import fitted, fmt, legend_line, log_ticks, require_plan, require_run, title_block, us

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import plotly.graph_objects as go

    from ..results import RunResult

__all__ = ["ORIGIN_COLORS", "NO_KERNELS_TEXT", "engine_knobs", "engine_space", "kernels_html", "kernels_table",
           "no_sample_text", "origin_group"]

#: Colour of each origin group: what the heuristics proposed, a neighbour of a proposal, a random draw.
ORIGIN_COLORS: dict[str, str] = {"proposed": "#1f77b4", "neighbour": "#ff7f0e", "random": "#7f7f7f"}
_SYMBOLS = {"proposed": "diamond", "neighbour": "circle", "random": "circle-open"}
NO_KERNELS_TEXT = ("This result has no kernels per plan: it was recorded without CUPTI kernel profiling "
                   "(run cl.run(spec, kernels=True) on a GPU to record them).")


def origin_group(proposed: Any, origin: Any) -> str:
    """'proposed', 'neighbour' or 'random' for a plan's ``proposed`` and ``origin`` cells (``random near <plan>``
    counts as random)."""
    if anatomy.is_proposed(proposed):
        return "proposed"
    return "neighbour" if str(origin or "").startswith("neighbour") else "random"


def no_sample_text(result: RunResult) -> str:
    """Why ``result`` has no engine-space sample, and how to get one (one sentence)."""
    call = classic_call(result)
    if call is not None:  # nothing to explore: the classic API has its algorithms, not an engine space
        return (f"{result.spec.label()} has no engine-space sample: it runs the classic call {call}, which has no "
                "engines or knobs to explore; its plans are the algorithms that call offers")
    error = (result.engine_space or {}).get("error")
    why = (f"the exploration failed ({error})" if error else
           "it was recorded without exploring beyond the heuristics' proposals")
    return (f"{result.spec.label()} has no engine-space sample: {why}; run cl.run(spec, explore=200) on a GPU to "
            "time 200 configurations beyond the proposals")


def _sample(result: RunResult, figure: str) -> pd.DataFrame:
    """Plans that ran and were timed, with their origin group; OptionError when nothing beyond the proposals ran."""
    if not result.exploration["explored"]:
        raise OptionError("result", result.spec.label(), no_sample_text(result), where=f"plots.{figure}")
    ran = metrics.timed(result.plans).copy()
    ran["group"] = [origin_group(p, o) for p, o in zip(ran["proposed"], ran["origin"])]
    return ran


def _title(result: RunResult, what: str, *lines: str) -> dict[str, Any]:
    """What, problem, device and ``lines``; the exploration's answer (a sentence) is left to the caller's text, so
    the plot keeps its height at any width."""
    return title_block(what, result.spec.label(), _device(result), *lines)


def _hover(row: Any) -> str:
    return "<br>".join([f"<b>{html.escape(str(row['plan']))}</b>", f"engine {fmt(row['engine_id'], '.0f')}",
                        f"origin {html.escape(str(row.get('origin') or 'heuristics'))}",
                        f"knobs {html.escape(_knob_text(row))}", f"median {us(row['median_ms'])}",
                        f"IQR {us(row['iqr_ms'])}"])


def _log_y(fig: go.Figure, values_us: list[float], extra: list[float]) -> None:
    vals = [v for v in [*values_us, *extra] if v > 0]
    lo, hi = min(vals) * 0.7, max(vals) * 1.5
    fig.update_yaxes(title_text="median latency per call (µs, log)", type="log",
                     range=[math.log10(lo), math.log10(hi)], **log_ticks(lo, hi))


def _mark(fig: go.Figure, result: RunResult, ran: pd.DataFrame, where: dict[str, tuple[float, float]]) -> None:
    """Arrows at the heuristics' pick and the best plan (where drawn), and a dashed line at the best proposal."""
    pick, best = _pick_and_best(result, ran)
    for name, text, ay in ((pick, "heuristic pick", -30), (best, "best", -55)):
        if name in where:
            x, y = where[name]
            fig.add_annotation(x=x, y=math.log10(y), text=text, showarrow=True, arrowhead=2, ax=0, ay=ay,
                               font={"size": 12}, bgcolor="rgba(255,255,255,0.8)")
    best_p = result.exploration.get("best_proposed")
    if best_p:
        y = best_p["median_ms"] * 1e3
        line = {"dash": "dash", "color": ORIGIN_COLORS["proposed"], "width": 1.2}
        fig.add_hline(y=y, line=line)
        legend_line(fig, f"heuristics' best {y:.3g} µs", line)


def _scatter(fig: go.Figure, group: str, rows: pd.DataFrame, xs: list[float], selected: str | None) -> None:
    import plotly.graph_objects as go

    fig.add_trace(go.Scatter(
        x=xs, y=list(rows["median_ms"] * 1e3), mode="markers", name=group,
        marker={"color": ORIGIN_COLORS[group], "symbol": _SYMBOLS[group],
                "size": [16 if p == selected else (12 if group == "proposed" else 8) for p in rows["plan"]],
                "line": {"width": [3 if p == selected else 1 for p in rows["plan"]],
                         "color": ["black" if p == selected else ORIGIN_COLORS[group] for p in rows["plan"]]}},
        hovertext=[_hover(r) for _, r in rows.iterrows()], hoverinfo="text", customdata=list(rows["plan"])))


def _by_origin(result: RunResult, rows: pd.DataFrame, x: str, what: str, line: str, selected: str | None
               ) -> go.Figure:
    """Latency (log) of ``rows`` (plans that ran) at ``rows[x]``: a trace per origin group, the pick and the best
    marked, the heuristics' best as a dashed line; the caller labels the x axis."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.update_layout(title=_title(result, what, line), template="plotly_white", legend_title_text="origin")
    for group in ORIGIN_COLORS:
        sub = rows[rows["group"] == group]
        if not sub.empty:
            _scatter(fig, group, sub, list(sub[x]), selected)
    _mark(fig, result, rows, {p: (v, m * 1e3) for p, v, m in zip(rows["plan"], rows[x], rows["median_ms"])})
    _log_y(fig, list(rows["median_ms"] * 1e3), [])
    return fig


@fitted
def engine_space(result: RunResult, selected: str | None = None) -> go.Figure:
    """Latency (µs, log) of every configuration that ran, proposed or explored, by engine id: coloured by origin
    (proposed, neighbour of a proposal, random draw), proposals as large diamonds, the heuristics' pick and the best
    plan marked, the heuristics' best as a dashed line (``results.anatomy.answer_text`` says in words whether anything
    outside the proposals beat it). OptionError for a result without an engine-space sample (recorded with
    ``explore=0``)."""
    result = require_run(result, "engine_space")
    selected = require_plan(selected, "engine_space")
    ran = _sample(result, "engine_space")
    engines = sorted({int(e) for e in ran["engine_id"].dropna()})
    column = {e: i for i, e in enumerate(engines)}
    ran = ran[ran["engine_id"].notna()]
    # Points of one engine spread over its column, fastest left, so that configurations do not hide each other.
    order = ran.sort_values("median_ms").groupby("engine_id").cumcount()
    size = ran.groupby("engine_id")["plan"].transform("count")
    ran = ran.assign(x=[column[int(e)] + (0.0 if n == 1 else 0.7 * (k / (n - 1) - 0.5))
                        for e, k, n in zip(ran["engine_id"], order.loc[ran.index], size)])
    n_sampled = int((result.engine_space or {}).get("sampled") or result.exploration["explored"])
    fig = _by_origin(result, ran, "x", "Engine space: latency by engine",
                     f"{len(ran)} configurations ran, {n_sampled} sampled beyond the proposals", selected)
    fig.update_xaxes(title_text="engine id (points of one engine: fastest left)", tickvals=list(range(len(engines))),
                     ticktext=[str(e) for e in engines], range=[-0.6, len(engines) - 0.4], zeroline=False)
    return fig


def _knob_frame(ran: pd.DataFrame, version: Any) -> pd.DataFrame:
    import pandas as pd

    points = pd.DataFrame(anatomy.knob_points(ran, version))
    return points[points["knob"].notna()] if not points.empty else points


@fitted
def engine_knobs(result: RunResult, engine: int | None = None, knob: str | None = None,
                 selected: str | None = None) -> go.Figure:
    """Latency (µs, log) against one knob's value for one engine's configurations that ran, coloured by origin:
    by default the engine with most samples and its knob with most distinct values. OptionError for a result without
    an engine-space sample, or an engine or knob not in it (naming those that are)."""
    result = require_run(result, "engine_knobs")
    selected = require_plan(selected, "engine_knobs")
    if engine is not None and (isinstance(engine, bool) or not isinstance(engine, int)):
        raise OptionError("engine", engine, "must be an engine id (int) or None", where="plots.engine_knobs")
    if knob is not None and not isinstance(knob, str):
        raise OptionError("knob", knob, "must be a knob name (e.g. 'TILE_SIZE') or None", where="plots.engine_knobs")
    ran = _sample(result, "engine_knobs")
    counts = ran["engine_id"].dropna().astype(int).value_counts()
    if engine is None:
        engine = int(counts.index[0])
    elif engine not in counts.index:
        raise OptionError("engine", engine, f"must be an engine that ran: {', '.join(map(str, sorted(counts.index)))}",
                          where="plots.engine_knobs")
    rows = ran[ran["engine_id"] == engine]
    points = _knob_frame(rows, (result.device or {}).get("cudnn_backend"))
    if points.empty:
        raise OptionError("engine", engine, "has no knobs to plot; its configurations differ in nothing",
                          where="plots.engine_knobs")
    spread = points.groupby("knob")["value"].nunique().sort_values(ascending=False, kind="stable")
    if knob is None:
        knob = str(spread.index[0])
    elif knob not in spread.index:
        raise OptionError("knob", knob, f"must be a knob of engine {engine}: {', '.join(spread.index)}",
                          where="plots.engine_knobs")
    values = points[points["knob"] == knob].set_index("plan")["value"]
    rows = rows[rows["plan"].isin(values.index)].assign(v=lambda f: [int(values[p]) for p in f["plan"]])
    fig = _by_origin(result, rows, "v", f"Engine {engine}: latency by {knob}",
                     f"{len(rows)} configurations of engine {engine} ran", selected)
    fig.update_xaxes(title_text=f"{knob} (knob value, no unit)", tickvals=sorted(set(rows["v"])), zeroline=False)
    return fig


# ------------------------------------------------------------------------------------------------ kernels

def kernels_table(result: RunResult) -> pd.DataFrame:
    """One row per (plan, kernel) of the plans that ran with recorded kernels: plan, kernel (name shortened), kind,
    count per execution, us per launch, total_us, and the plan's kernel-sum, replayed median and launch gap (µs).
    Empty, with these columns, for a result recorded without kernels."""
    result = require_run(result, "kernels_table")
    import pandas as pd

    per_kernel = anatomy.kernels_table(result.plans)
    columns = ["plan", "kernel", "kind", "count", "us", "total_us", "kernel_sum_us", "replayed_us", "launch_gap_us"]
    if per_kernel.empty:
        return pd.DataFrame(columns=columns)
    plans = result.plans.set_index("plan")

    def plan_us(plan: Any, col: str) -> float | None:
        v: Any = plans.at[plan, col] if plan in plans.index else None
        return float(v) * 1e3 if is_finite(v) else None

    out = per_kernel.assign(kernel_sum_us=[plan_us(p, "kernel_ms") for p in per_kernel["plan"]],
                            replayed_us=[plan_us(p, "median_ms") for p in per_kernel["plan"]],
                            launch_gap_us=[plan_us(p, "launch_gap_ms") for p in per_kernel["plan"]])
    return out[columns]


def kernels_html(result: RunResult) -> str:
    """The Lab's and report's Kernels view: per plan, its kernels and its kernel-sum beside its replayed latency
    (the launch gap); one sentence for a result without kernels."""
    table = kernels_table(result)
    if table.empty:
        return f"<p class='cl-anatomy-note'>{html.escape(NO_KERNELS_TEXT)}</p>"
    heads = ["kernel", "kind", "count", "µs each", "µs total"]
    parts = []
    for plan, rows in table.groupby("plan", sort=False):
        first = rows.iloc[0]
        gap = (f"kernels {fmt(first['kernel_sum_us'], '.2f', ' µs')}, "
               f"replayed {fmt(first['replayed_us'], '.2f', ' µs')}, "
               f"launch gap {fmt(first['launch_gap_us'], '.2f', ' µs')}")
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in (
            str(r["kernel"]), str(r["kind"] or ""), fmt(r["count"], ".0f"), fmt(r["us"], ".2f"),
            fmt(r["total_us"], ".2f"))) + "</tr>" for _, r in rows.iterrows())
        parts.append(f"<table class='cl-kernel-table'><caption><b>{html.escape(str(plan))}</b>: "
                     f"{html.escape(gap)}</caption><thead><tr>{''.join(f'<th>{h}</th>' for h in heads)}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    return f"<div class='cl-table-wrap cl-kernels'>{''.join(parts)}</div>"
