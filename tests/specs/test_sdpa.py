"""SdpaSpec: validation (every bad value names its field, its value and what is allowed), round trips, shapes,
strides, FLOPs (causal halving, sliding-window band, GQA), bytes and labels."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudnn_lab as cl
from cudnn_lab.errors import CudnnLabError, SpecError
from cudnn_lab.specs import SdpaSpec, spec_from_dict, spec_from_json
from cudnn_lab.specs.base import MAX_ELEMENTS
from cudnn_lab.specs.sdpa import SDPA_DIRECTIONS
from cudnn_lab.specs.sdpa_rules import SDPA_COMMON_HEAD_DIMS

SMALL = dict(batch=2, heads=4, seq_q=16, seq_kv=16, head_dim=64)


def small(**kw) -> SdpaSpec:
    return SdpaSpec(**{**SMALL, **kw})


def brute_force_pairs(spec: SdpaSpec) -> int:
    """Kept (query, key) pairs counted one by one, as the reference's mask keeps them."""
    n = 0
    for i in range(spec.seq_q):
        for j in range(spec.seq_kv):
            if spec.causal and j > i:
                continue
            if spec.sliding_window and j <= i - spec.sliding_window:
                continue
            n += 1
    return n


# --- the public surface -------------------------------------------------------------------------------------------

def test_exported_from_the_package() -> None:
    assert cl.SdpaSpec is SdpaSpec
    assert "SdpaSpec" in cl.__all__ and "SdpaSpec" in cl.specs.__all__


def test_design_example_builds() -> None:
    spec = cl.SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True, dtype="fp16")
    assert spec.op == "sdpa" and spec.direction == "fwd_inference" and spec.layout == "BSHD"
    assert cl.spec_from_dict(spec.to_dict()) == spec


def test_defaults() -> None:
    spec = SdpaSpec()
    assert (spec.kv_heads, spec.h_kv, spec.group) == (None, spec.heads, 1)
    assert spec.sliding_window == 0 and spec.causal is False and spec.attn_scale is None
    assert spec.scale == pytest.approx(1 / math.sqrt(spec.head_dim))


# --- round trips ------------------------------------------------------------------------------------------------

@st.composite
def sdpa_specs(draw) -> SdpaSpec:
    kv = draw(st.sampled_from([1, 2, 4]))
    heads = kv * draw(st.integers(1, 3))
    seq_q = draw(st.integers(1, 64))
    seq_kv = draw(st.integers(seq_q, 96))
    causal = draw(st.booleans())
    window = draw(st.integers(0, seq_kv)) if causal else 0
    direction = draw(st.sampled_from(SDPA_DIRECTIONS))
    if direction == "bwd" and seq_q == seq_kv == 1:
        seq_kv = 2
    return SdpaSpec(batch=draw(st.integers(1, 4)), heads=heads, kv_heads=draw(st.sampled_from([None, kv])),
                    seq_q=seq_q, seq_kv=seq_kv, head_dim=draw(st.sampled_from(SDPA_COMMON_HEAD_DIMS)), causal=causal,
                    sliding_window=window, layout=draw(st.sampled_from(["BSHD", "BHSD"])),
                    dtype=draw(st.sampled_from(["fp16", "bf16"])), direction=direction,
                    attn_scale=draw(st.sampled_from([None, 0.1, 1.0])))


@settings(max_examples=60, deadline=None)
@given(sdpa_specs())
def test_round_trips_and_counts(spec: SdpaSpec) -> None:
    assert SdpaSpec.from_dict(spec.to_dict()) == spec
    assert spec_from_dict(spec.to_dict()) == spec
    assert spec_from_json(spec.to_json()) == spec
    assert spec.replace() == spec
    assert spec.score_count() == brute_force_pairs(spec)


def test_to_dict_is_plain_json() -> None:
    d = small(kv_heads=2, causal=True, sliding_window=4, attn_scale=0.2).to_dict()
    assert d == {"op": "sdpa", "batch": 2, "heads": 4, "kv_heads": 2, "seq_q": 16, "seq_kv": 16, "head_dim": 64,
                 "head_dim_v": None, "causal": True, "sliding_window": 4, "layout": "BSHD", "dtype": "fp16",
                 "direction": "fwd_inference", "attn_scale": 0.2, "seq_lens_q": None, "seq_lens_kv": None,
                 "ragged": False, "page_size": 0, "num_pages": None, "sink": False, "bias": "none",
                 "dropout": 0.0, "dropout_seed": 0, "diagonal_alignment": "top_left",
                 "out_dtype": "fp8_e4m3", "scale_q": None, "scale_k": None, "scale_v": None, "scale_o": None,
                 "scale_do": None}


