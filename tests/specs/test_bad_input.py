"""Whatever a user hands spec_from_json / spec_from_dict / a spec constructor, the answer is a SpecError naming the
field, with a message of readable length: deep nesting, huge numbers, None, wrong types, very long strings."""

from __future__ import annotations

import json

import pytest

from cudnn_lab.errors import MAX_VALUE_CHARS, SpecError
from cudnn_lab.specs import ConvSpec, MatmulSpec, NormSpec, SdpaSpec, spec_from_dict, spec_from_json

#: A message may hold a shortened value, the field and the rule; never the whole bad value.
MAX_MESSAGE = 600


def _refused(call, *args) -> SpecError:
    with pytest.raises(SpecError) as info:
        call(*args)
    assert len(str(info.value)) < MAX_MESSAGE, len(str(info.value))
    return info.value


@pytest.mark.parametrize("text", [None, 5, 1.5, ["op"], {"op": "conv"}, object()])
def test_spec_from_json_refuses_what_is_not_text(text) -> None:
    assert _refused(spec_from_json, text).field == "json"


@pytest.mark.parametrize("text", ["", "{", "[" * 100_000 + "]" * 100_000, '{"op": "conv", "n": ' + "9" * 5000 + "}",
                                  "x" * 1_000_000, b"\xff\xfe"])
def test_spec_from_json_refuses_unreadable_text(text) -> None:
    assert _refused(spec_from_json, text).field == "json"


@pytest.mark.parametrize("data", [None, [], "conv", 3, {"op": None}, {"op": ["conv"]}, {"op": "x" * 100_000}, {}])
def test_spec_from_dict_refuses_what_is_not_a_spec_dict(data) -> None:
    assert _refused(spec_from_dict, data).field in ("data", "op")


def test_deeply_nested_values_name_their_field() -> None:
    deep: list = []
    for _ in range(50_000):
        deep = [deep]
    assert _refused(spec_from_dict, {"op": "conv", "padding": deep}).field == "padding"
    assert _refused(spec_from_dict, {"op": "matmul", "epilogue": deep}).field == "epilogue"
    text = json.dumps({"op": "conv", "n": 1}).replace("1}", "[" * 200 + "]" * 200 + "}")
    assert _refused(spec_from_json, text).field == "n"
    text = json.dumps({"op": "conv", "n": 1}).replace("1}", "[" * 100_000 + "]" * 100_000 + "}")
    err = _refused(spec_from_json, text)
    assert err.field == "json" and "nested too deeply" in str(err)


@pytest.mark.parametrize("op,field", [("conv", "n"), ("conv", "padding"), ("matmul", "k"), ("sdpa", "seq_q"),
                                      ("sdpa", "kv_heads"), ("norm", "rows"), ("pool", "window")])
def test_5000_digit_and_huge_integers_name_the_field(op: str, field: str) -> None:
    for value in (10**5000, -(10**400), 10**400):
        err = _refused(spec_from_dict, {"op": op, field: value})
        assert err.field == field and "0" * 100 not in str(err)  # the value is shown cut


@pytest.mark.parametrize("op,field", [("norm", "epsilon"), ("norm", "momentum"), ("sdpa", "attn_scale")])
@pytest.mark.parametrize("value", [10**400, -(10**400), float("inf"), float("nan"), "1e-5", [1e-5], True])
def test_float_fields_refuse_numbers_that_do_not_fit(op: str, field: str, value) -> None:
    assert _refused(spec_from_dict, {"op": op, field: value}).field == field


def test_json_with_a_huge_integer_in_a_float_field() -> None:
    text = '{"op": "norm", "epsilon": 1' + "0" * 400 + "}"
    assert _refused(spec_from_json, text).field == "epsilon"
    assert _refused(spec_from_json, '{"op": "sdpa", "attn_scale": 1e400}').field == "attn_scale"


@pytest.mark.parametrize("make,field", [
    (lambda: ConvSpec(layout="N" * 1_000_000), "layout"),
    (lambda: MatmulSpec(epilogue=("relu" * 100_000,)), "epilogue"),
    (lambda: SdpaSpec(dtype="fp8" * 100_000), "dtype"),
    (lambda: NormSpec(kind=None), "kind"),
    (lambda: ConvSpec(n=None), "n"),
    (lambda: ConvSpec(stride=[1, 2, 3]), "stride"),
    (lambda: spec_from_dict({"op": "conv", "x" * 1_000_000: 1}), None),
    (lambda: spec_from_dict({"op": "conv", 10**5000: 1}), None),
])
def test_long_or_wrong_values_give_short_messages(make, field) -> None:
    err = _refused(make)
    if field is not None:
        assert err.field == field
    else:  # an unknown key: named, but cut
        assert len(err.field) <= MAX_VALUE_CHARS and "is not a field" in str(err)
