"""Attention variants as cuDNN runs them: per-batch lengths (padding, ragged), bias kinds, the diagonal's alignment,
ALiBi slopes, and how many query-key pairs a mask keeps (the N of the FLOP formulas). Pure: no torch here.

Conventions are cuDNN's (docs/operations/Attention.md, test/python/sdpa/fp16_ref.py of cudnn-frontend):
query i keeps key j when ``j <= i + offset + right_bound`` and, with a left bound L, ``j > i + offset - L``, where
``offset`` is 0 for a top-left diagonal and ``seq_kv - seq_q`` (per batch, from the actual lengths) for a
bottom-right one. Padded queries (i >= len_q) keep nothing; padded keys (j >= len_kv) are never kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import SpecError

__all__ = ["BIAS_KINDS", "DIAGONAL_ALIGNMENTS", "check_seq_lens", "check_dropout", "alibi_slopes", "kept_pairs",
           "kept_pairs_batch", "packed_tokens"]

#: "tensor": an additive [1, heads, seq_q, seq_kv] bias; "alibi": cuDNN's built-in linear bias (needs causal).
BIAS_KINDS: tuple[str, ...] = ("none", "tensor", "alibi")
#: Where the causal diagonal starts: top-left (query i sees keys 0..i) or bottom-right (the last query sees every
#: key: decode and prefix-LM shapes, seq_q <= seq_kv).
DIAGONAL_ALIGNMENTS: tuple[str, ...] = ("top_left", "bottom_right")

#: Longest per-batch length list a spec holds (one entry per batch element).
MAX_LENS = 1 << 16


def check_seq_lens(spec: str, field: str, value: Any, batch: int, maximum: int, max_name: str
                   ) -> tuple[int, ...] | None:
    """Per-batch actual lengths: None (every sequence full), or ``batch`` integers from 1 to ``maximum`` (a list,
    a tuple, or a form's text such as "1024, 700").

    SpecError naming ``field`` for a wrong count, a non-integer, or a length above the maximum (``max_name`` is the
    field that sets it, e.g. 'seq_kv'). Lists come back as tuples.
    """
    if isinstance(value, str):  # a form's text: "1024, 700, 512" (blank or 'none': every sequence full)
        text = value.strip().strip("()[]").replace(",", " ").split()
        if not text or (len(text) == 1 and text[0].lower() in ("none", "full", "default")):
            return None
        try:
            value = [int(t) for t in text]
        except ValueError:
            raise SpecError(field, value, f"must be whole numbers separated by commas, one per batch element "
                            f"({batch}), each from 1 to {max_name}={maximum}", spec=spec) from None
    if value is None:
        return None
    if isinstance(value, bytes) or not isinstance(value, Sequence):
        raise SpecError(field, value, f"must be None or a list of {batch} lengths (one per batch element), each "
                        f"from 1 to {max_name}={maximum}", spec=spec)
    if len(value) != batch:
        raise SpecError(field, value, f"has {len(value)} entries but batch={batch}: give one length per batch "
                        "element", spec=spec)
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise SpecError(field, value, f"entry {i} ({v!r}) is not an integer; lengths are whole tokens",
                            spec=spec)
        if v > maximum:
            raise SpecError(field, value, f"entry {i} ({v}) is above {max_name}={maximum}, the maximum length "
                            "(raise it or shorten the sequence)", spec=spec)
        if v < 1:
            raise SpecError(field, value, f"entry {i} ({v}) must be at least 1", spec=spec)
        out.append(int(v))
    return tuple(out)


def check_dropout(spec: str, value: Any) -> float:
    """A dropout probability in [0, 1): 1 drops everything and its scale 1/(1-p) is infinite (cuDNN refuses it)."""
    allowed = "must be a probability from 0 (off) up to but not including 1"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError("dropout", value, allowed, spec=spec)
    try:
        p = float(value)
    except OverflowError:
        raise SpecError("dropout", value, allowed, spec=spec) from None
    if not (0.0 <= p < 1.0):  # NaN fails too
        raise SpecError("dropout", value, allowed + " (1 would zero every weight; its scale 1/(1-p) is infinite)"
                        if p == 1.0 else allowed, spec=spec)
    return p


def alibi_slopes(heads: int) -> tuple[float, ...]:
    """ALiBi's per-head slopes as cuDNN's reference computes them (Press et al., 2021).

    With n the largest power of two <= heads: 2**(-8 h / n) for h = 1..n, then for the remaining heads the odd
    slopes of 2n heads, 2**(-4 (2i + 1) / n) for i = 0..heads-n-1.
    """
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise SpecError("heads", heads, "must be a positive integer")
    n = 2 ** int(math.floor(math.log2(heads)))
    slopes = [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    slopes += [2.0 ** (-4.0 * (2 * i + 1) / n) for i in range(heads - n)]
    return tuple(slopes)


def _clamp_sum(a: int, b: int, cap: int) -> int:
    """sum over x = a..b of clamp(x, 0, cap) (0 for an empty range), in closed form."""
    if b < a:
        return 0

    def upto(t: int) -> int:  # sum over x = 0..t of clamp(x, 0, cap); 0 for t < 0
        if t < 0:
            return 0
        if t <= cap:
            return t * (t + 1) // 2
        return cap * (cap + 1) // 2 + (t - cap) * cap

    return upto(b) - upto(a - 1)


def kept_pairs(len_q: int, len_kv: int, *, causal: bool, alignment: str = "top_left", left_bound: int = 0,
               right_bound: int = 0) -> int:
    """Query-key pairs one (batch, head) keeps with ``len_q`` queries and ``len_kv`` keys.

    With d = 0 (top-left) or len_kv - len_q (bottom-right): ``causal`` keeps keys j <= i + d + right_bound, and a
    ``left_bound`` L > 0 keeps only keys j > i + d - L (a sliding window of L keys ending at the diagonal).
    Neither: len_q * len_kv.
    """
    if alignment not in DIAGONAL_ALIGNMENTS:
        raise SpecError("diagonal_alignment", alignment, f"must be one of {', '.join(DIAGONAL_ALIGNMENTS)}")
    d = len_kv - len_q if alignment == "bottom_right" else 0
    if causal:
        # row i keeps clamp(i + d + right_bound + 1, 0, len_kv) keys at or left of its bound
        kept = _clamp_sum(d + right_bound + 1, d + right_bound + len_q, len_kv)
    else:
        kept = len_q * len_kv
    if left_bound:
        # minus the keys at or left of i + d - L
        kept -= _clamp_sum(d - left_bound + 1, d - left_bound + len_q, len_kv)
    return kept


def kept_pairs_batch(seq_q: int, seq_kv: int, batch: int, lens_q: Sequence[int] | None,
                     lens_kv: Sequence[int] | None, **mask: Any) -> int:
    """kept_pairs summed over the batch, with each element's actual lengths (full lengths where None)."""
    lq = lens_q if lens_q is not None else (seq_q,) * batch
    lk = lens_kv if lens_kv is not None else (seq_kv,) * batch
    return sum(kept_pairs(q, k, **mask) for q, k in zip(lq, lk))


def packed_tokens(lens: Sequence[int]) -> int:
    """Rows a packed (ragged) buffer holds: the real tokens rounded up to a multiple of 64, at least 64, as
    cuDNN's tests allocate (extra rows are zero on input: they are masked but still read)."""
    total = sum(int(x) for x in lens)
    return max(64, -(-total // 64) * 64)