def test_kv_heads_equal_to_heads_is_stored_as_none() -> None:
    assert small(kv_heads=4) == small()
    assert small(kv_heads=4).kv_heads is None
    # changing heads of a multi-head spec keeps multi-head attention
    assert small().replace(heads=8).h_kv == 8


def test_int_like_attn_scale_becomes_float() -> None:
    assert small(attn_scale=1).attn_scale == 1.0 and isinstance(small(attn_scale=1).attn_scale, float)


# --- validation -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field,value,words", [
    ("batch", 0, "from 1"),
    ("heads", -1, "from 1"),
    ("seq_q", 1.5, "integer"),
    ("seq_kv", True, "not a bool"),
    ("kv_heads", 3, "must divide heads=4"),
    ("kv_heads", 8, "from 1 to 4"),
    ("kv_heads", 0, "from 1 to 4"),
    ("head_dim", 100, "multiple of 8 from 8 to 1024"),
    ("head_dim", 1036, "nearest: 1024"),
    ("head_dim_v", 4, "multiple of 8"),
    ("head_dim", "64", "integer"),
    ("causal", 1, "True or False"),
    ("sliding_window", -1, "from 0"),
    ("layout", "NHWC", "BSHD, BHSD"),
    ("dtype", "fp32", "fp16, bf16"),
    ("direction", "fwd", "fwd_inference, fwd_training, bwd"),
    ("attn_scale", 0.0, "positive"),
    ("attn_scale", float("nan"), "positive finite"),
    ("attn_scale", "0.1", "None for 1/sqrt(head_dim)"),
    ("attn_scale", True, "positive"),
])
def test_bad_values_name_field_value_and_what_is_allowed(field: str, value, words: str) -> None:
    with pytest.raises(SpecError) as info:
        small(**{field: value})
    err = info.value
    assert err.field == field
    assert err.value is value or err.value == value
    assert words in str(err) and field in str(err) and "SdpaSpec" in str(err)
    assert isinstance(err, CudnnLabError) and isinstance(err, ValueError)


@pytest.mark.parametrize("dtype", ["fp8", "fp8_e4m3fn", "FP8_E5M2"])
def test_other_fp8_names_point_at_the_kits(dtype: str) -> None:
    with pytest.raises(SpecError, match="fp8_e4m3 or fp8_e5m2") as info:
        small(dtype=dtype)
    assert info.value.field == "dtype"


def test_kv_heads_message_lists_the_divisors() -> None:
    with pytest.raises(SpecError, match="1, 2, 3, 4, 6, 12"):
        small(heads=12, kv_heads=5)


def test_sliding_window_needs_causal() -> None:
    with pytest.raises(SpecError, match="causal=True") as info:
        small(sliding_window=4)
    assert info.value.field == "sliding_window"
    assert small(sliding_window=4, causal=True).sliding_window == 4


def test_sliding_window_needs_seq_q_at_most_seq_kv() -> None:
    with pytest.raises(SpecError, match="seq_q <= seq_kv"):
        small(seq_q=32, seq_kv=16, causal=True, sliding_window=4)
    small(seq_q=32, seq_kv=16, causal=True)  # plain causal is fine with more queries than keys


def test_backward_of_one_by_one_is_refused() -> None:
    with pytest.raises(SpecError, match="seq_q = seq_kv = 1"):
        small(seq_q=1, seq_kv=1, direction="bwd")
    small(seq_q=1, seq_kv=1)  # the forward is fine (decode step)


def test_too_many_elements_is_refused() -> None:
    with pytest.raises(SpecError, match="larger than"):
        SdpaSpec(batch=1 << 10, heads=64, seq_q=1 << 14, seq_kv=16, head_dim=256)
    assert math.prod(small().q_dims) < MAX_ELEMENTS


def test_from_dict_rejects_unknown_fields_and_other_ops() -> None:
    with pytest.raises(SpecError, match="is not a field"):
        SdpaSpec.from_dict({**small().to_dict(), "window": 3})
    with pytest.raises(SpecError, match="op"):
        SdpaSpec.from_dict({**small().to_dict(), "op": "conv"})


# --- shapes and strides -----------------------------------------------------------------------------------------

