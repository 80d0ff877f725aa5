"""The figure host: one Output per pane for the panel's life, each redraw its output replaced by the figure's plotly
mime bundle (no widget made or closed per redraw, so no comm is opened or left behind); figures fill their pane."""

from __future__ import annotations

import shutil

import ipywidgets as W
import plotly.graph_objects as go
import pytest

import cudnn_lab as cl
from cudnn_lab.ui.figures import PLOTLY_MIME, FigureHost, drawing_html, figure_bundle, placeholder
from cudnn_lab.ui.status import StatusLog


def _open_comms() -> int:
    """Widgets alive (each holds a comm to the browser)."""
    return len(W.widgets.widget._instances)


def test_show_replaces_the_panes_output_and_makes_no_widget() -> None:
    host = FigureHost(W, StatusLog(W))
    pane = host.pane("latency")
    assert host.pane("latency") is pane and pane.outputs == ()
    assert "cl-figure-latency" in pane._dom_classes
    before = _open_comms()
    for i in range(5):  # five redraws: the same Output, one output each time, no new widget
        fig = go.Figure(go.Bar(x=["a", "b"], y=[1, i]))
        host.show("latency", fig)
    assert _open_comms() == before
    assert host.widgets["latency"] is pane and len(pane.outputs) == 1
    shown = host.shown("latency")
    assert list(shown["data"][0]["y"]) == [1, 4] and host.figures["latency"] is fig
    host.show_text("latency", "nothing yet")
    assert host.shown("latency")["layout"]["annotations"][0]["text"] == "nothing yet"


def test_clear_leaves_the_pane_empty_and_show_fills_it_again() -> None:
    """A pane cleared (a view whose text says why there is no figure) holds nothing, so it takes no height."""
    host = FigureHost(W, StatusLog(W))
    pane = host.pane("engines")
    host.show_text("engines", "placeholder")
    host.clear("engines")
    assert pane.outputs == () and host.shown("engines") is None and "engines" not in host.figures
    assert pane.layout.display == "none" and "cl-figure" not in pane._dom_classes
    host.show("engines", go.Figure(go.Bar(x=["a"], y=[1])))
    assert host.pane("engines") is pane and len(pane.outputs) == 1 and host.shown("engines") is not None
    assert pane.layout.display != "none" and "cl-figure" in pane._dom_classes


def test_figures_fill_their_pane() -> None:
    host = FigureHost(W, StatusLog(W))
    fig = go.Figure(go.Bar(x=["a"], y=[1]), layout={"width": 920})
    host.show("latency", fig)
    layout = host.shown("latency")["layout"]
    assert "width" not in layout and layout["autosize"] is True and layout["height"] > 300
    assert host.shown("latency")["config"]["responsive"] is False  # JupyterLab's renderer resizes it (figures.py)


def test_the_bundle_is_plain_json_with_a_text_line() -> None:
    import json

    import numpy as np

    fig = go.Figure(go.Scatter(x=np.arange(3), y=np.array([1.5, 2.5, 3.5])), layout={"title": "Latency<br>sub"})
    bundle = figure_bundle(fig)
    json.dumps(bundle)  # no numpy left: the Output's outputs go through the widget comm as JSON
    assert bundle["text/plain"] == "<plotly figure: Latency>" and PLOTLY_MIME in bundle


def test_placeholder_says_its_text() -> None:
    fig = placeholder("No results yet")
    assert fig.layout.annotations[0].text == "No results yet" and fig.data == ()


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_drawing_html_is_the_graph_layers_svg() -> None:
    from cudnn_lab.graph import drawing

    svg = drawing_html(drawing(cl.MatmulSpec(m=64, n=64, k=64)).source)
    assert svg.startswith("<svg") and ">A<" in svg
