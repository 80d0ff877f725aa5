"""Plotly figures that compare within or across sweep frames: two sweeps' shared points (two GPUs, two cuDNN
versions) and NHWC against NCHW over two spec fields. Inputs and rules are those of :mod:`cudnn_lab.plots.sweep`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..results import metrics
from ..results.metrics import cell_text, sweep_chosen, sweep_ran
from .style import (LINE_COLOR, LINE_WIDTH, MARKER_SIZE, WHICH_TEXT, column, empty, field_name, fitted, geomean,
                    group_colors, legend_line, log_ticks, numeric, plain, point_counts, ratio_colorscale,
                    positive, require_choice, require_sweep, short_gpu, sorted_values, spec_key, sweep_devices,
                    sweep_hover, sweep_title, title_block)

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["COMPARE_KINDS", "compare_gpus", "layout_speedup_heatmap"]

#: What compare_gpus draws: speedup against arithmetic intensity (the default), latency bars, a log-log scatter.
COMPARE_KINDS = ("intensity", "bars", "scatter", "auto")


def _frame_name(frame: Any, fallback: str) -> str:
    devices = sweep_devices(sweep_ran(frame)) or sweep_devices(frame)
    return " + ".join(devices) if devices else fallback


def _best_by_spec(frame: Any) -> dict[str, Any]:
    """Each point's best plan (metrics' rule), keyed by the point's spec (two sweeps share a point by its spec)."""
    by_spec: dict[str, Any] = {}
    for _, r in sweep_chosen(frame, "best").iterrows():
        key = spec_key(r)
        if key not in by_spec or float(r["median_ms"]) < float(by_spec[key]["median_ms"]):
            by_spec[key] = r
    return by_spec


