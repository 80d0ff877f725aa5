"""Every drawing valid (issue 24): every family, direction and option value of every spec, and every shipped
recording's spec, is drawn by the real ``dot`` program (not only its DOT text checked), with no error or warning, and
the SVG shows the tensors and operations the drawing is of.

The specs are enumerated from the spec registry (``spec_classes()``): each family's default plus a few bases (its
directions / phases / cells), then every value of every choice field (``field_choices()``), both values of every
bool field, every epilogue, and the variants that change a drawing without a choice field (SDPA masks, lengths,
dropout; more RNN layers). A choice value no base can take fails :func:`test_every_choice_value_is_drawn`.
"""

from __future__ import annotations

import dataclasses
import html
import importlib
import itertools
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.graph import RECIPES, drawing
from cudnn_lab.graph.classic_call import ClassicOnlyError
from cudnn_lab.graph.pool import PoolingHasNoGraphError
from cudnn_lab.graph.render import DrawingError, to_svg
from cudnn_lab.specs import (EPILOGUES, ConvPrologueSpec, ConvSpec, MatmulSpec, NormSpec, RnnSpec, SdpaSpec, Spec,
                             TransformSpec, spec_classes, spec_from_dict)
from cudnn_lab.specs.moe import MoeSpec

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="the graphviz 'dot' program is not installed")

RECORDED = Path(cl.__file__).parent / "data" / "recorded"

#: Besides each family's default: the bases that choice values are tried on (in order), so each direction, phase,
#: cell or FP8 variant is drawn and a value needing one (an FP8 out_dtype, a transpose's permutation) finds it.
BASES: dict[type[Spec], list[Spec]] = {
    ConvSpec: [ConvSpec(direction="dgrad"), ConvSpec(direction="wgrad"), ConvSpec(dtype="fp8_e4m3"),
               ConvSpec(dtype="fp8_e4m3", amax=True)],
    MatmulSpec: [MatmulSpec(dtype="fp8_e4m3"), MatmulSpec(dtype="fp8_e4m3", amax=True),
                 MatmulSpec(dtype="fp8_e5m2", b_dtype="fp8_e4m3")],
    SdpaSpec: [SdpaSpec(direction=d, dtype=t, causal=c)
               for t, d, c in itertools.product(("fp16", "fp8_e4m3"), ("fwd_inference", "fwd_training", "bwd"),
                                                (False, True))]
              + [SdpaSpec(batch=4, seq_lens_q=(1024, 512, 7, 1), seq_lens_kv=(1024, 1000, 64, 3))],
    NormSpec: [NormSpec(kind=k, phase=p) for k, p in itertools.product(
        ("layernorm", "rmsnorm", "batchnorm", "instancenorm"), ("training", "inference", "backward"))],
    TransformSpec: [TransformSpec(kind=k) for k in ("convert", "transpose", "reshape", "slice", "concatenate")],
    RnnSpec: [RnnSpec(cell=c, direction=d, bidirectional=b) for c, d, b in itertools.product(
        ("lstm", "gru", "rnn_relu", "rnn_tanh"), ("fwd", "bwd"), (False, True))],
    ConvPrologueSpec: [ConvPrologueSpec(genstats=True, param_dtype="fp16"), ConvPrologueSpec(dtype="bf16")],
    MoeSpec: [MoeSpec(counts=(1024, 0, 512, 512, 0, 0, 0, 0))],  # counts for distribution='counts' to read
}

