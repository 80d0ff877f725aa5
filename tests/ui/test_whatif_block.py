"""The What-if view's Blackwell block-format part: built with the view (not at Lab start), cuDNN's recorded answers
for block-scaled graphs labelled with device, date and cuDNN version, and the emulated error of the problem shown
computed on a click, labelled emulated; a problem the what-if cannot take gets one sentence."""

from __future__ import annotations

import html

import pytest

import cudnn_lab as cl
from cudnn_lab.whatif import block_formats as bw
from cudnn_lab.ui import Lab
from cudnn_lab.ui.whatif_view import BLOCK_HINT, BLOCK_OUTLIERS

SMALL = cl.MatmulSpec(batch=1, m=64, n=64, k=256, dtype="bf16")


@pytest.fixture
def lab() -> Lab:
    return Lab(gpu=False)


def test_nothing_is_read_at_lab_start(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args, **kwargs):
        raise AssertionError("block-scale answers read at Lab() start")

    monkeypatch.setattr(bw, "recorded_block_scale_answers", never)
    lab = Lab(gpu=False)
    assert not lab.whatif_view.built and lab.messages == []


def test_recorded_answers_are_shown_labelled(lab: Lab) -> None:
    lab.spec = SMALL
    lab.view = "What-if"
    view = lab.whatif_view
    assert view.built and view.block_box in view.box.children
    shown = view.block_answers_html.value
    assert html.escape("cuDNN's heuristics' answer, not a measurement") in shown
    assert "recorded on NVIDIA H200, 2026-11-26" in shown and "9.19.0" in shown
    for answer in bw.recorded_block_scale_answers():
        assert html.escape(answer.target_label) in shown
    assert "nvfp4" in shown and "mxfp8_e5m2" in shown and "declined" in shown
    assert view.block_html.value == BLOCK_HINT and view.block is None  # nothing computed before the click


def test_emulate_shows_the_problems_error_labelled_emulated(lab: Lab) -> None:
    lab.spec = SMALL
    lab.view = "What-if"
    view = lab.whatif_view
    view.block_outliers.value = BLOCK_OUTLIERS["1% of rows x1e5"]
    view.block_button.click()
    assert view.block is not None and view.block.spec == SMALL and view.block.outliers == 0.01
    table = view.block_html.value
    assert "emulated in float64" in table and "per-tensor fp8_e4m3" in table and "mxfp8_e4m3" in table
    assert not view.block_button.disabled  # busy only while computing
    view.block_fmt.value = "nvfp4"
    assert view.block_rule.disabled  # NVFP4's E4M3 scales have one rule
    view.block_button.click()
    assert view.block.fmt.name == "nvfp4" and "E2M1" in view.block_html.value
    lab.spec = SMALL.replace(m=128)  # another problem: the former table leaves
    assert view.block is None and view.block_html.value == BLOCK_HINT


def test_a_problem_the_whatif_cannot_take_gets_a_sentence(lab: Lab) -> None:
    lab.spec = cl.SdpaSpec(batch=1, heads=1, seq_q=64, seq_kv=64, head_dim=64)
    lab.view = "What-if"
    view = lab.whatif_view
    view.block_button.click()
    assert view.block is None and "cl-block-none" in view.block_html.value
    assert "MatmulSpec or a cl.ConvSpec" in view.block_html.value