def _ceiling(frame: Any, col: str) -> float | None:
    """The median of a sweep's measured ceiling ``col`` (ceiling_gbps, ceiling_tflops) over its points."""
    if col not in frame.columns:
        return None
    vals = [v for v in map(positive, frame[col]) if v is not None]
    return float(sorted(vals)[len(vals) // 2]) if vals else None


@fitted
def compare_gpus(frame_a: Any, frame_b: Any, *, x: str | None = None, kind: str = "intensity") -> go.Figure:
    """How much faster is b than a, and why? Two sweeps' shared points (same spec), e.g. two GPUs.

    ``kind='intensity'`` (the default) answers it in one chart: each shared point's speedup of b over a (a's
    best-plan latency / b's; > 1: b faster) against its arithmetic intensity, one colour per operation, with the
    ratio of the two GPUs' measured memory bandwidths and of their measured compute ceilings marked, and the
    roofline's expectation between them (memory-bound points should sit at the bandwidth ratio, compute-bound
    ones at the compute ratio). ``kind='bars'`` draws both latencies (µs) per point label (or per value of spec
    field ``x``) with the speedup on a right axis; ``'scatter'`` a's latency against b's on log-log axes with the
    diagonal; ``'auto'`` bars up to 24 shared points, else the scatter. Legend names are each frame's GPU and cuDNN.
    """
    import plotly.graph_objects as go

    frame_a = require_sweep(frame_a, "compare_gpus", "frame_a")
    frame_b = require_sweep(frame_b, "compare_gpus", "frame_b")
    require_choice(kind, COMPARE_KINDS, "kind", "compare_gpus")
    base_a, base_b = _frame_name(frame_a, "no point shown"), _frame_name(frame_b, "no point shown")
    name_a, name_b = (f"{base_a} (a)", f"{base_b} (b)") if base_a == base_b else (base_a, base_b)
    best = [_best_by_spec(frame_a), _best_by_spec(frame_b)]
    common = [k for k in best[0] if k in best[1]]
    pairs = [(best[0][k], best[1][k]) for k in common]
    speedups = [float(a["median_ms"]) / float(b["median_ms"]) for a, b in pairs]
    if kind == "intensity":
        return _speedup_vs_intensity(frame_a, frame_b, pairs, (base_a, base_b), len(best[0]), len(best[1]))

    fig = go.Figure()
    extra = f"{len(pairs)} shared points (a: {len(best[0])}, b: {len(best[1])} ran)"
    if speedups:
        extra += f"; geometric-mean speedup of b {geomean(speedups):.2f}x"
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title=title_block("Best-plan latency", f"a: {base_a}", f"b: {base_b}", extra))
    if not pairs:
        return empty(fig, "nothing to plot: no point ran in both sweeps" if best[0] and best[1]
                      else "nothing to plot: no point ran in " + ("either sweep" if not (best[0] or best[1])
                                                                   else "sweep a" if not best[0] else "sweep b"))
    if x is not None:
        import pandas as pd

        xcol = column(pd.DataFrame([a for a, _ in pairs]), x, "x")
        xvals = [plain(a.get(xcol)) for a, _ in pairs]
        order = sorted(range(len(pairs)), key=lambda i: (cell_text(xvals[i]) is None,
                                                         float(xvals[i]) if numeric([xvals[i]]) else 0.0,
                                                         str(xvals[i])))
        pairs, speedups, xvals = [pairs[i] for i in order], [speedups[i] for i in order], [xvals[i] for i in order]
        unique = len(set(map(str, xvals))) == len(xvals)
        cats = [f"{field_name(xcol)}={v}" if unique else f"{field_name(xcol)}={v}: {cell_text(a.get('label'))}"
                for v, (a, _) in zip(xvals, pairs)]
    else:
        cats = [cell_text(a.get("label")) or cell_text(a.get("point_id")) or f"point {i}"
                for i, (a, _) in enumerate(pairs)]
        seen: dict[str, int] = {}
        for i, c in enumerate(cats):  # two points with one label (e.g. different epilogues) stay apart
            seen[c] = seen.get(c, 0) + 1
            if seen[c] > 1:
                cats[i] = f"{c} ({seen[c]})"
    hover = [sweep_hover(a, f"a ({name_a}): {float(a['median_ms']) * 1e3:.2f} µs, {cell_text(a.get('plan'))}",
                          f"b ({name_b}): {float(b['median_ms']) * 1e3:.2f} µs, {cell_text(b.get('plan'))}",
                          f"speedup of b {r:.2f}x ({'b' if r > 1 else 'a'} faster)")
             for (a, b), r in zip(pairs, speedups)]
    us_a = [float(a["median_ms"]) * 1e3 for a, _ in pairs]
    us_b = [float(b["median_ms"]) * 1e3 for _, b in pairs]
    if kind == "scatter" or (kind == "auto" and len(pairs) > 24):
        lo, hi = min(us_a + us_b) / 1.5, max(us_a + us_b) * 1.5
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="b = a", hoverinfo="skip",
                                 line={"dash": "dash", "color": "#999"}))
        fig.add_trace(go.Scatter(
            x=us_a, y=us_b, mode="markers", name="shared points", customdata=speedups, hovertext=hover,
            hoverinfo="text",
            marker={"size": MARKER_SIZE, "color": [math.log2(r) for r in speedups], "colorscale": "RdBu",
                    "cmid": 0.0, "line": {"width": LINE_WIDTH, "color": LINE_COLOR},
                    "colorbar": {"title": {"text": "log2 speedup<br>(> 0: b faster)"}, "thickness": 12}}))
        fig.update_xaxes(title_text=f"a: {name_a}, best-plan median latency (µs)", type="log",
                         range=[math.log10(lo), math.log10(hi)], **log_ticks(lo, hi))
        fig.update_yaxes(title_text=f"b: {name_b}, best-plan median latency (µs)", type="log",
                         range=[math.log10(lo), math.log10(hi)], **log_ticks(lo, hi))
        return fig
    fig.add_trace(go.Bar(x=cats, y=us_a, name=f"a: {short_gpu(name_a)}", marker={"color": "#1f77b4"}, hovertext=hover,
                         hoverinfo="text", offsetgroup="a"))
    fig.add_trace(go.Bar(x=cats, y=us_b, name=f"b: {short_gpu(name_b)}", marker={"color": "#ff7f0e"}, hovertext=hover,
                         hoverinfo="text", offsetgroup="b"))
    fig.add_trace(go.Scatter(x=cats, y=speedups, mode="markers+text", name="speedup of b (right axis)", yaxis="y2",
                             text=[f"{r:.2f}x" for r in speedups], textposition="top center", hovertext=hover,
                             hoverinfo="text", marker={"symbol": "diamond", "size": 11, "color": "#222"}))
    top = max(*speedups, 1.0) * 1.25
    step = next(s for s in (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0) if top / s <= 6)
    fig.update_layout(barmode="group",
                      yaxis2={"title": {"text": "speedup of b (a's latency / b's)"},
                              "overlaying": "y", "side": "right", "range": [0, math.ceil(top / step) * step],
                              "dtick": step, "tickformat": ".2~f", "ticksuffix": "x", "showgrid": False})
    fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y2", y0=1, y1=1,
                  line={"dash": "dot", "color": "#999", "width": 1})
    long = max(len(c) for c in cats) > 24  # problem labels as ticks would take the figure's height
    fig.update_xaxes(title_text=("point" + (" (hover for the problem)" if long else "")) if x is None
                     else f"{field_name(xcol)} (spec field)", type="category", showticklabels=not long or x is not None)
    fig.update_layout(yaxis={"title": {"text": "best-plan median latency per call (µs)"}, "rangemode": "tozero"})
    return fig


