"""The attention reference on the CPU: inputs in the real layout, NaN-poisoned outputs, the float64 reference
against PyTorch's own scaled_dot_product_attention and autograd, Stats as logsumexp, GQA, masks, torch_op."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from cudnn_lab.errors import SpecError
from cudnn_lab.reference import make_inputs, make_outputs, reference_outputs, torch_eager, torch_op
from cudnn_lab.reference.sdpa import attention
from cudnn_lab.specs import ConvSpec, SdpaSpec

BASE = dict(batch=2, heads=4, seq_q=12, seq_kv=20, head_dim=64)


def spec_of(**kw) -> SdpaSpec:
    return SdpaSpec(**{**BASE, **kw})


def keep_mask(spec: SdpaSpec) -> torch.Tensor:
    """The mask built element by element: causal top-left, then the window."""
    keep = torch.ones(spec.seq_q, spec.seq_kv, dtype=torch.bool)
    for i in range(spec.seq_q):
        for j in range(spec.seq_kv):
            if spec.causal and j > i:
                keep[i, j] = False
            if spec.sliding_window and j <= i - spec.sliding_window:
                keep[i, j] = False
    return keep


def torch_reference(spec: SdpaSpec, q, k, v) -> torch.Tensor:
    """PyTorch's SDPA in float64 with K/V heads repeated and an explicit boolean mask."""
    k, v = (t.double().repeat_interleave(spec.group, dim=1) for t in (k, v))
    return F.scaled_dot_product_attention(q.double(), k, v, attn_mask=keep_mask(spec), scale=spec.scale)


CASES = {
    "plain": spec_of(),
    "causal": spec_of(causal=True),
    "causal_more_queries": spec_of(seq_q=20, seq_kv=12, causal=True),
    "window": spec_of(causal=True, sliding_window=4),
    "gqa": spec_of(kv_heads=2, causal=True),
    "mqa_bhsd_bf16": spec_of(kv_heads=1, layout="BHSD", dtype="bf16"),
    "scale": spec_of(attn_scale=0.5, head_dim=128),
}


@pytest.fixture(params=list(CASES), ids=list(CASES))
def case(request) -> SdpaSpec:
    return CASES[request.param]


# --- inputs and outputs ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["BSHD", "BHSD"])
def test_inputs_live_in_the_real_layout(layout: str) -> None:
    spec = spec_of(kv_heads=2, layout=layout, direction="bwd")
    inputs = make_inputs(spec)
    assert list(inputs) == ["Q", "K", "V", "O", "dO", "Stats"]
    for name, t in inputs.items():
        assert tuple(t.shape) == spec.tensor_shapes()[name]
        assert t.stride() == spec.tensor_strides()[name]
    q = inputs["Q"]
    if layout == "BSHD":  # a contiguous [b, s, h, d] buffer, transposed
        assert q.transpose(1, 2).is_contiguous() and not q.is_contiguous()
    else:
        assert q.is_contiguous()
    assert inputs["Stats"].dtype == torch.float32 and inputs["Stats"].is_contiguous()
    assert {inputs[n].dtype for n in ("Q", "K", "V", "O", "dO")} == {torch.float16}


def test_inputs_are_uniform_in_minus_one_one_never_zero() -> None:
    inputs = make_inputs(spec_of(dtype="bf16"), seed=5)
    for t in inputs.values():
        assert t.abs().max() <= 1 and t.abs().max() > 0.9
        assert (t == 0).float().mean() < 0.01
        assert abs(t.float().mean().item()) < 0.05


def test_inputs_are_reproducible_and_seeded() -> None:
    spec = spec_of()
    a, b, c = make_inputs(spec, seed=1), make_inputs(spec, seed=1), make_inputs(spec, seed=2)
    assert all(torch.equal(a[n], b[n]) for n in a)
    assert not torch.equal(a["Q"], c["Q"])
    assert not torch.equal(a["Q"], a["K"])