#: Variants that change a drawing without a choice field of their own.
EXTRAS: dict[type[Spec], list[tuple[str, dict[str, Any]]]] = {
    ConvSpec: [("chain", {"epilogue": ("scale", "bias", "add", "relu", "gelu", "tanh")}),
               ("dgrad-nchw-fp32", {"direction": "dgrad", "layout": "NCHW", "dtype": "fp32"}),
               ("wgrad-bf16-strided", {"direction": "wgrad", "dtype": "bf16", "stride": 2, "groups": 2})],
    MatmulSpec: [("chain", {"epilogue": ("bias", "gelu", "add", "scale", "sigmoid"), "batch": 4,
                            "transpose_a": True, "transpose_b": True})],
    SdpaSpec: [("window", {"causal": True, "sliding_window": 64}),
               ("window-bwd", {"causal": True, "sliding_window": 64, "direction": "bwd"}),
               ("gqa", {"kv_heads": 4}), ("mqa-bwd", {"kv_heads": 1, "direction": "bwd"}),
               ("padding", {"seq_lens_q": (1024, 512, 7, 1), "seq_lens_kv": (1024, 1000, 64, 3)}),
               ("padding-bwd", {"seq_lens_q": (1024, 512, 7, 1), "seq_lens_kv": (1024, 1000, 64, 3),
                                "direction": "bwd"}),
               ("ragged", {"seq_lens_q": (1024, 512, 7, 1), "seq_lens_kv": (1024, 1000, 64, 3), "ragged": True}),
               ("ragged-bwd", {"seq_lens_q": (1024, 512, 7, 1), "seq_lens_kv": (1024, 1000, 64, 3), "ragged": True,
                               "direction": "bwd"}),
               ("dropout", {"dropout": 0.1, "direction": "fwd_training"}),
               ("dropout-bwd", {"dropout": 0.1, "direction": "bwd"}),
               ("bias-bwd", {"bias": "tensor", "direction": "bwd"}),
               ("decode", {"seq_q": 1, "causal": True, "diagonal_alignment": "bottom_right"})],
    NormSpec: [("residual-rmsnorm", {"kind": "rmsnorm", "residual": True})],
    RnnSpec: [("deep-bidir-bwd", {"layers": 3, "bidirectional": True, "direction": "bwd", "input_size": 17}),
              ("deep-bidir-lstm-bwd-cut-table", {"layers": 8, "bidirectional": True, "direction": "bwd"})],
}


def _try(base: Spec, **changes: Any) -> Spec | None:
    """``base`` with ``changes`` if that is a valid spec whose drawing reads every changed field, else None."""
    try:
        spec = base.replace(**changes)
    except SpecError:
        return None
    hidden = type(spec).hidden_fields(spec.to_dict())
    return None if any(f in hidden for f in changes) else spec


def family_cases(cls: type[Spec]) -> tuple[dict[str, Spec], list[str]]:
    """The family's specs to draw by case name (duplicates dropped), and the choice values no base could take."""
    bases = [cls(), *BASES.get(cls, [])]
    cases: dict[str, Spec] = {}
    missing: list[str] = []

    def add(name: str, spec: Spec) -> None:
        if spec not in cases.values():
            cases[name] = spec

    for i, base in enumerate(bases):
        add("default" if i == 0 else f"base{i}-{base.label()}", base)
    bools = [f.name for f in dataclasses.fields(cls) if str(f.type) == "bool"]
    options: list[tuple[str, Any]] = [(f, v) for f, values in cls.field_choices().items() for v in values]
    options += [(f, v) for f in bools for v in (False, True)]
    if "epilogue" in {f.name for f in dataclasses.fields(cls)}:
        options += [("epilogue", (e,)) for e in EPILOGUES]
    for field, value in options:
        spec = next((s for s in (_try(b, **{field: value}) for b in bases) if s is not None), None)
        if spec is None:
            missing.append(f"{field}={value!r}")
        else:
            add(f"{field}={value}", spec)
    for name, changes in EXTRAS.get(cls, []):
        add(name, cls().replace(**changes))
    return cases, missing


FAMILIES = list(spec_classes().values())
CASES = [pytest.param(spec, id=f"{cls.op}-{name}")
         for cls in FAMILIES for name, spec in family_cases(cls)[0].items()]


