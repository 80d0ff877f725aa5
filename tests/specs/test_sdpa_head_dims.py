"""Issue 38: SdpaSpec takes every head size cuDNN 9.19 runs on Hopper (multiples of 8 up to 256 for fp16/bf16, of 16
for FP8; the fp16/bf16 forward up to 1024, as cuDNN answered on an H200) and separate Q/K and V head sizes (MLA); what
cuDNN refuses is refused naming the field and the rule."""

from __future__ import annotations

import math

import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import SdpaSpec
from cudnn_lab.specs.sdpa_rules import SDPA_FWD_HEAD_DIM_MAX, SDPA_HEAD_DIM_MAX, head_dim_ok

BASE = dict(batch=2, heads=8, seq_q=64, seq_kv=96)


@pytest.mark.parametrize("d", range(8, 257, 8))
@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training", "bwd"])
def test_every_multiple_of_8_up_to_256_is_taken_in_both_directions(d: int, direction: str) -> None:
    spec = SdpaSpec(**BASE, head_dim=d, direction=direction, dtype="bf16")
    assert spec.tensor_shapes()["Q"][3] == d and spec.d_v == d


@pytest.mark.parametrize("d", [264, 288, 512, 576, 1024])
@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training"])
def test_the_forward_takes_what_cudnn_ran_past_256(d: int, direction: str) -> None:
    spec = SdpaSpec(**BASE, head_dim=d, direction=direction, dtype="bf16")
    assert spec.head_dim == d and SdpaSpec(**BASE, head_dim=576, head_dim_v=512, direction=direction).d_v == 512


@pytest.mark.parametrize("d", [264, 512])
def test_the_backward_and_fp8_stay_at_256_and_say_so(d: int) -> None:
    with pytest.raises(SpecError) as info:
        SdpaSpec(**BASE, head_dim=d, direction="bwd")
    assert info.value.field == "head_dim" and "to 256" in str(info.value) and "bwd" in str(info.value)
    with pytest.raises(SpecError, match="to 256"):
        SdpaSpec(**BASE, head_dim=d, dtype="fp8_e4m3")
    with pytest.raises(SpecError, match=f"to {SDPA_FWD_HEAD_DIM_MAX}") as info:
        SdpaSpec(**BASE, head_dim=SDPA_FWD_HEAD_DIM_MAX + 8)
    assert "largest head size cuDNN 9.19 was asked" in str(info.value)  # not asked: not said to be refused
    assert "refuses" not in str(info.value)
    assert SdpaSpec.field_limits({"dtype": "bf16", "direction": "bwd"})["head_dim"] == (8, 256)
    assert SdpaSpec.field_limits({"dtype": "bf16", "direction": "fwd_inference"})["head_dim"] == (8, 1024)


@pytest.mark.parametrize("d", [4, 12, 100, 129, 250, 1032, 2048])
def test_other_head_sizes_are_refused_with_cudnns_rule(d: int) -> None:
    with pytest.raises(SpecError) as info:
        SdpaSpec(**BASE, head_dim=d)
    assert info.value.field == "head_dim" and "multiple of 8" in str(info.value) and "Hopper" in str(info.value)
    with pytest.raises(SpecError) as info:
        SdpaSpec(**BASE, head_dim=64, head_dim_v=d)
    assert info.value.field == "head_dim_v" and "V and O" in str(info.value)


def test_fp8_takes_multiples_of_16_and_one_head_size() -> None:
    assert SdpaSpec(**BASE, head_dim=96, dtype="fp8_e4m3").head_dim == 96
    with pytest.raises(SpecError) as info:
        SdpaSpec(**BASE, head_dim=72, dtype="fp8_e4m3")
    assert info.value.field == "head_dim" and "multiple of 16" in str(info.value)
    with pytest.raises(SpecError) as info:
        SdpaSpec(**BASE, head_dim=192, head_dim_v=128, dtype="fp8_e4m3")
    assert info.value.field == "head_dim_v"
    assert head_dim_ok("fp16", 72) and not head_dim_ok("fp8_e5m2", 72)
    assert not head_dim_ok("bf16", SDPA_HEAD_DIM_MAX + 8) and head_dim_ok("bf16", SDPA_HEAD_DIM_MAX + 8, "fwd_training")


