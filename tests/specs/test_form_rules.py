"""The rules a form shows, owned by the specs: each field's range given the others, choices, hidden fields, hints,
field order, titles; and size overflows that name a field the user can change."""

from __future__ import annotations

import dataclasses

import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import ConvSpec, MatmulSpec, NormSpec, PoolSpec, SdpaSpec, Spec, spec_classes
from cudnn_lab.specs.base import MAX_DIM, MAX_ELEMENTS

FAMILIES = list(spec_classes().values())
JUNK = [{}, {"r": "x", "h": None, "padding": [1], "dilation": ("a", 2)}, {"heads": float("inf"), "h": "9" * 5000},
        {"window": [3, 3, 3], "padding": -4, "c": 10**400}, {"kind": 5, "phase": [], "dtype": {}}]


def test_families_are_listed_in_menu_order_with_titles() -> None:
    assert list(spec_classes())[:5] == ["conv", "matmul", "sdpa", "norm", "pool"]  # families added later follow
    assert [c.title for c in FAMILIES][:5] == ["conv", "matmul", "attention", "norm", "pooling"]
    for cls in FAMILIES:
        assert cls.title and cls.__name__ in cls.description


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_field_order_names_real_fields_and_choices_are_valid(cls: type[Spec]) -> None:
    names = {f.name for f in dataclasses.fields(cls)}
    assert set(cls.field_order) <= names and len(set(cls.field_order)) == len(cls.field_order)
    default = cls()
    for field, allowed in cls.field_choices().items():
        assert field in names and getattr(default, field) in allowed
        for value in allowed:  # every offered value is one the spec takes somewhere
            try:
                default.replace(**{field: value})
            except SpecError as e:
                assert e.field != field or "needs" in e.allowed


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("values", JUNK)
def test_rules_never_raise_on_junk_values(cls: type[Spec], values: dict) -> None:
    limits = cls.field_limits(values)
    assert all(isinstance(lo, int) and isinstance(hi, int) for lo, hi in limits.values())
    assert isinstance(cls.hidden_fields(values), frozenset)
    assert all(isinstance(t, str) for t in cls.field_hints(values).values())


@pytest.mark.parametrize("cls", FAMILIES, ids=lambda c: c.__name__)
def test_defaults_lie_inside_their_limits(cls: type[Spec]) -> None:
    spec = cls()
    values = spec.to_dict()
    for field, (lo, hi) in cls.field_limits(values).items():
        value = getattr(spec, field)
        value = spec.h_kv if field == "kv_heads" else value
        sides = value if isinstance(value, tuple) else (value,)
        assert all(lo <= v <= hi for v in sides), (field, value, lo, hi)


@pytest.mark.parametrize("r,dilation,padding_hi", [(3, 1, 2), (3, 2, 4), (5, 3, 12), (1, 4, 0)])
def test_conv_padding_upper_end_is_dilation_times_r_minus_one(r: int, dilation: int, padding_hi: int) -> None:
    values = ConvSpec(h=64, w=64, r=r, s=r, dilation=dilation, padding=0).to_dict()
    assert ConvSpec.field_limits(values)["padding"] == (0, padding_hi)
    ConvSpec(h=64, w=64, r=r, s=r, dilation=dilation, padding=padding_hi)
    with pytest.raises(SpecError) as info:
        ConvSpec(h=64, w=64, r=r, s=r, dilation=dilation, padding=padding_hi + 1)
    assert info.value.field == "padding"


def test_conv_limits_follow_each_other() -> None:
    values = ConvSpec(n=1, c=12, k=18, h=5, w=7, r=3, s=3, padding=1).to_dict()
    lim = ConvSpec.field_limits(values)
    assert lim["groups"] == (1, 6) and ConvSpec.field_hints(values)["groups"] == "divides 6"
    assert lim["r"] == (2, 7) and lim["s"] == (2, 9)  # padding 1 needs r >= 2; h + 2p = 7 allows r up to 7
    ConvSpec.from_dict({**values, "r": 7})
    with pytest.raises(SpecError):
        ConvSpec.from_dict({**values, "r": 8})
    assert lim["h"] == (1, MAX_DIM) and ConvSpec.field_limits({**values, "r": 9, "padding": 0})["h"] == (9, MAX_DIM)


def test_pool_limits_follow_each_other() -> None:
    values = PoolSpec(h=4, w=6, window=3, padding=1).to_dict()
    lim = PoolSpec.field_limits(values)
    assert lim["padding"] == (0, 1) and lim["window"] == (2, 6) and lim["h"] == (1, MAX_DIM)
    PoolSpec.from_dict({**values, "window": 6})
    with pytest.raises(SpecError) as info:
        PoolSpec.from_dict({**values, "window": 7})
    assert info.value.field == "h"


