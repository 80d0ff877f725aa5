"""Attention variants in float64 on the CPU: masks, ALiBi, ragged packing, dropout and the attention itself."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from cudnn_lab.errors import SpecError
from cudnn_lab.reference.masks import (alibi_bias, attention, keep_mask, pack_ragged, packed_tokens,
                                       ragged_offsets, unpack_ragged, valid_rows)
from cudnn_lab.specs.attention_masks import kept_pairs_batch


def _qkv(b=2, hq=4, hkv=4, sq=16, skv=16, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, hq, sq, d, generator=g, dtype=torch.float64),
            torch.randn(b, hkv, skv, d, generator=g, dtype=torch.float64),
            torch.randn(b, hkv, skv, d, generator=g, dtype=torch.float64))


def test_keep_mask_counts_match_the_pure_formula():
    for kw in (dict(causal=False), dict(causal=True), dict(causal=True, alignment="bottom_right"),
               dict(causal=True, left_bound=3), dict(causal=True, alignment="bottom_right", left_bound=2)):
        m = keep_mask(3, 12, 20, lens_q=(12, 5, 1), lens_kv=(20, 9, 7), **kw)
        assert m.shape == (3, 1, 12, 20) and m.dtype == torch.bool
        assert int(m.sum()) == kept_pairs_batch(12, 20, 3, (12, 5, 1), (20, 9, 7), **kw)


def test_bottom_right_decode_row_sees_its_whole_cache():
    m = keep_mask(2, 1, 10, lens_kv=(10, 6), causal=True, alignment="bottom_right")
    assert m[0, 0, 0].all() and m[1, 0, 0, :6].all() and not m[1, 0, 0, 6:].any()
    top_left = keep_mask(1, 1, 10, causal=True)
    assert int(top_left.sum()) == 1


def test_padded_rows_have_no_keys_and_are_not_valid():
    m = keep_mask(2, 8, 8, lens_q=(8, 3), lens_kv=(8, 5))
    assert not m[1, :, 3:].any() and not m[1, :, :, 5:].any()
    rows = valid_rows(2, 8, (8, 3))
    assert rows.shape == (2, 1, 8, 1) and int(rows.sum()) == 11


def test_padding_equals_attention_on_the_cut_sequences():
    q, k, v = _qkv(b=2, sq=10, skv=12)
    lens_q, lens_kv = (10, 4), (12, 7)
    o, stats = attention(q, k, v, scale=0.3, keep=keep_mask(2, 10, 12, lens_q=lens_q, lens_kv=lens_kv))
    for b in range(2):
        ob = F.scaled_dot_product_attention(q[b:b + 1, :, :lens_q[b]], k[b:b + 1, :, :lens_kv[b]],
                                            v[b:b + 1, :, :lens_kv[b]], scale=0.3)
        assert torch.allclose(o[b:b + 1, :, :lens_q[b]], ob)
        assert torch.isneginf(stats[b, :, lens_q[b]:]).all()
        assert (o[b, :, lens_q[b]:] == 0).all()  # no key: O = 0 (cuDNN leaves these rows undefined)


def test_causal_and_gqa_match_torch():
    q, k, v = _qkv(hq=8, hkv=2, sq=9, skv=9)
    o, _ = attention(q, k, v, scale=0.25, keep=keep_mask(2, 9, 9, causal=True))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.25, enable_gqa=True)
    assert torch.allclose(o, ref)


def test_stats_are_the_logsumexp_of_the_scaled_rows():
    q, k, v = _qkv(sq=5, skv=7)
    _, stats = attention(q, k, v, scale=0.5)
    assert torch.allclose(stats, torch.logsumexp(q @ k.transpose(-2, -1) * 0.5, dim=-1, keepdim=True))


def test_alibi_bias_is_slope_times_distance():
    b = alibi_bias(8, 4, 6)
    assert b.shape == (1, 8, 4, 6)
    assert b[0, 0, 3, 0] == -3 * 0.5 and b[0, 7, 1, 5] == 4 * 2.0**-8 and b[0, 2, 2, 2] == 0
    q, k, v = _qkv(hq=8, hkv=8, sq=6, skv=6)
    o, _ = attention(q, k, v, scale=0.3, bias=alibi_bias(8, 6, 6), keep=keep_mask(2, 6, 6, causal=True))
    mask = torch.ones(6, 6, dtype=torch.bool).tril()
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=alibi_bias(8, 6, 6).masked_fill(~mask, -math.inf),
                                         scale=0.3)
    assert torch.allclose(o, ref)


def test_dropout_applies_the_given_mask_and_rescales():
    q, k, v = _qkv(sq=6, skv=6)
    g = torch.Generator().manual_seed(3)
    mask = (torch.rand(2, 4, 6, 6, generator=g) > 0.25).to(torch.float32)
    o, stats = attention(q, k, v, scale=0.3, dropout=0.25, dropout_mask=mask)
    p = torch.softmax(q @ k.transpose(-2, -1) * 0.3, dim=-1)
    assert torch.allclose(o, (p * mask / 0.75) @ v)
    _, plain_stats = attention(q, k, v, scale=0.3)
    assert torch.equal(stats, plain_stats)  # Stats are taken before dropout
    with pytest.raises(SpecError) as e:
        attention(q, k, v, scale=0.3, dropout=0.1)
    assert e.value.field == "dropout_mask"


def test_ragged_pack_round_trips_and_offsets_are_in_elements():
    x = torch.randn(3, 2, 10, 4)
    lens = (10, 3, 6)
    packed = pack_ragged(x, lens)
    assert packed.shape == (64, 2, 4) and packed_tokens(lens) == 64
    assert torch.equal(packed[10:13], x[1, :, :3].transpose(0, 1))
    assert (packed[19:] == 0).all()
    back = unpack_ragged(packed, lens, 10)
    assert torch.equal(back[0], x[0]) and torch.equal(back[2, :, :6], x[2, :, :6]) and (back[1, :, 3:] == 0).all()
    off = ragged_offsets(lens, 2 * 4)
    assert off.dtype == torch.int64 and off.shape == (4, 1, 1, 1)
    assert off.view(-1).tolist() == [0, 80, 104, 152]
    assert packed_tokens([100, 29]) == 192
    with pytest.raises(SpecError):
        pack_ragged(x, lens, rows=10)
    with pytest.raises(SpecError):
        keep_mask(3, 4, 4, lens_q=(1, 2))
