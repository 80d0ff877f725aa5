"""Scaled dot-product attention (SDPA): forward for inference or training, and backward, as cuDNN runs it.

Logical dims are always [batch, heads, seq, head_dim] (what cuDNN takes); ``layout`` says how Q, K, V, O and
their gradients are stored: ``BSHD`` ([b, s, h, d] in memory, as most models keep activations) or ``BHSD``.
Variants: per-batch lengths (a padding mask; ``ragged`` packs the tokens without padding), an additive bias or
ALiBi, dropout, a bottom-right diagonal (decode), FP8 (e4m3/e5m2) Q, K, V with their scales, a paged K/V cache
(cuDNN 9.5+: K and V live in pools of pages that per-sequence block tables address) and sink tokens (9.13+, forward).

Head sizes: ``head_dim`` (Q, K) and ``head_dim_v`` (V, O; None: as ``head_dim``; DeepSeek's multi-head latent
attention uses 192 and 128) take cuDNN 9.19's Hopper rule: multiples of 8 up to 256 for fp16/bf16, forward and
backward (multiples of 16 for FP8), from cudnn-frontend 1.32's sdpa_support_surface.h and the cuDNN SDPA support
matrix (``sdpa_rules.HEAD_DIM_SOURCE``; docs/FINDINGS.md 2026-11-29; scripts/probe_shapes.py asks a GPU).

Not offered, though cuDNN has them: cumulative sequence lengths (9.24+), block masks (UNIFIED implementation,
9.13.1+), score-modifier callbacks and FP8 with different Q/K and V head sizes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .attention_masks import (BIAS_KINDS, DIAGONAL_ALIGNMENTS, check_dropout, check_seq_lens, kept_pairs_batch)
from .base import DTYPE_BYTES, MAX_DIM, Spec, check_bool, check_int, read_int
from .fp8 import (SDPA_FP8, SDPA_FP8_BOTTOM_RIGHT, SDPA_FP8_BWD_HEAD_DIM, SDPA_FP8_BWD_RAGGED,
                  SDPA_FP8_HALF_OUT, GpuRequirement, check_scale, is_fp8)
from .layout import packed_strides
from .sdpa_rules import (FP8_BWD_AMAX, FP8_BWD_SCALARS, FP8_FIELDS, FP8_FWD_AMAX, FP8_FWD_SCALARS, FP8_STEPS,
                         HALF_BANDS, MEMORY_ORDERS, SDPA_DIRECTIONS, SDPA_DTYPES, SDPA_FP8_OUT_DTYPES,
                         SDPA_HEAD_DIM_STEP, SDPA_LAYOUTS, SDPA_PAGED, SDPA_SINK, TOKEN_SIDE, check_head_dims,
                         fp8_bands, head_dim_max)
from .tolerance import ToleranceBand

@dataclasses.dataclass(frozen=True)
class SdpaSpec(Spec):
    """Attention O = softmax(attn_scale * Q K^T + mask) V with Q [b, heads, seq_q, d], K [b, kv_heads, seq_kv, d],
    V [b, kv_heads, seq_kv, d_v] and O [b, heads, seq_q, d_v] (``head_dim`` d, ``head_dim_v`` d_v; None: d_v = d,
    and a value equal to ``head_dim`` is stored as None); head sizes by cuDNN's rule (module docstring).

    ``kv_heads`` below ``heads`` is grouped-query attention (1 is multi-query): each K/V head serves
    ``heads // kv_heads`` consecutive query heads. ``None`` (the default) means as many as ``heads``; a value equal
    to ``heads`` is stored as ``None``, so equal problems compare equal and changing ``heads`` keeps plain
    multi-head attention. ``causal`` masks keys after the query (top-left aligned: query i sees keys 0..i);
    ``sliding_window`` W > 0 (causal only) keeps only the last W of those keys (i-W < j <= i).
    ``direction``: ``fwd_inference`` writes O; ``fwd_training`` also writes the softmax statistics
    Stats [b, heads, seq_q, 1] (fp32, logsumexp of each scaled score row) that the backward needs; ``bwd`` reads
    Q, K, V, O, dO and Stats and writes dQ, dK, dV. ``attn_scale`` ``None`` means 1/sqrt(head_dim).

    ``seq_lens_q`` / ``seq_lens_kv``: each batch element's real length (None: all full); either turns on cuDNN's
    padding mask, and ``ragged`` then packs the tokens without padding (THD, BSHD rows). ``bias``: 'tensor' adds a
    [1, heads, seq_q, seq_kv] bias to the scaled scores, 'alibi' cuDNN's linear bias (causal only).
    ``dropout`` p (training directions) drops softmax weights with a mask the kit draws from ``dropout_seed`` and
    hands cuDNN (its custom-mask dropout), scaling the rest by 1/(1-p). ``diagonal_alignment`` 'bottom_right' ends
    the causal diagonal at the last key (decode: seq_q = 1 sees the whole cache).

    Paged K/V cache (``page_size`` P > 0, forward only): K and V are pools of ``num_pages`` pages
    [num_pages, kv_heads, P, d] (in-page order from ``layout``: BSHD stores [page, P, kv_heads, d]) and two int32
    block tables Page_table_K/V [b, 1, seq_kv / P, 1] say which page holds each sequence's i-th P tokens; the padding
    mask (``seq_lens_q``/``seq_lens_kv``, full where not given) is always on and ``seq_kv`` is the longest sequence
    (cuDNN's paged_attention_max_seq_len_kv). ``num_pages`` None means just the pages the lengths need.
    ``sink``: one learned logit per query head (Sink [1, heads, 1, 1], fp32) joins every softmax row as an extra key
    with no value (gpt-oss's attention sinks): it takes a share of the weights and adds to Stats.

    FP8 (``dtype`` fp8_e4m3/fp8_e5m2): Q, K, V (and dO) are float data quantized with ``scale_q``, ``scale_k``,
    ``scale_v``, ``scale_do`` (None: a power of two from the data's amax); O (or dQ, dK, dV) is written in
    ``out_dtype`` with ``scale_o`` (None: from amax(V), which bounds |O|); the graph also writes Amax_S and Amax_O
    (or the gradients' amaxes). FP8 attention takes no bias or ALiBi; its backward no dropout.
    """

    op: ClassVar[str] = "sdpa"
    menu_order: ClassVar[int] = 30
    sweep_axes: ClassVar[tuple[str, ...]] = ("seq_q", "causal")
    tolerances: ClassVar[Mapping[str, Mapping[str, Mapping[str, ToleranceBand]]]] = {
        "sdpa": {**HALF_BANDS, **{dt: fp8_bands(dt, step, "forward", 0.08) for dt, step in FP8_STEPS}},
        "sdpa_bwd": {**HALF_BANDS, **{dt: fp8_bands(dt, step, "backward", 0.04) for dt, step in FP8_STEPS}}}
    title: ClassVar[str] = "attention"
    #: The logical dims of Q, K, V, O (and Stats [B, H, S, 1]): the drawing names their layout in these letters.
    tensor_axes: ClassVar[str] = "BHSD"
    description: ClassVar[str] = "scaled dot-product attention: SdpaSpec (forward, training, backward)"
    field_order: ClassVar[tuple[str, ...]] = (
        "direction", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "head_dim_v", "causal",
        "sliding_window", "diagonal_alignment", "attn_scale", "seq_lens_q", "seq_lens_kv", "ragged", "page_size",
        "num_pages", "sink", "bias", "dropout", "dropout_seed", "layout", "dtype", "out_dtype", "scale_q", "scale_k",
        "scale_v", "scale_o", "scale_do")

    batch: int = 4
    heads: int = 16
    kv_heads: int | None = None
    seq_q: int = 1024
    seq_kv: int = 1024
    head_dim: int = 128
    head_dim_v: int | None = None
    causal: bool = False
    sliding_window: int = 0
    layout: str = "BSHD"
    dtype: str = "fp16"
    direction: str = "fwd_inference"
    attn_scale: float | None = None
    seq_lens_q: tuple[int, ...] | None = None
    seq_lens_kv: tuple[int, ...] | None = None
    ragged: bool = False
    page_size: int = 0
    num_pages: int | None = None
    sink: bool = False
    bias: str = "none"
    dropout: float = 0.0
    dropout_seed: int = 0
    diagonal_alignment: str = "top_left"
    out_dtype: str = "fp8_e4m3"
    scale_q: float | None = None
    scale_k: float | None = None
    scale_v: float | None = None
    scale_o: float | None = None
    scale_do: float | None = None

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("batch", "heads", "seq_q", "seq_kv"):
            self._set(f, check_int(name, f, getattr(self, f)))
        if self.kv_heads is not None:
            kv = check_int(name, "kv_heads", self.kv_heads, 1, self.heads)
            if self.heads % kv:
                divisors = [d for d in range(1, self.heads + 1) if self.heads % d == 0]
                raise SpecError("kv_heads", self.kv_heads, f"must divide heads={self.heads} (grouped-query "
                                f"attention shares each K/V head among heads // kv_heads query heads); allowed: "
                                f"{', '.join(map(str, divisors))} or None (= heads)", spec=name)
            self._set("kv_heads", None if kv == self.heads else kv)
        self._set("causal", check_bool(name, "causal", self.causal))
        self._set("sliding_window", check_int(name, "sliding_window", self.sliding_window, 0, MAX_DIM))
        self._check_choices("layout")
        self._check_dtype(name)
        self._check_choices("direction")
        d, dv = check_head_dims(name, self.dtype, self.head_dim, self.head_dim_v, self.direction)  # cuDNN's rule
        self._set("head_dim", d)
        self._set("head_dim_v", None if dv == d else dv)
        self._set("attn_scale", self._check_scale(name))
        self._check_variants(name)
        self._check_geometry(name)

    def _check_dtype(self, name: str) -> None:
        if isinstance(self.dtype, str) and self.dtype in SDPA_DTYPES:
            return
        allowed = f"must be one of {', '.join(SDPA_DTYPES)}"
        if isinstance(self.dtype, str) and "fp8" in self.dtype.lower():
            allowed += " (FP8 attention: fp8_e4m3 or fp8_e5m2, the kit's names for cuDNN's FP8_E4M3 / FP8_E5M2)"
        elif self.dtype in ("fp32", "fp64"):
            allowed += " (cuDNN's fused attention takes half-precision Q, K, V; it accumulates in fp32 itself)"
        raise SpecError("dtype", self.dtype, allowed, spec=name)

    def _check_scale(self, name: str) -> float | None:
        v = self.attn_scale
        if v is None:
            return None
        allowed = "must be a positive finite number, or None for 1/sqrt(head_dim)"
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise SpecError("attn_scale", v, allowed, spec=name)
        try:
            f = float(v)
        except OverflowError:  # an int such as 10**400
            raise SpecError("attn_scale", v, allowed, spec=name) from None
        if not math.isfinite(f) or f <= 0:
            raise SpecError("attn_scale", v, allowed, spec=name)
        return f

    def _check_variants(self, name: str) -> None:
        """Lengths, ragged packing, bias, dropout, the diagonal's alignment and the FP8 fields, each naming itself."""
        self._set("seq_lens_q", check_seq_lens(name, "seq_lens_q", self.seq_lens_q, self.batch, self.seq_q, "seq_q"))
        self._set("seq_lens_kv", check_seq_lens(name, "seq_lens_kv", self.seq_lens_kv, self.batch, self.seq_kv,
                                                "seq_kv"))
        self._set("ragged", check_bool(name, "ragged", self.ragged))
        self._check_choices("bias")
        self._set("dropout", check_dropout(name, self.dropout))
        self._set("dropout_seed", check_int(name, "dropout_seed", self.dropout_seed, 0, 2**63 - 1))
        self._check_choices("diagonal_alignment", "out_dtype")
        for f in FP8_FIELDS[1:]:
            self._set(f, check_scale(name, f, getattr(self, f)))
        if self.ragged and not self.padded:
            raise SpecError("ragged", self.ragged, "needs seq_lens_q or seq_lens_kv: packing without padding needs "
                            "each batch element's length", spec=name)
        if self.ragged and self.layout != "BSHD":
            raise SpecError("ragged", self.ragged, "needs layout 'BSHD': cuDNN's ragged offsets count tokens of "
                            "[heads, head_dim] rows", spec=name)
        if self.bias == "alibi" and not self.causal:
            raise SpecError("bias", self.bias, "'alibi' needs causal=True (cuDNN's ALiBi requires the causal mask, "
                            "right bound 0)", spec=name)
        if self.dropout and self.direction == "fwd_inference":
            raise SpecError("dropout", self.dropout, "needs direction 'fwd_training' or 'bwd': dropout is a "
                            "training-time op (0 turns it off)", spec=name)
        if self.bottom_right and (self.bias != "none" or self.dropout):
            raise SpecError("diagonal_alignment", self.diagonal_alignment, "'bottom_right' does not combine with a "
                            "bias, ALiBi or dropout in cuDNN (use 'top_left')", spec=name)
        if self.bottom_right and self.seq_q > self.seq_kv and not self.padded:
            raise SpecError("diagonal_alignment", self.diagonal_alignment, f"'bottom_right' needs seq_q <= seq_kv "
                            f"(here {self.seq_q} > {self.seq_kv}): cuDNN refuses it without a padding mask",
                            spec=name)
        if self.fp8 and self.bias != "none":
            raise SpecError("bias", self.bias, "must be 'none' for FP8: cuDNN's FP8 attention takes causal and "
                            "padding masks only ('SDPA FP8 does not support bias')", spec=name)
        self._check_paged(name)
        self._check_sink(name)
        if self.fp8 and self.direction == "bwd" and self.dropout:
            raise SpecError("dropout", self.dropout, "must be 0 for FP8 backward: cuDNN 9.19 on Hopper builds a plan "
                            "for it, but with the kit's mask dropout its gradients are wrong (rel L2 0.99 against "
                            "float64 autograd on an H100, docs/FINDINGS.md)", spec=name)

    def _check_paged(self, name: str) -> None:
        """A paged cache: a page size dividing seq_kv, enough pages for the lengths, and what cuDNN pages (forward,
        fp16/bf16, no packing); num_pages is stored as None without paging."""
        self._set("page_size", check_int(name, "page_size", self.page_size, 0, MAX_DIM))
        if not self.page_size:
            self._set("num_pages", None)
            return
        p = self.page_size
        if p & (p - 1) or self.seq_kv % p:
            sizes = [d for d in (16, 32, 64, 128, 256, 512, 1024) if self.seq_kv % d == 0]
            allowed = f"e.g. {', '.join(map(str, sizes))}" if sizes else "seq_kv a multiple of a power of two"
            raise SpecError("page_size", p, f"must be a power of two (cuDNN 9.19: 'block size needs to be non-zero "
                            f"and a power of 2') dividing seq_kv={self.seq_kv} (each sequence's block table holds "
                            f"seq_kv / page_size pages): {allowed}, or 0 for a contiguous cache", spec=name)
        if self.direction == "bwd":
            raise SpecError("page_size", p, "must be 0 for the backward: cuDNN's paged K/V caches are forward-only "
                            "(cuDNN 9.5+)", spec=name)
        if self.fp8:
            raise SpecError("page_size", p, "must be 0 for FP8 attention: the kit pages fp16/bf16 caches only",
                            spec=name)
        if self.ragged:
            raise SpecError("ragged", self.ragged, "must be False with a paged cache: cuDNN's block tables cannot be "
                            "packed (ragged) and the pages already hold K/V without padding", spec=name)
        if self.bias != "none" or self.dropout:
            field = "bias" if self.bias != "none" else "dropout"
            raise SpecError(field, getattr(self, field), "must be off with a paged cache: the kit offers paged "
                            "caches for decode and prefill inference with causal, window and padding masks only",
                            spec=name)
        need = self.pages_needed
        if self.num_pages is None:
            return
        n = check_int(name, "num_pages", self.num_pages, 1, MAX_DIM)
        if n < need:
            raise SpecError("num_pages", n, f"is too small: the block tables would point outside the cache; the "
                            f"lengths ({sum(self.lens_kv)} tokens over {self.batch} sequences) need {need} pages of "
                            f"{p} tokens (at least {need}, or None for exactly that)", spec=name)
        self._set("num_pages", n)

    def _check_sink(self, name: str) -> None:
        """Sink tokens: forward, fp16/bf16, more than one query (cuDNN's rule for its Hopper engines)."""
        self._set("sink", check_bool(name, "sink", self.sink))
        if not self.sink:
            return
        if self.direction == "bwd":
            raise SpecError("sink", self.sink, "must be False for the backward: the kit offers sink tokens forward "
                            "only (cuDNN 9.13+ forward; the backward would also write dSink)", spec=name)
        if self.fp8:
            raise SpecError("sink", self.sink, "must be False for FP8 attention: the kit adds sink tokens to "
                            "fp16/bf16 attention only", spec=name)
        if self.seq_q == 1:
            raise SpecError("sink", self.sink, "needs seq_q > 1: cuDNN refuses sink tokens in decode mode ('decode "
                            "only mode, i.e. s_q == 1, not supported with sink_token', cuDNN 9.13-9.19 backend)",
                            spec=name)

    def _check_geometry(self, name: str) -> None:
        if self.sliding_window and not self.causal:
            raise SpecError("sliding_window", self.sliding_window, "needs causal=True: the window is the band of "
                            "keys left of the causal diagonal (0 turns it off)", spec=name)
        if self.sliding_window and self.seq_q > self.seq_kv:
            raise SpecError("sliding_window", self.sliding_window, f"needs seq_q <= seq_kv (cuDNN's sliding window "
                            f"does not support seq_q={self.seq_q} > seq_kv={self.seq_kv})", spec=name)
        if self.direction == "bwd" and self.seq_q == 1 and self.seq_kv == 1:
            raise SpecError("seq_q", self.seq_q, "with seq_kv=1 has no backward in cuDNN (seq_q = seq_kv = 1 is not "
                            "supported); use a longer sequence", spec=name)
        kv_heads = "heads" if self.kv_heads is None else "kv_heads"
        q, kv = ("batch", "heads", "seq_q"), ("batch", kv_heads, "seq_kv")
        scores = ("batch", "heads", "seq_q", "seq_kv")
        small = {n: ("batch",) for n in (*FP8_BWD_SCALARS, *FP8_FWD_SCALARS, *FP8_FWD_AMAX, *FP8_BWD_AMAX,
                                         "seq_len_q", "seq_len_kv", "Dropout_scale", "Dropout_scale_inv",
                                         "Page_table_K", "Page_table_V", "Sink", *(f"{t}_offset" for t in TOKEN_SIDE))}
        if self.paged:  # the pools: as many elements as kv_heads * seq_kv per sequence, or num_pages * page_size
            kv = ("batch", kv_heads, "seq_kv") if self.num_pages is None else ("num_pages", kv_heads, "page_size")
        self.check_elements({"Q": q, "O": q, "dO": q, "dQ": q, "Stats": q, "K": kv, "V": kv, "dK": kv, "dV": kv,
                             "Bias": scores, "Dropout_mask": scores, **small})

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"direction": SDPA_DIRECTIONS, "layout": SDPA_LAYOUTS, "dtype": SDPA_DTYPES,
                "bias": BIAS_KINDS, "diagonal_alignment": DIAGONAL_ALIGNMENTS,
                "out_dtype": SDPA_FP8_OUT_DTYPES}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """``kv_heads`` up to ``heads`` (and it must divide it); ``head_dim``/``head_dim_v`` up to cuDNN's Hopper
        maximum for the dtype and direction (256; the fp16/bf16 forward 1024; a multiple of 8, FP8 16: the hint says
        it); ``sliding_window`` from 0 (off); any seed; ``page_size`` from 0 (contiguous) up to ``seq_kv`` (it must
        divide it); ``num_pages`` when set (None: just enough)."""
        heads = max(read_int(values, "heads", 1), 1)
        step = SDPA_HEAD_DIM_STEP.get(str(values.get("dtype")), 8)
        top = head_dim_max(str(values.get("dtype")), str(values.get("direction")))
        limits = {"batch": (1, MAX_DIM), "heads": (1, MAX_DIM), "kv_heads": (1, heads), "seq_q": (1, MAX_DIM),
                  "head_dim": (step, top),
                  "seq_kv": (1, MAX_DIM), "sliding_window": (0, MAX_DIM), "dropout_seed": (0, 2**63 - 1),
                  "page_size": (0, max(read_int(values, "seq_kv", 1), 1))}
        if values.get("head_dim_v") is not None:  # None: as head_dim
            limits["head_dim_v"] = (step, top)
        if read_int(values, "page_size", 0) > 0 and values.get("num_pages") is not None:
            limits["num_pages"] = (1, MAX_DIM)
        return limits

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """The FP8 fields unless ``dtype`` is FP8 (scale_do unless backward), the seed without dropout, the
        alignment without a causal mask, ``num_pages`` without paging, ``sink`` for the backward and FP8."""
        hidden: set[str] = set()
        if not values.get("page_size"):
            hidden.add("num_pages")
        if values.get("direction") == "bwd" or is_fp8(values.get("dtype")):
            hidden.add("sink")
        if not is_fp8(values.get("dtype")):
            hidden |= set(FP8_FIELDS)
        elif values.get("direction") != "bwd":
            hidden.add("scale_do")
        if not values.get("dropout"):
            hidden.add("dropout_seed")
        if is_fp8(values.get("dtype")) and values.get("head_dim_v") is None:
            hidden.add("head_dim_v")
        if not values.get("causal"):
            hidden.add("diagonal_alignment")
        return frozenset(hidden)

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        batch = max(read_int(values, "batch", 1), 1)
        hints = {"kv_heads": f"divides {max(read_int(values, 'heads', 1), 1)}", "sliding_window": "0: off",
                 "seq_lens_q": f"{batch} lengths, blank: full", "seq_lens_kv": f"{batch} lengths, blank: full",
                 "dropout": "training only", "bias": "alibi: causal", "page_size": "0: contiguous; 2^n dividing seq_kv",
                 "num_pages": "blank: just enough", "sink": "forward, seq_q > 1",
                 "head_dim": f"mult. of {SDPA_HEAD_DIM_STEP.get(str(values.get('dtype')), 8)}, Q/K",
                 "head_dim_v": "blank: = head_dim (MLA: 128)"}
        if read_int(values, "seq_q", 0) == 1:
            hints["diagonal_alignment"] = "decode: bottom_right"
        if is_fp8(values.get("dtype")):
            hints.update({f: "blank: 2^n from amax" for f in FP8_FIELDS[1:]})
            hints["out_dtype"] = "Hopper: fp8 only"
        return hints

    # --- derived sizes ------------------------------------------------------------------------------------------

    @property
    def fp8(self) -> bool:
        """True when Q, K, V are FP8."""
        return is_fp8(self.dtype)

    @property
    def padded(self) -> bool:
        """True when cuDNN's padding mask is on: lengths given, or a paged cache (which always takes them)."""
        return self.seq_lens_q is not None or self.seq_lens_kv is not None or self.paged

    @property
    def paged(self) -> bool:
        """True when K and V live in a paged cache (``page_size`` > 0)."""
        return bool(self.page_size)

    @property
    def pages_per_seq(self) -> int:
        """Entries of each sequence's block table: seq_kv / page_size (0 without paging)."""
        return self.seq_kv // self.page_size if self.paged else 0

    @property
    def pages_needed(self) -> int:
        """Pages the sequences' real tokens fill: sum of ceil(len_kv / page_size) (0 without paging)."""
        return sum(-(-n // self.page_size) for n in self.lens_kv) if self.paged else 0

    @property
    def cache_pages(self) -> int:
        """Pages in each K/V pool: ``num_pages``, or just those needed (0 without paging)."""
        return (self.num_pages or self.pages_needed) if self.paged else 0

    @property
    def bottom_right(self) -> bool:
        """True when a causal diagonal ends at the last key (bottom-right alignment)."""
        return self.causal and self.diagonal_alignment == "bottom_right"

    @property
    def lens_q(self) -> tuple[int, ...]:
        """Each batch element's query length (seq_q where none are given)."""
        return self.seq_lens_q if self.seq_lens_q is not None else (self.seq_q,) * self.batch

    @property
    def lens_kv(self) -> tuple[int, ...]:
        """Each batch element's key/value length (seq_kv where none are given)."""
        return self.seq_lens_kv if self.seq_lens_kv is not None else (self.seq_kv,) * self.batch

    def ragged_tensors(self) -> dict[str, str]:
        """Tensors packed without padding (``ragged``), each with the side ('q' or 'kv') whose lengths it follows."""
        if not self.ragged:
            return {}
        return {n: TOKEN_SIDE[n] for n in self.tensor_shapes() if n in TOKEN_SIDE}

    def scales(self) -> dict[str, float | None]:
        """Each FP8 input's quantization scale (None: from the data), by tensor name; empty when not FP8."""
        if not self.fp8:
            return {}
        out = {"Q": self.scale_q, "K": self.scale_k, "V": self.scale_v}
        if self.direction == "bwd":
            out.update(O=self.scale_o, dO=self.scale_do)
        return out

    def gpu_requirements(self) -> tuple[GpuRequirement, ...]:
        """What this problem needs from the GPU and cuDNN beyond the spec's own rules (checked before a run)."""
        if not self.fp8:
            return (*((SDPA_PAGED,) if self.paged else ()), *((SDPA_SINK,) if self.sink else ()))
        reqs = [SDPA_FP8]
        if self.out_dtype in ("fp16", "bf16"):
            reqs.append(SDPA_FP8_HALF_OUT)
        if self.bottom_right:
            reqs.append(SDPA_FP8_BOTTOM_RIGHT)
        if self.direction == "bwd" and (self.head_dim != 128 or self.head_dim_v is not None):
            reqs.append(SDPA_FP8_BWD_HEAD_DIM)
        if self.direction == "bwd" and self.ragged:
            reqs.append(SDPA_FP8_BWD_RAGGED)
        return tuple(reqs)

    @property
    def h_kv(self) -> int:
        """The number of K/V heads actually used (``kv_heads`` or, when None, ``heads``)."""
        return self.heads if self.kv_heads is None else self.kv_heads

    @property
    def group(self) -> int:
        """Query heads per K/V head (1: multi-head attention)."""
        return self.heads // self.h_kv

    @property
    def scale(self) -> float:
        """The softmax scale in effect: ``attn_scale`` or 1/sqrt(head_dim)."""
        return self.attn_scale if self.attn_scale is not None else 1.0 / math.sqrt(self.head_dim)

    @property
    def d_v(self) -> int:
        """The head size of V and O in effect: ``head_dim_v`` or, when None, ``head_dim``."""
        return self.head_dim if self.head_dim_v is None else self.head_dim_v

    @property
    def q_dims(self) -> tuple[int, int, int, int]:
        return (self.batch, self.heads, self.seq_q, self.head_dim)

    @property
    def kv_dims(self) -> tuple[int, int, int, int]:
        """K's dims (and V's when d_v = head_dim)."""
        return (self.batch, self.h_kv, self.seq_kv, self.head_dim)

    @property
    def v_dims(self) -> tuple[int, int, int, int]:
        return (self.batch, self.h_kv, self.seq_kv, self.d_v)

    @property
    def o_dims(self) -> tuple[int, int, int, int]:
        """O's and dO's dims: [b, heads, seq_q, d_v]."""
        return (self.batch, self.heads, self.seq_q, self.d_v)

    @property
    def stats_dims(self) -> tuple[int, int, int, int]:
        return (self.batch, self.heads, self.seq_q, 1)

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """Names of the op's inputs and of its main output (the first of :meth:`output_names`).

        Inputs in order: Q, K, V (the backward's O, dO, Stats), the FP8 scalars, the lengths, the ragged offsets,
        the paged cache's block tables, the sink logits, the bias, the dropout mask and its scale(s)."""
        bwd = self.direction == "bwd"
        ins: list[str] = ["Q", "K", "V", "O", "dO", "Stats"] if bwd else ["Q", "K", "V"]
        if self.fp8:
            ins += FP8_BWD_SCALARS if bwd else FP8_FWD_SCALARS
        if self.padded:
            ins += ["seq_len_q", "seq_len_kv"]
        if self.paged:
            ins += ["Page_table_K", "Page_table_V"]
        if self.sink:
            ins.append("Sink")
        if self.ragged:
            ins += [f"{n}_offset" for n in (*ins[:6 if bwd else 3], *self.output_names()) if n in TOKEN_SIDE]
        if self.bias == "tensor":
            ins.append("Bias")
        if self.dropout:
            ins += ["Dropout_mask", "Dropout_scale"] + (["Dropout_scale_inv"] if bwd else [])
        return tuple(dict.fromkeys(ins)), self.output_names()[0]

    def output_names(self) -> tuple[str, ...]:
        """Every tensor the graph writes, the main output first (FP8 adds the amax outputs)."""
        outs = {"fwd_inference": ("O",), "fwd_training": ("O", "Stats"), "bwd": ("dQ", "dK", "dV")}[self.direction]
        if self.fp8:
            outs += FP8_BWD_AMAX if self.direction == "bwd" else FP8_FWD_AMAX
        return outs

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Dims of every tensor as the graph declares them (a ragged tensor's storage is packed; a paged cache's K and
        V are its page pools [cache_pages, kv_heads, page_size, head_dim or d_v])."""
        b, h, sq, skv = self.batch, self.heads, self.seq_q, self.seq_kv
        dims = {"Q": self.q_dims, "K": self.kv_dims, "V": self.v_dims, "O": self.o_dims, "dO": self.o_dims,
                "Stats": self.stats_dims, "dQ": self.q_dims, "dK": self.kv_dims, "dV": self.v_dims,
                "seq_len_q": (b, 1, 1, 1), "seq_len_kv": (b, 1, 1, 1), "Bias": (1, h, sq, skv),
                "Dropout_mask": (b, h, sq, skv), "Page_table_K": (b, 1, self.pages_per_seq, 1),
                "Page_table_V": (b, 1, self.pages_per_seq, 1), "Sink": (1, h, 1, 1)}
        if self.paged:  # K and V are the pools of pages
            dims["K"] = (self.cache_pages, self.h_kv, self.page_size, self.head_dim)
            dims["V"] = (self.cache_pages, self.h_kv, self.page_size, self.d_v)
        ins, _ = self.io_names()
        return {n: dims.get(n, (b + 1, 1, 1, 1) if n.endswith("_offset") else (1, 1, 1, 1))
                for n in (*ins, *self.output_names())}

    def tolerance_args(self) -> dict[str, Any]:
        """The bands of the forward ('sdpa') or the backward ('sdpa_bwd'); FP8 outputs in ``out_dtype``."""
        return {"dtype": self.dtype, "op": "sdpa_bwd" if self.direction == "bwd" else "sdpa",
                "out_dtype": self.out_dtype if self.fp8 else None}

    def tensor_dtypes(self) -> dict[str, str]:
        """Each tensor's dtype: Q, K, V (dO) and Bias/Dropout_mask in ``dtype``; O (or dQ, dK, dV) in ``dtype``, or
        ``out_dtype`` for FP8; Stats, scalars, amaxes and sink logits fp32; lengths and block tables int32, ragged
        offsets int64."""
        out_dt = self.out_dtype if self.fp8 else self.dtype
        outs = {"O", "dQ", "dK", "dV"}
        special = {"seq_len_q": "int32", "seq_len_kv": "int32", "Page_table_K": "int32", "Page_table_V": "int32"}
        return {n: special.get(n, "int64" if n.endswith("_offset") else out_dt if n in outs
                               else self.dtype if n in ("Q", "K", "V", "dO", "Bias", "Dropout_mask") else "fp32")
                for n in self.tensor_shapes()}

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Each tensor's strides: the layout's for Q, K, V, O and their gradients; Stats [b, h, s_q, 1] packed (token
        major, [b, s_q, h, 1], when ragged); the rest packed."""
        out = {}
        for n, d in self.tensor_shapes().items():
            if n == "Stats":
                order = MEMORY_ORDERS["BSHD"] if self.ragged else (0, 1, 2, 3)
            else:
                order = MEMORY_ORDERS[self.layout] if n in TOKEN_SIDE else (0, 1, 2, 3)
            out[n] = packed_strides(d, order)
        return out

    def score_count(self) -> int:
        """Query-key pairs the mask keeps, averaged over the batch for one head (exact without seq_lens): N.

        Unmasked: seq_q * seq_kv. Causal top-left: query i keeps min(i + 1, seq_kv) keys (seq_q * (seq_q + 1) / 2
        square); a sliding window W keeps min(i + 1, W); bottom-right shifts the diagonal by seq_kv - seq_q.
        """
        return self.kept_pairs() // self.batch

    def kept_pairs(self) -> int:
        """Query-key pairs the mask keeps over the whole batch, one head, with each element's lengths."""
        return kept_pairs_batch(self.seq_q, self.seq_kv, self.batch, self.seq_lens_q, self.seq_lens_kv,
                                causal=self.causal, alignment=self.diagonal_alignment if self.causal else "top_left",
                                left_bound=self.sliding_window if self.causal else 0)

    def flops(self) -> int:
        """2*Hq*N*(Dqk + Dvo) forward, 2*Hq*N*(3*Dqk + 2*Dvo) backward, with N the kept pairs of the batch."""
        dqk, dv = self.head_dim, self.d_v
        per_pair = 2 * (3 * dqk + 2 * dv) if self.direction == "bwd" else 2 * (dqk + dv)
        return self.heads * self.kept_pairs() * per_pair

    def min_bytes(self) -> int:
        """Every tensor once; ragged tensors by their real tokens; a paged K/V by the pages its tables address."""
        dtypes, total = self.tensor_dtypes(), 0
        tokens = {"q": sum(self.lens_q), "kv": sum(self.lens_kv)}
        ragged = self.ragged_tensors()
        for n, d in self.tensor_shapes().items():
            numel = math.prod(d)
            if n in ragged:
                numel = numel // (d[0] * d[2]) * tokens[ragged[n]]
            elif self.paged and n in ("K", "V"):
                numel = math.prod(self.kv_dims if n == "K" else self.v_dims)
            total += DTYPE_BYTES[dtypes[n]] * numel
        return total

    def label(self) -> str:
        kv = f" kv{self.kv_heads}" if self.kv_heads is not None else ""
        mask = " causal" if self.causal else ""
        if self.bottom_right:
            mask += "-br"
        if self.sliding_window:
            mask += f" win{self.sliding_window}"
        if self.paged:
            mask += f" paged{self.page_size}" + (f"x{self.num_pages}" if self.num_pages is not None else "")
        elif self.padded:
            mask += " ragged" if self.ragged else " padded"
        if self.sink:
            mask += " sink"
        if self.bias != "none":
            mask += f" {self.bias if self.bias == 'alibi' else 'bias'}"
        if self.dropout:
            mask += f" drop{self.dropout:g}"
        scale = f" scale{self.attn_scale:g}" if self.attn_scale is not None else ""
        dv = f"/{self.head_dim_v}" if self.head_dim_v is not None else ""
        dt = f"{self.dtype}->{self.out_dtype}" if self.fp8 else self.dtype
        return (f"sdpa {self.direction} {self.layout} {dt} b{self.batch} h{self.heads}{kv} "
                f"sq{self.seq_q} skv{self.seq_kv} d{self.head_dim}{dv}{mask}{scale}")
