"""The spec form: widgets <-> spec, ranges shown beside controls and following each other, bad values marked in
place (never raised), fields the operation ignores hidden."""

from __future__ import annotations

import pytest
from lab_samples import SPECS

import cudnn_lab as cl
from cudnn_lab.specs import EPILOGUES
from cudnn_lab.ui.fields import OPS, controls_from_spec, fields_of, spec_from_controls
from cudnn_lab.ui.forms import SpecForm
from cudnn_lab.ui.style import INVALID_BORDER


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label())
def test_spec_round_trips_through_the_widgets(spec: cl.Spec) -> None:
    form = SpecForm(spec)
    assert form.values() == controls_from_spec(spec)
    other = SpecForm(cl.MatmulSpec(m=3) if spec.op == "conv" else cl.ConvSpec(n=3))
    other.set_spec(spec)
    assert other.spec == spec and spec_from_controls(other.values()) == spec


def test_every_operation_has_a_control_per_field_and_a_button() -> None:
    form = SpecForm()
    for op in OPS:
        assert set(form.widgets[op]) == set(fields_of(op))
        assert op in [v for _, v in form.op.options]
    labels = dict((v, k) for k, v in form.op.options)
    assert labels["sdpa"] == cl.SdpaSpec.title and labels["pool"] == cl.PoolSpec.title
    assert form.op.tooltips[list(OPS).index("sdpa")] == cl.SdpaSpec.description
    assert set(form.conv["epilogue"].allowed_tags) == set(EPILOGUES)
    choices = cl.ConvSpec.field_choices()
    assert tuple(form.conv["layout"].options) == tuple(choices["layout"])


def test_the_chosen_operation_says_what_it_is_under_the_choice() -> None:
    form = SpecForm()
    at = form.box.children.index(form.op)  # after the preset picker
    assert form.box.children[at:at + 2] == (form.op, form.op_note)  # right under the operation choice
    for op, cls in OPS.items():
        form.op.value = op
        assert cls.description.split(":")[0] in form.op_note.value
    assert form.op.style.button_width == "auto"  # every title whole, however many operations there are


@pytest.mark.parametrize("text", ["3.5", "1e3", "16, 32", "", "sixteen"])
def test_a_number_that_is_not_a_whole_number_is_refused_in_place(text: str) -> None:
    seen: list[cl.Spec] = []
    form = SpecForm(cl.ConvSpec(n=16), on_change=seen.append)
    form.conv["n"].value = text  # IntText would have made 3.5 into 35 and 1e3 into 13 without a word
    assert "n" in form.invalid and form.spec.n == 16 and seen == []
    assert "n=" in form.invalid["n"]
    form.conv["n"].value = " 8 "
    assert form.invalid == {} and form.spec.n == 8


def test_pairs_and_floats_are_typed_as_text() -> None:
    form = SpecForm(cl.ConvSpec(r=5, s=3, padding=(2, 1)))
    assert form.conv["padding"].value == "2x1"
    form.conv["stride"].value = "2x1"
    assert form.spec.stride == (2, 1)
    norm = SpecForm(cl.NormSpec(epsilon=1e-5))
    assert norm.norm["epsilon"].value == "1e-05"
    norm.norm["epsilon"].value = "1e-6"
    assert norm.spec.epsilon == 1e-6
    norm.norm["epsilon"].value = "1,5"
    assert "epsilon" in norm.invalid and norm.spec.epsilon == 1e-6


def test_hints_follow_when_r_or_dilation_changes() -> None:
    form = SpecForm(cl.ConvSpec(r=3, s=3, padding=1))
    assert "0–2" in form.hints["conv"]["padding"].value
    form.conv["r"].value = "5"
    form.conv["s"].value = "5"
    assert "0–4" in form.hints["conv"]["padding"].value
    form.conv["dilation"].value = "2"
    assert "0–8" in form.hints["conv"]["padding"].value
    assert form.spec.r == 5 and form.spec.dilation == 2
    assert "from 0 to 8" in form.conv["padding"].tooltip
    form.conv["c"].value = "48"
    assert "divides 16" in form.hints["conv"]["groups"].value


def test_invalid_value_marks_its_control_and_keeps_the_last_valid_spec() -> None:
    seen: list[cl.Spec] = []
    form = SpecForm(cl.ConvSpec(r=3, s=3, padding=1), on_change=seen.append)
    before = form.spec
    form.conv["padding"].value = "5"  # larger than r - 1 allows: must not raise
    assert form.spec == before and seen == []
    pad = form.conv["padding"]
    assert "cl-invalid" in pad._dom_classes and pad.layout.border == INVALID_BORDER
    message = form.messages["conv"]["padding"]
    assert "padding=5" in message.value and "larger than the filter allows" in message.value
    assert message.layout.display != "none"
    assert isinstance(form.error, cl.SpecError) and form.error.field == "padding"
    form.conv["padding"].value = "2"  # valid again: the mark goes, the spec follows
    assert "cl-invalid" not in pad._dom_classes and not pad.layout.border and message.value == ""
    assert form.spec.padding == 2 and seen[-1] == form.spec


def test_epilogue_after_a_gradient_marks_the_epilogue() -> None:
    form = SpecForm(cl.ConvSpec(epilogue=()))
    form.conv["direction"].value = "dgrad"
    assert form.spec.direction == "dgrad"
    form.conv["epilogue"].value = ["relu"]
    assert "epilogue" in form.invalid and form.spec.epilogue == ()


def test_switching_operation_builds_its_default_spec() -> None:
    for op, cls in OPS.items():
        if op == "conv":
            continue
        seen: list[cl.Spec] = []
        form = SpecForm(cl.ConvSpec(n=3), on_change=seen.append)
        form.op.value = op
        assert form.spec == cls() and seen == [form.spec]
        assert form.boxes[op].layout.display != "none"
        assert all(box.layout.display == "none" for o, box in form.boxes.items() if o != op)


