"""Scaled dot-product attention (SDPA): forward for inference or training, and backward, as cuDNN runs it.

Logical dims are always [batch, heads, seq, head_dim] (what cuDNN takes); ``layout`` says how Q, K, V, O and
their gradients are stored: ``BSHD`` ([b, s, h, d] in memory, as most models keep activations) or ``BHSD``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, MAX_DIM, Spec, check_bool, check_choice, check_int, read_int
from .layout import packed_strides

SDPA_DTYPES: tuple[str, ...] = ("fp16", "bf16")
SDPA_LAYOUTS: tuple[str, ...] = ("BSHD", "BHSD")
SDPA_DIRECTIONS: tuple[str, ...] = ("fwd_inference", "fwd_training", "bwd")
#: Head sizes this kit builds SDPA graphs for (cuDNN's fused flash-attention engines cover these on Hopper).
SDPA_HEAD_DIMS: tuple[int, ...] = (64, 128, 256)

#: Memory order of a logical [b, h, s, d] tensor, slowest axis first.
_ORDERS = {"BSHD": (0, 2, 1, 3), "BHSD": (0, 1, 2, 3)}


@dataclasses.dataclass(frozen=True)
class SdpaSpec(Spec):
    """Attention O = softmax(attn_scale * Q K^T + mask) V with Q [b, heads, seq_q, d], K/V [b, kv_heads, seq_kv, d].

    ``kv_heads`` below ``heads`` is grouped-query attention (1 is multi-query): each K/V head serves
    ``heads // kv_heads`` consecutive query heads. ``None`` (the default) means as many as ``heads``; a value equal
    to ``heads`` is stored as ``None``, so equal problems compare equal and changing ``heads`` keeps plain
    multi-head attention. ``causal`` masks keys after the query (top-left aligned: query i sees keys 0..i);
    ``sliding_window`` W > 0 (causal only) keeps only the last W of those keys (i-W < j <= i).
    ``direction``: ``fwd_inference`` writes O; ``fwd_training`` also writes the softmax statistics
    Stats [b, heads, seq_q, 1] (fp32, logsumexp of each scaled score row) that the backward needs; ``bwd`` reads
    Q, K, V, O, dO and Stats and writes dQ, dK, dV. ``attn_scale`` ``None`` means 1/sqrt(head_dim).
    """

    op: ClassVar[str] = "sdpa"
    title: ClassVar[str] = "attention"
    description: ClassVar[str] = "scaled dot-product attention: SdpaSpec (forward, training, backward)"
    field_order: ClassVar[tuple[str, ...]] = (
        "direction", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal", "sliding_window",
        "attn_scale", "layout", "dtype")

    batch: int = 4
    heads: int = 16
    kv_heads: int | None = None
    seq_q: int = 1024
    seq_kv: int = 1024
    head_dim: int = 128
    causal: bool = False
    sliding_window: int = 0
    layout: str = "BSHD"
    dtype: str = "fp16"
    direction: str = "fwd_inference"
    attn_scale: float | None = None

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
        hd = check_int(name, "head_dim", self.head_dim)
        if hd not in SDPA_HEAD_DIMS:
            raise SpecError("head_dim", self.head_dim, f"must be one of {', '.join(map(str, SDPA_HEAD_DIMS))} "
                            "(the head sizes this kit builds cuDNN SDPA graphs for)", spec=name)
        self._set("head_dim", hd)
        self._set("causal", check_bool(name, "causal", self.causal))
        self._set("sliding_window", check_int(name, "sliding_window", self.sliding_window, 0, MAX_DIM))
        self._set("layout", check_choice(name, "layout", self.layout, SDPA_LAYOUTS))
        self._check_dtype(name)
        self._set("direction", check_choice(name, "direction", self.direction, SDPA_DIRECTIONS))
        self._set("attn_scale", self._check_scale(name))
        self._check_geometry(name)

    def _check_dtype(self, name: str) -> None:
        if isinstance(self.dtype, str) and self.dtype in SDPA_DTYPES:
            return
        allowed = f"must be one of {', '.join(SDPA_DTYPES)}"
        if isinstance(self.dtype, str) and "fp8" in self.dtype.lower():
            allowed += (" (fp8 attention, with its scale/descale tensors and amax outputs, is out of scope in this "
                        "version of the kit)")
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
        self.check_elements({"Q": q, "O": q, "dO": q, "dQ": q, "Stats": q, "K": kv, "V": kv, "dK": kv, "dV": kv})

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"direction": SDPA_DIRECTIONS, "layout": SDPA_LAYOUTS, "dtype": SDPA_DTYPES,
                "head_dim": SDPA_HEAD_DIMS}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """``kv_heads`` up to ``heads`` (and it must divide it); ``sliding_window`` from 0 (off)."""
        heads = max(read_int(values, "heads", 1), 1)
        return {"batch": (1, MAX_DIM), "heads": (1, MAX_DIM), "kv_heads": (1, heads), "seq_q": (1, MAX_DIM),
                "seq_kv": (1, MAX_DIM), "sliding_window": (0, MAX_DIM)}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        return {"kv_heads": f"divides {max(read_int(values, 'heads', 1), 1)}", "sliding_window": "0: off"}

    # --- derived sizes ------------------------------------------------------------------------------------------

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
    def q_dims(self) -> tuple[int, int, int, int]:
        return (self.batch, self.heads, self.seq_q, self.head_dim)

    @property
    def kv_dims(self) -> tuple[int, int, int, int]:
        return (self.batch, self.h_kv, self.seq_kv, self.head_dim)

    @property
    def stats_dims(self) -> tuple[int, int, int, int]:
        return (self.batch, self.heads, self.seq_q, 1)

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """Names of the op's inputs and of its main output (the first of :meth:`output_names`)."""
        ins = ("Q", "K", "V", "O", "dO", "Stats") if self.direction == "bwd" else ("Q", "K", "V")
        return ins, self.output_names()[0]

    def output_names(self) -> tuple[str, ...]:
        """Every tensor the graph writes, the main output first."""
        return {"fwd_inference": ("O",), "fwd_training": ("O", "Stats"),
                "bwd": ("dQ", "dK", "dV")}[self.direction]

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        dims = {"Q": self.q_dims, "K": self.kv_dims, "V": self.kv_dims, "O": self.q_dims, "dO": self.q_dims,
                "Stats": self.stats_dims, "dQ": self.q_dims, "dK": self.kv_dims, "dV": self.kv_dims}
        ins, _ = self.io_names()
        return {n: dims[n] for n in (*ins, *self.output_names())}

    def tensor_dtypes(self) -> dict[str, str]:
        """Each tensor's dtype: the spec's, but Stats is always fp32."""
        return {n: "fp32" if n == "Stats" else self.dtype for n in self.tensor_shapes()}

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Each tensor's strides: the layout's for Q, K, V, O and their gradients; Stats packed [b, h, s_q, 1]."""
        return {n: packed_strides(d, (0, 1, 2, 3) if n == "Stats" else _ORDERS[self.layout])
                for n, d in self.tensor_shapes().items()}

    def score_count(self) -> int:
        """Query-key pairs the mask keeps, summed over one (batch, head): N in the FLOP formulas.

        Unmasked: seq_q * seq_kv. Causal (top-left): query i keeps min(i + 1, seq_kv) keys, so a square problem
        keeps seq_q * (seq_q + 1) / 2; a sliding window W keeps min(i + 1, W) (seq_q <= seq_kv there).
        """
        if not self.causal:
            return self.seq_q * self.seq_kv
        cap = min(self.seq_kv, self.sliding_window) if self.sliding_window else self.seq_kv
        # sum over i < seq_q of min(i + 1, cap)
        full = min(self.seq_q, cap)
        return full * (full + 1) // 2 + (self.seq_q - full) * cap

    def flops(self) -> int:
        """2*B*Hq*N*(Dqk + Dvo) forward, 2*B*Hq*N*(3*Dqk + 2*Dvo) backward, with N the unmasked pairs."""
        d = self.head_dim
        per_pair = 2 * (3 * d + 2 * d) if self.direction == "bwd" else 2 * (d + d)
        return self.batch * self.heads * self.score_count() * per_pair

    def min_bytes(self) -> int:
        dtypes = self.tensor_dtypes()
        return sum(DTYPE_BYTES[dtypes[n]] * math.prod(d) for n, d in self.tensor_shapes().items())

    def label(self) -> str:
        kv = f" kv{self.kv_heads}" if self.kv_heads is not None else ""
        mask = " causal" if self.causal else ""
        if self.sliding_window:
            mask += f" win{self.sliding_window}"
        scale = f" scale{self.attn_scale:g}" if self.attn_scale is not None else ""
        return (f"sdpa {self.direction} {self.layout} {self.dtype} b{self.batch} h{self.heads}{kv} "
                f"sq{self.seq_q} skv{self.seq_kv} d{self.head_dim}{mask}{scale}")
