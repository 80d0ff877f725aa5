"""The figure host puts figures in named panes (a new widget per redraw, the old one closed) and draws DOT as SVG."""

from __future__ import annotations

import shutil

import ipywidgets as W
import plotly.graph_objects as go
import pytest

import cudnn_lab as cl
from cudnn_lab.ui.figures import FIGURE_WIDTH, FigureHost, drawing_html, placeholder
from cudnn_lab.ui.status import StatusLog


def test_show_puts_the_figure_in_its_pane_and_closes_the_old_widget() -> None:
    host = FigureHost(W, StatusLog(W))
    pane = host.pane("latency")
    assert host.pane("latency") is pane and pane.children == ()
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    host.show("latency", fig)
    first = host.widgets["latency"]
    assert pane.children == (first,) and host.figures["latency"] is fig
    assert "cl-figure-latency" in first._dom_classes and fig.layout.width == FIGURE_WIDTH
    host.show_text("latency", "nothing yet")
    assert pane.children == (host.widgets["latency"],) and host.widgets["latency"] is not first
    assert first.comm is None  # closed: no widget comm left behind
    assert host.figures["latency"].layout.annotations[0].text == "nothing yet"


def test_placeholder_says_its_text() -> None:
    fig = placeholder("No results yet")
    assert fig.layout.annotations[0].text == "No results yet" and fig.data == ()


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_drawing_html_is_the_graph_layers_svg() -> None:
    from cudnn_lab.graph import drawing

    svg = drawing_html(drawing(cl.MatmulSpec(m=64, n=64, k=64)).source)
    assert svg.startswith("<div class='cl-graph-drawing'><svg") and ">A<" in svg