def test_a_pair_from_a_spec_stays_until_its_control_changes() -> None:
    form = SpecForm(cl.PoolSpec(window=(3, 2), padding=(1, 0)))
    assert form.pool["window"].value == "3x2"
    form.pool["n"].value = "2"
    assert form.spec.window == (3, 2) and form.spec.padding == (1, 0) and form.spec.n == 2
    form.pool["window"].value = "5"
    assert form.spec.window == 5


def test_attention_controls_edit_the_spec() -> None:
    form = SpecForm(cl.SdpaSpec())
    w = form.sdpa
    w["direction"].value = "bwd"
    w["causal"].value = True
    w["sliding_window"].value = "128"
    w["head_dim"].value = "64"  # any multiple of 8 up to 256 (issue 38): a number, no longer a choice
    w["layout"].value = "BHSD"
    w["attn_scale"].value = "0.1"
    assert form.spec == cl.SdpaSpec(direction="bwd", causal=True, sliding_window=128, head_dim=64, layout="BHSD",
                                    attn_scale=0.1)
    w["attn_scale"].value = ""
    assert form.spec.attn_scale is None


def test_kv_heads_left_empty_follows_heads_and_a_non_divisor_is_marked() -> None:
    form = SpecForm(cl.SdpaSpec(heads=16))  # kv_heads None: plain multi-head attention
    assert form.sdpa["kv_heads"].value == ""
    form.sdpa["heads"].value = "32"
    assert form.spec.kv_heads is None and form.spec.heads == 32 and form.spec.h_kv == 32
    form.sdpa["kv_heads"].value = "8"  # grouped-query attention stays grouped when heads changes
    form.sdpa["heads"].value = "16"
    assert form.spec.kv_heads == 8
    form.sdpa["kv_heads"].value = "5"
    kv = form.sdpa["kv_heads"]
    assert "cl-invalid" in kv._dom_classes and kv.layout.border == INVALID_BORDER
    assert "must divide heads=16" in form.messages["sdpa"]["kv_heads"].value
    assert form.spec.kv_heads == 8  # the last valid spec stays
    form.sdpa["kv_heads"].value = "two"
    assert "kv_heads" in form.invalid


def test_a_sliding_window_without_causal_is_marked() -> None:
    form = SpecForm(cl.SdpaSpec())
    form.sdpa["sliding_window"].value = "64"
    assert "sliding_window" in form.invalid and "needs causal=True" in form.invalid["sliding_window"]
    form.sdpa["causal"].value = True
    assert form.invalid == {} and form.spec.sliding_window == 64 and form.spec.causal


def test_pool_padding_over_half_the_window_is_marked_until_the_window_grows() -> None:
    form = SpecForm(cl.PoolSpec(window=3, padding=1))
    assert "0–1" in form.hints["pool"]["padding"].value
    form.pool["padding"].value = "2"
    assert "padding" in form.invalid and "at most half the window" in form.invalid["padding"]
    assert form.spec.padding == 1
    form.pool["window"].value = "4"  # the window grows: padding 2 fits now, the mark goes
    assert form.invalid == {} and form.spec.padding == 2 and form.spec.window == 4


def test_norm_form_hides_what_the_kind_ignores() -> None:
    form = SpecForm(cl.NormSpec())
    hidden = cl.NormSpec.hidden_fields(form.values())
    assert "n" in hidden and form.hidden == hidden
    assert form.cells["norm"]["n"].layout.display == "none"
    assert form.cells["norm"]["rows"].layout.display != "none"
    form.norm["kind"].value = "batchnorm"
    assert form.spec.kind == "batchnorm"
    assert form.cells["norm"]["n"].layout.display != "none"
    assert form.cells["norm"]["rows"].layout.display == "none"
    assert form.hidden == cl.NormSpec.hidden_fields(form.values())


def test_norm_invalid_values_are_marked() -> None:
    form = SpecForm(cl.NormSpec(kind="batchnorm", c=16))
    form.norm["c"].value = "12"
    assert "c" in form.invalid and "multiple of 8" in form.invalid["c"]
    assert form.spec.c == 16
    form.norm["kind"].value = "instancenorm"  # takes any c: valid again
    assert form.invalid == {} and form.spec.c == 12
    form.norm["epsilon"].value = "0.0"
    assert "epsilon" in form.invalid and "greater than 0" in form.invalid["epsilon"]


def test_callbacks_run_through_the_guard() -> None:
    calls: list[str] = []

    def guard(fn, *args):
        calls.append(fn.__name__)
        return fn(*args)

    form = SpecForm(cl.ConvSpec(), guard=guard)
    calls.clear()
    form.conv["n"].value = "3"
    assert calls == ["_changed"] and form.spec.n == 3


def test_a_size_overflow_marks_the_field_just_changed() -> None:
    form = SpecForm(cl.MatmulSpec())
    form.matmul["m"].value = "1048576"
    form.matmul["n"].value = "1048576"  # C is m x n: too large; the field to change is one of them, not batch
    assert list(form.invalid) in (["m"], ["n"]) and "larger than" in next(iter(form.invalid.values()))


def test_only_the_chosen_operations_form_is_built_until_another_is_reached() -> None:
    form = SpecForm()
    assert set(form._built) == {"conv"} and form.boxes["conv"] in form.box.children
    assert form.sdpa["heads"].value == str(cl.SdpaSpec().heads)  # reached: built at its defaults, not shown
    assert set(form._built) == {"conv", "sdpa"} and form.boxes["sdpa"] not in form.box.children
    assert form.spec == cl.ConvSpec() and form.invalid == {}
