"""Which backend wins where, drawn: one square per attention shape of a sweep, coloured by its winner (the kit's best
cuDNN plan or a PyTorch SDPA backend; grey where the tie rule names several), with the winner's margin written in
it; sequence length across, batch and GQA ratio down, one panel per head size and mask. The decisions are
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
#: The square's outline where the kit's best plan and PyTorch's cuDNN path differ beyond the tie rule.
KIT_FASTER, PYTORCH_FASTER = "#000000", "#d62728"
TIE_COLOR = "#b0b0b0"


def _group(shape: dict[str, Any]) -> int:
    kv = shape.get("kv_heads") or shape.get("heads") or 1
    return max(1, int(shape.get("heads") or 1) // int(kv))


def _row_key(shape: dict[str, Any]) -> str:
    return f"b{shape.get('batch')} · GQA {_group(shape)}"


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
    ys = sorted({_row_key(dict(r.shape)) for r in bmap.rows},
                key=lambda k: (int(k.split(" · ")[0][1:]), int(k.split("GQA ")[1])))
    shown: set[str] = set()
    tie = 1 + bmap.tie_rel
    for k, panel in enumerate(panels):
        at = {"row": k // cols + 1, "col": k % cols + 1}
        rows = [r for r in bmap.rows if _panel(dict(r.shape)) == panel]
        for key in [*WINNER_COLORS, "tie", "none ran"]:
            mine = [r for r in rows if r.backend == key]
            if not mine:
                continue
            ratio = [r.kit_vs_pytorch_cudnn or 1.0 for r in mine]
            fig.add_trace(go.Scatter(
                x=[str(r.shape["seq_q"]) for r in mine], y=[_row_key(dict(r.shape)) for r in mine],
                mode="markers+text", name=f"{key} wins" if key in WINNER_COLORS else key, legendgroup=key,
                showlegend=key not in shown,
                marker={"symbol": "square", "size": 26, "color": WINNER_COLORS.get(key, TIE_COLOR),
                        "line": {"width": [3 if q > tie or q < 1 / tie else 1 for q in ratio],
                                 "color": [KIT_FASTER if q > tie else PYTORCH_FASTER if q < 1 / tie else "white"
                                           for q in ratio]}},
                text=["" if r.backend_margin is None else f"+{r.backend_margin:.0%}" for r in mine],
                textfont={"size": 9, "color": "white"}, hovertext=[_hover(r) for r in mine],
                hoverinfo="text"), **at)
            shown.add(key)
        fig.update_xaxes(type="category", categoryorder="array", categoryarray=[str(s) for s in seqs],
                         title_text="sequence length" if at["row"] == nrows else None, **at)
        fig.update_yaxes(type="category", categoryorder="array", categoryarray=ys, **at)
    for name, color in (("kit's cuDNN plan faster than PyTorch's cuDNN path", KIT_FASTER),
                        ("PyTorch's cuDNN path faster than the kit's plan", PYTORCH_FASTER)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                                 marker={"symbol": "square-open", "size": 12, "color": color,
                                         "line": {"width": 3, "color": color}}))
    wins = bmap.wins()
    said = ", ".join(f"{n} {c}" for n, c in wins.items() if c)
    fig.update_layout(title=title_block(f"Which backend wins where: {bmap.gpu}",
                                        f"{len(bmap.rows)} shapes, tie within {bmap.tie_rel:.0%}: {said}",
                                        "in each square: the winning backend's margin over the next backend"),
                      height=max(320, 120 + nrows * (60 + 34 * len(ys))))
    return fig
