"""The Lab's Anatomy view with recordings: for one made before exploration and kernel profiling (the H200's of
2026-11-21, kept in tests/data) it says in one sentence why there is no engine-space sample and how to get one, and
that there are no kernels per plan; for the H100's of 2026-11-25 it draws the sample and lists the kernels."""

from __future__ import annotations

import pytest
from cudnn_lab.plots.anatomy import NO_KERNELS_TEXT
from cudnn_lab.ui import Lab
from cudnn_lab.ui.lab import VIEWS
from cudnn_lab.ui.results_view import ANATOMY_FIGURES


@pytest.fixture
def lab() -> Lab:
    """A Lab showing its Anatomy view (a load draws only the view on screen)."""
    lab = Lab(gpu=False)
    lab.view = "Anatomy"
    return lab


def _annotations(lab: Lab, name: str) -> list[str]:
    shown = lab.figure_host.shown(name)
    assert shown is not None
    return [a["text"] for a in shown["layout"].get("annotations", [])]


def test_the_anatomy_tab_is_there(lab: Lab) -> None:
    assert "Anatomy" in VIEWS
    assert lab.tabs.get_title(VIEWS.index("Anatomy")) == "Anatomy"
    lab.view = "Anatomy"
    assert lab.view == "Anatomy"


def test_before_a_result_the_anatomy_figures_say_there_is_none(lab: Lab) -> None:
    for name in ANATOMY_FIGURES:
        assert any("No results yet" in t for t in _annotations(lab, name))
    assert lab.results.engines_html.value == "" and lab.results.kernels_html.value == ""


def test_a_recording_without_exploration_says_how_to_get_a_sample(lab: Lab, old_conv_recording: str) -> None:
    lab.load_recorded(old_conv_recording)  # no kernels, no sample
    text = lab.results.engines_html.value
    assert "no engine-space sample" in text and "explore=200" in text
    assert lab.result.spec.label() in text
    for name in ANATOMY_FIGURES:  # issue 24: no empty placeholder boxes (they were 'No engine-space sample')
        assert lab.figure_host.shown(name) is None and not lab.figure_host.pane(name).outputs
    assert NO_KERNELS_TEXT in lab.results.kernels_html.value
    assert "cl-status-error" not in lab.status.value  # a recording without a sample is no error


def test_selecting_a_plan_keeps_the_anatomy_view(lab: Lab, old_conv_recording: str) -> None:
    lab.load_recorded(old_conv_recording)
    other = [p for p in lab.result.plans["plan"] if p != lab.selected][0]
    lab.select(other)
    assert NO_KERNELS_TEXT in lab.results.kernels_html.value
    assert "no engine-space sample" in lab.results.engines_html.value


def test_a_recording_with_an_engine_space_sample_draws_it_and_lists_kernels(lab: Lab) -> None:
    """The H100 recording of the plain NHWC conv (2026-11-25) carries a sampled engine space and kernels per plan."""
    lab.load_recorded("h100_conv_nhwc_fp16")
    result = lab.result
    assert result.exploration["explored"] > 0
    assert lab.results.engines_html.value.count("cl-anatomy-note") == 1
    assert "no engine-space sample" not in lab.results.engines_html.value
    for name in ANATOMY_FIGURES:
        shown = lab.figure_host.shown(name)
        assert shown is not None and sum(len(t.get("x", [])) for t in shown["data"]) > 0, name
    kernels = lab.results.kernels_html.value
    assert NO_KERNELS_TEXT not in kernels and "implicit_gemm" in kernels.replace(" ", "_").lower() or "sm90" in kernels
    assert "cl-status-error" not in lab.status.value


def test_a_fused_recording_without_a_sample_still_lists_its_kernels(lab: Lab) -> None:
    lab.load_recorded("h100_conv_nchw_fp16_bias_relu")
    assert "no engine-space sample" in lab.results.engines_html.value
    assert "nchwToNhwcKernel" in lab.results.kernels_html.value


def test_without_a_sample_the_kernel_table_follows_the_sentence(lab: Lab) -> None:
    """Issue 24: a result without an engine-space sample shows no placeholder boxes: the Anatomy view is the sentence
    saying why, then the kernels per plan (its panes take no height: nothing in them); a result with a sample
    draws the figures in the same panes again."""
    lab.load_recorded("h100_conv_nchw_fp16_bias_relu")
    anatomy = lab.results.views["Anatomy"]
    panes = [lab.figure_host.pane(name) for name in ANATOMY_FIGURES]
    assert all(p in anatomy.children and p.outputs == () and p.layout.display == "none" for p in panes)
    assert all(name not in lab.figure_host.figures for name in ANATOMY_FIGURES)
    assert "no engine-space sample" in lab.results.engines_html.value
    assert "nchwToNhwcKernel" in lab.results.kernels_html.value
    lab.load_recorded("h100_conv_nhwc_fp16")  # a sample: the figures come back in the same panes
    for name, pane in zip(ANATOMY_FIGURES, panes):
        assert lab.figure_host.pane(name) is pane and len(pane.outputs) == 1 and pane.layout.display != "none"
        assert lab.figure_host.shown(name) is not None and name in lab.figure_host.figures
