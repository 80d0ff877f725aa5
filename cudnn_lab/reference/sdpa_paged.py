"""Paged K/V caches and sink tokens on the PyTorch side: block tables over a shuffled pool of pages, writing a
contiguous cache into its pages and gathering it back (what the kernel reads through the tables), and folding sink
logits into a softmax's output and logsumexp. torch is imported inside the functions.

Conventions are cuDNN's (cudnn-frontend's paged-cache sample and SDPA docs): a pool is [num_pages, heads, page_size,
dim]; a block table is int32 [batch, 1, pages_per_seq, 1] whose entry i for sequence b is the pool page holding that
sequence's tokens i * page_size .. (i + 1) * page_size - 1. A sink is one more key per query head whose scaled
score is its logit and whose value row is zero.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import SpecError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["block_table", "write_pages", "gather_pages", "sink_logits", "fold_sink"]


def _generator(name: str, seed: int) -> torch.Generator:
    import torch

    return torch.Generator(device="cpu").manual_seed((seed * 1_000_003 + zlib.crc32(name.encode())) % 2**63)


def block_table(lens: Sequence[int], page_size: int, pages_per_seq: int, num_pages: int, *, seed: int = 0,
                name: str = "Page_table_K", shuffle: bool = True) -> torch.Tensor:
    """An int32 [batch, 1, pages_per_seq, 1] block table: each sequence's real pages (ceil(len / page_size)) are
    distinct pool pages, taken from a random permutation of the pool (seeded by ``seed`` and ``name``; in order when
    not ``shuffle``); entries past a sequence's length repeat its first page (masked: never read as keys).

    SpecError when the pool has fewer than the needed pages (a table would point outside the cache)."""
    import torch

    if page_size < 1 or pages_per_seq < 1:
        raise SpecError("page_size", page_size, "must be at least 1 with at least one page per sequence")
    used = [-(-int(n) // page_size) for n in lens]
    if any(u > pages_per_seq for u in used):
        raise SpecError("seq_lens_kv", list(lens), f"holds a length above pages_per_seq * page_size = "
                        f"{pages_per_seq * page_size}, the longest sequence a table addresses")
    if sum(used) > num_pages:
        raise SpecError("num_pages", num_pages, f"is too small: the lengths need {sum(used)} pages")
    order = torch.randperm(num_pages, generator=_generator(name, seed)) if shuffle else torch.arange(num_pages)
    table = torch.empty((len(lens), pages_per_seq), dtype=torch.int64)
    start = 0
    for b, u in enumerate(used):
        pages = order[start:start + u]
        start += u
        table[b, :u] = pages
        table[b, u:] = pages[0] if u else order[0]
    return table.to(torch.int32).view(len(lens), 1, pages_per_seq, 1)


def write_pages(pool: torch.Tensor, x: torch.Tensor, table: torch.Tensor, lens: Sequence[int]) -> torch.Tensor:
    """Copy each sequence's real pages of the contiguous cache ``x`` [batch, heads, seq, dim] into ``pool``
    [num_pages, heads, page_size, dim] at the pages ``table`` names (in place; returns ``pool``). Other pages keep
    what they hold."""
    b, h, s, d = x.shape
    page = pool.shape[2]
    if s % page:
        raise SpecError("page_size", page, f"must divide the cache length {s}")
    tab = table.reshape(b, -1).long().to(pool.device)
    pages = x.to(pool.device, pool.dtype).reshape(b, h, s // page, page, d).permute(0, 2, 1, 3, 4)
    for i, n in enumerate(lens):
        u = -(-int(n) // page)
        pool[tab[i, :u]] = pages[i, :u]
    return pool


def gather_pages(pool: torch.Tensor, table: torch.Tensor, seq: int | None = None) -> torch.Tensor:
    """The contiguous cache [batch, heads, pages_per_seq * page_size (or ``seq``), dim] that ``table`` addresses in
    ``pool``: what the kernel reads as K or V (positions past a length come from whatever page the table names)."""
    b = table.shape[0]
    pages = pool[table.reshape(b, -1).long().to(pool.device)]  # [b, pages_per_seq, heads, page_size, dim]
    out = pages.permute(0, 2, 1, 3, 4).reshape(b, pool.shape[1], -1, pool.shape[3])
    return out if seq is None else out[:, :, :seq]


def sink_logits(heads: int, seq_kv: int, *, seed: int = 0) -> torch.Tensor:
    """Float32 [1, heads, 1, 1] sink logits: log(seq_kv) + uniform[-1, 1), so a sink takes a real share (about
    a quarter to three quarters) of each row's weight against seq_kv keys of O(1) scores: a check that could fail."""
    import torch

    u = torch.rand(heads, generator=_generator("Sink", seed), dtype=torch.float32) * 2 - 1
    return (u + math.log(max(seq_kv, 1))).view(1, heads, 1, 1)


def fold_sink(o: torch.Tensor, stats: torch.Tensor, sink: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, Stats) of attention with one more key of score ``sink`` (broadcast per head) and a zero value row, from
    those without it: Stats' = logaddexp(Stats, sink), O' = O * exp(Stats - Stats') (a row with no key: O' = 0,
    Stats' = sink)."""
    import torch

    s = sink.to(stats.dtype).to(stats.device)
    new = torch.logaddexp(stats, s.expand_as(stats))
    return o * torch.exp(stats - new).to(o.dtype), new