@fitted
def layout_speedup_heatmap(frame: Any, x: str, y: str, *, which: str = "best") -> go.Figure:
    """NHWC's speedup over NCHW (median NCHW / median NHWC; > 1: NHWC faster) over two spec fields of a sweep.

    NCHW and NHWC points are paired when their specs differ only in layout (on the same GPU and cuDNN version).
    A cell holds its pair's ratio, or the geometric mean when other fields vary too (hover text counts the
    pairs); a cell lacking either layout is blank. The colour scale is diverging and centred at 1.
    """
    import plotly.graph_objects as go

    frame = require_sweep(frame, "layout_speedup_heatmap")
    require_choice(which, metrics.WHICH, "which", "layout_speedup_heatmap")
    rows = sweep_chosen(frame, which)
    what = f"NHWC speedup over NCHW ({WHICH_TEXT[which]})"
    fig = go.Figure()
    fig.update_layout(template="plotly_white", title=sweep_title(frame, what, point_counts(frame, len(rows))))
    if rows.empty:
        return empty(fig, "nothing to plot: no point of this sweep ran")
    if "spec_layout" not in rows.columns:
        return empty(fig, "nothing to plot: this sweep has no layout field")
    xcol, ycol = column(rows, x, "x"), column(rows, y, "y")
    rows = rows[rows[xcol].map(cell_text).notna() & rows[ycol].map(cell_text).notna()]
    rows = rows.assign(_layout=rows["spec_layout"].map(cell_text),
                       _pair=[spec_key(r, ("layout",)) + "|" + str(cell_text(r.get("gpu"))) + "|"
                              + str(cell_text(r.get("cudnn"))) for _, r in rows.iterrows()],
                       **{xcol: rows[xcol].map(plain), ycol: rows[ycol].map(plain)})
    xs, ys = sorted_values(rows[xcol]), sorted_values(rows[ycol])
    cells: dict[tuple[Any, Any], list[tuple[float, Any, Any]]] = {}
    for _, pair in rows.groupby("_pair", sort=False):
        nchw, nhwc = pair[pair["_layout"] == "NCHW"], pair[pair["_layout"] == "NHWC"]
        if nchw.empty or nhwc.empty:
            continue
        a, b = nchw.iloc[0], nhwc.iloc[0]
        ratio = float(a["median_ms"]) / float(b["median_ms"])
        cells.setdefault((a[xcol], a[ycol]), []).append((ratio, a, b))
    if not cells:
        return empty(fig, "nothing to plot: no point ran in both NCHW and NHWC")

    z, text, hover = [], [], []
    for yv in ys:
        z_row: list[float | None] = []
        t_row: list[str] = []
        h_row: list[str] = []
        for xv in xs:
            pairs = cells.get((xv, yv))
            if not pairs:
                z_row.append(None)
                t_row.append("")
                h_row.append(f"{field_name(xcol)}={xv}, {field_name(ycol)}={yv}: not run in both layouts")
                continue
            ratio = geomean([p[0] for p in pairs])
            z_row.append(ratio)
            t_row.append(f"{ratio:.2f}x")
            lines = [f"<b>{field_name(xcol)}={xv}, {field_name(ycol)}={yv}</b>",
                     f"NCHW / NHWC = {ratio:.3f} ({'NHWC' if ratio > 1 else 'NCHW'} faster)"
                     + (f", geometric mean of {len(pairs)} pairs" if len(pairs) > 1 else "")]
            for _r, a, b in pairs[:4]:
                lines.append(f"{cell_text(a.get('label')) or 'NCHW'}: {float(a['median_ms']) * 1e3:.2f} µs "
                             f"({cell_text(a.get('plan')) or 'n/a'}) vs NHWC {float(b['median_ms']) * 1e3:.2f} µs "
                             f"({cell_text(b.get('plan')) or 'n/a'})")
            h_row.append("<br>".join(lines))
        z.append(z_row)
        text.append(t_row)
        hover.append(h_row)
    finite = [v for r in z for v in r if v is not None]
    spread = max(max(abs(math.log(v)) for v in finite), math.log(1.1))
    zmin, zmax = math.exp(-spread), math.exp(spread)  # 0.5x and 2x get equally strong, opposite colours
    fig.add_trace(go.Heatmap(
        x=[str(v) for v in xs], y=[str(v) for v in ys], z=z, text=text, texttemplate="%{text}",
        hovertext=hover, hoverinfo="text", colorscale=ratio_colorscale(zmin, zmax),
        zmin=zmin, zmax=zmax, hoverongaps=False,
        colorbar={"title": {"text": "NCHW / NHWC<br>(>1: NHWC faster)"}}))
    if any(len(p) > 1 for p in cells.values()):
        fig.update_layout(title=sweep_title(frame, what, "cells are geometric means over the other fields"))
    fig.update_xaxes(title_text=f"{field_name(xcol)} (spec field)", type="category")
    fig.update_yaxes(title_text=f"{field_name(ycol)} (spec field)", type="category")
    return fig