def test_backward_inputs_carry_the_forward_o_and_stats() -> None:
    spec = spec_of(kv_heads=2, causal=True, direction="bwd")
    inputs = make_inputs(spec)
    o, stats = attention(spec, *(inputs[n].double() for n in ("Q", "K", "V")))
    torch.testing.assert_close(inputs["O"].double(), o, rtol=1e-3, atol=1e-3)  # rounded to fp16
    torch.testing.assert_close(inputs["Stats"].double(), stats, rtol=1e-6, atol=1e-6)  # rounded to fp32


@pytest.mark.parametrize("direction,names", [("fwd_inference", ["O"]), ("fwd_training", ["O", "Stats"]),
                                             ("bwd", ["dQ", "dK", "dV"])])
@pytest.mark.parametrize("layout", ["BSHD", "BHSD"])
def test_outputs_are_nan_poisoned_with_graph_strides(direction: str, names: list[str], layout: str) -> None:
    spec = spec_of(kv_heads=2, layout=layout, direction=direction)
    outputs = make_outputs(spec)
    assert list(outputs) == names
    for name, t in outputs.items():
        assert tuple(t.shape) == spec.tensor_shapes()[name] and t.stride() == spec.tensor_strides()[name]
        assert t.isnan().all()
        assert t.dtype == (torch.float32 if name == "Stats" else torch.float16)


# --- the forward reference ---------------------------------------------------------------------------------------

def test_forward_reference_matches_torch_sdpa_in_float64(case: SdpaSpec) -> None:
    inputs = make_inputs(case, seed=2)
    (name, o), = reference_outputs(case, inputs).items()
    assert name == "O" and o.dtype == torch.float64 and o.shape == case.q_dims
    want = torch_reference(case, inputs["Q"], inputs["K"], inputs["V"])
    torch.testing.assert_close(o, want, rtol=1e-10, atol=1e-12)


def test_causal_reference_matches_torch_is_causal() -> None:
    spec = spec_of(causal=True)
    inputs = make_inputs(spec)
    q, k, v = (inputs[n].double() for n in ("Q", "K", "V"))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # top-left aligned, 1/sqrt(d)
    torch.testing.assert_close(reference_outputs(spec, inputs)["O"], want, rtol=1e-10, atol=1e-12)


def test_gqa_matches_torch_enable_gqa() -> None:
    spec = spec_of(heads=6, kv_heads=2)
    inputs = make_inputs(spec)
    q, k, v = (inputs[n].double() for n in ("Q", "K", "V"))
    want = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    torch.testing.assert_close(reference_outputs(spec, inputs)["O"], want, rtol=1e-10, atol=1e-12)


