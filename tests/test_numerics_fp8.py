"""FP8 tolerance bands: which band an FP8 problem is judged by, where each comes from, and compare() using them."""

from __future__ import annotations

import torch

import cudnn_lab as cl
from cudnn_lab.numerics import FP8_GEMM_BANDS, band_args, compare, tolerance_bands


def test_fp8_gemm_and_conv_take_their_output_dtypes_bands():
    assert tolerance_bands("fp8_e4m3", "matmul", "bf16")["cudnn"].rtol == 7e-2
    assert tolerance_bands("fp8_e5m2", "conv", "fp32")["cudnn"].atol == 3e-3
    assert tolerance_bands("fp8_e4m3", "matmul", "fp16")["torch"].rtol == 1e-3  # torch.testing's fp16 default
    assert "test_scaled_mm_vs_emulated" in FP8_GEMM_BANDS["bf16"]["cudnn"].source


def test_fp8_attention_bands_are_cudnns_fp8_test_tolerances():
    fwd = tolerance_bands("fp8_e4m3", "sdpa")
    bwd = tolerance_bands("fp8_e4m3", "sdpa_bwd")
    assert (fwd["cudnn"].atol, fwd["cudnn"].rtol) == (0.08, 0.2)
    assert (bwd["cudnn"].atol, bwd["cudnn"].rtol) == (0.04, 0.2)
    assert "sdpa/fp8.py" in fwd["cudnn"].source
    assert tolerance_bands("fp8_e5m2", "sdpa")["torch"].rtol == 0.25  # one e5m2 step
    # fp16 attention backward keeps fp16's SDPA band
    assert tolerance_bands("fp16", "sdpa_bwd") == tolerance_bands("fp16", "sdpa")


def test_band_args_of_specs():
    assert band_args(cl.MatmulSpec(m=32, n=32, k=32, dtype="fp8_e4m3", transpose_b=True, out_dtype="fp32")) == {
        "dtype": "fp8_e4m3", "op": "matmul", "out_dtype": "fp32"}
    assert band_args(cl.MatmulSpec(dtype="fp16"))["out_dtype"] == "fp16"
    assert band_args(cl.SdpaSpec(dtype="fp8_e5m2", direction="bwd", head_dim=128)) == {
        "dtype": "fp8_e5m2", "op": "sdpa_bwd", "out_dtype": "fp8_e4m3"}
    assert band_args(cl.SdpaSpec())["out_dtype"] is None


def test_compare_judges_an_fp8_gemm_by_pytorchs_band_and_names_it():
    expected = torch.linspace(-2, 2, 100, dtype=torch.float64)
    actual = expected * (1 + 0.03)  # 3 %: inside 7e-2, outside bf16's 1.6e-2
    m = compare(actual, expected, **band_args(cl.MatmulSpec(m=32, n=32, k=32, dtype="fp8_e4m3",
                                                            transpose_b=True)))
    assert m.passed_cudnn and not m.passed_torch and m.out_dtype == "bf16"
    assert "PyTorch's FP8 GEMM test tolerance" in m.summary()
    strict = compare(actual, expected, "fp8_e4m3", "matmul", "fp32")
    assert not strict.passed_cudnn
