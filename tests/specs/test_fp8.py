"""FP8 formats, scale validation, the power-of-two scale rule and GPU requirements (pure, no torch)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudnn_lab.errors import SpecError
from cudnn_lab.specs.fp8 import (FP8_DTYPES, FP8_FORMATS, GpuRequirement, check_fp8_dtype, check_scale, descale_of,
                                 fp8_format, is_fp8, recommended_scale, saturates, unmet)


def test_formats_hold_the_ocp_numbers():
    e4, e5 = FP8_FORMATS["fp8_e4m3"], FP8_FORMATS["fp8_e5m2"]
    assert (e4.max, e4.min_normal, e4.min_subnormal) == (448.0, 2.0**-6, 2.0**-9)
    assert (e5.max, e5.min_normal, e5.min_subnormal) == (57344.0, 2.0**-14, 2.0**-16)
    # max follows from the bits: e4m3 keeps its top exponent for numbers (1.75 * 2**8), e5m2 reserves it (inf/NaN)
    assert e4.max == (2 - 2.0**-2) * 2.0 ** (2**e4.exponent_bits - 1 - e4.bias)
    assert e5.max == (2 - 2.0**-e5.mantissa_bits) * 2.0 ** (2**e5.exponent_bits - 2 - e5.bias)
    assert e4.min_subnormal == 2.0 ** (1 - e4.bias - e4.mantissa_bits)
    assert e5.min_subnormal == 2.0 ** (1 - e5.bias - e5.mantissa_bits)
    assert (e4.unit_roundoff, e5.unit_roundoff) == (1 / 16, 1 / 8)
    assert (e4.cudnn_name, e5.cudnn_name) == ("FP8_E4M3", "FP8_E5M2")
    assert "448" in e4.describe() and "57344" in e5.describe()


def test_is_fp8_and_format_lookup():
    assert FP8_DTYPES == ("fp8_e4m3", "fp8_e5m2")
    assert is_fp8("fp8_e4m3") and is_fp8("fp8_e5m2")
    assert not any(is_fp8(v) for v in ("fp16", "bf16", "FP8_E4M3", None, 8))
    assert fp8_format("fp8_e5m2").max == 57344.0
    with pytest.raises(SpecError) as e:
        fp8_format("fp16")
    assert e.value.field == "dtype" and "fp8_e4m3" in str(e.value)
    with pytest.raises(SpecError) as e:
        check_fp8_dtype("MatmulSpec", "b_dtype", "e4m3")
    assert e.value.field == "b_dtype" and e.value.spec == "MatmulSpec"
    assert check_fp8_dtype("MatmulSpec", "b_dtype", "fp8_e5m2") == "fp8_e5m2"


@pytest.mark.parametrize("bad,why", [
    (0, "0 turns every input into 0"), (0.0, "0 turns every input into 0"), (-0.0, "0 turns every input"),
    (float("nan"), "NaN"), (float("inf"), "infinite"), (float("-inf"), "infinite"), (-2.0, "negative"),
    (2.0**-70, "from 2**-64"), (2.0**70, "to 2**64"), (10**400, "does not fit"), (True, "positive finite"),
    ("2", "positive finite"), ([1.0], "positive finite")])
def test_bad_scales_are_refused_naming_the_field(bad, why):
    with pytest.raises(SpecError) as e:
        check_scale("MatmulSpec", "scale_a", bad)
    assert e.value.field == "scale_a" and e.value.spec == "MatmulSpec"
    assert why in str(e.value)


@pytest.mark.parametrize("good", [1, 0.5, 448 / 3, 2.0**-64, 2.0**64, 256])
def test_good_scales_come_back_as_floats(good):
    v = check_scale("ConvSpec", "scale_x", good)
    assert isinstance(v, float) and v == float(good)


def test_none_scale_means_from_the_data():
    assert check_scale("SdpaSpec", "scale_q", None) is None


@pytest.mark.parametrize("amax,dtype,expected", [
    (1.0, "fp8_e4m3", 256.0), (448.0, "fp8_e4m3", 1.0), (3.0, "fp8_e4m3", 128.0), (449.0, "fp8_e4m3", 0.5),
    (1.0, "fp8_e5m2", 32768.0), (57344.0, "fp8_e5m2", 1.0), (0.001, "fp8_e4m3", 262144.0),
    (0.0, "fp8_e4m3", 1.0), (float("nan"), "fp8_e4m3", 1.0), (float("inf"), "fp8_e5m2", 1.0)])
def test_recommended_scale_is_max_over_amax_rounded_down_to_a_power_of_two(amax, dtype, expected):
    assert recommended_scale(amax, dtype) == expected


def test_margin_leaves_head_room():
    assert recommended_scale(1.0, "fp8_e4m3", margin=2) == 64.0
    with pytest.raises(SpecError) as e:
        recommended_scale(1.0, "fp8_e4m3", margin=-1)
    assert e.value.field == "margin"


@given(amax=st.floats(min_value=1e-30, max_value=1e30, allow_nan=False), dtype=st.sampled_from(FP8_DTYPES))
def test_recommended_scale_never_saturates_and_is_tight(amax, dtype):
    s = recommended_scale(amax, dtype)
    assert math.log2(s) == int(math.log2(s))  # a power of two adds no rounding of its own
    if 2.0**-64 < s < 2.0**64:  # inside the clamp, the scale is the tightest power of two
        assert not saturates(amax, s, dtype)
        assert saturates(amax, 2 * s, dtype)


def test_descale_is_the_reciprocal():
    assert descale_of(256.0) == 1 / 256
    assert saturates(2.0, 256.0, "fp8_e4m3") and not saturates(1.75, 256.0, "fp8_e4m3")


def test_unmet_requirements_name_the_constraint_and_the_source():
    req = GpuRequirement("FP8 attention (sdpa_fp8)", min_cc=(9, 0), min_cudnn=90100, source="frontend support")
    assert unmet(req, (9, 0), 91900) is None
    msg = unmet(req, (8, 9), 91900)
    assert msg is not None and "compute capability 9.0 or newer (this GPU is 8.9)" in msg and "frontend" in msg
    msg = unmet(req, (8, 0), 90000)
    assert "9.0 or newer" in msg and "cuDNN 9.1.0 or newer (this is 9.0.0)" in msg
    blackwell = GpuRequirement("fp16 output of FP8 attention", min_cc=(10, 0), min_cudnn=91300)
    assert "10.0" in unmet(blackwell, (9, 0), 91900)
    assert req.to_dict()["min_cc"] == [9, 0]
