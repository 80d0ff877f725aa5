"""The drawing: DOT source names every tensor's dims, strides, layout, dtype and role and every op's type and
params; Jupyter display gives SVG with `dot`, and text (never an exception) without it."""

from __future__ import annotations

import html
import shutil
import sys

import graphviz
import pytest

import cudnn_lab as cl
from cudnn_lab.graph import SafeDigraph
from cudnn_lab.graph import render
from cudnn_lab.graph.labgraph import cached_dot_source
from cudnn_lab.graph.render import DOT_INSTALL_HINT, dtype_name, fallback_bundle, to_dot
from cudnn_lab.specs import ConvSpec, MatmulSpec, describe_layout

SPECS = [
    ConvSpec(n=2, c=8, h=5, w=5, k=16, epilogue=("bias", "relu")),
    ConvSpec(n=2, c=8, h=9, w=7, k=16, padding=(1, 0), stride=(2, 1), direction="dgrad", layout="NCHW",
             dtype="fp32"),
    ConvSpec(n=1, c=4, h=6, w=6, k=8, direction="wgrad", dtype="bf16"),
    MatmulSpec(batch=2, m=4, n=6, k=8, transpose_a=True, epilogue=("bias", "gelu", "add")),
]
IDS = [s.label() for s in SPECS]
DTYPE_WORD = {"data_type.HALF": "fp16", "data_type.FLOAT": "fp32", "data_type.BFLOAT16": "bf16"}


def _line(source: str, prefix: str, name: str) -> str:
    lines = [ln for ln in source.splitlines() if ln.lstrip().startswith(prefix) and "<b>" in ln
             and ln.split("<b>", 1)[1].split("</b>", 1)[0] == html.escape(name)]
    assert len(lines) == 1, (name, lines)
    return lines[0]


def node_line(source: str, name: str) -> str:
    """The DOT line of tensor ``name`` (tensor nodes are t0, t1, ...; an op may share a tensor's name)."""
    return _line(source, "t", name)


def op_line(source: str, name: str) -> str:
    """The DOT line of operation ``name`` (op nodes are op0, op1, ...)."""
    return _line(source, "op", name)


@pytest.fixture
def conv_graph() -> cl.LabGraph:
    return cl.build_graph(SPECS[0])


def only_dot_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """shutil.which finds everything it did before, but not `dot`."""
    real = shutil.which
    monkeypatch.setattr(render.shutil, "which", lambda cmd, *a, **k: None if cmd == "dot" else real(cmd, *a, **k))


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_tensor_shows_name_dims_strides_layout_dtype_and_role(spec) -> None:
    g = cl.build_graph(spec)
    info, roles = g.inspect(), g.roles
    source = g.to_dot().source
    for name, t in info["tensors"].items():
        line = node_line(source, name)
        assert f"dims {t['dim']}" in line
        assert f"strides {t['stride']}" in line
        assert f"layout {describe_layout(t['dim'], t['stride'])}" in line
        assert f"· {roles[name]}" in line
        if t["is_virtual"]:
            assert "fp32 (intermediate) · virtual" in line
        else:
            assert f"{DTYPE_WORD[t['dtype']]} · {roles[name]}" in line


def test_layout_names_in_drawing_follow_spec_layout(conv_graph) -> None:
    source = conv_graph.to_dot().source
    assert "layout NHWC" in node_line(source, "X")
    assert "layout NCHW = NHWC (size-1 dims)" in node_line(source, "bias")
    nchw = cl.build_graph(SPECS[1]).to_dot().source
    assert "layout NCHW" in node_line(nchw, "DY") and "NHWC" not in node_line(nchw, "DY")


