"""Float -> FP8 -> float64 on the CPU (torch's float8 dtypes), and the quantization error reported apart."""

from __future__ import annotations

import pytest
import torch

from cudnn_lab.errors import SpecError
from cudnn_lab.reference.quantize import (amax, auto_scale, dequantize, quantization_error, quantize,
                                          torch_fp8_dtype)
from cudnn_lab.specs.fp8 import FP8_DTYPES, FP8_FORMATS


@pytest.mark.parametrize("dtype", FP8_DTYPES)
def test_pure_table_matches_torch_finfo(dtype):
    fmt, fi = FP8_FORMATS[dtype], torch.finfo(torch_fp8_dtype(dtype))
    assert (fmt.max, fmt.min_normal) == (fi.max, fi.smallest_normal)
    assert fmt.unit_roundoff == fi.eps / 2


def test_torch_dtypes():
    assert torch_fp8_dtype("fp8_e4m3") is torch.float8_e4m3fn
    assert torch_fp8_dtype("fp8_e5m2") is torch.float8_e5m2
    with pytest.raises(SpecError):
        torch_fp8_dtype("fp16")


@pytest.mark.parametrize("dtype", FP8_DTYPES)
def test_representable_values_round_trip_exactly(dtype):
    fmt = FP8_FORMATS[dtype]
    x = torch.tensor([0.0, 1.0, -1.5, fmt.max, -fmt.max, fmt.min_normal, fmt.min_subnormal, 0.875])
    q = quantize(x, dtype, scale=1.0)
    assert q.data.dtype == torch_fp8_dtype(dtype)
    assert torch.equal(dequantize(q), x.double())
    err = quantization_error(x, q)
    assert (err.rel_l2, err.max_abs, err.saturated, err.flushed) == (0.0, 0.0, 0, 0)


def test_overflow_saturates_instead_of_becoming_inf():
    x = torch.tensor([1e6, -1e6, 100.0, 70000.0])
    q5 = quantize(x, "fp8_e5m2", scale=1.0)
    assert torch.isfinite(q5.data.float()).all()
    assert dequantize(q5).tolist() == [57344.0, -57344.0, 96.0, 57344.0]  # 100 rounds to 96 (step 16 there)
    assert q5.saturated == 3
    q4 = quantize(x, "fp8_e4m3", scale=1.0)
    assert dequantize(q4).tolist() == [448.0, -448.0, 96.0, 448.0]
    assert q4.saturated == 3
    err = quantization_error(x, q4)
    assert err.saturated == 3 and err.max_abs == pytest.approx(1e6 - 448) and "clipped" in err.summary()


def test_tiny_values_flush_to_zero_and_are_counted():
    x = torch.tensor([2.0**-11, -(2.0**-12), 2.0**-9, 1.0])  # e4m3's smallest subnormal is 2**-9
    q = quantize(x, "fp8_e4m3", scale=1.0)
    assert dequantize(q).tolist() == [0.0, 0.0, 2.0**-9, 1.0]
    assert q.flushed == 2 and q.saturated == 0
    assert "flushed to 0" in quantization_error(x, q).summary()


def test_nan_stays_nan_and_is_not_counted_as_clipped():
    x = torch.tensor([float("nan"), 1.0])
    q = quantize(x, "fp8_e4m3", scale=2.0)
    out = dequantize(q)
    assert torch.isnan(out[0]) and out[1] == 1.0
    assert q.saturated == 0 and q.amax == 1.0


@pytest.mark.parametrize("dtype", FP8_DTYPES)
def test_auto_scale_fills_the_range_without_clipping(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 64, generator=g) * 0.01
    q = quantize(x, dtype)  # scale None: from the data
    fmt = FP8_FORMATS[dtype]
    assert q.scale == auto_scale(x, dtype) and q.saturated == 0
    assert fmt.max / 2 < q.amax * q.scale <= fmt.max
    err = quantization_error(x, q)
    # normal-range values round to within half a step
    assert err.max_rel_normal <= fmt.unit_roundoff
    assert 0 < err.rel_l2 < fmt.unit_roundoff
    assert err.numel == x.numel() and err.scale == q.scale