def test_query_head_reads_kv_head_h_over_group() -> None:
    spec = spec_of(heads=4, kv_heads=2)
    inputs = make_inputs(spec)
    o = reference_outputs(spec, inputs)["O"]
    one = SdpaSpec(batch=2, heads=1, seq_q=12, seq_kv=20, head_dim=64)
    for h in range(4):
        sub = {"Q": inputs["Q"][:, h:h + 1], "K": inputs["K"][:, h // 2:h // 2 + 1],
               "V": inputs["V"][:, h // 2:h // 2 + 1]}
        torch.testing.assert_close(o[:, h:h + 1], reference_outputs(one, sub)["O"], rtol=1e-12, atol=1e-12)


def test_stats_is_the_logsumexp_of_the_scaled_masked_scores(case: SdpaSpec) -> None:
    spec = case.replace(direction="fwd_training")
    inputs = make_inputs(spec)
    ref = reference_outputs(spec, inputs)
    assert list(ref) == ["O", "Stats"]
    q, k, v = (inputs[n].double() for n in ("Q", "K", "V"))
    k = k.repeat_interleave(spec.group, dim=1)
    s = (q @ k.transpose(-2, -1)) * spec.scale
    s = s.masked_fill(~keep_mask(spec), float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    stats = m + torch.log(torch.exp(s - m).sum(dim=-1, keepdim=True))  # the frontend's max + log(sum(exp(s - max)))
    assert ref["Stats"].shape == spec.stats_dims and ref["Stats"].dtype == torch.float64
    torch.testing.assert_close(ref["Stats"], stats, rtol=1e-12, atol=1e-12)
    # and softmax = exp(s - Stats): every row sums to one
    ones = torch.ones(spec.stats_dims[:3], dtype=torch.float64)
    torch.testing.assert_close(torch.exp(s - ref["Stats"]).sum(-1), ones)


def test_training_output_equals_inference_output() -> None:
    spec = spec_of(causal=True, kv_heads=2)
    inputs = make_inputs(spec)
    a = reference_outputs(spec, inputs)["O"]
    b = reference_outputs(spec.replace(direction="fwd_training"), inputs)["O"]
    assert torch.equal(a, b)


def test_window_of_one_copies_the_diagonal_value() -> None:
    spec = SdpaSpec(batch=1, heads=2, seq_q=8, seq_kv=8, head_dim=64, causal=True, sliding_window=1)
    inputs = make_inputs(spec)
    torch.testing.assert_close(reference_outputs(spec, inputs)["O"], inputs["V"].double(), rtol=0, atol=1e-15)


def test_chunked_reference_equals_one_piece(monkeypatch) -> None:
    import cudnn_lab.reference.sdpa as mod

    spec = spec_of(kv_heads=2, causal=True, direction="fwd_training")
    inputs = make_inputs(spec)
    whole = reference_outputs(spec, inputs)
    monkeypatch.setattr(mod, "_CHUNK_ELEMENTS", 1)  # one (batch, kv head) at a time
    assert len(mod._chunks(spec)) == spec.batch * spec.h_kv
    pieces = reference_outputs(spec, inputs)
    for n in whole:
        torch.testing.assert_close(pieces[n], whole[n], rtol=1e-14, atol=1e-15)


# --- the backward reference -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"causal": True}, {"kv_heads": 2, "causal": True, "sliding_window": 5},
                                {"kv_heads": 1, "layout": "BHSD", "dtype": "bf16"}],
                         ids=["plain", "causal", "gqa_window", "mqa_bhsd_bf16"])
def test_backward_reference_matches_torch_autograd(kw: dict) -> None:
    spec = spec_of(direction="bwd", **kw)
    inputs = make_inputs(spec, seed=4)
    ref = reference_outputs(spec, inputs)
    assert list(ref) == ["dQ", "dK", "dV"]
    leaves = [inputs[n].double().requires_grad_(True) for n in ("Q", "K", "V")]
    o = torch_reference(spec, *leaves)
    grads = torch.autograd.grad(o, leaves, inputs["dO"].double())
    for name, g in zip(("dQ", "dK", "dV"), grads):
        assert ref[name].shape == spec.tensor_shapes()[name] and ref[name].dtype == torch.float64
        torch.testing.assert_close(ref[name], g, rtol=1e-10, atol=1e-12)
        assert ref[name].abs().max() > 0


def test_backward_matches_the_explicit_flash_formulas() -> None:
    """dV = P^T dO, dS = P (dO V^T - rowsum(dO O)), dQ = scale dS K, dK = scale dS^T Q (summed over a group)."""
    spec = spec_of(direction="bwd", kv_heads=2, causal=True)
    inputs = make_inputs(spec)
    q, k, v, do = (inputs[n].double() for n in ("Q", "K", "V", "dO"))
    kr, vr = k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    s = ((q @ kr.transpose(-2, -1)) * spec.scale).masked_fill(~keep_mask(spec), float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = p @ vr
    ds = p * (do @ vr.transpose(-2, -1) - (do * o).sum(-1, keepdim=True))
    b, h, sk, d = kr.shape
    ref = reference_outputs(spec, inputs)
    torch.testing.assert_close(ref["dQ"], spec.scale * ds @ kr, rtol=1e-10, atol=1e-12)
    dk = (spec.scale * ds.transpose(-2, -1) @ q).view(b, 2, 2, sk, d).sum(2)
    dv = (p.transpose(-2, -1) @ do).view(b, 2, 2, sk, d).sum(2)
    torch.testing.assert_close(ref["dK"], dk, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(ref["dV"], dv, rtol=1e-10, atol=1e-12)


# --- PyTorch eager ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"causal": True, "kv_heads": 2}, {"causal": True, "sliding_window": 3},
                                {"dtype": "bf16", "layout": "BHSD", "kv_heads": 1}],
                         ids=["plain", "causal_gqa", "window", "mqa_bf16"])
@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training", "bwd"])
def test_torch_op_is_near_the_reference(kw: dict, direction: str) -> None:
    spec = spec_of(direction=direction, **kw)
    inputs = make_inputs(spec)
    op = torch_op(spec, inputs)
    got = op()
    again = op()  # reusable: the backward's forward ran once, retain_graph keeps it
    main = spec.output_names()[0]
    want = reference_outputs(spec, inputs)[main]
    assert got.dtype == inputs["Q"].dtype and got.shape == want.shape
    assert torch.equal(got, again)
    rel = ((got.double() - want).norm() / want.norm()).item()
    assert rel < 2e-2, rel


def test_torch_eager_dispatches_to_the_family() -> None:
    spec = spec_of()
    inputs = make_inputs(spec)
    assert torch_eager(spec, inputs).shape == spec.q_dims


# --- errors -------------------------------------------------------------------------------------------------------

def test_missing_or_misshapen_inputs_name_the_tensor() -> None:
    spec = spec_of(direction="bwd")
    inputs = make_inputs(spec)
    with pytest.raises(SpecError, match="lacks Stats"):
        reference_outputs(spec, {n: t for n, t in inputs.items() if n != "Stats"})
    with pytest.raises(SpecError, match=r"inputs\['Q'\]"):
        reference_outputs(spec, {**inputs, "Q": inputs["Q"][:, :2]})


def test_too_large_for_the_cpu_is_refused() -> None:
    spec = SdpaSpec(batch=64, heads=32, seq_q=4096, seq_kv=4096, head_dim=128)
    with pytest.raises(SpecError, match="CPU limit"):
        reference_outputs(spec, {n: torch.empty(1).expand(spec.tensor_shapes()[n]) for n in ("Q", "K", "V")})


def test_family_module_refuses_other_specs() -> None:
    from cudnn_lab.reference import sdpa

    with pytest.raises(SpecError, match="SdpaSpec"):
        sdpa.make_outputs(ConvSpec())


def test_reference_is_float64_and_finite_for_every_case(case: SdpaSpec) -> None:
    for direction in ("fwd_training", "bwd"):
        spec = case.replace(direction=direction)
        for t in reference_outputs(spec, make_inputs(spec)).values():
            assert t.dtype == torch.float64 and torch.isfinite(t).all()
            assert not math.isnan(t.sum().item())


# --- SDPA's tolerance band ---------------------------------------------------------------------------------------

def test_sdpa_has_cudnn_sdpa_test_band_and_other_ops_keep_theirs() -> None:
    from cudnn_lab.numerics import TOLERANCES, tolerance_bands

    for dtype in ("fp16", "bf16"):
        band = tolerance_bands(dtype, "sdpa")
        assert (band["cudnn"].rtol, band["cudnn"].atol) == (2e-2, 2e-2) and "SDPA" in band["cudnn"].source
        assert band["torch"] == TOLERANCES[dtype]["torch"]  # PyTorch's default stays the dtype's
        assert tolerance_bands(dtype, "conv") == TOLERANCES[dtype] == tolerance_bands(dtype)


def test_compare_with_op_uses_the_sdpa_band() -> None:
    from cudnn_lab.numerics import compare

    expected = torch.linspace(-3, 3, 101, dtype=torch.float64)
    actual = (expected + 1e-2).to(torch.bfloat16)  # 1e-2 off everywhere: beyond bf16's conv band near zero
    plain, sdpa = compare(actual, expected, "bf16"), compare(actual, expected, "bf16", op="sdpa")
    assert not plain.passed_cudnn and sdpa.passed_cudnn
    assert sdpa.op == "sdpa" and plain.op is None and sdpa.to_dict()["op"] == "sdpa"
    assert "rtol 0.02, atol 0.02) PASS" in sdpa.summary()
    assert sdpa.rel_l2 == plain.rel_l2