def test_mla_shapes_follow_each_head_size() -> None:
    spec = SdpaSpec(**BASE, kv_heads=2, head_dim=192, head_dim_v=128, direction="bwd")
    shapes = spec.tensor_shapes()
    assert shapes["Q"] == shapes["dQ"] == (2, 8, 64, 192) and shapes["K"] == shapes["dK"] == (2, 2, 96, 192)
    assert shapes["V"] == shapes["dV"] == (2, 2, 96, 128)
    assert shapes["O"] == shapes["dO"] == (2, 8, 64, 128) and shapes["Stats"] == (2, 8, 64, 1)
    assert "d192/128" in spec.label()
    # the strides follow the layout for each tensor's own head size
    assert spec.tensor_strides()["V"] == (96 * 2 * 128, 128, 2 * 128, 1)


def test_head_dim_v_equal_to_head_dim_is_stored_as_none() -> None:
    assert SdpaSpec(**BASE, head_dim=96, head_dim_v=96) == SdpaSpec(**BASE, head_dim=96)
    spec = SdpaSpec(**BASE, head_dim=192, head_dim_v=128)
    assert SdpaSpec.from_dict(spec.to_dict()) == spec and spec.to_dict()["head_dim_v"] == 128


@pytest.mark.parametrize("direction", ["fwd_inference", "bwd"])
def test_flops_count_each_head_size(direction: str) -> None:
    spec = SdpaSpec(**BASE, head_dim=192, head_dim_v=128, direction=direction)
    n = spec.batch * spec.seq_q * spec.seq_kv
    want = 2 * spec.heads * n * ((3 * 192 + 2 * 128) if direction == "bwd" else (192 + 128))
    assert spec.flops() == want
    same = SdpaSpec(**BASE, head_dim=160, direction=direction)  # (192 + 128) / 2 = 160 forward: same flops
    assert (spec.flops() == same.flops()) == (direction != "bwd")


def test_min_bytes_count_v_and_o_at_their_head_size() -> None:
    spec = SdpaSpec(**BASE, head_dim=192, head_dim_v=128)
    q = 2 * 8 * 64 * 192
    k, v, o = 2 * 8 * 96 * 192, 2 * 8 * 96 * 128, 2 * 8 * 64 * 128
    assert spec.min_bytes() == 2 * (q + k + v + o)


def test_a_paged_mla_cache_holds_v_pages_at_d_v() -> None:
    spec = SdpaSpec(**{**BASE, "seq_q": 1}, head_dim=192, head_dim_v=128, page_size=32, causal=True,
                    diagonal_alignment="bottom_right")
    assert spec.tensor_shapes()["K"][3] == 192 and spec.tensor_shapes()["V"][3] == 128


def test_the_form_shows_the_rule() -> None:
    values = SdpaSpec(**BASE, head_dim=192, head_dim_v=128).to_dict()
    assert SdpaSpec.field_limits(values)["head_dim_v"] == (8, 1024)  # the forward; the backward (8, 256)
    assert SdpaSpec.field_limits({**values, "direction": "bwd"})["head_dim_v"] == (8, 256)
    assert "head_dim_v" not in SdpaSpec.field_limits({**values, "head_dim_v": None})
    hints = SdpaSpec.field_hints(values)
    assert "8" in hints["head_dim"] and "head_dim" in hints["head_dim_v"]
    assert "head_dim_v" in SdpaSpec.hidden_fields({**values, "dtype": "fp8_e4m3", "head_dim_v": None})
    assert math.isfinite(SdpaSpec(**values_without_op(values)).scale)


def values_without_op(values: dict) -> dict:
    return {k: v for k, v in values.items() if k != "op"}
