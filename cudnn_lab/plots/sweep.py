"""Plotly figures of a sweep frame: a metric along a spec field, the roofline, the heuristic's regret, error per dtype.

A sweep frame is what ``cl.sweep`` or ``load_results`` of a sweep or store returns: the plan table's columns plus
``sweeps.POINT_COLUMNS`` and one ``spec_<field>`` column per spec field, one row per plan per point. Points that
failed or were invalid, and plans that did not run, are left out (the subtitle counts them); a frame with nothing to
draw gives a figure that says so. A size axis or colour names a spec field ('n' -> column spec_n) or a column. The
pick, best plan, regret, throughput and roofs are :mod:`cudnn_lab.results.metrics`'s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..results import metrics
from ..results.metrics import (cell_text, is_finite, point_key, row_gbps, row_tflops, sweep_chosen, sweep_ran)
from .style import (FAIL_COLOR, LINE_COLOR, LINE_WIDTH, MARKER_SIZE, PASS_COLOR, UNKNOWN_COLOR, WHICH_TEXT, Y_AXES,
                    annotation_x, column, empty, field_name, fitted, fmt, group_colors, group_name, group_palette,
                    log_span, log_ticks, numeric, plain, point_counts, require_choice, require_sweep, shared_x_note,
                    positive, short_gpu, sorted_values, split_groups, sweep_hover, sweep_title, verdict_of)
from ..numerics import TOLERANCES

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["sweep_latency", "sweep_roofline", "regret_along", "error_by_dtype"]


def _y_value(row: Any, y: str) -> float | None:
    if y == "median_ms":
        return float(row["median_ms"]) * 1e3
    return row_tflops(row) if y == "tflops" else row_gbps(row)


def _x_axis(fig: go.Figure, rows: Any, xcol: str, numeric_x: bool, log_x: bool) -> None:
    """The x axis of a sweep figure: log (padded by 1.5x each side), linear, or categories in sorted order."""
    if log_x:
        xs = [float(v) for v in rows[xcol]]
        fig.update_xaxes(type="log", range=[math.log10(min(xs) / 1.5), math.log10(max(xs) * 1.5)],
                         **log_ticks(min(xs) / 1.5, max(xs) * 1.5))
    elif numeric_x:
        fig.update_xaxes(type="linear")
    else:
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=sorted_values(rows[xcol]))


@fitted
def sweep_latency(frame: Any, x: str, *, color: str | None = None, y: str = "median_ms",
                  which: str = "pick") -> go.Figure:
    """Latency (us), or with ``y='tflops'`` TFLOP/s (``'gbps'``: GB/s), against a spec field ``x`` of a sweep.

    One colour per value of ``color`` (a spec field such as 'layout' or 'dtype', or a column such as 'plan' or
    'engine_id'), drawn from the heuristic's pick of each point (``which='pick'``), its best plan ('best') or
    every plan that ran ('all', one colour per plan unless ``color`` says otherwise). A line joins only points that
    differ in ``x`` alone: within a colour, points are grouped by every other field that varies (spec fields, op,
    GPU, cuDNN), one trace per group (:func:`line_groups`); a group of one x is drawn as markers, not a line.
    Markers and lines follow x in order; x is logarithmic when its values span more than 10x.
    """
    import plotly.graph_objects as go

    frame = require_sweep(frame, "sweep_latency")
    require_choice(y, Y_AXES, "y", "sweep_latency")
    require_choice(which, metrics.WHICH, "which", "sweep_latency")
    what, y_title, _ = Y_AXES[y]
    rows = sweep_chosen(frame, which)
    if which == "all" and color is None:
        color = "plan"
    fig = go.Figure()
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title=sweep_title(frame, f"{what.capitalize()} along {x}, {WHICH_TEXT[which]}",
                                         point_counts(frame, rows[point_key(rows)].nunique()
                                                       if not rows.empty else 0)))
    if rows.empty:
        return empty(fig, "nothing to plot: no point of this sweep ran")
    xcol = column(rows, x, "x")
    ccol = column(rows, color, "color") if color is not None else None
    rows = rows[rows[xcol].map(cell_text).notna()]
    rows = rows.assign(_y=[_y_value(r, y) for _, r in rows.iterrows()])
    rows = rows[rows["_y"].map(is_finite)]
    if rows.empty:
        return empty(fig, f"nothing to plot: no point that ran has both {x} and {what}")
    rows = rows.assign(**{xcol: rows[xcol].map(plain)})
    numeric_x = numeric(rows[xcol])
    groups = split_groups(rows, ccol)
    colors = group_colors([g for g, _ in groups], ccol, rows)
    others = _other_fields(rows, xcol, ccol)
    lines, singles, parts = 0, 0, []
    for value, group in groups:
        for n, (fixed, part) in enumerate(line_groups(group, others)):
            part = part.sort_values(xcol, key=lambda s: s.astype(float) if numeric_x else s.astype(str),
                                    kind="stable")
            joined = part[xcol].astype(str).nunique() > 1
            lines, singles = lines + joined, singles + (not joined)
            parts.append((value, part))
            fig.add_trace(go.Scatter(
                x=list(part[xcol]), y=[float(v) for v in part["_y"]], mode="lines+markers" if joined else "markers",
                name=group_name(ccol, value), legendgroup=str(value), showlegend=n == 0,
                line={"color": colors.get(value, UNKNOWN_COLOR) if ccol else "#1f77b4"},
                marker={"size": MARKER_SIZE, "line": {"width": LINE_WIDTH, "color": LINE_COLOR},
                        "color": colors.get(value, UNKNOWN_COLOR) if ccol else "#1f77b4"},
                meta={"fixed": fixed},
                hovertext=[sweep_hover(r, f"{field_name(xcol)} = {r[xcol]}", f"{what}: {r['_y']:.4g}")
                           for _, r in part.iterrows()],
                hoverinfo="text", customdata=list(part[point_key(part)])))
    note = shared_x_note(parts, xcol)
    if not note and others and singles:
        note = (f"no two points differ in {field_name(xcol)} alone (other fields vary): markers only" if not lines
                else f"lines join points differing in {field_name(xcol)} alone; {singles} other"
                     f"{'s are' if singles != 1 else ' is a'} marker{'s' if singles != 1 else ''}")
    if note:
        fig.update_layout(title=sweep_title(frame, f"{what.capitalize()} along {x}, {WHICH_TEXT[which]}", note))
    if ccol is not None:
        fig.update_layout(legend_title_text=field_name(ccol))
    _x_axis(fig, rows, xcol, numeric_x, numeric_x and log_span(rows[xcol]))
    fig.update_xaxes(title_text=f"{field_name(xcol)} (spec field)" if xcol.startswith("spec_") else xcol)
    fig.update_yaxes(title_text=y_title, rangemode="tozero" if y == "median_ms" else "normal")
    return fig


def _other_fields(rows: Any, xcol: str, ccol: str | None) -> list[str]:
    """The columns besides ``xcol`` and ``ccol`` whose value varies among ``rows``' points: spec fields
    (``spec_<field>``), and the op, GPU and cuDNN version (a line must not join two problems, or two devices)."""
    cols = [c for c in rows.columns if str(c).startswith("spec_")] + [c for c in ("op", "gpu", "cudnn")
                                                                       if c in rows.columns]
    out = []
    for col in cols:
        if col in (xcol, ccol):
            continue
        if rows[col].map(_key_text).nunique(dropna=False) > 1:
            out.append(col)
    return out


def _key_text(value: Any) -> str:
    """A cell as a grouping key: its plain text ('' when missing; lists and dicts as their text)."""
    text = cell_text(plain(value)) if not isinstance(value, (list, tuple, dict)) else str(value)
    return "" if text is None else text


def line_groups(rows: Any, fields: list[str]) -> list[tuple[dict[str, str], Any]]:
    """``rows`` split by the values of ``fields`` (in order of first appearance): the points one line may join,
    each with the values it holds fixed ({field: text}; one group, {} when ``fields`` is empty)."""
    if not fields or rows.empty:
        return [({}, rows)]
    keys = [tuple(_key_text(v) for v in vals) for vals in zip(*(rows[f] for f in fields))]
    order: dict[tuple[str, ...], list[int]] = {}
    for i, k in enumerate(keys):
        order.setdefault(k, []).append(i)
    return [({field_name(f): v for f, v in zip(fields, k)}, rows.iloc[idx]) for k, idx in order.items()]


@fitted
def sweep_roofline(frame: Any, *, which: str = "best") -> go.Figure:
    """Log-log roofline of a sweep: each point's chosen plan at (FLOP/byte, TFLOP/s), coloured by op.

    The roofs are the median of the frame's measured ceilings (``ceiling_tflops``, ``ceiling_gbps``) per GPU; a GPU
    without measured ceilings gets none and a note.
    """
    import plotly.graph_objects as go

    frame = require_sweep(frame, "sweep_roofline")
    require_choice(which, metrics.WHICH, "which", "sweep_roofline")
    rows = sweep_chosen(frame, which)
    fig = go.Figure()
    fig.update_layout(template="plotly_white", legend_itemsizing="constant", legend_title_text="op",
                      title=sweep_title(frame, f"Roofline ({WHICH_TEXT[which]} per point)",
                                         point_counts(frame, len(rows))))
    if rows.empty:
        return empty(fig, "nothing to plot: no point of this sweep ran")
    rows = rows.assign(_x=[metrics.row_intensity(r) for _, r in rows.iterrows()],
                       _y=[row_tflops(r) for _, r in rows.iterrows()])
    rows = rows[rows["_x"].map(lambda v: is_finite(v) and v > 0) & rows["_y"].map(lambda v: is_finite(v) and v > 0)]
    if rows.empty:
        return empty(fig, "nothing to plot: no point that ran has FLOPs, bytes and a throughput")

    gpu_col = rows["gpu"].map(cell_text) if "gpu" in rows.columns else None
    gpus = list(dict.fromkeys(gpu_col.fillna("unknown GPU"))) if gpu_col is not None else ["unknown GPU"]
    roofs = []
    for gpu in gpus:
        sub = rows if gpu_col is None else rows[gpu_col.fillna("unknown GPU") == gpu]
        vals = {}
        for col in ("ceiling_tflops", "ceiling_gbps"):
            s = sub[col].map(positive).dropna() if col in sub.columns else None
            vals[col] = float(s.median()) if s is not None and len(s) else None
        roofs.append((gpu, vals["ceiling_tflops"], vals["ceiling_gbps"]))
    ridges = [r for r in (metrics.ridge(p, b) for _, p, b in roofs) if r]
    xs = [*rows["_x"], *ridges]
    x_lo, x_hi = min(xs) / 20, max(xs) * 20
    dashes = ["solid", "dash", "dot", "dashdot"]
    for i, (gpu, peak, bw) in enumerate(roofs):
        tag = f"{short_gpu(gpu)} " if len(gpus) > 1 else ""
        ridge = metrics.ridge(peak, bw)
        line = {"color": "#555", "width": 2, "dash": dashes[i % len(dashes)]}
        if bw:
            x_end = ridge if ridge else x_hi
            fig.add_trace(go.Scatter(x=[x_lo, x_end], y=[metrics.roof(x_lo, None, bw), metrics.roof(x_end, None, bw)],
                                     mode="lines", name=f"{tag}memory {bw:.0f} GB/s", line=line,
                                     hovertemplate=f"{tag}memory roof: %{{y:.3g}} TFLOP/s at %{{x:.3g}} FLOP/byte"
                                                   "<extra></extra>"))
        if peak:
            x_start = ridge if ridge else x_lo
            fig.add_trace(go.Scatter(x=[x_start, x_hi], y=[peak, peak], mode="lines",
                                     name=f"{tag}compute {peak:.0f} TFLOP/s",
                                     line={**line, "color": "#222"},
                                     hovertemplate=f"{tag}compute roof: %{{y:.3g}} TFLOP/s<extra></extra>"))
    unmeasured = [gpu for gpu, p, b in roofs if not (p or b)]
    if unmeasured:
        fig.add_annotation(text=f"ceilings not measured ({', '.join(unmeasured)})", xref="paper", yref="paper",
                           x=0.02, y=0.98, showarrow=False, xanchor="left", yanchor="top", font={"size": 13})

    symbols = ["circle", "square", "diamond", "triangle-up", "cross", "x"]
    op_col = rows["op"].map(cell_text).fillna("unknown op") if "op" in rows.columns else None
    ops = sorted_values(op_col) if op_col is not None else ["unknown op"]
    colors = group_colors(ops, None, rows)
    for op in ops:
        group = rows if op_col is None else rows[op_col == op]
        sym = ([symbols[gpus.index(g) % len(symbols)] for g in group["gpu"].map(cell_text).fillna("unknown GPU")]
               if gpu_col is not None else "circle")
        fig.add_trace(go.Scatter(
            x=[float(v) for v in group["_x"]], y=[float(v) for v in group["_y"]], mode="markers", name=op,
            marker={"color": colors[op], "size": MARKER_SIZE, "symbol": sym,
                    "line": {"width": LINE_WIDTH, "color": LINE_COLOR}},
            hovertext=[sweep_hover(r, f"{r['_x']:.3g} FLOP/byte, {r['_y']:.3g} TFLOP/s",
                                    f"{fmt(r.get('pct_of_ceiling'), '.1f', '% of roof')}",
                                    cell_text(r.get("gpu")) or "unknown GPU") for _, r in group.iterrows()],
            hoverinfo="text", customdata=list(group[point_key(group)])))
    fig.update_xaxes(title_text="arithmetic intensity (FLOP/byte, at minimal bytes)", type="log",
                     range=[math.log10(x_lo), math.log10(x_hi)], **log_ticks(x_lo, x_hi))
    ys = [float(v) for v in rows["_y"]] + [p for _, p, _ in roofs if p]
    y_lo, y_hi = min(ys) / 3, max(ys) * 2
    fig.update_yaxes(title_text="throughput (TFLOP/s)", type="log", range=[math.log10(y_lo), math.log10(y_hi)],
                     **log_ticks(y_lo, y_hi))
    return fig


@fitted
def regret_along(frame: Any, x: str, *, color: str | None = None) -> go.Figure:
    """The heuristic's regret (pick median / best median; 1 = it chose the fastest) per point along spec field x.

    A star marks each point where the pick's engine differs from the previous point's (in x order, within a line
    of ``color``), annotated 'engine N -> M'.
    """
    import plotly.graph_objects as go

    frame = require_sweep(frame, "regret_along")
    rows = metrics.sweep_regret(frame)
    fig = go.Figure()
    what = f"Heuristic regret along {x}"
    fig.update_layout(template="plotly_white", legend_itemsizing="constant",
                      title=sweep_title(frame, what, point_counts(frame, len(rows))))
    if rows.empty:
        return empty(fig, "nothing to plot: no point of this sweep ran")
    xcol = column(rows, x, "x")
    ccol = column(rows, color, "color") if color is not None else None
    rows = rows[rows[xcol].map(cell_text).notna()]
    if rows.empty:
        return empty(fig, f"nothing to plot: no point that ran has {x}")
    rows = rows.assign(**{xcol: rows[xcol].map(plain)})
    numeric_x = numeric(rows[xcol])
    log_x = numeric_x and log_span(rows[xcol])
    groups = split_groups(rows, ccol)
    colors = group_colors([g for g, _ in groups], ccol, rows)
    changes: list[tuple[Any, float, str, Any]] = []
    for value, group in groups:
        group = group.sort_values(xcol, key=lambda s: s.astype(float) if numeric_x else s.astype(str),
                                  kind="stable")
        fig.add_trace(go.Scatter(
            x=list(group[xcol]), y=[float(v) for v in group["regret"]], mode="lines+markers",
            name=group_name(ccol, value) if ccol else "regret",
            line={"color": colors.get(value, UNKNOWN_COLOR) if ccol else "#1f77b4"},
            marker={"size": MARKER_SIZE - 2},
            hovertext=[sweep_hover(r, f"regret {r['regret']:.3f}x",
                                    f"best {r['best_plan']}: {r['best_ms'] * 1e3:.2f} µs")
                       for _, r in group.iterrows()],
            hoverinfo="text", customdata=list(group[point_key(group)])))
        prev = None
        for _, r in group.iterrows():
            eng = int(float(r["engine_id"])) if is_finite(r.get("engine_id")) else None
            if prev is not None and eng is not None and eng != prev:
                changes.append((r[xcol], float(r["regret"]), f"engine {prev} -> {eng}", r))
            if eng is not None:
                prev = eng
    if changes:
        fig.add_trace(go.Scatter(
            x=[c[0] for c in changes], y=[c[1] for c in changes], mode="markers", name="pick's engine changes",
            marker={"symbol": "star", "size": 16, "color": "#ff7f0e", "line": {"width": 1, "color": "black"}},
            hovertext=[sweep_hover(c[3], c[2]) for c in changes], hoverinfo="text",
            customdata=[c[3][point_key(rows)] for c in changes]))
        for xv, yv, label, _ in changes:
            fig.add_annotation(x=annotation_x(xv, log_x), y=yv, text=label, showarrow=True, arrowhead=2,
                               ax=0, ay=-35, font={"size": 11}, bgcolor="rgba(255,255,255,0.8)")
    fig.add_hline(y=1.0, line_dash="dash", line_color="#999", line_width=1,
                  annotation_text="pick = best", annotation_position="bottom left")
    if ccol is not None:
        fig.update_layout(legend_title_text=field_name(ccol))
    note = shared_x_note(groups, xcol)
    if note:
        fig.update_layout(title=sweep_title(frame, what, note))
    _x_axis(fig, rows, xcol, numeric_x, log_x)
    top = max(float(rows["regret"].max()), 1.0)
    fig.update_xaxes(title_text=f"{field_name(xcol)} (spec field)" if xcol.startswith("spec_") else xcol)
    fig.update_yaxes(title_text="regret: pick / best median (1 = optimal)",
                     range=[min(0.8, float(rows["regret"].min()) * 0.9), top * 1.15])
    return fig


@fitted
def error_by_dtype(frame: Any) -> go.Figure:
    """Relative L2 error of every plan that ran, per dtype (box and points, log y), with cuDNN's band per dtype.

    Each dtype's cuDNN band rtol (``numerics.TOLERANCES``) is a short horizontal marker across its box. An exact
    result (0) is drawn at the bottom as a downward triangle and a non-finite one (NaN/Inf outputs) at the top as
    an upward triangle; hover text gives the true value.
    """
    import plotly.graph_objects as go

    frame = require_sweep(frame, "error_by_dtype")
    ran = sweep_ran(frame)
    fig = go.Figure()
    if not ran.empty and "rel_l2" in ran.columns and "spec_dtype" in ran.columns:
        ran = ran[ran["rel_l2"].map(lambda v: cell_text(v) is not None) & ran["spec_dtype"].map(cell_text).notna()]
    else:
        ran = ran.iloc[0:0] if not ran.empty else ran
    fig.update_layout(template="plotly_white", legend_itemsizing="constant", showlegend=True,
                      title=sweep_title(frame, "Error vs float64 reference per dtype (plans that ran)",
                                         f"{len(ran)} plans checked; "
                                         + point_counts(frame, ran[point_key(ran)].nunique()
                                                         if not ran.empty else 0)))
    if ran.empty:
        return empty(fig, "nothing to plot: no plan that ran was checked against the reference")

    ran = ran.assign(_rel=ran["rel_l2"].astype("float64"), _dtype=ran["spec_dtype"].map(cell_text))
    known = [d for d in TOLERANCES if d in set(ran["_dtype"])]
    dtypes = known + sorted(set(ran["_dtype"]) - set(known))
    rtols = [TOLERANCES[d]["cudnn"].rtol for d in dtypes if d in TOLERANCES and "cudnn" in TOLERANCES[d]]
    finite_pos = [v for v in ran["_rel"] if math.isfinite(v) and v > 0]
    low = min([*finite_pos, *rtols], default=1e-6) / 100
    high = max([*finite_pos, *rtols, 1.0]) * 10
    pal = group_palette()
    for i, dtype in enumerate(dtypes):
        group = ran[ran["_dtype"] == dtype]
        normal = group[group["_rel"].map(lambda v: math.isfinite(v) and v > 0)]
        if normal.empty:
            continue
        fig.add_trace(go.Box(
            x=[dtype] * len(normal), y=[float(v) for v in normal["_rel"]], name=dtype, boxpoints="all",
            jitter=0.4, pointpos=0, marker={"color": pal[i % len(pal)], "size": 6}, line={"width": 1.5},
            hovertext=[sweep_hover(r, f"rel L2 {r['_rel']:.3g}", f"cuDNN band: {verdict_of(r.get('pass_cudnn'))}")
                       for _, r in normal.iterrows()],
            hoverinfo="text", customdata=list(normal[point_key(normal)])))
    for label, test, at, symbol in (("exact (rel L2 = 0)", lambda v: v <= 0, low, "triangle-down"),
                                    ("NaN/Inf outputs", lambda v: not math.isfinite(v), high, "triangle-up")):
        odd = ran[ran["_rel"].map(test)]
        if odd.empty:
            continue
        fig.add_trace(go.Scatter(
            x=list(odd["_dtype"]), y=[at] * len(odd), mode="markers", name=label,
            marker={"symbol": symbol, "size": 11, "color": FAIL_COLOR if at == high else PASS_COLOR},
            hovertext=[sweep_hover(r, f"rel L2 {r['_rel']:.3g}") for _, r in odd.iterrows()], hoverinfo="text"))
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
    fig.update_yaxes(title_text="relative L2 error ||out − ref|| / ||ref|| (no unit)", type="log",
                     range=[math.log10(low) - 0.3, math.log10(high) + 0.3], **log_ticks(low, high))
    return fig
