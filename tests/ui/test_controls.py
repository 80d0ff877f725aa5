"""Spec controls: values <-> spec round trip, ranges that follow each other, invalid values marked, not raised."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.specs import EPILOGUES
from cudnn_lab.ui.controls import (FIELDS, INVALID_BORDER, NOT_OFFERED, OPS, SpecControls, controls_from_spec,
                                   field_kind, hidden_fields, hints, limits, run_options_from_values,
                                   spec_from_controls)

SPECS = [
    cl.ConvSpec(),
    cl.ConvSpec(n=2, c=8, h=9, w=7, k=16, r=5, s=3, padding=(2, 1), stride=(2, 1), dilation=1, groups=4,
                layout="NCHW", dtype="bf16", epilogue=("scale", "bias", "gelu")),
    cl.ConvSpec(direction="wgrad", dtype="fp32"),
    cl.ConvSpec(dtype="fp16", compute_dtype="fp16", epilogue=("relu", "relu")),
    cl.MatmulSpec(),
    cl.MatmulSpec(batch=3, m=5, n=7, k=9, transpose_a=True, dtype="fp32", epilogue=("bias", "tanh")),
    cl.SdpaSpec(),
    cl.SdpaSpec(batch=2, heads=8, kv_heads=2, seq_q=64, seq_kv=128, head_dim=64, causal=True, sliding_window=32,
                layout="BHSD", dtype="bf16", direction="fwd_training", attn_scale=0.125),
    cl.SdpaSpec(heads=4, kv_heads=1, direction="bwd", attn_scale=0.0883883476483184),
    cl.NormSpec(),
    cl.NormSpec(kind="rmsnorm", phase="inference", rows=64, features=96, residual=True, epsilon=1e-6),
    cl.NormSpec(kind="batchnorm", phase="training", n=4, c=16, h=7, w=5, layout="NCHW", momentum=0.25),
    cl.NormSpec(kind="instancenorm", phase="backward", dtype="fp32", n=2, c=3, h=4, w=4),
    cl.PoolSpec(),
    cl.PoolSpec(n=2, c=8, h=9, w=7, mode="avg_exclude_pad", window=(3, 2), stride=(2, 1), padding=(1, 0),
                layout="NCHW", dtype="bf16"),
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
        spec_from_controls({**values, "op": "rnn"})
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


# ------------------------------------------------------------------------------------------------ every operation

def test_every_operation_has_controls_built_from_its_fields() -> None:
    import dataclasses

    assert list(OPS) == ["conv", "matmul", "sdpa", "norm", "pool"]
    controls = SpecControls()
    for op, cls in OPS.items():
        names = {f.name for f in dataclasses.fields(cls)}
        assert set(FIELDS[op]) <= names and names - set(FIELDS[op]) <= {"compute_dtype"}, op
        assert set(controls.widgets[op]) == set(FIELDS[op])
    assert field_kind("pool", "window") == "pair" and field_kind("sdpa", "causal") == "bool"
    assert field_kind("sdpa", "attn_scale") == "optional_float" and field_kind("norm", "epsilon") == "float"
    assert field_kind("sdpa", "head_dim") == "choice" and field_kind("norm", "kind") == "choice"
    assert [label for label, _ in controls.op.options] == ["conv", "matmul", "attention", "norm", "pooling"]
    assert controls.op.tooltips[2].startswith("scaled dot-product attention: SdpaSpec")


def test_not_offered_operations_are_named_with_why_and_what_instead() -> None:
    controls = SpecControls()
    note = controls.not_offered.value
    assert controls.box.children[:2] == (controls.op, controls.not_offered)  # right under the operation choice
    for text in ("RNN", "tensor transform", "frontend 1.32 graph API", "strides", "layout", "does not silently "
                 "emulate"):
        assert text in note, text
    assert set(NOT_OFFERED) == {"RNN", "tensor transform"}
    assert "cudnnTransformTensor" in NOT_OFFERED["tensor transform"]


@pytest.mark.parametrize("op", ["sdpa", "norm", "pool"])
def test_switching_to_an_operation_builds_its_default_spec(op: str) -> None:
    seen: list[cl.Spec] = []
    controls = SpecControls(cl.ConvSpec(), on_change=seen.append)
    controls.op.value = op
    assert controls.spec == OPS[op]() and seen[-1] == controls.spec
    assert controls.boxes[op].layout.display != "none"
    assert all(box.layout.display == "none" for o, box in controls.boxes.items() if o != op)


def test_attention_controls_edit_the_spec() -> None:
    controls = SpecControls(cl.SdpaSpec())
    w = controls.sdpa
    w["direction"].value = "bwd"
    w["causal"].value = True
    w["sliding_window"].value = 128
    w["head_dim"].value = 64
    w["layout"].value = "BHSD"
    w["attn_scale"].value = "0.1"
    assert controls.spec == cl.SdpaSpec(direction="bwd", causal=True, sliding_window=128, head_dim=64,
                                        layout="BHSD", attn_scale=0.1)
    w["attn_scale"].value = ""
    assert controls.spec.attn_scale is None


def test_kv_heads_limit_follows_heads_and_a_non_divisor_is_marked() -> None:
    values = controls_from_spec(cl.SdpaSpec(heads=12))
    assert values["kv_heads"] == 12 and limits(values)["kv_heads"] == (1, 12)
    assert hints({**values, "heads": 8})["kv_heads"] == "divides 8"
    controls = SpecControls(cl.SdpaSpec(heads=16))
    assert "divides 16" in controls.hints["sdpa"]["kv_heads"].value
    controls.sdpa["kv_heads"].value = 4
    assert controls.spec.kv_heads == 4
    controls.sdpa["kv_heads"].value = 5
    kv = controls.sdpa["kv_heads"]
    assert "cl-invalid" in kv._dom_classes and kv.layout.border == INVALID_BORDER
    assert "must divide heads=16" in controls.messages["sdpa"]["kv_heads"].value
    assert controls.spec.kv_heads == 4  # the last valid spec stays


def test_kv_heads_equal_to_heads_follows_heads() -> None:
    controls = SpecControls(cl.SdpaSpec(heads=16))  # kv_heads None: plain multi-head attention
    controls.sdpa["heads"].value = 32
    assert controls.sdpa["kv_heads"].value == 32 and controls.spec.kv_heads is None and controls.spec.heads == 32
    controls.sdpa["kv_heads"].value = 8  # grouped-query attention stays grouped when heads changes
    controls.sdpa["heads"].value = 16
    assert controls.spec.kv_heads == 8 and "divides 16" in controls.hints["sdpa"]["kv_heads"].value


def test_a_sliding_window_without_causal_is_marked() -> None:
    controls = SpecControls(cl.SdpaSpec())
    controls.sdpa["sliding_window"].value = 64
    assert "sliding_window" in controls.invalid and "needs causal=True" in controls.invalid["sliding_window"]
    controls.sdpa["causal"].value = True
    assert controls.invalid == {} and controls.spec.sliding_window == 64 and controls.spec.causal


def test_bad_attention_scale_and_dtype_are_marked() -> None:
    controls = SpecControls(cl.SdpaSpec())
    controls.sdpa["attn_scale"].value = "abc"
    assert "attn_scale" in controls.invalid and "positive finite number" in controls.invalid["attn_scale"]
    controls.sdpa["attn_scale"].value = "-1"
    assert "attn_scale" in controls.invalid


def test_pool_padding_limit_follows_the_window() -> None:
    values = controls_from_spec(cl.PoolSpec(h=8, w=8, window=3, padding=1))
    assert limits(values)["padding"] == (0, 1)
    assert limits({**values, "window": 5})["padding"] == (0, 2)
    assert limits({**values, "window": (5, 3)})["padding"] == (0, 1)
    assert limits({**values, "padding": 2})["window"] == (4, 12)
    assert limits({**values, "padding": 0})["h"] == (3, cl.specs.base.MAX_DIM)
    controls = SpecControls(cl.PoolSpec(window=3, padding=1))
    assert "0–1" in controls.hints["pool"]["padding"].value
    controls.pool["window"].value = 7
    assert "0–3" in controls.hints["pool"]["padding"].value and controls.spec.window == 7


def test_pool_padding_over_half_the_window_is_marked() -> None:
    controls = SpecControls(cl.PoolSpec(window=3, padding=1))
    controls.pool["padding"].value = 2
    assert "padding" in controls.invalid and "at most half the window" in controls.invalid["padding"]
    assert controls.spec.padding == 1
    controls.pool["window"].value = 4  # the window grows: padding 2 fits now, the mark goes
    assert controls.invalid == {} and controls.spec.padding == 2 and controls.spec.window == 4


def test_a_pool_pair_from_a_spec_stays_until_its_control_changes() -> None:
    controls = SpecControls(cl.PoolSpec(window=(3, 2), padding=(1, 0)))
    controls.pool["n"].value = 2
    assert controls.spec.window == (3, 2) and controls.spec.padding == (1, 0) and controls.spec.n == 2
    controls.pool["window"].value = 5
    assert controls.spec.window == 5


def test_norm_controls_hide_what_the_kind_ignores() -> None:
    assert hidden_fields(controls_from_spec(cl.NormSpec(kind="layernorm"))) == {"n", "c", "h", "w", "layout",
                                                                                "momentum"}
    assert hidden_fields(controls_from_spec(cl.NormSpec(kind="batchnorm", c=16))) == {"rows", "features",
                                                                                      "residual"}
    assert "epsilon" in hidden_fields(controls_from_spec(cl.NormSpec(phase="backward")))
    controls = SpecControls(cl.NormSpec())
    assert controls.cells["norm"]["n"].layout.display == "none"
    assert controls.cells["norm"]["rows"].layout.display != "none"
    controls.norm["kind"].value = "batchnorm"
    assert controls.spec.kind == "batchnorm"
    assert controls.cells["norm"]["n"].layout.display != "none"
    assert controls.cells["norm"]["rows"].layout.display == "none"
    assert controls.cells["norm"]["momentum"].layout.display != "none"
    assert "mult. of 8" in controls.hints["norm"]["c"].value


def test_norm_invalid_values_are_marked() -> None:
    controls = SpecControls(cl.NormSpec(kind="batchnorm", c=16))
    controls.norm["c"].value = 12
    assert "c" in controls.invalid and "multiple of 8" in controls.invalid["c"]
    assert controls.spec.c == 16
    controls.norm["kind"].value = "instancenorm"  # takes any c: valid again
    assert controls.invalid == {} and controls.spec.c == 12
    controls.norm["epsilon"].value = 0.0
    assert "epsilon" in controls.invalid and "greater than 0" in controls.invalid["epsilon"]
    controls.norm["epsilon"].value = 1e-3
    controls.norm["residual"].value = True
    assert "residual" in controls.invalid and "layernorm and rmsnorm" in controls.invalid["residual"]
