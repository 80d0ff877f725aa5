"""The Graph and Code views: every family drawn from the graph layer; a family without a graph says why."""

from __future__ import annotations

import html

import ipywidgets as W
import pytest

import cudnn_lab as cl
from cudnn_lab.ui.graph_view import GraphView, code_html

#: A tensor each family's drawing shows.
SPECS = {
    ">W<": cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, layout="NCHW", epilogue=("relu",)),
    ">B<": cl.MatmulSpec(batch=2, m=64, n=32, k=16, transpose_b=True),
    ">Stats<": cl.SdpaSpec(batch=1, heads=4, kv_heads=2, seq_q=64, seq_kv=128, head_dim=64, causal=True,
                           direction="fwd_training"),
    ">running_mean<": cl.NormSpec(kind="batchnorm", phase="training", n=2, c=16, h=4, w=4, layout="NCHW"),
    ">X<": cl.PoolSpec(n=2, c=8, h=9, w=9, mode="avg", window=(3, 2), stride=2, padding=(1, 0)),
}


def drawn(view: GraphView) -> str:
    return html.unescape(view.graph_html.value)


@pytest.mark.parametrize("tensor", list(SPECS))
def test_every_family_is_drawn(tensor: str) -> None:
    view = GraphView(W)
    spec = SPECS[tensor]
    view.redraw(spec)
    assert tensor in drawn(view) and spec.label() in drawn(view)
    assert ("<svg" in drawn(view)) == bool(view.dot_path)


def test_code_view_has_the_script_or_says_why_there_is_none() -> None:
    assert "import cudnn" in code_html(SPECS[">W<"])
    pool = html.unescape(code_html(SPECS[">X<"]))
    assert "No standalone script" in pool and "graph API" in pool and "cudnnPoolingForward" in pool
    assert "import cudnn" not in pool


def test_without_dot_the_drawing_falls_back() -> None:
    view = GraphView(W)
    view.dot_path = None
    view.redraw(SPECS[">W<"])
    assert "<svg" not in view.graph_html.value and "digraph" in view.graph_html.value
    assert "graphviz" in view.code_html.value.lower()
    wasm = view.browser_graph()
    if wasm is not None:  # graphviz-anywidget draws the same DOT in the browser
        assert wasm in view.graph_box.children and "dims [16, 8, 3, 3]" in wasm.dot_source
        view.redraw(SPECS[">B<"])
        assert "<b>B</b>" in wasm.dot_source
    view._wasm = False  # neither dot nor the widget: the DOT text is the drawing
    view.redraw(SPECS[">B<"])
    assert "digraph" in view.graph_html.value and ">B<" in drawn(view)
