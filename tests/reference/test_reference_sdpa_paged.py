"""The PyTorch side of paged K/V caches and sink tokens, on the CPU: block tables over shuffled pages, the page
gather against a plain contiguous cache, the float64 reference of a paged problem equal to the contiguous one's,
the sink folded into the softmax like an extra key, and PyTorch's paths agreeing with the reference."""

from __future__ import annotations

import pytest
import torch

from cudnn_lab.errors import SpecError
from cudnn_lab.reference import make_inputs, make_outputs, reference_outputs, torch_op
from cudnn_lab.reference.masks import attention, keep_mask
from cudnn_lab.reference.sdpa_paged import block_table, fold_sink, gather_pages, sink_logits, write_pages
from cudnn_lab.reference.sdpa_variants import logical
from cudnn_lab.specs import SdpaSpec

DECODE = SdpaSpec(batch=3, heads=8, kv_heads=2, seq_q=1, seq_kv=256, head_dim=64, dtype="bf16", causal=True,
                  diagonal_alignment="bottom_right", page_size=16, seq_lens_kv=(256, 100, 7), num_pages=60)


def test_block_table_gives_each_sequence_distinct_pages_inside_the_pool():
    t = block_table((256, 100, 7), 16, 16, 60, seed=1)
    assert t.shape == (3, 1, 16, 1) and t.dtype == torch.int32
    flat = t.view(3, 16)
    real = torch.cat([flat[0, :16], flat[1, :7], flat[2, :1]])
    assert len(set(real.tolist())) == 24  # no page shared between real tokens
    assert int(flat.min()) >= 0 and int(flat.max()) < 60
    assert not torch.equal(real, torch.sort(real).values)  # shuffled, not in order
    assert not torch.equal(t, block_table((256, 100, 7), 16, 16, 60, seed=2))  # fresh per seed
    assert torch.equal(block_table((32, 32), 16, 2, 4, shuffle=False).view(-1), torch.arange(4, dtype=torch.int32))


@pytest.mark.parametrize("args,field", [(((256, 100), 16, 16, 22), "num_pages"), (((300,), 16, 16, 40), "seq_lens_kv"),
                                        (((16,), 0, 1, 4), "page_size")])
def test_block_table_refuses_tables_outside_the_cache(args, field):
    with pytest.raises(SpecError) as e:
        block_table(*args)
    assert e.value.field == field


def test_gather_reads_back_the_contiguous_cache_through_shuffled_pages():
    x = torch.randn(3, 2, 64, 8, dtype=torch.float64)
    lens = (64, 40, 3)
    table = block_table(lens, 16, 4, 12, seed=7)
    pool = torch.full((12, 2, 16, 8), float("nan"), dtype=torch.float64)
    write_pages(pool, x, table, lens)
    got = gather_pages(pool, table, 64)
    for b, n in enumerate(lens):
        assert torch.equal(got[b, :, :n], x[b, :, :n])  # every real token where a contiguous cache has it
    assert torch.isnan(pool).any()  # pages no sequence uses were left alone
    # a pool in the BSHD in-page order ([page, token, head, dim] in memory) gathers the same
    strided = torch.empty_strided((12, 2, 16, 8), (16 * 2 * 8, 8, 2 * 8, 1), dtype=torch.float64).copy_(pool)
    assert torch.equal(gather_pages(strided, table, 64).nan_to_num(0), got.nan_to_num(0))


def test_paged_inputs_and_the_reference_match_the_contiguous_problem():
    inputs = make_inputs(DECODE, seed=3)
    flat_spec = DECODE.replace(page_size=0)
    flat = make_inputs(flat_spec, seed=3)
    assert inputs["K"].shape == (60, 2, 16, 64) and inputs["K"].stride() == (16 * 2 * 64, 64, 2 * 64, 1)
    assert inputs["Page_table_K"].shape == (3, 1, 16, 1) and not torch.equal(inputs["Page_table_K"],
                                                                               inputs["Page_table_V"])
    assert torch.isfinite(inputs["K"].float()).all() and (inputs["K"] != 0).float().mean() > 0.99
    k = logical(DECODE, inputs, "K")
    for b, n in enumerate(DECODE.lens_kv):
        assert torch.equal(k[b, :, :n], flat["K"][b, :, :n].double())
    got, want = reference_outputs(DECODE, inputs)["O"], reference_outputs(flat_spec, flat)["O"]
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    out = make_outputs(DECODE)["O"]
    assert out.shape == (3, 8, 1, 64) and torch.isnan(out.float()).all()


def test_pytorch_sdpa_on_the_gathered_cache_agrees_with_the_reference():
    inputs = make_inputs(DECODE, seed=4)
    got, want = torch_op(DECODE, inputs)().double(), reference_outputs(DECODE, inputs)["O"]
    assert ((got - want).norm() / want.norm()).item() < 1e-2  # bf16 rounding


def test_fold_sink_is_one_more_key_with_a_zero_value():
    q, k, v = (torch.randn(1, 4, 5, 8, dtype=torch.float64) for _ in range(3))
    sink = torch.tensor([0.5, 2.0, -1.0, 4.0], dtype=torch.float64).view(1, 4, 1, 1)
    keep = keep_mask(1, 5, 5, causal=True)
    o, stats = fold_sink(*attention(q, k, v, scale=0.3, keep=keep), sink)
    kk = torch.cat([k, torch.zeros(1, 4, 1, 8, dtype=torch.float64)], dim=2)
    vv = torch.cat([v, torch.zeros(1, 4, 1, 8, dtype=torch.float64)], dim=2)
    s = torch.matmul(q, kk.transpose(-2, -1)) * 0.3
    s[..., -1:] = sink.expand(1, 4, 5, 1)
    s[..., :-1] = s[..., :-1].masked_fill(~keep, float("-inf"))
    torch.testing.assert_close(o, torch.matmul(torch.softmax(s, -1), vv), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(stats, torch.logsumexp(s, -1, keepdim=True), rtol=1e-12, atol=1e-12)
    # a row with no key: O = 0 and Stats = the sink
    o0, s0 = fold_sink(torch.zeros(1, 4, 1, 8), torch.full((1, 4, 1, 1), float("-inf")), sink)
    assert torch.equal(o0, torch.zeros_like(o0)) and torch.equal(s0, sink.float())


def test_sink_inputs_reference_and_pytorch_path():
    spec = SdpaSpec(batch=2, heads=4, kv_heads=2, seq_q=64, seq_kv=64, head_dim=64, dtype="bf16", causal=True,
                    sink=True, direction="fwd_training")
    inputs = make_inputs(spec, seed=2)
    assert inputs["Sink"].shape == (1, 4, 1, 1) and inputs["Sink"].dtype == torch.float32
    assert torch.equal(inputs["Sink"], sink_logits(4, 64, seed=2))
    ref = reference_outputs(spec, inputs)
    plain = reference_outputs(spec.replace(sink=False), {n: inputs[n] for n in ("Q", "K", "V")})
    share = 1 - torch.exp(plain["Stats"] - ref["Stats"])  # the weight each row gives its sink
    assert 0.05 < float(share.mean()) < 0.95  # the sink matters: a wrong sink fails the check
    got = torch_op(spec, inputs)().double()
    assert ((got - ref["O"]).norm() / ref["O"].norm()).item() < 2e-2
