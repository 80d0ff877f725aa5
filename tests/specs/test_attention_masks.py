"""Attention-variant rules (pure): per-batch lengths, dropout probability, ALiBi slopes, kept query-key pairs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudnn_lab.errors import SpecError
from cudnn_lab.specs.attention_masks import (BIAS_KINDS, DIAGONAL_ALIGNMENTS, alibi_slopes, check_dropout,
                                             check_seq_lens, kept_pairs, kept_pairs_batch)


def test_choices():
    assert BIAS_KINDS == ("none", "tensor", "alibi")
    assert DIAGONAL_ALIGNMENTS == ("top_left", "bottom_right")


def test_seq_lens_none_and_lists():
    assert check_seq_lens("SdpaSpec", "seq_lens_q", None, 4, 1024, "seq_q") is None
    assert check_seq_lens("SdpaSpec", "seq_lens_q", " none ", 4, 1024, "seq_q") is None
    assert check_seq_lens("SdpaSpec", "seq_lens_q", "", 4, 1024, "seq_q") is None
    assert check_seq_lens("SdpaSpec", "seq_lens_q", "1024, 700 512,1", 4, 1024, "seq_q") == (1024, 700, 512, 1)
    assert check_seq_lens("SdpaSpec", "seq_lens_q", "(1024, 700, 512, 1)", 4, 1024, "seq_q") == (1024, 700, 512, 1)
    assert check_seq_lens("SdpaSpec", "seq_lens_q", [1024, 700, 512, 1], 4, 1024, "seq_q") == (1024, 700, 512, 1)


@pytest.mark.parametrize("value,why", [
    ([1, 2, 3], "has 3 entries but batch=4"),
    ([1, 2, 3, 4, 5], "has 5 entries but batch=4"),
    ([1, 2, 3, 5000], "entry 3 (5000) is above seq_kv=4096, the maximum"),
    ([1, 0, 3, 4], "entry 1 (0) must be at least 1"),
    ([1, -2, 3, 4], "entry 1 (-2) must be at least 1"),
    ([1, 2.5, 3, 4], "entry 1 (2.5) is not an integer"),
    ([1, True, 3, 4], "entry 1 (True) is not an integer"),
    ("1,2,x,4", "whole numbers separated by commas"),
    (7, "a list of 4 lengths"),
])
def test_bad_seq_lens_name_the_field(value, why):
    with pytest.raises(SpecError) as e:
        check_seq_lens("SdpaSpec", "seq_lens_kv", value, 4, 4096, "seq_kv")
    assert e.value.field == "seq_lens_kv" and e.value.spec == "SdpaSpec"
    assert why in str(e.value)


@pytest.mark.parametrize("p", [0, 0.0, 0.1, 0.999])
def test_dropout_accepts_probabilities_below_one(p):
    assert check_dropout("SdpaSpec", p) == float(p)


@pytest.mark.parametrize("p,why", [(1, "infinite"), (1.0, "infinite"), (-0.1, "probability"), (1.5, "probability"),
                                   (float("nan"), "probability"), (True, "probability"), ("0.1", "probability")])
def test_dropout_refuses_the_rest(p, why):
    with pytest.raises(SpecError) as e:
        check_dropout("SdpaSpec", p)
    assert e.value.field == "dropout" and why in str(e.value)


def test_alibi_slopes_power_of_two_heads():
    assert alibi_slopes(8) == tuple(2.0 ** (-h) for h in range(1, 9))  # 2**(-8h/8)
    assert alibi_slopes(1) == (2.0**-8,)


def test_alibi_slopes_other_head_counts_add_the_odd_slopes_of_twice_as_many():
    s12 = alibi_slopes(12)
    assert len(s12) == 12 and s12[:8] == alibi_slopes(8)
    # the 4 extra heads take slopes 1, 3, 5, 7 of a 16-head model: 2**(-0.5 * (2i + 1))
    assert s12[8:] == tuple(2.0 ** (-4.0 * (2 * i + 1) / 8) for i in range(4))
    assert s12[8:] == alibi_slopes(16)[0:8:2]  # ... i.e. the first odd-numbered slopes of 16 heads
    with pytest.raises(SpecError):
        alibi_slopes(0)


def _brute(lq, lk, causal, alignment="top_left", left=0, right=0):
    d = lk - lq if alignment == "bottom_right" else 0
    n = 0
    for i in range(lq):
        for j in range(lk):
            if causal and j > i + d + right:
                continue
            if left and j <= i + d - left:
                continue
            n += 1
    return n


def test_kept_pairs_known_cases():
    assert kept_pairs(1024, 1024, causal=False) == 1024 * 1024
    assert kept_pairs(1024, 1024, causal=True) == 1024 * 1025 // 2
    assert kept_pairs(1, 8192, causal=True, alignment="bottom_right") == 8192  # decode: the one query sees all keys
    assert kept_pairs(1, 8192, causal=True) == 1  # top-left: it sees key 0 only
    assert kept_pairs(100, 100, causal=True, left_bound=10) == 10 * 11 // 2 + 90 * 10
    with pytest.raises(SpecError) as e:
        kept_pairs(4, 4, causal=True, alignment="center")
    assert e.value.field == "diagonal_alignment"


@given(lq=st.integers(1, 40), lk=st.integers(1, 40), causal=st.booleans(),
       alignment=st.sampled_from(DIAGONAL_ALIGNMENTS), left=st.integers(0, 12), right=st.integers(0, 5))
def test_kept_pairs_closed_form_matches_counting(lq, lk, causal, alignment, left, right):
    assert kept_pairs(lq, lk, causal=causal, alignment=alignment, left_bound=left, right_bound=right if causal else 0
                      ) == _brute(lq, lk, causal, alignment, left, right if causal else 0)


def test_kept_pairs_batch_uses_each_length():
    lens_q, lens_kv = (1024, 700, 512, 129), (1024, 700, 512, 129)
    total = kept_pairs_batch(1024, 1024, 4, lens_q, lens_kv, causal=True)
    assert total == sum(n * (n + 1) // 2 for n in lens_q)
    assert kept_pairs_batch(8, 16, 3, None, None, causal=False) == 3 * 8 * 16
    assert kept_pairs_batch(8, 16, 2, None, (16, 4), causal=False) == 8 * 16 + 8 * 4


def test_large_counts_are_exact_integers():
    n = 1 << 20
    assert kept_pairs(n, n, causal=True) == n * (n + 1) // 2
    assert isinstance(kept_pairs(n, n, causal=True), int)
    assert math.isclose(kept_pairs(n, n, causal=True, left_bound=4096) / n, 4096, rel_tol=1e-2)
