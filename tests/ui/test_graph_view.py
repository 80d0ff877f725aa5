"""The Graph and Code views: every family drawn from the graph layer; a family without a graph says why."""

from __future__ import annotations

import html
import shutil

import ipywidgets as W
import pytest

import cudnn_lab as cl
from cudnn_lab.ui.graph_view import FIT, GraphView, code_html, sized_svg, svg_size
from cudnn_lab.ui.graph_widget import GraphDrawing

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
def test_a_large_drawing_is_one_widget_that_fits_at_any_scale_and_zooms(name: str) -> None:
    view = GraphView(W)
    view.redraw(LARGE[name])
    width, height = svg_size(view._svg)
    assert width > 600 and height > 300  # dot's natural size, in px
    widget = view.graph_html
    assert isinstance(widget, GraphDrawing) and widget.value == view._svg and widget in view.graph_box.children
    assert view.zoom == FIT and widget.zoom == 0  # fit: the browser scales the whole graph into its box
    assert widget.file_name.endswith(".svg") and " " not in widget.file_name
    view.step(+1)  # from fit: one step above 100%
    assert view.zoom == 1.25 and widget.zoom == 1.25
    view.set_zoom(0.05)  # far below the old 75% floor
    assert widget.zoom == 0.05
    widget.zoom = 0.4  # the browser's wheel
    assert view.zoom == 0.4
    view.redraw(cl.ConvSpec())  # the zoom stays when the problem changes
    assert view.zoom == 0.4 and widget.zoom == 0.4
    view.set_zoom(FIT)
    assert view.zoom == FIT and widget.zoom == 0


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_a_click_on_a_node_has_its_details_from_inspect() -> None:
    from cudnn_lab.graph import build_graph

    spec = SPECS[">W<"]
    view = GraphView(W)
    view.redraw(spec)
    details = view.graph_html.details
    info = build_graph(spec).inspect()
    assert len(details) == len(info["tensors"]) + len(info["nodes"])
    for i, (name, t) in enumerate(info["tensors"].items()):
        d = dict(details[f"t{i}"]["rows"])
        assert details[f"t{i}"]["kind"] == "tensor" and details[f"t{i}"]["name"] == name
        assert d["dims"] == "[" + ", ".join(map(str, t["dim"])) + "]"
        assert d["strides"] == "[" + ", ".join(map(str, t["stride"])) + "]"
        assert d["dtype"] == t["dtype"].replace("data_type.", "")
        assert d["virtual"] == ("yes" if t["is_virtual"] else "no")
        assert f"<title>t{i}</title>" in view._svg  # the id a click finds in dot's SVG
    conv = details["op0"]
    assert conv["kind"] == "operation" and dict(conv["rows"])["type"] == "CONV_FPROP"
    assert dict(conv["rows"])["padding"] == "[1, 1]" and dict(conv["rows"])["in: weight"] == "W"
    assert view.graph_html.node("op0") == conv and view.graph_html.node("nope") is None
    virtual = [d for d in details.values() if d["kind"] == "tensor" and dict(d["rows"])["virtual"] == "yes"]
    assert virtual  # the relu's input is virtual
    view.redraw(SPECS[">X<"])  # pooling: no frontend graph, no details, the drawing still shows
    assert view.graph_html.details == {} and ">X<" in drawn(view)


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