def test_transposed_matmul_operand_is_drawn_transposed() -> None:
    source = cl.build_graph(SPECS[3]).to_dot().source
    assert "layout transposed" in node_line(source, "A")
    assert "layout row-major" in node_line(source, "B")


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_op_shows_type_and_params(spec) -> None:
    g = cl.build_graph(spec)
    source = g.to_dot().source
    for node in g.inspect()["nodes"]:
        line = op_line(source, node["name"])
        assert node["type"] in line
        for key, value in node["params"].items():
            shown = "x".join(map(str, value)) if isinstance(value, list) else str(value)
            assert f"{key}={shown}" in line


def test_conv_params_drawn_as_h_by_w() -> None:
    line = op_line(cl.build_graph(SPECS[1]).to_dot().source, "conv_dgrad")
    assert "CONV_DGRAD" in line and "padding=1x0" in line and "stride=2x1" in line and "dilation=1x1" in line


def test_pointwise_ops_show_their_mode(conv_graph) -> None:
    source = conv_graph.to_dot().source
    assert "mode=bias" in op_line(source, "bias") and "POINTWISE" in op_line(source, "bias")
    assert "mode=relu" in op_line(source, "relu")


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_one_edge_per_op_input_and_output(spec) -> None:
    g = cl.build_graph(spec)
    nodes = g.inspect()["nodes"]
    edges = [ln for ln in g.to_dot().source.splitlines() if "->" in ln]
    assert len(edges) == sum(len(n["inputs"]) + len(n["outputs"]) for n in nodes)


def test_title_is_the_spec_label(conv_graph) -> None:
    assert f'label="{SPECS[0].label()}"' in conv_graph.to_dot().source


def test_roles_get_distinct_styles(conv_graph) -> None:
    source = conv_graph.to_dot().source
    styles = {role: node_line(source, name).rsplit("> ", 1)[1] for role, name in
              (("input", "X"), ("output", "Y"), ("virtual", "conv_fprop::Y"))}
    assert "dashed" in node_line(source, "conv_fprop::Y")
    assert len(set(styles.values())) == 3


def test_to_dot_returns_a_safe_digraph(conv_graph) -> None:
    assert isinstance(conv_graph.to_dot(), SafeDigraph)
    assert isinstance(conv_graph.to_dot(), graphviz.Digraph)


def test_cached_dot_source_equals_fresh_drawing() -> None:
    spec = SPECS[3]
    assert cached_dot_source(spec) == cl.build_graph(spec).to_dot().source
    assert cached_dot_source(spec) is cached_dot_source(MatmulSpec.from_dict(spec.to_dict()))


@pytest.mark.parametrize("raw,name", [("data_type.HALF", "fp16"), ("data_type.FLOAT", "fp32"),
                                      ("data_type.BFLOAT16", "bf16"), ("data_type.DOUBLE", "fp64"),
                                      ("None", "None"), ("data_type.NOT_SET", "None"),
                                      ("data_type.UINT8", "uint8")])
def test_dtype_name_maps_frontend_names(raw: str, name: str) -> None:
    assert dtype_name(raw) == name


def test_intermediate_type_comes_from_graph_context() -> None:
    info = cl.build_graph(SPECS[0]).inspect()
    info["context"]["intermediate_data_type"] = "data_type.HALF"
    source = to_dot(info, {}, title="t").source
    assert "fp16 (intermediate) · virtual" in node_line(source, "conv_fprop::Y")


def test_unknown_roles_fall_back_to_virtual_flag() -> None:
    source = to_dot(cl.build_graph(SPECS[0]).inspect(), {}).source
    assert "· input" in node_line(source, "X")
    assert "· virtual" in node_line(source, "bias::OUT")


def test_mimebundle_is_svg_when_dot_is_installed(conv_graph) -> None:
    if shutil.which("dot") is None:
        pytest.skip("the graphviz 'dot' program is not on PATH: apt-get install graphviz")
    bundle = conv_graph._repr_mimebundle_()
    assert "image/svg+xml" in bundle
    assert "<svg" in bundle["image/svg+xml"]
    assert "conv_fprop::Y" in bundle["image/svg+xml"]


