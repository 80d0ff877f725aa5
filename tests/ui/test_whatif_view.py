"""The Lab's What-if view, from the answers of cuDNN's heuristics recorded on an H100 and an H200 (data/whatif): built
only when its tab is shown; for the shipped conv recording's problem it shows the label, the targets side by side
(synthetic ones marked), sm100's refusal (cuDNN 9.19 crashed answering for compute capability 10.0: recorded so),
cuDNN's reasons for a declined target, and the drift between cuDNN 9.14 and 9.19; a problem with no recorded answer
gets one sentence and changes nothing else in the Lab."""

from __future__ import annotations

import html
import importlib.util

import pytest
from lab_samples import CONV_RECORDING

import cudnn_lab as cl
from cudnn_lab.whatif import devices as tg
from cudnn_lab import whatif as wi
from cudnn_lab.ui import Lab
from cudnn_lab.ui.lab import VIEWS
from cudnn_lab.ui.whatif_view import DEFAULT_TARGETS

#: A conv no recording answers for, nor one of its dtype (cuDNN cannot be asked on a machine without the driver;
#: the nearest recorded answer stands in only for a problem of the same family, direction, dtype and layout).
UNRECORDED = cl.ConvSpec(n=3, c=8, h=9, w=9, k=8, r=1, s=1, padding=0, layout="NHWC", dtype="fp32")


@pytest.fixture
def lab() -> Lab:
    return Lab(gpu=False)


def _shown(lab: Lab) -> Lab:
    lab.load_recorded(CONV_RECORDING)
    lab.view = "What-if"
    return lab


def test_the_view_is_not_built_when_the_lab_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args, **kwargs):
        raise AssertionError("the What-if view asked at Lab() start")

    monkeypatch.setattr(wi, "compare", never)
    monkeypatch.setattr(tg, "targets", never)
    lab = Lab(gpu=False)
    lab.spec = lab.spec.replace(n=8)  # a change of problem while the tab is hidden asks nothing either
    assert "What-if" in VIEWS and lab.tabs.get_title(VIEWS.index("What-if")) == "What-if"
    assert lab.tabs.children[VIEWS.index("What-if")] is lab.whatif_view.box
    assert not lab.whatif_view.built and lab.whatif_view.box.children == ()
    assert lab.messages == []


def test_the_conv_recordings_problem_shows_targets_side_by_side_labelled(lab: Lab) -> None:
    view = _shown(lab).whatif_view
    assert view.built and not view.stale and view.message == ""
    assert view.targets == [n for n in DEFAULT_TARGETS if n in {t.name for t in tg.targets()}]
    label = view.label_html.value
    assert "cuDNN&#x27;s heuristics&#x27; answer, not a measurement" in label
    for answer in view.frame.attrs["answers"]:  # where each answer was recorded (GPU, date, cuDNN)
        assert html.escape(answer.source) in label and answer.source.startswith("recorded on NVIDIA ")
    assert "with cuDNN 9.19.0" in label
    table = view.table_html.value
    assert "cl-plan-table" in table  # the kit's table, styled as the Plans view's
    for name in ("sm80", "sm89", "sm120"):
        assert f">{name} (" in table and "-class, synthetic)</th>" in table
    assert ">h200</th>" in table and html.escape(tg.target("sm80").label) in table  # the target's tooltip
    assert "sm100 (synthetic)" not in table  # no plan: its line is below instead
    # The recording shown is of this problem: its best time per engine sits next to the engines (in µs).
    assert "measured on NVIDIA H100 80GB HBM3" in table and "best (µs)" in table
    assert list(view.frame["engine_id"]) == sorted(view.frame["engine_id"])
    assert "cl-status-error" not in lab.status.value and lab.messages == []


def test_sm100s_crash_is_a_line_and_the_why_not_part_says_there_are_no_reasons(lab: Lab) -> None:
    view = _shown(lab).whatif_view
    refused = view.refused_html.value
    assert "<b>sm100</b> (crashed)" in refused and "SIGSEGV" in refused
    assert list(view.why_target.options) == ["sm100"] and view.why_target.value == "sm100"
    assert "crashed answering for sm100" in view.why_html.value and "<table" not in view.why_html.value


