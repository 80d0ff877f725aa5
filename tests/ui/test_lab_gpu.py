"""On a GPU: clicking Run in the Lab measures a small conv and fills the plan table and the figures."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.ui import Lab

pytestmark = pytest.mark.gpu


def test_run_button_fills_the_plan_table() -> None:
    lab = Lab(cl.ConvSpec(n=2, c=16, h=16, w=16, k=32, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"))
    assert lab.gpu and not lab.run_button.disabled and lab.source.value == "Live GPU"
    lab.controls.policy.value = "all plans"
    steps: list[int] = []
    lab.progress.observe(lambda ch: steps.append(ch["new"]), names="value")
    lab.run_button.click()
    assert lab.messages == [] or not any("Error" in m for m in lab.messages), lab.messages
    result = lab.result
    assert result is not None and result.spec == lab.spec and len(result.ok) >= 1
    for plan in result.ok["plan"]:
        assert plan in lab.plans_html.value
    assert "µs" in lab.plans_html.value
    assert any(t.type == "bar" for t in lab.figures["latency"].data)
    assert lab.selected == result.heuristic_pick["plan"]
    assert steps and lab.progress.value == lab.progress.max
    assert not lab.run_button.disabled and not lab.busy
    assert lab.state()["recorded"] is None and lab.state()["source"] == "live"
