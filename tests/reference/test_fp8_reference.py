"""The PyTorch side of FP8 problems and attention variants, on the CPU: quantized inputs with their descales,
float64 references from the same FP8 values, the quantization error reported apart, PyTorch baselines, and the
attention variants' references against PyTorch on the cut sequences."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.reference import (comparable_outputs, make_inputs, make_outputs, quantization_report,
                                 reference_outputs, torch_op)
from cudnn_lab.reference.masks import alibi_bias, unpack_ragged
from cudnn_lab.reference.quantize import dequantize

GEMM = cl.MatmulSpec(m=64, n=48, k=64, dtype="fp8_e4m3", transpose_b=True, amax=True)


def test_fp8_gemm_inputs_are_quantized_with_power_of_two_scales():
    ins = make_inputs(GEMM, seed=3)
    assert ins["A"].dtype == torch.float8_e4m3fn and ins["B"].stride() == (64 * 48, 1, 64)
    for n in ("A", "B"):
        d = float(ins[f"descale_{n}"].reshape(-1)[0])
        assert d > 0 and float(torch.log2(torch.tensor(d))) % 1 == 0  # 1 / a power of two
    assert float(ins["scale_C"]) == 1.0
    again = make_inputs(GEMM, seed=3)
    assert torch.equal(ins["A"].float(), again["A"].float())
    fixed = make_inputs(GEMM.replace(scale_a=1.0), seed=3)
    assert float(fixed["descale_A"].reshape(-1)[0]) == 1.0


def test_fp8_gemm_reference_uses_the_fp8_values_and_amax():
    ins = make_inputs(GEMM)
    ref = reference_outputs(GEMM, ins)
    a = dequantize(ins["A"], float(ins["descale_A"].reshape(-1)[0]))
    b = dequantize(ins["B"], float(ins["descale_B"].reshape(-1)[0]))
    assert torch.allclose(ref["C"], a @ b, rtol=0, atol=0)
    assert float(ref["Amax"]) == float((a @ b).abs().max())
    outs = make_outputs(GEMM)
    assert outs["C"].dtype == torch.bfloat16 and torch.isnan(outs["Amax"]).all()


def test_scaled_mm_is_the_fp8_gemm_baseline_and_agrees():
    ins = make_inputs(GEMM)
    out = torch_op(GEMM, ins)()
    ref = reference_outputs(GEMM, ins)["C"]
    assert out.dtype == torch.bfloat16 and out.shape == ref.shape
    torch.testing.assert_close(out.double(), ref, atol=7e-2, rtol=7e-2)  # PyTorch's own FP8 GEMM band


@pytest.mark.parametrize("spec,words", [
    (cl.MatmulSpec(batch=2, m=32, n=32, k=32, dtype="fp8_e4m3", transpose_b=True), "batch > 1"),
    (cl.MatmulSpec(m=32, n=32, k=32, dtype="fp8_e5m2", b_dtype="fp8_e4m3", transpose_b=True, out_dtype="fp16"), ""),
    (cl.ConvSpec(n=2, c=32, h=8, w=8, k=16, dtype="fp8_e4m3"), "no FP8 convolution"),
])
def test_baselines_say_when_pytorch_has_none(spec, words):
    fn = torch_op(spec, make_inputs(spec))
    if not words:
        assert fn().dtype == torch.float16  # mixed e5m2 x e4m3 runs
        return
    with pytest.raises(SpecError) as e:
        fn()
    assert e.value.field == "dtype" and words in str(e.value)


def test_quantization_is_reported_apart_from_the_kernel():
    ins = make_inputs(GEMM)
    report = quantization_report(GEMM, ins)
    assert set(report) == {"A", "B", "output_rel_l2"}
    assert report["A"]["dtype"] == "fp8_e4m3" and report["A"]["saturated"] == 0
    assert 0 < report["A"]["rel_l2"] < 1 / 16 and 0 < report["output_rel_l2"] < 0.1
    clipped = quantization_report(GEMM.replace(scale_a=4096.0), make_inputs(GEMM.replace(scale_a=4096.0)))
    assert clipped["A"]["saturated"] > 0 and clipped["output_rel_l2"] > 5 * report["output_rel_l2"]
    assert quantization_report(cl.MatmulSpec(m=8, n=8, k=8), make_inputs(cl.MatmulSpec(m=8, n=8, k=8))) is None


def test_fp8_conv_reference():
    spec = cl.ConvSpec(n=2, c=32, h=8, w=8, k=16, dtype="fp8_e4m3", amax=True)
    ins = make_inputs(spec)
    ref = reference_outputs(spec, ins)
    x = dequantize(ins["X"], float(ins["descale_X"].reshape(-1)[0]))
    w = dequantize(ins["W"], float(ins["descale_W"].reshape(-1)[0]))
    assert torch.allclose(ref["Y"], F.conv2d(x, w, padding=1))
    assert ins["X"].is_contiguous(memory_format=torch.channels_last)


ATTN = dict(batch=2, heads=4, seq_q=32, seq_kv=32, head_dim=64)


def _cut(t: torch.Tensor, b: int, n: int) -> torch.Tensor:
    return t[b:b + 1, :, :n].double()


def test_padded_attention_equals_attention_on_each_cut_sequence():
    spec = cl.SdpaSpec(**ATTN, direction="fwd_training", seq_lens_q=(32, 9), seq_lens_kv=(32, 13))
    ins = make_inputs(spec)
    assert ins["seq_len_kv"].view(-1).tolist() == [32, 13] and ins["seq_len_q"].dtype == torch.int32
    ref = reference_outputs(spec, ins)
    want = F.scaled_dot_product_attention(_cut(ins["Q"], 1, 9), _cut(ins["K"], 1, 13), _cut(ins["V"], 1, 13))
    assert torch.allclose(ref["O"][1:2, :, :9], want)
    assert (ref["O"][1, :, 9:] == 0).all() and (ref["Stats"][1, :, 9:] == 0).all()  # undefined rows zeroed
    # cuDNN leaves padded rows as they were (NaN here): compared as zeros, like the reference
    outs = make_outputs(spec)
    outs["O"].copy_(ref["O"].to(outs["O"].dtype))
    outs["Stats"][:, :, :9].copy_(ref["Stats"][:, :, :9])
    outs["Stats"][0].copy_(ref["Stats"][0])
    cmp = comparable_outputs(spec, outs, ins)
    assert not torch.isnan(cmp["O"]).any() and not torch.isnan(cmp["Stats"]).any()


def test_ragged_inputs_are_packed_and_give_the_padded_result():
    padded = cl.SdpaSpec(**ATTN, causal=True, seq_lens_q=(32, 9), seq_lens_kv=(32, 13))
    ragged = padded.replace(ragged=True)
    ins_p, ins_r = make_inputs(padded), make_inputs(ragged)
    assert ins_r["Q"].shape == (64, 4, 64) and ins_r["Q_offset"].view(-1).tolist() == [0, 32 * 256, 41 * 256]
    assert torch.equal(unpack_ragged(ins_r["Q"], (32, 9), 32)[1, :, :9], ins_p["Q"][1, :, :9])
    ref_p, ref_r = reference_outputs(padded, ins_p)["O"], reference_outputs(ragged, ins_r)["O"]
    assert ref_r.shape == (64, 4, 64) and (ref_r[41:] == 0).all()
    assert torch.allclose(unpack_ragged(ref_r, (32, 9), 32), ref_p)
    assert make_outputs(ragged)["O"].shape == (64, 4, 64)


def test_bias_and_alibi_references():
    spec = cl.SdpaSpec(**ATTN, bias="tensor")
    ins = make_inputs(spec)
    want = F.scaled_dot_product_attention(*(ins[n].double() for n in "QKV"), attn_mask=ins["Bias"].double())
    assert torch.allclose(reference_outputs(spec, ins)["O"], want)
    spec = cl.SdpaSpec(**ATTN, causal=True, bias="alibi")
    ins = make_inputs(spec)
    keep = torch.ones(32, 32, dtype=torch.bool).tril()
    mask = alibi_bias(4, 32, 32).masked_fill(~keep, float("-inf"))
    want = F.scaled_dot_product_attention(*(ins[n].double() for n in "QKV"), attn_mask=mask)
    assert torch.allclose(reference_outputs(spec, ins)["O"], want)


def test_dropout_mask_comes_from_the_seed_and_the_reference_applies_it():
    spec = cl.SdpaSpec(**ATTN, direction="fwd_training", dropout=0.25, dropout_seed=11)
    ins = make_inputs(spec)
    mask = ins["Dropout_mask"]
    assert mask.dtype == torch.float16 and set(mask.unique().tolist()) == {0.0, 1.0}
    assert abs(float(mask.float().mean()) - 0.75) < 0.03
    assert float(ins["Dropout_scale"]) == pytest.approx(1 / 0.75)
    assert torch.equal(make_inputs(spec, seed=5)["Dropout_mask"], mask)  # the dropout seed, not the data seed
    assert not torch.equal(make_inputs(spec.replace(dropout_seed=12))["Dropout_mask"], mask)
    q, k, v = (ins[n].double() for n in "QKV")
    p = torch.softmax(q @ k.transpose(-2, -1) * spec.scale, dim=-1)
    assert torch.allclose(reference_outputs(spec, ins)["O"], (p * mask.double() / 0.75) @ v)


def test_variant_backward_matches_autograd_on_the_cut_sequences():
    spec = cl.SdpaSpec(**ATTN, direction="bwd", causal=True, seq_lens_q=(32, 12), seq_lens_kv=(32, 12))
    ins = make_inputs(spec)
    ref = reference_outputs(spec, ins)
    leaves = [_cut(ins[n], 1, 12).requires_grad_(True) for n in "QKV"]
    o = F.scaled_dot_product_attention(*leaves, is_causal=True)
    dq, dk, dv = torch.autograd.grad(o, leaves, _cut(ins["dO"], 1, 12))
    assert torch.allclose(ref["dQ"][1:2, :, :12], dq) and torch.allclose(ref["dV"][1:2, :, :12], dv)
    assert (ref["dK"][1, :, 12:] == 0).all()
    baseline = torch_op(spec, ins)()
    assert baseline.shape == (2, 4, 32, 64)


def test_fp8_attention_inputs_scalars_and_reference():
    spec = cl.SdpaSpec(**ATTN, dtype="fp8_e4m3", direction="fwd_training", causal=True)
    ins = make_inputs(spec)
    assert ins["Q"].dtype == torch.float8_e4m3fn
    assert float(ins["scale_S"]) == 256.0 and float(ins["descale_S"]) == 1 / 256  # softmax weights <= 1
    v = dequantize(ins["V"], float(ins["descale_V"]))
    assert float(ins["scale_O"]) * float(v.abs().max()) <= 448  # scale_O never saturates O
    ref = reference_outputs(spec, ins)
    q, k = (dequantize(ins[n], float(ins[f"descale_{n}"])) for n in "QK")
    assert torch.allclose(ref["O"], F.scaled_dot_product_attention(q, k, v, is_causal=True))
    # an FP8 O is compared dequantized: O_fp8 / scale_O
    outs = make_outputs(spec)
    outs["O"].copy_((ref["O"] * float(ins["scale_O"])).float())
    cmp = comparable_outputs(spec, outs, ins)
    assert set(cmp) == {"O", "Stats"}  # amax outputs are reported, not checked
    assert float((cmp["O"] - ref["O"]).norm() / ref["O"].norm()) < 1 / 16
    report = quantization_report(spec, ins)
    assert set(report) == {"Q", "K", "V", "output_rel_l2"} and report["output_rel_l2"] > 0
    with pytest.raises(SpecError) as e:
        torch_op(spec, ins)()
    assert "no FP8 attention" in str(e.value)


def test_fp8_attention_backward_scales_come_from_the_gradients():
    spec = cl.SdpaSpec(**{**ATTN, "head_dim": 128}, dtype="fp8_e4m3", direction="bwd", causal=True)
    ins = make_inputs(spec)
    ref = reference_outputs(spec, ins)
    for n in ("dQ", "dK", "dV"):
        scale = float(ins[f"scale_{n}"])
        assert scale * float(ref[n].abs().max()) <= 448 < 2 * scale * float(ref[n].abs().max())
    assert ins["O"].dtype == torch.float8_e4m3fn and ins["descale_dP"].numel() == 1


@pytest.mark.parametrize("variant", [dict(bias="tensor"), dict(causal=True, seq_lens_q=(32, 12), seq_lens_kv=(32, 9)),
                                     dict(causal=True, dropout=0.1), dict(layout="BHSD", bias="alibi", causal=True),
                                     dict(dtype="fp8_e4m3", head_dim=128, causal=True)],
                         ids=["bias", "padded", "dropout", "alibi-bhsd", "fp8"])
def test_variant_buffers_have_the_graphs_strides(variant):
    # cuDNN reads each pointer with the declared strides: O built contiguous [b, h, s, d] and fed to a BSHD backward
    # was read transposed (every variant backward failed on the H100, 2026-11-22)
    from cudnn_lab.reference.sdpa_variants import storage

    spec = cl.SdpaSpec(**{**ATTN, **variant}, direction="bwd")
    ins = make_inputs(spec)
    for name, t in ins.items():
        shape, strides = storage(spec, name)
        assert tuple(t.shape) == tuple(shape) and tuple(t.stride()) == tuple(strides), name