def test_the_drift_between_recorded_cudnn_versions_is_summarized_with_its_table(lab: Lab) -> None:
    view = _shown(lab).whatif_view
    assert view.version.value == 91400 and view.drift_target.value == "h200"
    text = view.drift_html.value
    assert "cuDNN 9.14.0: " in text and "cuDNN 9.19.0: " in text and "first choice" in text
    assert "cl-drift-table" in text and ">rank in mode A</th>" in text and ">9.14.0</th>" in text
    assert "against cuDNN 9.19.0, for h200" in view.version_note.value
    view.version.value = 91900  # the other way round: the same two versions, named from the other side
    assert "against cuDNN 9.14.0" in view.version_note.value and "cuDNN 9.14.0: " in view.drift_html.value
    view.drift_target.value = "sm89"
    assert view.drift.new.target == "sm89" and "for sm89" in view.version_note.value


def test_choosing_targets_answers_again(lab: Lab) -> None:
    view = _shown(lab).whatif_view
    view.target_buttons["sm100"].value = False
    view.target_buttons["sm86"].value = True
    assert "sm86 plans" in view.frame.columns and "sm100 plans" not in view.frame.columns
    assert view.refused_html.value == "" and "cuDNN refused none" in view.why_html.value
    assert view.why_target.disabled
    view.targets = ["h200"]
    assert [c for c in view.frame.columns if c.endswith(" plans")] == ["h200 plans"]
    assert "synthetic" not in view.label_html.value  # no synthetic target chosen: nothing to explain
    with pytest.raises(cl.OptionError, match="targets"):
        view.targets = ["b300"]


def test_a_declined_target_shows_cudnns_reasons_by_category(lab: Lab) -> None:
    lab.load_recorded("h100_conv_genstats_fp16")  # conv+genstats: sm80, sm89 and sm120 decline (recorded)
    lab.view = "What-if"
    view = lab.whatif_view
    assert {"sm80", "sm89", "sm120", "sm100"} <= set(view.why_target.options)
    view.why_target.value = "sm120"
    why = view.why_html.value
    assert why.startswith("<p class='cl-whatif-note'>cuDNN refused ")
    for head in ("engine", "status", "reason", "category", "configs"):
        assert f">{head}</th>" in why
    assert "(declined)" in view.refused_html.value


def test_a_problem_without_a_recorded_answer_gets_one_sentence_and_nothing_else_changes(lab: Lab) -> None:
    lab.load_recorded(CONV_RECORDING)
    lab.spec = UNRECORDED
    before = lab.state()
    status, messages, result, log = lab.status.value, list(lab.messages), lab.result, lab.log.outputs
    lab.view = "What-if"
    view = lab.whatif_view
    text = view.message
    assert text.startswith("cuDNN cannot be asked on this machine") and UNRECORDED.label() in text
    assert text.count(". ") == 0 and text.endswith(".")  # one sentence
    assert cl.ConvSpec().label() in text  # which problems do have an answer
    assert view.message_html.value.count("<p") == 1 and view.answer_box.layout.display == "none"
    assert view.frame is None and "Traceback" not in view.message_html.value
    after = lab.state()
    assert after["whatif_targets"] == view.targets  # the view shown keeps its targets in the state; nothing else
    moved = ("view", "whatif_targets")
    assert {k: v for k, v in after.items() if k not in moved} == {k: v for k, v in before.items() if k not in moved}
    assert (lab.status.value, lab.messages, lab.result, lab.log.outputs) == (status, messages, result, log)
    assert not lab.busy and not lab.load_button.disabled
    lab.spec = cl.ConvSpec()  # back to a recorded problem while the tab is shown: the answers come back
    assert view.message == "" and view.answer_box.layout.display == "flex" and view.frame is not None


def test_a_change_of_problem_while_hidden_is_answered_when_the_tab_is_shown(lab: Lab) -> None:
    _shown(lab)
    lab.view = "Graph"
    lab.spec = UNRECORDED
    assert lab.whatif_view.stale and lab.whatif_view.message == ""
    lab.view = "What-if"
    assert not lab.whatif_view.stale and UNRECORDED.label() in lab.whatif_view.message


