"""Plotly figures that compare within or across sweep frames: two sweeps' shared points (two GPUs, two cuDNN
versions) and NHWC against NCHW over two spec fields. Inputs and rules are those of :mod:`cudnn_lab.plots.sweep`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..results import metrics
from ..results.metrics import cell_text, sweep_chosen, sweep_ran
from .style import (LINE_COLOR, LINE_WIDTH, MARKER_SIZE, WHICH_TEXT, column, empty, field_name, geomean, numeric,
                    plain, point_counts, ratio_colorscale, require_choice, require_sweep, sorted_values, spec_key,
                    sweep_devices, sweep_hover, sweep_title)

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["compare_gpus", "layout_speedup_heatmap"]


def _frame_name(frame: Any, fallback: str) -> str:
    devices = sweep_devices(sweep_ran(frame)) or sweep_devices(frame)
    return " + ".join(devices) if devices else fallback


def compare_gpus(frame_a: Any, frame_b: Any, *, x: str | None = None, kind: str = "auto") -> go.Figure:
    """Best-plan latency of the points two sweeps share (same spec), e.g. two GPUs or two cuDNN versions.

    Points are matched on their spec. ``kind='bars'`` draws grouped bars (us) per point label (or per value of
    spec field ``x``, in its order) with the ratio b/a as markers on a right axis; ``kind='scatter'`` draws a's
    latency against b's on log-log axes with the diagonal (points above it are slower on b); ``'auto'`` takes
    bars up to 24 shared points. Legend names are each frame's GPU and cuDNN version.
    """
    import plotly.graph_objects as go

    frame_a = require_sweep(frame_a, "compare_gpus", "frame_a")
    frame_b = require_sweep(frame_b, "compare_gpus", "frame_b")
    require_choice(kind, ("auto", "bars", "scatter"), "kind", "compare_gpus")
    base_a, base_b = _frame_name(frame_a, "a"), _frame_name(frame_b, "b")
    name_a, name_b = (f"{base_a} (a)", f"{base_b} (b)") if base_a == base_b else (base_a, base_b)
    best: list[dict[str, Any]] = []
    for f in (frame_a, frame_b):
        rows = sweep_chosen(f, "best")
        by_spec: dict[str, Any] = {}
        for _, r in rows.iterrows():
            key = spec_key(r)
            if key not in by_spec or float(r["median_ms"]) < float(by_spec[key]["median_ms"]):
                by_spec[key] = r
        best.append(by_spec)
    common = [k for k in best[0] if k in best[1]]
    pairs = [(best[0][k], best[1][k]) for k in common]
    ratios = [float(b["median_ms"]) / float(a["median_ms"]) for a, b in pairs]

    fig = go.Figure()
    extra = f"{len(pairs)} shared points (a: {len(best[0])}, b: {len(best[1])} ran)"
    if ratios:
        extra += f"; geometric-mean ratio b/a {geomean(ratios):.3f}"
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title={"text": f"Best-plan latency: {base_a} (a) vs {base_b} (b)<br><sup>{extra}</sup>",
                             "x": 0.0, "xanchor": "left"})
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
        pairs, ratios, xvals = [pairs[i] for i in order], [ratios[i] for i in order], [xvals[i] for i in order]
        unique = len(set(map(str, xvals))) == len(xvals)
        cats = [f"{field_name(xcol)}={v}" if unique else f"{field_name(xcol)}={v}: {cell_text(a.get('label'))}"
                for v, (a, _) in zip(xvals, pairs)]
    else:
        cats = [cell_text(a.get("label")) or cell_text(a.get("point_id")) or f"point {i}" for i, (a, _) in enumerate(pairs)]
        seen: dict[str, int] = {}
        for i, c in enumerate(cats):  # two points with one label (e.g. different epilogues) stay apart
            seen[c] = seen.get(c, 0) + 1
            if seen[c] > 1:
                cats[i] = f"{c} ({seen[c]})"
    hover = [sweep_hover(a, f"a ({name_a}): {float(a['median_ms']) * 1e3:.2f} us, {cell_text(a.get('plan'))}",
                          f"b ({name_b}): {float(b['median_ms']) * 1e3:.2f} us, {cell_text(b.get('plan'))}",
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
            marker={"size": MARKER_SIZE, "color": [math.log2(r) for r in ratios], "colorscale": "RdBu_r",
                    "cmid": 0.0, "line": {"width": LINE_WIDTH, "color": LINE_COLOR},
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
    fig.update_xaxes(title_text="point" if x is None else f"{field_name(xcol)} (spec field)", type="category")
    fig.update_layout(yaxis={"title": {"text": "best-plan median latency per call (us)"}, "rangemode": "tozero"})
    return fig


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
        z_row, t_row, h_row = [], [], []
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
            for r, a, b in pairs[:4]:
                lines.append(f"{cell_text(a.get('label')) or 'NCHW'}: {float(a['median_ms']) * 1e3:.2f} us "
                             f"({cell_text(a.get('plan')) or 'n/a'}) vs NHWC {float(b['median_ms']) * 1e3:.2f} us "
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
