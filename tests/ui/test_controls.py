"""Spec controls: values <-> spec round trip, ranges that follow each other, invalid values marked, not raised."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.specs import EPILOGUES
from cudnn_lab.ui.controls import (INVALID_BORDER, SpecControls, controls_from_spec, limits, run_options_from_values,
                                   spec_from_controls)

SPECS = [
    cl.ConvSpec(),
    cl.ConvSpec(n=2, c=8, h=9, w=7, k=16, r=5, s=3, padding=(2, 1), stride=(2, 1), dilation=1, groups=4,
                layout="NCHW", dtype="bf16", epilogue=("scale", "bias", "gelu")),
    cl.ConvSpec(direction="wgrad", dtype="fp32"),
    cl.ConvSpec(dtype="fp16", compute_dtype="fp16", epilogue=("relu", "relu")),
    cl.MatmulSpec(),
    cl.MatmulSpec(batch=3, m=5, n=7, k=9, transpose_a=True, dtype="fp32", epilogue=("bias", "tanh")),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label())
def test_spec_round_trips_through_control_values(spec: cl.Spec) -> None:
    assert spec_from_controls(controls_from_spec(spec)) == spec


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label())
def test_spec_round_trips_through_the_widgets(spec: cl.Spec) -> None:
    controls = SpecControls(spec)
    assert controls.values() == controls_from_spec(spec)
    other = SpecControls(cl.MatmulSpec(m=3) if spec.op == "conv" else cl.ConvSpec(n=3))
    other.set_spec(spec)
    assert other.spec == spec and spec_from_controls(other.values()) == spec


def test_control_values_are_plain() -> None:
    values = controls_from_spec(cl.ConvSpec(epilogue=("bias",)))
    assert values["op"] == "conv" and values["epilogue"] == ("bias",) and values["n"] == 16
    assert spec_from_controls({**values, "epilogue": ["bias", "relu"]}).epilogue == ("bias", "relu")


def test_spec_from_controls_raises_spec_error_naming_the_field() -> None:
    values = controls_from_spec(cl.ConvSpec(r=3, s=3))
    with pytest.raises(cl.SpecError) as info:
        spec_from_controls({**values, "padding": 5})
    assert info.value.field == "padding" and info.value.value == 5
    with pytest.raises(cl.SpecError) as info:
        spec_from_controls({**values, "op": "pool"})
    assert info.value.field == "op"


def test_padding_limit_follows_r_and_dilation() -> None:
    values = controls_from_spec(cl.ConvSpec(r=3, s=3, padding=1, dilation=1))
    assert limits(values)["padding"] == (0, 2)
    assert limits({**values, "r": 5, "s": 5})["padding"] == (0, 4)
    assert limits({**values, "dilation": 2})["padding"] == (0, 4)
    assert limits({**values, "r": 5, "s": 5, "dilation": 3})["padding"] == (0, 12)


def test_groups_limit_follows_c_and_k() -> None:
    values = controls_from_spec(cl.ConvSpec(c=64, k=128))
    assert limits(values)["groups"] == (1, 64)
    assert limits({**values, "c": 48})["groups"] == (1, 16)


def test_filter_and_input_limits_follow_each_other() -> None:
    values = controls_from_spec(cl.ConvSpec(h=8, w=8, r=3, s=3, padding=2, dilation=1))
    assert limits(values)["r"] == (3, 12)  # padding 2 needs r >= 3; 8 + 2*2 >= r
    assert limits({**values, "padding": 0})["h"] == (3, cl.specs.base.MAX_DIM)


def test_every_limit_admits_the_spec_it_was_computed_from() -> None:
    for spec in SPECS:
        values = controls_from_spec(spec)
        for name, (lo, hi) in limits(values).items():
            v = values[name]
            if not isinstance(v, tuple):  # an (h, w) pair's sides have ranges of their own
                assert lo <= v <= hi, (spec, name, (lo, hi), v)


def test_widget_hints_follow_when_r_or_dilation_changes() -> None:
    controls = SpecControls(cl.ConvSpec(r=3, s=3, padding=1))
    assert "0–2" in controls.hints["conv"]["padding"].value
    controls.conv["r"].value = 5
    controls.conv["s"].value = 5
    assert "0–4" in controls.hints["conv"]["padding"].value
    controls.conv["dilation"].value = 2
    assert "0–8" in controls.hints["conv"]["padding"].value
    assert controls.spec.r == 5 and controls.spec.dilation == 2
    controls.conv["c"].value = 48
    assert "divides 16" in controls.hints["conv"]["groups"].value


def test_invalid_value_marks_its_control_and_keeps_the_last_valid_spec() -> None:
    seen: list[cl.Spec] = []
    controls = SpecControls(cl.ConvSpec(r=3, s=3, padding=1), on_change=seen.append)
    before = controls.spec
    controls.conv["padding"].value = 5  # larger than r - 1 allows: must not raise
    assert controls.spec == before and seen == []
    pad = controls.conv["padding"]
    assert "cl-invalid" in pad._dom_classes and pad.layout.border == INVALID_BORDER
    message = controls.messages["conv"]["padding"]
    assert "padding=5" in message.value and "larger than the filter allows" in message.value
    assert message.layout.display != "none"
    assert isinstance(controls.error, cl.SpecError) and controls.error.field == "padding"
    controls.conv["padding"].value = 2  # valid again: the mark goes, the spec follows
    assert "cl-invalid" not in pad._dom_classes and not pad.layout.border and message.value == ""
    assert controls.spec.padding == 2 and seen[-1] == controls.spec


def test_groups_that_do_not_divide_c_are_marked() -> None:
    controls = SpecControls(cl.ConvSpec(c=64, k=128))
    controls.conv["groups"].value = 3
    assert "groups" in controls.invalid and "must divide" in controls.invalid["groups"]
    assert controls.spec.groups == 1


def test_epilogue_after_a_gradient_marks_the_epilogue() -> None:
    controls = SpecControls(cl.ConvSpec(epilogue=()))
    controls.conv["direction"].value = "dgrad"
    assert controls.spec.direction == "dgrad"
    controls.conv["epilogue"].value = ["relu"]
    assert "epilogue" in controls.invalid and controls.spec.epilogue == ()


def test_epilogue_keeps_chain_order() -> None:
    controls = SpecControls(cl.ConvSpec())
    controls.conv["epilogue"].value = ["scale", "bias", "relu"]
    assert controls.spec.epilogue == ("scale", "bias", "relu")
    assert set(controls.conv["epilogue"].allowed_tags) == set(EPILOGUES)


def test_switching_operation_builds_a_matmul() -> None:
    controls = SpecControls(cl.ConvSpec())
    controls.op.value = "matmul"
    assert isinstance(controls.spec, cl.MatmulSpec) and controls.spec == cl.MatmulSpec()
    assert controls.matmul_box.layout.display != "none" and controls.conv_box.layout.display == "none"
    controls.matmul["transpose_b"].value = True
    controls.matmul["m"].value = 256
    assert controls.spec.transpose_b and controls.spec.m == 256


def test_a_pair_from_a_spec_stays_until_its_control_changes() -> None:
    spec = cl.ConvSpec(r=5, s=3, padding=(2, 1))
    controls = SpecControls(spec)
    controls.conv["n"].value = 2
    assert controls.spec.padding == (2, 1) and controls.spec.n == 2
    controls.conv["padding"].value = 1
    assert controls.spec.padding == 1


def test_run_options() -> None:
    controls = SpecControls()
    assert controls.run_options() == {"heuristics": ("A", "FALLBACK"), "plans": "heuristic", "timing": "auto",
                                      "cold_l2": False}
    controls.heuristics["B"].value = True
    controls.policy.value = "all plans"
    controls.timing.value = "cold L2"
    assert controls.run_options() == {"heuristics": ("A", "B", "FALLBACK"), "plans": "all", "timing": "events",
                                      "cold_l2": True}
    controls.set_run_options({"heuristics": ["B"], "plans": "heuristic", "timing": "events", "cold_l2": False})
    assert controls.run_options() == {"heuristics": ("B",), "plans": "heuristic", "timing": "events",
                                      "cold_l2": False}
    with pytest.raises(cl.SpecError):
        run_options_from_values([], "all plans", "events")