def test_buttons_are_disabled_while_cudnn_is_asked(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    _shown(lab)
    seen = []
    real = wi.compare

    def watched(*args, **kwargs):
        view = lab.whatif_view
        seen.append((lab.busy, lab.load_button.disabled, view.target_buttons["h200"].disabled))
        return real(*args, **kwargs)

    monkeypatch.setattr(wi, "compare", watched)
    lab.whatif_view.target_buttons["sm86"].value = True
    assert seen == [(True, True, True)]
    assert not lab.busy and not lab.whatif_view.target_buttons["h200"].disabled and not lab.load_button.disabled


def test_an_error_in_a_callback_stays_in_the_log(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    _shown(lab)

    def broken(*args, **kwargs):
        raise ValueError("broken answer")

    monkeypatch.setattr(wi, "compare", broken)
    lab.whatif_view.target_buttons["sm86"].value = True  # no exception reaches the notebook
    assert "broken answer" in lab.status.value and "cl-status-error" in lab.status.value
    assert any("broken answer" in m for m in lab.messages) and not lab.busy


def test_sm_scaling_is_pointed_to_only_where_the_kit_has_it(lab: Lab) -> None:
    note = _shown(lab).whatif_view.sm_note.value
    if importlib.util.find_spec("cudnn_lab.whatif.scaling") is None:
        assert note == ""
    else:
        assert "cl.sm_scaling" in note


def test_a_state_with_the_what_if_view_rebuilds_it(lab: Lab) -> None:
    _shown(lab)
    again = Lab.from_state(lab.state(), gpu=False)
    assert again.view == "What-if" and again.whatif_view.built and again.whatif_view.frame is not None


def test_what_was_measured_under_cudnn_9_14_is_shown_for_the_conv(lab: Lab) -> None:
    lab.load_recorded("h100_conv_nhwc_fp16")  # also run under the system's cuDNN 9.14 (data/whatif/runs)
    lab.view = "What-if"
    view = lab.whatif_view
    text = view.run_drift_html.value
    assert "cuDNN 9.14.0: 44 plans" in text and "cl-run-drift-table" in text and "measured on NVIDIA H100" in text


def test_the_recorded_sm_scaling_is_drawn_for_its_problem_even_without_answers(lab: Lab) -> None:
    from cudnn_lab.whatif.scaling import recorded_scalings

    scaled = recorded_scalings()[0]
    lab.spec = scaled.spec  # the ResNet-50 conv: measured at four SM counts, no heuristics' answers recorded
    lab.view = "What-if"
    view = lab.whatif_view
    assert view.message == "" and "nearest recorded answer: conv fprop NHWC fp16" in view.label_html.value
    assert view.measured_box.layout.display != "none"
    figures = [o for o in view.sm_figure.outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(figures) == 1  # ... but its SM scaling is drawn
    lab.spec = cl.ConvSpec()
    assert view.sm_figure.outputs == ()  # another problem: no chart of the former one
    assert "No run of this problem under another cuDNN" not in view.run_drift_html.value


def test_synthetic_targets_are_named_by_gpu_class_and_carry_cudnns_deviceless_limit(lab: Lab) -> None:
    from cudnn_lab.whatif.gpu_facts import target_class
    from cudnn_lab.whatif.heuristics import DEVICELESS_LIMIT

    view = _shown(lab).whatif_view
    label = html.unescape(view.label_html.value)
    assert DEVICELESS_LIMIT in label  # the CLI's sentence: runtime-compiled engines left out without the card
    assert "runtime-compiled" in label and "matmul" in label
    table = view.table_html.value
    for name, gpu in (("sm80", "A100"), ("sm89", "L40S"), ("sm120", "RTX PRO 6000")):
        assert target_class(name) == gpu
        assert f">{name} ({gpu}-class, synthetic)</th>" in table
    assert target_class("sm86") is None and target_class("h200") is None
