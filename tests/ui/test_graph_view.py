"""The Graph and Code views: every family drawn from the graph layer; a family without a graph says why."""

from __future__ import annotations

import html
import shutil

import ipywidgets as W
import pytest

import cudnn_lab as cl
from cudnn_lab.ui.graph_view import FIT, MIN_FIT_ZOOM, ZOOMS, GraphView, code_html, sized_svg, svg_size

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


LARGE = {"sdpa backward": cl.SdpaSpec(direction="bwd"),
         "batchnorm inference": cl.NormSpec(kind="batchnorm", phase="inference")}


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
@pytest.mark.parametrize("name", list(LARGE))
def test_a_large_drawing_fits_the_pane_at_a_legible_minimum_and_zooms(name: str) -> None:
    view = GraphView(W)
    view.redraw(LARGE[name])
    width, height = svg_size(view._svg)
    assert width > 600 and height > 300  # dot's natural size, in px
    shown = view.graph_html.value
    # fit: the pane's width, never below MIN_FIT_ZOOM of natural size (a wider drawing scrolls in its box)
    assert f"clamp({width * MIN_FIT_ZOOM:.0f}px, 100%, {width:.0f}px)" in shown and "cl-graph-scroll" in shown
    assert 'width="100%"' in shown and 'height="' not in shown.split("<svg", 1)[1].split(">", 1)[0]
    assert view.zoom_bar.layout.display == "flex" and "fit" in view.zoom_label.value
    view.zoom_in.click()  # from fit: one step above 100%
    assert view.zoom == 1.25 and f"width:{width * 1.25:.0f}px" in view.graph_html.value
    view.zoom_in.click()
    assert view.zoom == 1.5 and "150%" in view.zoom_label.value
    view.zoom_one.click()
    assert view.zoom == 1.0 and f"width:{width:.0f}px" in view.graph_html.value
    for _ in range(len(ZOOMS)):
        view.zoom_out.click()
    assert view.zoom == ZOOMS[0] and view.zoom_out.disabled
    view.redraw(cl.ConvSpec())  # the zoom stays when the problem changes
    assert view.zoom == ZOOMS[0]
    view.zoom_fit.click()
    assert view.zoom == FIT and "clamp(" in view.graph_html.value


def test_a_bad_zoom_is_refused() -> None:
    view = GraphView(W)
    with pytest.raises(cl.OptionError):
        view.set_zoom("huge")
    with pytest.raises(cl.OptionError):
        view.set_zoom(100)


def test_svg_size_reads_points_as_css_pixels() -> None:
    assert svg_size('<svg width="300pt" height="150pt" viewBox="0 0 300 150">') == (400.0, 200.0)
    assert svg_size('<svg viewBox="0.00 0.00 30 15">') == (40.0, 20.0)
    assert "width:20px" in sized_svg('<svg width="30pt" height="15pt"><g/></svg>', 0.5)
