"""Which backend wins where, drawn: one cell per attention shape of a sweep, coloured by the backend that wins it
(cuDNN, flash, memory-efficient, math; grey where the tie rule names several backends), with the winning backend's
margin over the next written in it and a mark where the kit's cuDNN plan and PyTorch's cuDNN path differ beyond the
tie rule; sequence length across, batch and GQA ratio down, one panel per head size and mask. The decisions are
:mod:`cudnn_lab.results.backend_map`'s; this module only draws them.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from ..results.backend_map import CONTENDERS, BackendMap, MapRow, backend_map, shape_label
from .style import fitted, title_block

if TYPE_CHECKING:  # pragma: no cover
    import plotly.graph_objects as go

__all__ = ["WINNER_COLORS", "TIE_COLOR", "plot_backend_map"]

#: One colour per backend (cuDNN green, as the kit draws cuDNN's plans elsewhere), and the colour of a tie.
WINNER_COLORS: dict[str, str] = {"cudnn": "#2ca02c", "flash": "#1f77b4", "efficient": "#ff7f0e", "math": "#8c564b"}
TIE_COLOR = "#b0b0b0"


def _group(shape: dict[str, Any]) -> int:
    kv = shape.get("kv_heads") or shape.get("heads") or 1
    return max(1, int(shape.get("heads") or 1) // int(kv))


def _row_key(shape: dict[str, Any]) -> tuple[int, int]:
    """A shape's row of its panel: (batch, GQA ratio)."""
    return int(shape.get("batch") or 1), _group(shape)


def _row_label(key: tuple[int, int]) -> str:
    return f"b{key[0]} · GQA {key[1]}"


def _panel(shape: dict[str, Any]) -> tuple[Any, ...]:
    d = f"d{shape.get('head_dim')}" + (f"/{shape['head_dim_v']}" if shape.get("head_dim_v") else "")
    return (d, "causal" if shape.get("causal") else "no mask", str(shape.get("direction") or ""),
            str(shape.get("dtype") or ""))


def _hover(row: MapRow) -> str:
    lines = [f"<b>{html.escape(shape_label(row.shape))}</b>", f"winner: {html.escape(row.verdict)}"
             + (f" by {row.margin:.0%}" if row.margin is not None else "")]
    for name, title in CONTENDERS.items():
        if name in row.times_ms:
            lines.append(f"{title}: {row.times_ms[name] * 1e3:.1f} µs")
        elif name in row.refused:
            lines.append(f"{title}: refused ({html.escape(row.refused[name][:90])})")
    if row.pytorch_default_ms is not None:
        lines.append(f"PyTorch's own dispatch: {row.pytorch_default_ms * 1e3:.1f} µs")
    return "<br>".join(lines)


def _cell_text(row: MapRow | None, tie: float) -> str:
    """A cell's words: the winning backend's margin, and a mark where the kit's cuDNN plan and PyTorch's cuDNN path
    differ by more than the tie rule (▲ the kit's faster, ▼ PyTorch's)."""
    if row is None:
        return ""
    q = row.kit_vs_pytorch_cudnn or 1.0
    mark = " ▲" if q > tie else " ▼" if q < 1 / tie else ""
    return ("" if row.backend_margin is None else f"+{row.backend_margin:.0%}") + mark


@fitted
def plot_backend_map(answer: Any, **_: Any) -> go.Figure:
    """The map of a :class:`~cudnn_lab.results.backend_map.BackendMap` or of a sweep frame that holds one."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    bmap = answer if isinstance(answer, BackendMap) else backend_map(answer)
    panels = list(dict.fromkeys(_panel(dict(r.shape)) for r in bmap.rows))
    varying = [i for i in range(4) if len({p[i] for p in panels}) > 1] or [0]
    names = [" · ".join(p[i] for i in varying) for p in panels]
    cols = min(2, len(panels))  # two panels across stay readable in a 470-px Lab column
    nrows = -(-len(panels) // cols)
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=names, horizontal_spacing=0.04, shared_yaxes=True,
                        vertical_spacing=0.16 / max(1, nrows - 1) if nrows > 1 else 0.1)
    seqs = sorted({int(r.shape["seq_q"]) for r in bmap.rows})
    keys_y = sorted({_row_key(dict(r.shape)) for r in bmap.rows})
    ys = [_row_label(k) for k in keys_y]
    keys = [*WINNER_COLORS, "tie", "none ran"]
    colors = [WINNER_COLORS.get(k, TIE_COLOR) for k in keys]
    n = len(keys)  # a discrete colour scale: backend i fills [i/n, (i+1)/n]
    scale = [[edge, c] for i, c in enumerate(colors) for edge in (i / n, (i + 1) / n)]
    tie = 1 + bmap.tie_rel
    for k, panel in enumerate(panels):
        at = {"row": k // cols + 1, "col": k % cols + 1}
        cells = {(str(r.shape["seq_q"]), _row_key(dict(r.shape))): r for r in bmap.rows
                 if _panel(dict(r.shape)) == panel}
        grid = [[cells.get((str(x), y)) for x in seqs] for y in keys_y]
        z = [[None if r is None else keys.index(r.backend) + 0.5 for r in line] for line in grid]
        text = [[_cell_text(r, tie) for r in line] for line in grid]
        hover = [["" if r is None else _hover(r) for r in line] for line in grid]
        fig.add_trace(go.Heatmap(x=[str(s) for s in seqs], y=ys, z=z, text=text, texttemplate="%{text}",
                                 textfont={"size": 10, "color": "white"}, customdata=hover,
                                 hovertemplate="%{customdata}<extra></extra>", colorscale=scale, zmin=0, zmax=n,
                                 showscale=False, xgap=2, ygap=2), **at)
        fig.update_xaxes(type="category", title_text="sequence length" if at["row"] == nrows else None, **at)
        fig.update_yaxes(type="category", **at)
    present = dict.fromkeys(r.backend for r in bmap.rows)
    for key in keys:  # the legend: one square per backend that wins somewhere, then what the marks mean
        if key in present:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", hoverinfo="skip",
                                     name=f"{key} wins" if key in WINNER_COLORS else key,
                                     marker={"symbol": "square", "size": 12,
                                             "color": WINNER_COLORS.get(key, TIE_COLOR)}))
    for name in ("▲ the kit's cuDNN plan beats PyTorch's cuDNN path", "▼ PyTorch's cuDNN path beats the kit's plan"):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                                 marker={"size": 1, "color": "white"}))
    wins = bmap.wins()
    said = ", ".join(f"{n} {c}" for n, c in wins.items() if c)
    fig.update_layout(title=title_block(f"Which backend wins where: {bmap.gpu}",
                                        f"{len(bmap.rows)} shapes, tie within {bmap.tie_rel:.0%}: {said}",
                                        "in each square: the winning backend's margin over the next backend"),
                      height=max(320, 120 + nrows * (60 + 34 * len(ys))))
    return fig