def test_without_dot_mimebundle_is_text_with_source_and_install_hint(conv_graph, monkeypatch) -> None:
    only_dot_missing(monkeypatch)
    bundle = conv_graph._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    text = bundle["text/plain"]
    assert DOT_INSTALL_HINT in text and "apt-get install graphviz" in text
    assert conv_graph.to_dot().source in text


def test_without_dot_the_html_view_escapes_the_source(conv_graph, monkeypatch) -> None:
    only_dot_missing(monkeypatch)
    page = conv_graph.to_dot()._repr_mimebundle_()["text/html"]
    assert html.escape(conv_graph.to_dot().source) in page
    assert "<<b>" not in page  # the HTML-like labels are escaped, not interpreted


def test_without_dot_graphviz_pipe_is_never_called(conv_graph, monkeypatch) -> None:
    only_dot_missing(monkeypatch)

    def boom(*args, **kwargs):
        raise AssertionError("graphviz pipe() called although dot is missing")

    monkeypatch.setattr(graphviz.Digraph, "pipe", boom)
    bundle = conv_graph._repr_mimebundle_()
    assert "text/plain" in bundle


def test_without_dot_or_widget_package_bundle_still_shows(conv_graph, monkeypatch) -> None:
    only_dot_missing(monkeypatch)
    monkeypatch.setitem(sys.modules, "graphviz_anywidget", None)  # import raises ImportError
    bundle = conv_graph._repr_mimebundle_()
    assert set(bundle) >= {"text/plain", "text/html"}


def test_fallback_bundle_keeps_any_source() -> None:
    bundle = fallback_bundle("digraph { a -> b }")
    assert bundle["text/plain"].endswith("digraph { a -> b }")
    assert bundle["text/plain"].startswith(DOT_INSTALL_HINT)


# --- to_svg: the one place `dot` runs -------------------------------------------------------------------------------

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="the graphviz 'dot' program is not installed")


@needs_dot
def test_to_svg_takes_a_graph_or_its_dot_text(conv_graph) -> None:
    from cudnn_lab.graph import to_svg

    dot = conv_graph.to_dot()
    svg = to_svg(dot)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "<?xml" not in svg
    assert to_svg(dot.source) == svg
    for name in conv_graph.tensors:
        assert html.escape(name) in svg  # every tensor drawn


@needs_dot
def test_to_svg_draws_pooling_classic_call() -> None:
    from cudnn_lab.graph import drawing, to_svg

    assert "cudnnPoolingForward" in to_svg(drawing(cl.PoolSpec(n=1, c=2, h=8, w=8)))


@needs_dot
@pytest.mark.parametrize("bad", ["digraph {", 42, None])
def test_to_svg_refuses_what_is_not_dot(bad) -> None:
    from cudnn_lab.errors import OptionError
    from cudnn_lab.graph import to_svg

    with pytest.raises(OptionError) as info:
        to_svg(bad)
    assert info.value.option == "dot" and len(str(info.value)) < 600


def test_to_svg_without_dot_says_how_to_install_it(conv_graph, monkeypatch) -> None:
    from cudnn_lab.errors import MissingDependencyError
    from cudnn_lab.graph import to_svg

    only_dot_missing(monkeypatch)
    with pytest.raises(MissingDependencyError) as info:
        to_svg(conv_graph.to_dot())
    assert "apt-get install graphviz" in str(info.value)


def test_attention_drawing_names_bshd_tensors_and_stats_in_attention_letters():
    import re

    import cudnn_lab as cl

    src = cl.build_graph(cl.SdpaSpec(batch=2, heads=4, seq_q=64, seq_kv=64, head_dim=64, layout="BSHD",
                                     direction="fwd_training")).to_dot().source
    layouts = set(re.findall(r"layout ([A-Z]+)", src))
    assert layouts == {"BSHD", "BHSD"}  # Q, K, V, O in BSHD; Stats [B, H, S, 1] packed in BHSD order
    assert "NCHW" not in src
