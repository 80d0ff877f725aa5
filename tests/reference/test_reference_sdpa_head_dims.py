"""Issue 38: the float64 references of attention with odd head sizes and MLA (Q/K 192, V/O 128) agree with
PyTorch's own SDPA run in float64 (forward) and its autograd (backward), plain and with a padding mask."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudnn_lab.reference import make_inputs, reference_outputs
from cudnn_lab.reference.sdpa_variants import logical
from cudnn_lab.specs import SdpaSpec

BASE = dict(batch=2, heads=4, seq_q=24, seq_kv=40, dtype="fp16")
CASES = {
    "d96": dict(head_dim=96),
    "d72_causal": dict(head_dim=72, causal=True),
    "mla": dict(head_dim=192, head_dim_v=128),
    "mla_gqa_causal": dict(head_dim=192, head_dim_v=128, kv_heads=2, causal=True),
}


def torch_forward(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    g = spec.group
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    return F.scaled_dot_product_attention(q, k, v, is_causal=spec.causal, scale=spec.scale)


@pytest.mark.parametrize("case", list(CASES))
def test_forward_matches_torch_sdpa_in_float64(case: str) -> None:
    spec = SdpaSpec(**BASE, **CASES[case], direction="fwd_training")
    inputs = make_inputs(spec)
    out = reference_outputs(spec, inputs)
    q, k, v = (inputs[n].double() for n in ("Q", "K", "V"))
    want = torch_forward(spec, q, k, v)
    assert out["O"].shape == (2, 4, 24, spec.d_v)
    torch.testing.assert_close(out["O"], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", list(CASES))
def test_backward_matches_torch_autograd_in_float64(case: str) -> None:
    spec = SdpaSpec(**BASE, **CASES[case], direction="bwd")
    inputs = make_inputs(spec)
    out = reference_outputs(spec, inputs)
    leaves = [inputs[n].double().requires_grad_(True) for n in ("Q", "K", "V")]
    o = torch_forward(spec, *leaves)
    assert inputs["O"].shape == o.shape and inputs["dO"].shape == o.shape
    grads = torch.autograd.grad(o, leaves, inputs["dO"].double())
    for name, g in zip(("dQ", "dK", "dV"), grads):
        torch.testing.assert_close(out[name], g, rtol=1e-9, atol=1e-10, msg=name)
    # O handed to the backward is the float64 forward rounded to fp16
    torch.testing.assert_close(inputs["O"].double(), o.detach(), rtol=2e-3, atol=2e-3)


def test_mla_with_a_padding_mask_goes_through_the_variants_path() -> None:
    spec = SdpaSpec(**BASE, head_dim=192, head_dim_v=128, seq_lens_q=(24, 10), seq_lens_kv=(40, 17))
    inputs = make_inputs(spec)
    out = reference_outputs(spec, inputs)["O"]
    assert out.shape == (2, 4, 24, 128)
    q, k, v = (logical(spec, inputs, n) for n in ("Q", "K", "V"))
    want = F.scaled_dot_product_attention(q[1:, :, :10], k[1:, :, :17], v[1:, :, :17], scale=spec.scale)
    torch.testing.assert_close(out[1:, :, :10], want, rtol=1e-10, atol=1e-12)
    assert torch.count_nonzero(out[1:, :, 10:]) == 0  # rows past the length: zero on both sides