def _speedup_vs_intensity(frame_a: Any, frame_b: Any, pairs: list[tuple[Any, Any]], names: tuple[str, str],
                          ran_a: int, ran_b: int) -> go.Figure:
    """compare_gpus(kind='intensity'): speedup of b over a against arithmetic intensity, the ratios marked."""
    import plotly.graph_objects as go

    base_a, base_b = names
    fig = go.Figure()
    speedups = [float(a["median_ms"]) / float(b["median_ms"]) for a, b in pairs]
    extra = f"{len(pairs)} shared points (a: {ran_a}, b: {ran_b} ran)"
    if speedups:
        extra += f"; geometric mean {geomean(speedups):.2f}x"
    bw = (_ceiling(frame_a, "ceiling_gbps"), _ceiling(frame_b, "ceiling_gbps"))
    peak = (_ceiling(frame_a, "ceiling_tflops"), _ceiling(frame_b, "ceiling_tflops"))
    roofs = (f"measured ceilings b / a: {bw[1]:.0f} / {bw[0]:.0f} GB/s, {peak[1]:.0f} / {peak[0]:.0f} TFLOP/s"
             if all(bw) and all(peak) else "ceilings not measured in both sweeps")
    fig.update_layout(template="plotly_white", legend_itemsizing="constant", legend_title_text="",
                      title=title_block("Speedup of b over a per problem", f"a: {base_a}", f"b: {base_b}", extra,
                                        roofs))
    if not pairs:
        return empty(fig, "nothing to plot: no point ran in both sweeps")
    xs = {i: x for i, (a, _) in enumerate(pairs) if (x := positive(metrics.row_intensity(a))) is not None}
    keep = list(xs)
    if not keep:
        return empty(fig, "nothing to plot: the shared points have no FLOP and byte counts")
    ops = [cell_text(pairs[i][0].get("op")) or "unknown op" for i in keep]
    order = sorted_values(ops)
    colors = group_colors(order, None, frame_a)
    for op in order:
        idx = [i for i, o in zip(keep, ops) if o == op]
        fig.add_trace(go.Scatter(
            x=[xs[i] for i in idx], y=[speedups[i] for i in idx], mode="markers", name=op,
            marker={"color": colors[op], "size": MARKER_SIZE, "line": {"width": LINE_WIDTH, "color": LINE_COLOR}},
            hovertext=[sweep_hover(pairs[i][0], f"a: {float(pairs[i][0]['median_ms']) * 1e3:.2f} µs "
                                                f"({cell_text(pairs[i][0].get('plan'))})",
                                   f"b: {float(pairs[i][1]['median_ms']) * 1e3:.2f} µs "
                                   f"({cell_text(pairs[i][1].get('plan'))})",
                                   f"{xs[i]:.3g} FLOP/byte; speedup {speedups[i]:.2f}x") for i in idx],
            hoverinfo="text", customdata=[speedups[i] for i in idx]))
    x_lo, x_hi = min(xs[i] for i in keep) / 2, max(xs[i] for i in keep) * 2
    marks = [1.0]
    fig.add_hline(y=1.0, line={"color": "#9ca3af", "width": 1}, name="same speed")
    for (a, b), what, dash, color in ((bw, "bandwidth ratio", "dash", "#1d4ed8"),
                                      (peak, "compute ratio", "dot", "#b91c1c")):
        if a and b:
            r = b / a
            marks.append(r)
            line = {"dash": dash, "color": color, "width": 1.5}
            fig.add_hline(y=r, line=line, name=what)
            legend_line(fig, f"{what} {r:.2f}x", line)
    if bw[0] and bw[1] and peak[0] and peak[1]:
        n = 60
        grid = [x_lo * (x_hi / x_lo) ** (i / (n - 1)) for i in range(n)]
        expect = [(metrics.roof(g, peak[1], bw[1]) or math.nan) / (metrics.roof(g, peak[0], bw[0]) or math.nan)
                  for g in grid]
        fig.add_trace(go.Scatter(x=grid, y=expect, mode="lines", name="roofline expectation",
                                 line={"color": "#6b7280", "width": 1.5}, hoverinfo="skip"))
        for ridge_x, _who in ((metrics.ridge(peak[0], bw[0]), "a"), (metrics.ridge(peak[1], bw[1]), "b")):
            if ridge_x and x_lo < ridge_x < x_hi:
                fig.add_vline(x=ridge_x, line={"dash": "dot", "color": "#d1d5db", "width": 1})
    lo = min(min(speedups), *marks) * 0.9
    hi = max(max(speedups), *marks) * 1.08
    fig.update_xaxes(title_text="arithmetic intensity (FLOP/byte, at minimal bytes)", type="log",
                     range=[math.log10(x_lo), math.log10(x_hi)], **log_ticks(x_lo, x_hi))
    fig.update_yaxes(title_text="speedup of b (a's latency / b's)", range=[lo, hi],
                     tickformat=".2~f", ticksuffix="x", nticks=8)
    return fig

