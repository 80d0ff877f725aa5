"""The Sweep view's pure part: axis values parsed as their field is typed, checked against the spec; the fields a
recorded sweep's figure can draw."""

from __future__ import annotations

import pandas as pd
import pytest
from lab_samples import SWEEPS

import cudnn_lab as cl
from cudnn_lab.ui.sweep_axes import (MAX_POINTS, default_axes, parse_values, plain_text_columns, plot_fields,
                                     sweep_fields, validate_axes)
from cudnn_lab.ui.sweepview import SWEEP_FIGURES

SPEC = cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


def test_sweep_fields_are_the_operations_fields() -> None:
    assert "n" in sweep_fields("conv") and "epilogue" not in sweep_fields("conv")
    assert {"seq_q", "kv_heads", "causal", "head_dim"} <= set(sweep_fields("sdpa"))
    assert {"window", "mode"} <= set(sweep_fields("pool")) and "kind" in sweep_fields("norm")


def test_values_parse_as_the_field_is_typed() -> None:
    assert parse_values("conv", "n", "1, 8,32") == [1, 8, 32]
    assert parse_values("conv", "layout", "NCHW, NHWC") == ["NCHW", "NHWC"]
    assert parse_values("conv", "padding", "1, 2x1") == [1, (2, 1)]
    assert parse_values("sdpa", "causal", "false, true") == [False, True]
    assert parse_values("sdpa", "head_dim", "64, 128") == [64, 128]
    assert parse_values("sdpa", "kv_heads", "none, 4") == [None, 4]
    assert parse_values("sdpa", "attn_scale", "0.1, none") == [0.1, None]
    assert parse_values("norm", "epsilon", "1e-5, 1e-3") == [1e-5, 1e-3]


@pytest.mark.parametrize("field, text, says", [
    ("n", "", "one or more values"), ("n", "1,,2", "empty value"), ("n", "1, x", "whole number"),
    ("n", "2, 2", "listed twice"), ("layout", "NCHW, CHWN", "must be one of NCHW, NHWC"),
    ("epilogue", "relu", "not a field"),
])
def test_bad_values_are_refused_naming_the_field(field: str, text: str, says: str) -> None:
    with pytest.raises(cl.SpecError, match=says):
        parse_values("conv", field, text)


def test_validate_axes_checks_values_against_the_spec() -> None:
    over, errors, invalid = validate_axes(SPEC, [("n", "1, 2"), ("layout", "NCHW, NHWC")])
    assert over == {"n": [1, 2], "layout": ["NCHW", "NHWC"]} and errors == {} and invalid == 0
    over, errors, _ = validate_axes(SPEC, [("padding", "1, 5"), ("", "")])
    assert over is None and "padding=5" in errors[0] and "larger than the filter allows" in errors[0]
    # padding 3 is fine with dilation 2 only: a value valid in some combination is not marked; the rest is skipped
    over, errors, invalid = validate_axes(SPEC, [("padding", "1, 3"), ("dilation", "1, 2")])
    assert errors == {} and invalid == 1
    over, errors, _ = validate_axes(SPEC, [("n", "1, 2"), ("layout", "")])  # an axis without values is unused
    assert over == {"n": [1, 2]} and errors == {}
    _, errors, _ = validate_axes(SPEC, [("n", ""), ("layout", "")])
    assert "one or more values" in errors[0]
    _, errors, _ = validate_axes(SPEC, [("n", "1"), ("n", "2")])
    assert "already swept" in errors[1]
    many = ", ".join(str(i) for i in range(1, MAX_POINTS + 2))
    _, errors, _ = validate_axes(SPEC, [("n", many), ("", "")])
    assert "more than the panel sweeps" in errors[0]


def test_plot_fields_of_a_recorded_sweep() -> None:
    frame = cl.load_results(SWEEPS[0])
    varying, constant = plot_fields(frame[frame["op"] == "sdpa"])
    assert set(varying) == {"seq_q", "seq_kv", "causal"} and "head_dim" in constant
    conv = frame[frame["op"] == "conv"]
    x, color = default_axes(conv)
    assert x in plot_fields(conv)[0] and color != x
    assert default_axes(conv, "k", "layout") == ("k", "layout")


def test_plain_text_columns_keep_values_and_draw_the_same_figure() -> None:
    # Issue 39: pandas 3 reads Parquet text as its Arrow-backed 'str' dtype, slow per row; the Sweep view holds
    # it as objects. Same values, same missing cells, same figure.
    frame = cl.load_results("h100_fp8_gemm")
    text = [c for c in frame.columns if str(frame[c].dtype) == "str"]
    assert text, "the recorded sweep has text columns"
    plain = plain_text_columns(frame)
    assert all(plain[c].dtype == object for c in text)
    pd.testing.assert_frame_equal(plain.astype(str), frame.astype(str))
    assert plain_text_columns(plain) is plain  # nothing left to convert: the frame itself
    drawn = [SWEEP_FIGURES["sweep"].draw(f, "m", color="dtype", which="pick").to_json() for f in (frame, plain)]
    assert drawn[0] == drawn[1]