def test_sdpa_rules() -> None:
    values = SdpaSpec(heads=12).to_dict()
    assert SdpaSpec.field_limits(values)["kv_heads"] == (1, 12)
    assert SdpaSpec.field_limits(values)["sliding_window"][0] == 0
    hints = SdpaSpec.field_hints(values)
    assert hints["kv_heads"] == "divides 12" and hints["sliding_window"] == "0: off"
    assert hints["seq_lens_q"] == "4 lengths, blank: full"  # one per batch element (batch=4)
    assert "head_dim" not in SdpaSpec.field_choices()  # any multiple of 8 up to cuDNN's Hopper maximum
    assert SdpaSpec.field_limits(values)["head_dim"] == (8, 1024) and hints["head_dim"].startswith("mult. of 8")
    assert SdpaSpec.field_limits({**values, "direction": "bwd"})["head_dim"] == (8, 256)
    assert SdpaSpec.field_limits({**values, "dtype": "fp8_e4m3"})["head_dim"] == (16, 256)


@pytest.mark.parametrize("kind,phase,hidden", [
    ("layernorm", "training", {"n", "c", "h", "w", "layout", "momentum"}),
    ("batchnorm", "training", {"rows", "features", "residual"}),
    ("batchnorm", "inference", {"rows", "features", "residual", "momentum", "epsilon"}),
    ("instancenorm", "backward", {"rows", "features", "residual", "momentum", "epsilon"}),
])
def test_norm_hides_what_the_kind_ignores(kind: str, phase: str, hidden: set) -> None:
    assert NormSpec.hidden_fields({"kind": kind, "phase": phase}) == hidden


def test_norm_batchnorm_channel_hint_follows_the_dtype() -> None:
    assert NormSpec.field_hints({"kind": "batchnorm", "phase": "training", "dtype": "fp16"}) == {"c": "mult. of 8"}
    assert NormSpec.field_hints({"kind": "batchnorm", "phase": "backward", "dtype": "fp32"}) == {"c": "mult. of 4"}
    assert NormSpec.field_hints({"kind": "batchnorm", "phase": "inference", "dtype": "fp16"}) == {}
    NormSpec(kind="batchnorm", c=4, dtype="fp32")
    with pytest.raises(SpecError):
        NormSpec(kind="batchnorm", c=4, dtype="fp16")


def test_matmul_fixed_compute_dtype_is_a_one_value_choice() -> None:
    assert MatmulSpec.field_choices()["compute_dtype"] == ("fp32",)
    assert "compute_dtype" not in MatmulSpec.field_order


# --- a size overflow names a field the user can change -----------------------------------------------------------

@pytest.mark.parametrize("make,field", [
    (lambda: MatmulSpec(m=1 << 20, n=1 << 20), "m"),
    (lambda: MatmulSpec(batch=1 << 20, m=4096, k=8), "batch"),
    (lambda: MatmulSpec(m=8, n=8, k=1 << 20, batch=1 << 12), "k"),
    (lambda: ConvSpec(n=1, c=64, k=64, r=1000, s=1000, h=2000, w=2000), "r"),
    (lambda: ConvSpec(n=16, k=1 << 20), "k"),
    (lambda: ConvSpec(n=1 << 20), "n"),
    (lambda: ConvSpec(n=1, c=8, k=8, h=1 << 20, w=1 << 12, r=1, s=1, padding=0), "h"),
    (lambda: SdpaSpec(batch=1, heads=16, seq_q=1 << 20, seq_kv=64, head_dim=256), "seq_q"),
    (lambda: SdpaSpec(batch=1, heads=64, seq_q=64, seq_kv=1 << 20, head_dim=256), "seq_kv"),
    (lambda: NormSpec(rows=4096, features=1 << 20), "features"),
    (lambda: NormSpec(rows=1 << 20, features=4096), "rows"),
    (lambda: NormSpec(kind="instancenorm", n=2, c=8, h=1 << 20, w=1 << 10), "h"),
    (lambda: PoolSpec(n=1 << 20, c=64, h=64, w=64), "n"),
    (lambda: PoolSpec(n=1, c=4, h=1 << 16, w=1 << 16, window=1, stride=1, padding=0), "h"),
])
def test_too_many_elements_names_the_largest_field_set(make, field: str) -> None:
    with pytest.raises(SpecError) as info:
        make()
    assert info.value.field == field, str(info.value)
    assert str(MAX_ELEMENTS) in str(info.value) or "32-bit" in str(info.value)
