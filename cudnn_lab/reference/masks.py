"""Attention variants in float64 PyTorch, with cuDNN's semantics: which query-key pairs a mask keeps, ALiBi, packing
a padded batch into cuDNN's ragged (THD) layout and back, dropout with a given mask, and the attention itself.

Semantics follow cudnn-frontend's reference (test/python/sdpa/fp16_ref.py): masks are applied after scaling and the
bias; a padded query row has no defined output (compare only valid rows: :func:`valid_rows`); a row whose every
key is masked gives O = 0 and Stats = -inf. torch is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import SpecError
from ..specs.attention_masks import DIAGONAL_ALIGNMENTS, alibi_slopes, packed_tokens

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["keep_mask", "valid_rows", "alibi_bias", "ragged_offsets", "pack_ragged", "unpack_ragged",
           "packed_tokens", "attention"]


def _lens(lens: Sequence[int] | None, full: int, batch: int) -> list[int]:
    out = list(lens) if lens is not None else [full] * batch
    if len(out) != batch:
        raise SpecError("seq_lens", out, f"must have one length per batch element (batch={batch})")
    return out


def keep_mask(batch: int, seq_q: int, seq_kv: int, *, lens_q: Sequence[int] | None = None,
              lens_kv: Sequence[int] | None = None, causal: bool = False, alignment: str = "top_left",
              left_bound: int = 0, right_bound: int = 0, device: torch.device | str = "cpu") -> torch.Tensor:
    """Boolean [batch, 1, seq_q, seq_kv]: True where query i may attend to key j.

    Keys at or past a batch element's length are dropped; so is every key of a padded query row. ``causal`` keeps
    j <= i + d + right_bound and ``left_bound`` L > 0 keeps j > i + d - L, with d = 0 (top-left) or
    len_kv - len_q of that batch element (bottom-right).
    """
    import torch

    if alignment not in DIAGONAL_ALIGNMENTS:
        raise SpecError("diagonal_alignment", alignment, f"must be one of {', '.join(DIAGONAL_ALIGNMENTS)}")
    lq, lk = _lens(lens_q, seq_q, batch), _lens(lens_kv, seq_kv, batch)
    i = torch.arange(seq_q, device=device).view(1, 1, -1, 1)
    j = torch.arange(seq_kv, device=device).view(1, 1, 1, -1)
    lq_t = torch.tensor(lq, device=device).view(-1, 1, 1, 1)
    lk_t = torch.tensor(lk, device=device).view(-1, 1, 1, 1)
    keep = (i < lq_t) & (j < lk_t)
    d = (lk_t - lq_t) if alignment == "bottom_right" else torch.zeros_like(lq_t)
    if causal:
        keep = keep & (j <= i + d + right_bound)
    if left_bound:
        keep = keep & (j > i + d - left_bound)
    return keep


def valid_rows(batch: int, seq: int, lens: Sequence[int] | None, device: torch.device | str = "cpu"
               ) -> torch.Tensor:
    """Boolean [batch, 1, seq, 1]: the rows (queries, or keys for dK/dV) inside each element's length."""
    import torch

    ls = torch.tensor(_lens(lens, seq, batch), device=device).view(-1, 1, 1, 1)
    return torch.arange(seq, device=device).view(1, 1, -1, 1) < ls


def alibi_bias(heads: int, seq_q: int, seq_kv: int, *, dtype: torch.dtype | None = None,
               device: torch.device | str = "cpu") -> torch.Tensor:
    """ALiBi's additive bias [1, heads, seq_q, seq_kv]: slope_h * (j - i), top-left (cuDNN pairs it with causal)."""
    import torch

    dt = dtype or torch.float64
    slopes = torch.tensor(alibi_slopes(heads), dtype=dt, device=device).view(1, -1, 1, 1)
    i = torch.arange(seq_q, dtype=dt, device=device).view(-1, 1)
    j = torch.arange(seq_kv, dtype=dt, device=device).view(1, -1)
    return slopes * (j - i)


def ragged_offsets(lens: Sequence[int], row_elements: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """cuDNN's ragged offsets, int64 [batch + 1, 1, 1, 1]: where each element starts, in elements (not bytes), for
    a token-major buffer with ``row_elements`` (heads * head_dim, or heads for Stats) per token."""
    import torch

    starts = [0]
    for n in lens:
        starts.append(starts[-1] + int(n))
    return (torch.tensor(starts, dtype=torch.int64, device=device) * row_elements).view(-1, 1, 1, 1)


def pack_ragged(x: torch.Tensor, lens: Sequence[int], rows: int | None = None) -> torch.Tensor:
    """A padded [batch, heads, seq, dim] tensor as a packed token-major [rows, heads, dim] buffer (THD): element
    b's first lens[b] tokens, one element after another, zeros after the last token."""
    import torch

    b, h, s, d = x.shape
    ls = _lens(lens, s, b)
    total = rows if rows is not None else packed_tokens(ls)
    if sum(ls) > total:
        raise SpecError("rows", total, f"must hold the {sum(ls)} packed tokens")
    out = torch.zeros((total, h, d), dtype=x.dtype, device=x.device)
    start = 0
    for i, n in enumerate(ls):
        out[start:start + n] = x[i, :, :n, :].transpose(0, 1)
        start += n
    return out


def unpack_ragged(packed: torch.Tensor, lens: Sequence[int], seq: int, fill: float = 0.0) -> torch.Tensor:
    """The inverse of :func:`pack_ragged`: [batch, heads, seq, dim] with ``fill`` past each element's length."""
    import torch

    _, h, d = packed.shape
    out = torch.full((len(lens), h, seq, d), fill, dtype=packed.dtype, device=packed.device)
    start = 0
    for i, n in enumerate(lens):
        out[i, :, :n, :] = packed[start:start + n].transpose(0, 1)
        start += n
    return out


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: float, keep: torch.Tensor | None = None,
              bias: torch.Tensor | None = None, dropout: float = 0.0, dropout_mask: torch.Tensor | None = None
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Float64 attention with cuDNN's order: S = scale * Q K^T + bias, masked (-inf) where ``keep`` is False,
    P = softmax(S) (0 on rows with no key), P * dropout_mask / (1 - dropout), O = P V. Returns (O, Stats), Stats =
    logsumexp of each masked score row ([b, h, s_q, 1], -inf on rows with no key).

    Q [b, hq, sq, d], K/V [b, hkv, skv, d] (grouped-query when hkv < hq); keep broadcasts to [b, hq, sq, skv].
    """
    import torch

    if dropout and dropout_mask is None:
        raise SpecError("dropout_mask", None, "must be given with dropout > 0: the reference applies the mask the "
                        "kernel drew (cuDNN's rng_dump)")
    q, k, v = (t.to(torch.float64) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    if group > 1:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if bias is not None:
        s = s + bias.to(torch.float64)
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    stats = torch.logsumexp(s, dim=-1, keepdim=True)
    empty = torch.isneginf(stats)
    p = torch.where(empty, torch.zeros_like(s), torch.exp(s - torch.where(empty, torch.zeros_like(stats), stats)))
    if dropout and dropout_mask is not None:  # (a dropout without its mask is refused above)
        p = p * dropout_mask.to(torch.float64) / (1.0 - dropout)
    return torch.matmul(p, v), stats
