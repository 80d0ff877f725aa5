"""The figure of an SM-scaling result (``cudnn_lab.whatif.scaling``): the best time against the SMs given, beside the
ideal 1/SM line, with what each carve-out refused."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from ..errors import OptionError
from ..results.metrics import is_finite
from .style import LINE_COLOR, LINE_WIDTH, MARKER_SIZE, cudnn_version, empty, fitted, title_block, us

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["plot_sm_scaling"]

BEST_COLOR = "#1f77b4"
IDEAL_LINE = {"dash": "dash", "color": "#6b7280", "width": 1.5}
#: Refusals listed per count in a point's hover (the rest are counted).
MAX_HOVER_REFUSALS = 6
#: What the figure reads of an SM-scaling result (cudnn_lab.whatif.scaling.ScalingResult, a layer above).
SCALING_FIELDS = ("spec", "device", "full_sm_count", "per_count", "refused", "refused_at", "errors", "label")


def _require(result: Any) -> Any:
    if not all(hasattr(result, a) for a in SCALING_FIELDS):
        raise OptionError("result", f"<{type(result).__name__}>", "must be a ScalingResult (from "
                          "cl.sm_scaling(spec) or ScalingResult.from_dict)",
                          where="plots.plot_sm_scaling")
    return result


def _missing(value: Any) -> bool:
    import pandas as pd

    return value is None or bool(pd.isna(value))


def _refusal_lines(result: Any, sm_count: int) -> list[str]:
    """One hover line per refusal of a carve-out: the plan or engine, and cuDNN's reason (cut short)."""
    rows = result.refused_at(sm_count)
    lines = []
    for _, r in rows.head(MAX_HOVER_REFUSALS).iterrows():
        who = (r["plan"] if not _missing(r["plan"]) else
               f"engine {int(r['engine_id'])}" if not _missing(r["engine_id"]) else "the graph")
        reason = str(r["reason"] or "")
        reason = reason if len(reason) <= 90 else reason[:87] + "..."
        lines.append(f"  {html.escape(str(who))} ({r['how']}, {html.escape(str(r['category']))}): "
                     f"{html.escape(reason)}")
    if len(rows) > MAX_HOVER_REFUSALS:
        lines.append(f"  ... and {len(rows) - MAX_HOVER_REFUSALS} more (result.refused)")
    return lines


@fitted
def plot_sm_scaling(result: Any) -> go.Figure:
    """Best time (µs) against the SMs given: one marker per count that ran, joined by a line, and the ideal time
    (the whole GPU's best x full/n) as a dashed line. The label (only the compute share is scaled: memory bandwidth
    and L2 are the whole GPU's) is a subtitle; each point's hover names its best plan and lists the plans or engines
    that carve-out refused with cuDNN's reason, and a note under the title counts them and names the counts where
    nothing ran."""
    import plotly.graph_objects as go

    result = _require(result)
    per = result.per_count
    fig = go.Figure()
    dev = result.device
    where = (f"{dev.get('gpu', 'unknown GPU')}, {result.full_sm_count} SMs, "
             f"cuDNN {cudnn_version(dev.get('cudnn_backend'))}")
    ran = per[per["best_ms"].map(is_finite)].sort_values("sms")
    refused = len(result.refused[result.refused["sm_count"].notna()])
    failed = [int(n) for n, e in result.errors]
    notes = []
    if refused:
        notes.append(f"{refused} plan(s) or engine(s) refused under carve-outs (hover a point for cuDNN's reasons)")
    if failed:
        notes.append(f"no plan ran on {', '.join(map(str, failed))} SMs")
    fig.update_layout(title=title_block("Best time against SMs", result.spec.label(), where, result.label,
                                        "; ".join(notes)),
                      xaxis_title=f"SMs given (of {result.full_sm_count})",
                      yaxis_title="best median latency per call (µs)")
    if ran.empty:
        return empty(fig, "no plan ran at any SM count")
    hover = []
    for _, r in ran.iterrows():
        n = None if _missing(r["sm_count"]) else int(r["sm_count"])
        head = f"whole GPU ({int(r['sms'])} SMs)" if n is None else f"{int(r['sms'])} SMs (carve-out)"
        ratio = f" (best is {r['over_ideal']:.2f}x it)" if is_finite(r["over_ideal"]) else ""
        lines = [f"<b>{head}</b>", f"best {html.escape(str(r['best_plan']))}: {us(r['best_ms'])}",
                 f"ideal {us(r['ideal_ms'])}{ratio}", f"{int(r['plans_ok'])} of {int(r['plans_listed'])} plans ran"]
        if not _missing(r["tile"]):
            lines.append(f"main kernel tile {html.escape(str(r['tile']))}")
        if not _missing(r.get("waves")):
            lines.append(f"{int(r['tiles'])} output tiles: {r['waves']:.2f} waves at one tile per SM at a time")
        if n is not None:
            extra = _refusal_lines(result, n)
            lines += ([f"refused here ({len(result.refused_at(n))}):"] + extra) if extra else ["nothing refused"]
        hover.append("<br>".join(lines))
    fig.add_trace(go.Scatter(x=[int(v) for v in ran["sms"]], y=[float(v) * 1e3 for v in ran["best_ms"]],
                             mode="markers+lines+text", name="best plan", hovertext=hover, hoverinfo="text",
                             text=[f"{w:.2f} waves" if is_finite(w) else "" for w in ran["waves"]],
                             textposition=["bottom left" if int(v) == int(ran["sms"].max()) else "bottom right"
                                           for v in ran["sms"]], textfont={"size": 10},
                             line={"color": BEST_COLOR, "width": 2},
                             marker={"size": MARKER_SIZE, "color": BEST_COLOR,
                                     "line": {"width": LINE_WIDTH, "color": LINE_COLOR}}))
    ideal = per[per["ideal_ms"].map(is_finite)].sort_values("sms")
    if not ideal.empty:
        xs = [int(v) for v in ideal["sms"]]
        fig.add_trace(go.Scatter(x=xs, y=[float(v) * 1e3 for v in ideal["ideal_ms"]], mode="lines",
                                 name="ideal: whole-GPU best x full/n", line=IDEAL_LINE,
                                 hovertemplate="%{x} SMs: ideal %{y:.2f} µs<extra></extra>"))
    fig.update_xaxes(tickvals=sorted({int(v) for v in per["sms"]}))
    return fig