def recorded_specs() -> list[Any]:
    """Each shipped recording's spec (of the runs ``cl.recorded_datasets('run')`` offers), read from its file."""
    names = list(cl.recorded_datasets("run")["name"])
    assert names, "no recordings shipped"
    out = []
    for name in names:
        data = json.loads((RECORDED / f"{name}.json").read_text())
        out.append(pytest.param(spec_from_dict(data["spec"]), id=name))
    return out


def dot_svg(source: str) -> str:
    """``dot -Tsvg`` on ``source``: it must exit 0 and say nothing (an HTML label dot cannot parse is a warning)."""
    proc = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr[:2000]
    return proc.stdout


def svg_parts(svg: str) -> tuple[set[str], set[str]]:
    """The SVG's node ids (each node's ``<title>``) and every text it draws."""
    root = ET.fromstring(svg[svg.find("<svg"):])
    ns = "{http://www.w3.org/2000/svg}"
    nodes = {g.findtext(f"{ns}title") for g in root.iter(f"{ns}g") if g.get("class") == "node"}
    texts = {"".join(t.itertext()).strip() for t in root.iter(f"{ns}text")}
    return {n for n in nodes if n}, texts


def declared_nodes(dot: Any) -> set[str]:
    """The ids of the nodes the drawing declares (not those an edge would make up)."""
    heads = (line.strip().split(" [", 1)[0] for line in dot.body)
    return {h.strip('"') for h in heads if h and " -> " not in h and h not in ("graph", "node", "edge")}


def expected_labels(spec: Spec) -> set[str]:
    """What the drawing must show, from the family's own description (not from the DOT text): a graph family's
    tensors and operations as its recipe names them; a classic call with its tensors; an RNN's tensors and cells."""
    if isinstance(spec, RnnSpec):
        names = {"X", "Y", "Hy", *spec.state_names(), *(("Cy",) if spec.has_cell_state else ())}
        for layer, d in itertools.product(range(spec.layers), range(spec.directions)):
            names.add(f"{spec.cell.upper()} layer {layer}, {'backward (reversed time)' if d else 'forward'}: "
                      f"pseudo-layer {layer * spec.directions + d}")
        return names | ({"backward"} if spec.direction == "bwd" else set())
    try:
        recipe = RECIPES[type(spec)](spec)
    except (ClassicOnlyError, PoolingHasNoGraphError):
        info = importlib.import_module(f"cudnn_lab.graph.{spec.op}").describe(spec)
        return set(info["tensors"]) | {node["name"] for node in info["nodes"]}
    return {t.name for t in recipe.tensors if t.name} | {op.name for op in recipe.ops}


def check_drawn(spec: Spec) -> None:
    dot = drawing(spec)
    nodes, texts = svg_parts(dot_svg(dot.source))
    assert nodes == declared_nodes(dot), "the SVG's nodes are not the drawing's"
    missing = expected_labels(spec) - texts
    assert not missing, f"{spec.label()}: not shown: {sorted(missing)}"
    assert spec.label() in " ".join(texts)  # the title


@pytest.mark.parametrize("spec", CASES)
def test_every_family_direction_and_option_is_drawn_by_dot(spec: Spec) -> None:
    check_drawn(spec)


@pytest.mark.parametrize("spec", recorded_specs())
def test_every_shipped_recording_is_drawn_by_dot(spec: Spec) -> None:
    check_drawn(spec)


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.op)
def test_every_choice_value_is_drawn(cls: type[Spec]) -> None:
    """Each choice field's every value (and each bool, each epilogue) is in at least one drawn spec."""
    cases, missing = family_cases(cls)
    assert not missing, f"{cls.__name__}: add a base that takes {missing}"
    assert cases


def test_rnn_backward_labels_escape_the_arrow() -> None:
    """The RNN backward drawing (issue 24): its '->' arrows are &gt; inside the HTML label, and dot draws them."""
    spec = RnnSpec(cell="gru", direction="bwd", dtype="fp32")
    source = drawing(spec).source
    line = next(ln for ln in source.splitlines() if ln.lstrip().startswith("bwd ["))
    assert "cudnnRNNBackwardData_v8 -&gt; DX, DHx" in line and " -> " not in line
    _, texts = svg_parts(to_svg(source))
    assert "cudnnRNNBackwardData_v8 -> DX, DHx" in texts


