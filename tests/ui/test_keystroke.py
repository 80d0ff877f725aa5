"""One keystroke in the Lab's form reads the form once and builds the cuDNN graph once (the drawing, the script
and the drawing's node details share that one real ``cudnn.pygraph``)."""

from __future__ import annotations

from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.graph import labgraph
from cudnn_lab.ui import Lab
from cudnn_lab.ui import forms

pytest.importorskip("cudnn")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of real graph builds (``graph.build.build_pygraph``) and form reads (``forms.field_kind`` on the
    first field: once per reading of the form)."""
    counts = {"builds": 0, "reads": 0}
    build, kind = labgraph.build_pygraph, forms.field_kind

    def counting_build(*args: Any, **kwargs: Any) -> Any:
        counts["builds"] += 1
        return build(*args, **kwargs)

    def counting_kind(op: str, name: str) -> str:
        if name == cl.ConvSpec.field_order[0]:
            counts["reads"] += 1
        return kind(op, name)

    monkeypatch.setattr(labgraph, "build_pygraph", counting_build)
    monkeypatch.setattr(forms, "field_kind", counting_kind)
    return counts


@pytest.mark.parametrize("field,value", [("k", "32"), ("h", "12"), ("dtype", "bf16")])
def test_a_keystroke_reads_the_form_once_and_builds_the_graph_once(counted: dict[str, int], field: str,
                                                                    value: str) -> None:
    lab = Lab(cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"), gpu=False)
    before = lab.spec
    counted["builds"] = counted["reads"] = 0
    lab.controls.conv[field].value = value
    assert lab.spec != before and str(getattr(lab.spec, field)) == value  # the keystroke made a new spec
    assert counted["reads"] == 1
    assert counted["builds"] == 1
    assert "conv" in lab.graph_view.code_html.value  # the script came from that one graph


def test_an_invalid_keystroke_reads_once_and_builds_nothing(counted: dict[str, int]) -> None:
    lab = Lab(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8, r=3, s=3, padding=1), gpu=False)
    counted["builds"] = counted["reads"] = 0
    lab.controls.conv["padding"].value = "5"  # r = 3 allows at most 2
    assert lab.controls.invalid and counted["reads"] == 1 and counted["builds"] == 0