def test_a_poor_scale_shows_in_the_error():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4096, generator=g)
    good = quantization_error(x, quantize(x, "fp8_e4m3"))
    too_small = quantization_error(x, quantize(x, "fp8_e4m3", scale=2.0**-14))  # pushes most values below normal
    too_large = quantization_error(x, quantize(x, "fp8_e4m3", scale=1024.0))  # clips everything above 0.4375
    assert too_small.rel_l2 > 5 * good.rel_l2 and too_small.flushed > 0
    assert too_large.rel_l2 > 5 * good.rel_l2 and too_large.saturated > 0


def test_strides_are_kept_so_column_major_stays_column_major():
    x = torch.randn(8, 16).t()  # [16, 8] stored column-major
    q = quantize(x, "fp8_e4m3")
    assert q.data.stride() == x.stride() and tuple(q.data.shape) == (16, 8)
    assert torch.allclose(dequantize(q), x.double(), rtol=1 / 16, atol=0)


def test_float64_input_is_scaled_in_float64():
    x = torch.tensor([1.0 + 2.0**-40], dtype=torch.float64)
    q = quantize(x, "fp8_e4m3", scale=3.0)
    assert dequantize(q).dtype == torch.float64
    assert q.descale == 1 / 3.0


@pytest.mark.parametrize("bad", [0, float("nan"), float("inf"), -1.0])
def test_quantize_refuses_bad_scales_naming_the_field(bad):
    with pytest.raises(SpecError) as e:
        quantize(torch.ones(4), "fp8_e4m3", scale=bad)
    assert e.value.field == "scale"


def test_quantize_refuses_non_float_input_and_unknown_dtype():
    with pytest.raises(SpecError) as e:
        quantize(torch.ones(4, dtype=torch.int32), "fp8_e4m3")
    assert e.value.field == "x"
    with pytest.raises(SpecError) as e:
        quantize(torch.ones(4), "int8")
    assert e.value.field == "dtype"


def test_dequantize_needs_a_descale_for_a_bare_tensor():
    data = torch.ones(3).to(torch.float8_e4m3fn)
    assert dequantize(data, 0.5).tolist() == [0.5, 0.5, 0.5]
    with pytest.raises(SpecError) as e:
        dequantize(data)
    assert e.value.field == "descale"
    with pytest.raises(SpecError):
        dequantize(data, 0.0)


def test_amax_ignores_non_finite_and_empty():
    assert amax(torch.tensor([1.0, -3.0, float("inf"), float("nan")])) == 3.0
    assert amax(torch.empty(0)) == 0.0


def test_error_shape_must_match():
    q = quantize(torch.ones(4), "fp8_e4m3")
    with pytest.raises(SpecError) as e:
        quantization_error(torch.ones(5), q)
    assert e.value.field == "x"


def test_scaled_mm_on_the_same_fp8_values_matches_a_float64_product():
    """The reference a kernel is judged against: float64 math on the dequantized FP8 values, here checked against
    torch._scaled_mm on the CPU (fp32 accumulation, bf16 out), which must agree within bf16's rounding."""
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(32, 64, generator=g), torch.randn(48, 64, generator=g).t()
    qa, qb = quantize(a, "fp8_e4m3"), quantize(b, "fp8_e4m3")
    ref = dequantize(qa) @ dequantize(qb)
    out = torch._scaled_mm(qa.data, qb.data, scale_a=torch.tensor(qa.descale), scale_b=torch.tensor(qb.descale),
                           out_dtype=torch.bfloat16)
    rel = float((out.double() - ref).norm() / ref.norm())
    assert rel < 2**-8
    total = float((out.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm())
    assert total > rel  # quantizing the inputs costs more than the product's own rounding