def test_a_drawing_dot_rejects_says_so_in_one_sentence() -> None:
    """The kit's sentence names the family and what to do; the DOT and dot's message stay on the error."""
    spec = RnnSpec(direction="bwd")
    bad = 'digraph g {\n\tn [label=<<b>backward</b><br/>a -> b>]\n}\n'
    with pytest.raises(DrawingError) as info:
        to_svg(bad, spec=spec)
    e = info.value
    msg = str(e)
    assert isinstance(e, cl.CudnnLabError) and isinstance(e, RuntimeError) and e.spec is spec
    assert "RnnSpec" in msg and spec.label() in msg and "report it" in msg
    assert "digraph" not in msg and "syntax error" not in msg and "\n" not in msg and len(msg) < 400
    assert e.source == bad and "syntax error" in e.stderr


# --- where drawings are shown: the Lab's Graph view, the report ---------------------------------------------------

BAD_DOT = 'digraph g {\n\tn [label=<<b>backward</b><br/>a -> b>]\n}\n'


def _sentence_and_details(shown: str) -> tuple[str, str]:
    sentence, details = html.unescape(shown).split("<details", 1)
    assert "Cannot draw RnnSpec" in sentence and "report it" in sentence
    assert "digraph" not in sentence and "syntax error" not in sentence
    assert "a -> b" in details and "syntax error" in details  # the DOT source and dot's message, folded away
    return sentence, details


def test_graph_view_says_a_rejected_drawing_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipywidgets as W

    from cudnn_lab.ui import graph_view
    from cudnn_lab.ui.status import StatusLog

    monkeypatch.setattr(graph_view, "dot_source", lambda spec: BAD_DOT)
    spec = RnnSpec(cell="gru", direction="bwd")
    view = graph_view.GraphView(W)
    with pytest.raises(DrawingError):  # without a guard it raises, having said so in the view
        view.redraw(spec)
    _sentence_and_details(view.graph_html.value)
    log = StatusLog(W)
    view = graph_view.GraphView(W, guard=log.guard)
    view.redraw(spec)  # the Lab's guard reports it and the caller goes on
    status = html.unescape(log.status.value)
    assert "Cannot draw RnnSpec" in status and "digraph" not in status and "syntax error" not in status
    assert len(log.messages) == 1 and log.messages[0].startswith("DrawingError: Cannot draw RnnSpec")
    _sentence_and_details(view.graph_html.value)
    code = html.unescape(view.code_html.value)
    assert "No standalone script" in code  # the Code view still explains, and keeps the DOT source too
    _sentence_and_details(code.split("No standalone script", 1)[1])


def test_report_says_a_rejected_drawing_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    import graphviz

    import cudnn_lab.graph
    from cudnn_lab.cli import graph_svg

    spec = RnnSpec(direction="bwd")
    assert "<svg" in graph_svg(spec)
    monkeypatch.setattr(cudnn_lab.graph, "drawing", lambda spec: graphviz.Source(BAD_DOT))
    _sentence_and_details(graph_svg(spec))


def test_the_lab_loads_each_rnn_backward_recording_with_its_drawing() -> None:
    from cudnn_lab.ui import Lab

    lab = Lab(ConvSpec(n=2, c=8, h=8, w=8, k=16), gpu=False)
    names = [n for n in cl.recorded_datasets("run")["name"] if "rnn" in n and n.endswith("_bwd")]
    assert len(names) >= 2
    for name in names:
        lab.load_recorded(name)
        assert lab.spec.op == "rnn" and lab.spec.direction == "bwd" and lab.result is not None
        assert "<svg" in lab.graph_view.graph_html.value and "cudnnRNNBackwardData_v8" in html.unescape(
            lab.graph_view.graph_html.value)
        assert "cl-status-error" not in lab.status.value and not lab.messages
