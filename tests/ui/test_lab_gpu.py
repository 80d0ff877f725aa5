"""On a GPU: clicking Run in the Lab measures a small conv and fills the plan table and the figures."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.ui import Lab

pytestmark = pytest.mark.gpu


def test_run_button_fills_the_plan_table() -> None:
    lab = Lab(cl.ConvSpec(n=2, c=16, h=16, w=16, k=32, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"))
    assert lab.gpu and not lab.run_button.disabled and lab.source.value == "Live GPU"
    lab.run_form.policy.value = "all"
    steps: list[int] = []
    lab.progress.observe(lambda ch: steps.append(ch["new"]), names="value")
    lab.run_button.click()
    assert lab.messages == [] or not any("Error" in m for m in lab.messages), lab.messages
    result = lab.result
    assert result is not None and result.spec == lab.spec and len(result.ok) >= 1
    for plan in result.ok["plan"]:
        assert plan in lab.results.plans_html.value
    assert "µs" in lab.results.plans_html.value
    assert "MEASURED HERE" in lab.results.info.value and "RECORDED" not in lab.results.info.value
    assert any(t.type == "bar" for t in lab.figures["latency"].data)
    from cudnn_lab.results import metrics

    assert lab.selected == metrics.pick(result.plans)["plan"]
    assert steps and lab.progress.value == lab.progress.max
    assert not lab.run_button.disabled and not lab.busy
    assert lab.state()["recorded"] is None and lab.state()["source"] == "live"
    assert result.settings.get("plans") == "all"


def test_sweep_view_runs_a_four_point_sweep_live() -> None:
    """The Sweep tab on a GPU: n x layout (4 points), progress and ETA follow, the figure fills in."""
    lab = Lab(cl.ConvSpec(n=1, c=16, h=16, w=16, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"))
    view = lab.sweep_view
    assert lab.gpu and not view.run_button.disabled
    view.axis_fields[0].value, view.axis_fields[1].value = "n", "layout"
    view.axis_values[0].value = "1, 2"
    view.axis_values[1].value = "NCHW, NHWC"
    assert view.validate() == {"n": [1, 2], "layout": ["NCHW", "NHWC"]}
    drawn: list[int] = []
    view.progress.observe(lambda ch: drawn.append(len(view.fig.data)), names="value")
    view.run_button.click()
    assert not any("Error" in m for m in lab.messages), lab.messages
    frame = view.frame
    assert frame is not None and frame["point_id"].nunique() == 4
    assert set(frame["point_status"]) == {"ok"}, frame[["label", "point_error"]]
    assert view.progress.value == view.progress.max == 4 and "4/4 points" in view.eta.value
    assert view.store is not None and view.store.is_dir()
    assert {t.name for t in view.fig.data if t.type == "scatter"} == {"NCHW", "NHWC"}
    assert drawn and not view.run_button.disabled and not lab.busy
    assert "MEASURED HERE" in view.info.value
