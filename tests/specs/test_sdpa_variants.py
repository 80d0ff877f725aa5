"""Attention variants in SdpaSpec: per-batch lengths, ragged packing, bias and ALiBi, dropout, the diagonal's
alignment (decode): tensors, FLOPs, bytes, labels, and each refusal naming its field."""

from __future__ import annotations

import pytest

from cudnn_lab import SdpaSpec, spec_from_json
from cudnn_lab.errors import SpecError

BASE = dict(batch=4, heads=8, seq_q=256, seq_kv=256, head_dim=64)


def test_lengths_turn_on_the_padding_mask_and_count_the_real_pairs():
    s = SdpaSpec(**BASE, seq_lens_q=[256, 100, 50, 1], seq_lens_kv="256, 120, 60, 2")
    assert s.padded and s.seq_lens_q == (256, 100, 50, 1) and s.seq_lens_kv == (256, 120, 60, 2)
    assert s.io_names()[0] == ("Q", "K", "V", "seq_len_q", "seq_len_kv")
    assert s.tensor_dtypes()["seq_len_q"] == "int32" and s.tensor_shapes()["seq_len_kv"] == (4, 1, 1, 1)
    pairs = 256 * 256 + 100 * 120 + 50 * 60 + 1 * 2
    assert s.kept_pairs() == pairs and s.flops() == 8 * pairs * 2 * 128
    assert s.label().endswith("padded") and spec_from_json(s.to_json()) == s
    assert SdpaSpec(**BASE, seq_lens_q=None) == SdpaSpec(**BASE, seq_lens_q="")


def test_ragged_packs_every_token_tensor_and_counts_real_bytes():
    s = SdpaSpec(**BASE, direction="bwd", seq_lens_q=(256, 100, 50, 1), ragged=True)
    offsets = [n for n in s.io_names()[0] if n.endswith("_offset")]
    assert offsets == ["Q_offset", "K_offset", "V_offset", "O_offset", "dO_offset", "Stats_offset", "dQ_offset",
                       "dK_offset", "dV_offset"]
    assert s.tensor_shapes()["Q_offset"] == (5, 1, 1, 1) and s.tensor_dtypes()["Q_offset"] == "int64"
    assert s.ragged_tensors() == {"Q": "q", "K": "kv", "V": "kv", "O": "q", "dO": "q", "Stats": "q", "dQ": "q",
                                  "dK": "kv", "dV": "kv"}
    assert s.tensor_strides()["Stats"] == (256 * 8, 1, 8, 1)  # token-major when packed
    q_tokens, kv_tokens = 407, 4 * 256
    row = 8 * 64
    want = 2 * row * (4 * q_tokens + 4 * kv_tokens) + 4 * 8 * q_tokens + 4 * 2 * 4 + 8 * 5 * 9
    assert s.min_bytes() == want
    assert "ragged" in s.label()


def test_bias_alibi_dropout_and_alignment_tensors_and_labels():
    b = SdpaSpec(**BASE, bias="tensor")
    assert b.tensor_shapes()["Bias"] == (1, 8, 256, 256) and "Bias" in b.io_names()[0] and "bias" in b.label()
    a = SdpaSpec(**BASE, bias="alibi", causal=True)
    assert "Bias" not in a.io_names()[0] and "alibi" in a.label()
    d = SdpaSpec(**BASE, direction="fwd_training", dropout=0.1, dropout_seed=7)
    assert d.io_names()[0][3:] == ("Dropout_mask", "Dropout_scale")
    assert d.tensor_shapes()["Dropout_mask"] == (4, 8, 256, 256) and "drop0.1" in d.label()
    assert SdpaSpec(**BASE, direction="bwd", dropout=0.1).io_names()[0][-1] == "Dropout_scale_inv"
    dec = SdpaSpec(**{**BASE, "seq_q": 1, "seq_kv": 8192}, causal=True, diagonal_alignment="bottom_right")
    assert dec.bottom_right and dec.score_count() == 8192 and "causal-br" in dec.label()
    top = SdpaSpec(**{**BASE, "seq_q": 1, "seq_kv": 8192}, causal=True)
    assert top.score_count() == 1  # top-left: the one query sees key 0 only
    # the alignment means nothing without a causal mask
    assert not SdpaSpec(**BASE, diagonal_alignment="bottom_right").bottom_right


@pytest.mark.parametrize("changes,field,words", [
    (dict(seq_lens_q=(1, 2, 3)), "seq_lens_q", "has 3 entries but batch=4"),
    (dict(seq_lens_kv=(1, 2, 3, 300)), "seq_lens_kv", "above seq_kv=256, the maximum"),
    (dict(seq_lens_q=(0, 2, 3, 4)), "seq_lens_q", "at least 1"),
    (dict(seq_lens_q="1, x"), "seq_lens_q", "whole numbers"),
    (dict(ragged=True), "ragged", "needs seq_lens_q or seq_lens_kv"),
    (dict(ragged=True, seq_lens_q=(1, 2, 3, 4), layout="BHSD"), "ragged", "layout 'BSHD'"),
    (dict(bias="alibi"), "bias", "needs causal=True"),
    (dict(bias="relative"), "bias", "none, tensor, alibi"),
    (dict(dropout=0.1), "dropout", "fwd_training"),
    (dict(direction="fwd_training", dropout=1.0), "dropout", "infinite"),
    (dict(direction="fwd_training", dropout=0.1, dropout_seed=-1), "dropout_seed", "from 0"),
    (dict(causal=True, diagonal_alignment="bottom_right", bias="tensor"), "diagonal_alignment", "bias"),
    (dict(causal=True, diagonal_alignment="bottom_right", seq_q=512), "diagonal_alignment", "seq_q <= seq_kv"),
    (dict(diagonal_alignment="center"), "diagonal_alignment", "top_left, bottom_right"),
])
def test_variant_refusals_name_the_field(changes, field, words):
    with pytest.raises(SpecError) as e:
        SdpaSpec(**{**BASE, **changes})
    assert e.value.field == field and words in str(e.value) and e.value.spec == "SdpaSpec"


def test_bottom_right_with_lengths_may_have_more_queries_than_keys_in_the_buffer():
    s = SdpaSpec(**{**BASE, "seq_q": 512}, causal=True, diagonal_alignment="bottom_right",
                 seq_lens_q=(4, 4, 4, 4), seq_lens_kv=(256, 128, 64, 4))
    assert s.kept_pairs() == sum(sum(min(i + 1 + k - 4, k) for i in range(4)) for k in (256, 128, 64, 4))


def test_form_rules_of_the_variants():
    assert SdpaSpec.field_choices()["bias"] == ("none", "tensor", "alibi")
    assert SdpaSpec.field_limits({})["dropout_seed"] == (0, 2**63 - 1)
    assert SdpaSpec.field_hints({"seq_q": 1, "batch": 3})["diagonal_alignment"] == "decode: bottom_right"
    assert SdpaSpec.field_hints({"batch": 3})["seq_lens_kv"] == "3 lengths, blank: full"
