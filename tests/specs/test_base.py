"""What every spec shares: dict/JSON round trips, dispatch on 'op', strict keys, frozen, validated replace,
and integer/pair canonicalisation."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import ConvSpec, MatmulSpec, Spec, spec_from_dict, spec_from_json
from cudnn_lab.specs.base import check_int, check_pair, pair

SPECS = [
    ConvSpec(n=2, c=8, h=9, w=7, k=12, padding=(1, 0), stride=(2, 1), dilation=1, layout="NCHW", dtype="fp32"),
    ConvSpec(n=1, c=4, h=6, w=6, k=4, groups=2, direction="wgrad", dtype="bf16"),
    ConvSpec(n=1, c=8, h=5, w=5, k=8, epilogue=("bias", "relu"), compute_dtype="fp16"),
    MatmulSpec(batch=2, m=3, n=5, k=7, transpose_a=True, epilogue=("bias", "gelu", "add")),
    MatmulSpec(),
]
IDS = [s.label() for s in SPECS]


@pytest.fixture
def conv() -> ConvSpec:
    return ConvSpec(n=2, c=8, h=9, w=7, k=12)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_to_dict_from_dict_round_trip(spec: Spec) -> None:
    assert type(spec).from_dict(spec.to_dict()) == spec


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_spec_from_dict_dispatches_on_op(spec: Spec) -> None:
    again = spec_from_dict(spec.to_dict())
    assert type(again) is type(spec) and again == spec


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_spec_from_json_round_trip(spec: Spec) -> None:
    assert spec_from_json(spec.to_json()) == spec


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_to_dict_is_plain_json_with_op_first(spec: Spec) -> None:
    d = spec.to_dict()
    assert next(iter(d)) == "op" and d["op"] == spec.op
    assert json.loads(json.dumps(d)) == d  # only JSON types: tuples became lists
    assert set(d) == {"op"} | {f.name for f in dataclasses.fields(spec)}


def test_to_json_is_sorted_and_stable(conv: ConvSpec) -> None:
    text = conv.to_json()
    assert list(json.loads(text)) == sorted(json.loads(text))
    assert ConvSpec(n=2, c=8, h=9, w=7, k=12).to_json() == text


def test_from_dict_missing_keys_take_defaults() -> None:
    assert ConvSpec.from_dict({"op": "conv", "n": 3}) == ConvSpec(n=3)


def test_from_dict_without_op_uses_the_class() -> None:
    assert MatmulSpec.from_dict({"m": 8}) == MatmulSpec(m=8)


def test_from_dict_does_not_mutate_its_argument(conv: ConvSpec) -> None:
    d = conv.to_dict()
    before = json.dumps(d)
    ConvSpec.from_dict(d)
    assert json.dumps(d) == before


def test_from_dict_unknown_key_raises_naming_the_key(conv: ConvSpec) -> None:
    data = {**conv.to_dict(), "padd": 1}
    with pytest.raises(SpecError, match="padd=1: is not a field") as info:
        ConvSpec.from_dict(data)
    assert info.value.field == "padd"
    assert "padding" in str(info.value)  # lists the real fields


def test_spec_from_dict_unknown_key_raises_naming_the_key() -> None:
    with pytest.raises(SpecError) as info:
        spec_from_dict({"op": "matmul", "transpose": True})
    assert info.value.field == "transpose"


def test_spec_from_dict_bad_op_raises_naming_op_and_choices() -> None:
    with pytest.raises(SpecError) as info:
        spec_from_dict({"op": "fft", "n": 1})
    assert info.value.field == "op"
    assert "op='fft'" in str(info.value) and "conv" in str(info.value) and "matmul" in str(info.value)


def test_spec_from_dict_missing_op_raises() -> None:
    with pytest.raises(SpecError, match="op=None"):
        spec_from_dict({"n": 1})


def test_spec_from_dict_unhashable_op_raises_spec_error() -> None:
    with pytest.raises(SpecError, match="op="):
        spec_from_dict({"op": ["conv"]})


def test_from_dict_with_the_other_op_raises(conv: ConvSpec) -> None:
    with pytest.raises(SpecError, match="op='conv'") as info:
        MatmulSpec.from_dict(conv.to_dict())
    assert info.value.field == "op"


@pytest.mark.parametrize("data", [None, [1, 2], "conv", 3])
def test_spec_from_dict_rejects_non_dicts(data) -> None:
    with pytest.raises(SpecError) as info:
        spec_from_dict(data)
    assert info.value.field == "data"


@pytest.mark.parametrize("cls", [ConvSpec, MatmulSpec])
def test_class_from_dict_rejects_non_dicts(cls) -> None:
    with pytest.raises(SpecError, match="data="):
        cls.from_dict([("n", 1)])


def test_spec_from_json_bad_json_raises_spec_error() -> None:
    with pytest.raises(SpecError, match="not valid JSON") as info:
        spec_from_json('{"op": "conv",')
    assert info.value.field == "json"


def test_spec_from_json_invalid_value_names_the_field() -> None:
    with pytest.raises(SpecError, match="padding=9"):
        spec_from_json('{"op": "conv", "padding": 9}')


def test_spec_is_frozen(conv: ConvSpec) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        conv.n = 4  # type: ignore[misc]


def test_replace_returns_changed_copy_and_keeps_original(conv: ConvSpec) -> None:
    other = conv.replace(k=16, layout="NCHW")
    assert (other.k, other.layout) == (16, "NCHW")
    assert (conv.k, conv.layout) == (12, "NHWC")


def test_replace_validates(conv: ConvSpec) -> None:
    with pytest.raises(SpecError, match="padding=5"):
        conv.replace(padding=5)


def test_replace_canonicalises(conv: ConvSpec) -> None:
    assert conv.replace(stride=(2, 2)).stride == 2


def test_replace_unknown_field_raises_type_error(conv: ConvSpec) -> None:
    with pytest.raises(TypeError):
        conv.replace(pad=1)


@pytest.mark.parametrize("value", [(1, 1), [1, 1]])
def test_equal_pair_canonicalises_to_int(value) -> None:
    spec = ConvSpec(padding=value, stride=value, dilation=value)
    assert spec.padding == 1 and spec.stride == 1 and spec.dilation == 1
    assert isinstance(spec.padding, int)


def test_unequal_pair_list_becomes_tuple() -> None:
    spec = ConvSpec(padding=[1, 0], stride=[2, 1])
    assert spec.padding == (1, 0) and spec.stride == (2, 1)


def test_canonical_specs_are_equal_and_hash_equal() -> None:
    a, b = ConvSpec(padding=(1, 1), epilogue=["relu"]), ConvSpec(padding=1, epilogue=("relu",))
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1


def test_pair_to_json_and_back_keeps_pair() -> None:
    spec = ConvSpec(r=5, padding=(2, 1))
    assert json.loads(spec.to_json())["padding"] == [2, 1]
    assert spec_from_json(spec.to_json()).padding == (2, 1)


def test_numpy_integers_are_accepted_as_plain_ints() -> None:
    spec = ConvSpec(n=np.int64(3), c=np.int32(8), k=8)
    assert spec.n == 3 and type(spec.n) is int and type(spec.c) is int
    assert json.loads(spec.to_json())["n"] == 3


@pytest.mark.parametrize("value", [True, False])
def test_check_int_rejects_bools(value: bool) -> None:
    with pytest.raises(SpecError, match="not a bool"):
        check_int("S", "x", value, lo=0)


def test_check_int_bounds_are_inclusive() -> None:
    assert check_int("S", "x", 1, 1, 3) == 1 and check_int("S", "x", 3, 1, 3) == 3
    with pytest.raises(SpecError, match="x=4: must be from 1 to 3"):
        check_int("S", "x", 4, 1, 3)


def test_check_pair_rejects_wrong_length() -> None:
    with pytest.raises(SpecError, match="pair"):
        check_pair("S", "p", (1,), 0)


def test_pair_expands_int_and_keeps_tuple() -> None:
    assert pair(2) == (2, 2) and pair((1, 3)) == (1, 3)


def test_spec_error_message_names_spec_field_value_and_rule() -> None:
    with pytest.raises(SpecError) as info:
        ConvSpec(layout="CHWN")
    err = info.value
    assert (err.spec, err.field, err.value) == ("ConvSpec", "layout", "CHWN")
    assert str(err) == f"ConvSpec.layout='CHWN': {err.allowed}"


def _families(cls: type = Spec) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_families(sub)]
    return found


def test_no_family_declares_again_a_field_its_base_gives_the_same_default() -> None:
    """A default has one owner: a family restates an inherited field only to give it another default."""
    again = []
    for cls in set(_families()):
        own = cls.__dict__.get("__annotations__", {})
        base = next((b for b in cls.__mro__[1:] if dataclasses.is_dataclass(b)), None)
        if base is None:
            continue
        inherited = {f.name: f.default for f in dataclasses.fields(base)}
        mine = {f.name: f.default for f in dataclasses.fields(cls)}
        again += [f"{cls.__name__}.{name} (= {mine[name]!r}, as in {base.__name__})" for name in own
                  if name in inherited and name in mine and mine[name] == inherited[name]
                  and mine[name] is not dataclasses.MISSING]
    assert not again, f"fields declared again with their base's default: {sorted(again)}"
