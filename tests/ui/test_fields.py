"""What a form shows per operation, read from the specs: the operations, the fields, kinds, values <-> spec."""

from __future__ import annotations

import dataclasses

import pytest
from lab_samples import SPECS

import cudnn_lab as cl
from cudnn_lab.specs.base import MAX_DIM
from cudnn_lab.ui.fields import (OPS, controls_from_spec, field_kind, fields_of, hidden_fields, hints, limits,
                                 range_text, spec_from_controls)

def test_the_operations_are_the_registered_spec_families() -> None:
    assert {"conv", "matmul", "sdpa", "norm", "pool"} <= set(OPS)
    for op, cls in OPS.items():
        assert cls.op == op and issubclass(cls, cl.Spec) and cls.title and cls.description


@pytest.mark.parametrize("op", list(OPS))
def test_fields_follow_the_spec_and_its_order(op: str) -> None:
    cls = OPS[op]
    names = {f.name for f in dataclasses.fields(cls)}
    fields = fields_of(op)
    assert set(fields) <= names and len(set(fields)) == len(fields)
    # a field without a control is a choice with one allowed value (nothing to choose)
    for missing in names - set(fields):
        assert len(cls.field_choices()[missing]) == 1, missing
    ordered = [n for n in cls.field_order if n in fields]
    assert list(fields[:len(ordered)]) == ordered


def test_field_kinds_follow_the_spec() -> None:
    assert field_kind("pool", "window") == "pair" and field_kind("sdpa", "causal") == "bool"
    assert field_kind("sdpa", "attn_scale") == "optional_float" and field_kind("norm", "epsilon") == "float"
    assert field_kind("sdpa", "kv_heads") == "optional_int" and field_kind("conv", "epilogue") == "tags"
    assert field_kind("sdpa", "head_dim") == "int" and field_kind("norm", "kind") == "choice"
    with pytest.raises(cl.SpecError):
        field_kind("conv", "nonsense")
    with pytest.raises(cl.SpecError):
        fields_of("fft")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label())
def test_spec_round_trips_through_control_values(spec: cl.Spec) -> None:
    assert spec_from_controls(controls_from_spec(spec)) == spec


def test_control_values_are_plain_and_optional_numbers_parse() -> None:
    values = controls_from_spec(cl.ConvSpec(epilogue=("bias",)))
    assert values["op"] == "conv" and values["epilogue"] == ("bias",) and values["n"] == 16
    assert spec_from_controls({**values, "epilogue": ["bias", "relu"]}).epilogue == ("bias", "relu")
    sdpa = controls_from_spec(cl.SdpaSpec(heads=8))
    assert spec_from_controls({**sdpa, "kv_heads": "2", "attn_scale": " 0.5 "}).kv_heads == 2
    assert spec_from_controls({**sdpa, "kv_heads": "", "attn_scale": "default"}).attn_scale is None


def test_bad_values_raise_spec_error_naming_the_field() -> None:
    values = controls_from_spec(cl.ConvSpec(r=3, s=3))
    with pytest.raises(cl.SpecError) as info:
        spec_from_controls({**values, "padding": 5})
    assert info.value.field == "padding" and info.value.value == 5
    with pytest.raises(cl.SpecError) as info:
        spec_from_controls({**values, "op": "fft"})
    assert info.value.field == "op"
    with pytest.raises(cl.SpecError) as info:
        spec_from_controls({**controls_from_spec(cl.SdpaSpec()), "attn_scale": "abc"})
    assert info.value.field == "attn_scale"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.label())
def test_ranges_hidden_fields_and_hints_are_the_specs(spec: cl.Spec) -> None:
    values = controls_from_spec(spec)
    cls = type(spec)
    assert limits(values) == cls.field_limits(values)
    assert hidden_fields(values) == cls.hidden_fields(values)
    shown = hints(values)
    assert set(cls.field_limits(values)) <= set(shown)
    for name, text in cls.field_hints(values).items():
        assert shown[name] == text  # the spec's own hint wins over the range text


def test_range_text() -> None:
    assert range_text(0, 2) == "0–2" and range_text(1, MAX_DIM) == "" and range_text(3, MAX_DIM) == "≥ 3"
    assert "none fits" in range_text(5, 2)


def test_padding_hint_follows_the_filter() -> None:
    values = controls_from_spec(cl.ConvSpec(r=3, s=3, padding=1))
    assert hints(values)["padding"] == "0–2"
    assert hints({**values, "r": 5, "s": 5})["padding"] == "0–4"


def test_a_hidden_coefficient_does_not_warn_from_the_form():
    """The activation form keeps swish's coef when the mode becomes relu (the control is hidden, not cleared): the
    spec drops it without the IgnoredFieldWarning a caller of ActivationSpec(coef=...) gets."""
    import warnings

    from cudnn_lab.ui.fields import spec_from_controls

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = spec_from_controls({"op": "activation", "n": 2, "c": 8, "h": 4, "w": 4, "mode": "relu", "coef": 1.5,
                                   "dtype": "fp16"})
    assert spec.mode == "relu" and spec.coef is None