def test_tensor_shapes_per_direction() -> None:
    spec = small(kv_heads=2, seq_q=8, seq_kv=24)
    q, kv = (2, 4, 8, 64), (2, 2, 24, 64)
    assert spec.tensor_shapes() == {"Q": q, "K": kv, "V": kv, "O": q}
    assert spec.io_names() == (("Q", "K", "V"), "O") and spec.output_names() == ("O",)
    train = spec.replace(direction="fwd_training")
    assert train.tensor_shapes()["Stats"] == (2, 4, 8, 1) and train.output_names() == ("O", "Stats")
    bwd = spec.replace(direction="bwd")
    assert bwd.io_names() == (("Q", "K", "V", "O", "dO", "Stats"), "dQ")
    assert bwd.output_names() == ("dQ", "dK", "dV")
    assert bwd.tensor_shapes() == {"Q": q, "K": kv, "V": kv, "O": q, "dO": q, "Stats": (2, 4, 8, 1),
                                   "dQ": q, "dK": kv, "dV": kv}
    assert bwd.tensor_dtypes() == {**{n: "fp16" for n in bwd.tensor_shapes()}, "Stats": "fp32"}


def test_strides_follow_the_layout() -> None:
    bshd = small(kv_heads=2, direction="bwd").tensor_strides()
    assert bshd["Q"] == (16 * 4 * 64, 64, 4 * 64, 1)  # [b, s, h, d] in memory
    assert bshd["K"] == (16 * 2 * 64, 64, 2 * 64, 1)
    assert bshd["Stats"] == (4 * 16, 16, 1, 1)
    bhsd = small(kv_heads=2, direction="bwd", layout="BHSD").tensor_strides()
    assert bhsd["Q"] == (4 * 16 * 64, 16 * 64, 64, 1)
    assert bhsd["dK"] == (2 * 16 * 64, 16 * 64, 64, 1)
    assert bhsd["Stats"] == bshd["Stats"]


# --- FLOPs and bytes -------------------------------------------------------------------------------------------

def test_forward_flops_formula() -> None:
    spec = SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128)
    assert spec.flops() == 4 * 4 * 16 * 1024 * 1024 * 128
    assert spec.replace(direction="fwd_training").flops() == spec.flops()


def test_causal_square_keeps_half_plus_the_diagonal() -> None:
    spec = SdpaSpec(batch=4, heads=16, seq_q=1024, seq_kv=1024, head_dim=128, causal=True)
    assert spec.score_count() == 1024 * 1025 // 2
    assert spec.flops() == 4 * 4 * 16 * (1024 * 1025 // 2) * 128
    ratio = spec.flops() / spec.replace(causal=False).flops()
    assert ratio == pytest.approx(0.5, abs=1e-3)


def test_backward_is_two_and_a_half_forwards() -> None:
    fwd = small(causal=True)
    bwd = fwd.replace(direction="bwd")
    assert bwd.flops() == 10 * 2 * 4 * brute_force_pairs(fwd) * 64
    assert bwd.flops() * 2 == fwd.flops() * 5


def test_gqa_does_not_change_flops_but_reads_fewer_bytes() -> None:
    mha, gqa = small(heads=8), small(heads=8, kv_heads=2)
    assert gqa.flops() == mha.flops()
    assert gqa.min_bytes() < mha.min_bytes()


def test_sliding_window_counts_the_band() -> None:
    spec = SdpaSpec(batch=1, heads=1, seq_q=100, seq_kv=100, head_dim=64, causal=True, sliding_window=10)
    assert spec.score_count() == 10 * 11 // 2 + 90 * 10 == brute_force_pairs(spec)
    assert spec.flops() == 4 * 64 * spec.score_count()
    # a window at least as long as the sequence is the causal mask
    assert spec.replace(sliding_window=100).score_count() == spec.replace(sliding_window=0).score_count()


@pytest.mark.parametrize("seq_q,seq_kv", [(8, 24), (24, 8), (1, 50)])
def test_causal_rectangular_counts_top_left(seq_q: int, seq_kv: int) -> None:
    spec = small(seq_q=seq_q, seq_kv=seq_kv, causal=True)
    assert spec.score_count() == brute_force_pairs(spec)


def test_min_bytes_reads_inputs_and_writes_outputs_once() -> None:
    spec = small(kv_heads=2, seq_q=8, seq_kv=24)
    q, kv = 2 * 4 * 8 * 64, 2 * 2 * 24 * 64
    assert spec.min_bytes() == 2 * (q + 2 * kv + q)
    assert spec.replace(direction="fwd_training").min_bytes() == 2 * (q + 2 * kv + q) + 4 * 2 * 4 * 8
    assert spec.replace(direction="bwd").min_bytes() == 2 * (3 * q + 2 * kv) + 4 * 2 * 4 * 8 + 2 * (q + 2 * kv)


def test_label_names_what_matters() -> None:
    label = small(kv_heads=2, causal=True, sliding_window=8, direction="bwd", dtype="bf16").label()
    assert label == "sdpa bwd BSHD bf16 b2 h4 kv2 sq16 skv16 d64 causal win8"
    assert "scale0.1" in small(attn_scale=0.1).label()
