"""Classic calls in the Run form (issue 39): a problem that runs through a classic cuDNN call (pooling, softmax,
activation, a transform's convert, RNN) has no heuristics to choose its plans, so the form hides the heuristics
options for it; the graph layer says which problems are classic calls (their recipe is ClassicOnlyError)."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.graph.classic_call import is_classic_call
from cudnn_lab.specs import spec_classes
from cudnn_lab.ui import Lab

CLASSIC = ("pool", "softmax", "activation", "rnn")


@pytest.mark.parametrize("op", CLASSIC)
def test_classic_families_are_classic_calls(op):
    assert is_classic_call(spec_classes()[op]())


def test_graph_problems_are_not_and_a_transform_depends_on_its_kind():
    assert not is_classic_call(cl.ConvSpec()) and not is_classic_call(cl.MatmulSpec())
    transform = spec_classes()["transform"]
    assert is_classic_call(transform(kind="convert"))
    assert not is_classic_call(transform(kind="transpose"))


def test_the_run_form_hides_heuristics_for_a_classic_call():
    lab = Lab(gpu=False)
    row = lab.run_form.heuristics_row
    assert row.layout.display != "none"
    lab.spec = spec_classes()["pool"]()
    assert row.layout.display == "none"
    lab.spec = cl.ConvSpec()
    assert row.layout.display != "none"
