"""Mixture-of-experts grouped GEMM: every token of a batch multiplied by the weight of the expert it was routed to.

The tokens arrive sorted by expert (as a router's permute step leaves them); cuDNN's ``moe_grouped_matmul`` (mode
NONE) reads where each expert's tokens start from an int32 offsets tensor and runs one grouped GEMM. How the tokens
are spread over the experts is the problem's own (``distribution``): a balanced split, a Zipf skew, one hot expert
or explicit counts; the counts are computed, not drawn, so a spec names one exact problem. Pure: no torch or cudnn.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, MAX_DIM, Spec, check_float, check_int, read_int
from .layout import packed_strides

#: The frontend's MoE wrapper (cudnn/gemm/ops/moe_grouped_matmul.py, 1.32): "HALF and BFLOAT16 io with FLOAT
#: compute"; fp32 tokens are not offered.
MOE_DTYPES: tuple[str, ...] = ("bf16", "fp16")
#: How tokens are spread over experts: 'uniform' (balanced, the remainder to the first experts), 'zipf' (expert i
#: gets a share proportional to 1/(i+1)^skew), 'hot' (expert 0 gets ``hot_share`` of the tokens, the others split
#: the rest; 1.0 is one-hot routing) and 'counts' (the ``counts`` given).
DISTRIBUTIONS: tuple[str, ...] = ("uniform", "zipf", "hot", "counts")
#: The fields each distribution reads (a form hides the others; they are ignored as given).
_READS: dict[str, tuple[str, ...]] = {"uniform": (), "zipf": ("skew",), "hot": ("hot_share",), "counts": ("counts",)}
MAX_SKEW = 8.0
MAX_SEED = 2**31 - 1


def _largest_remainder(total: int, weights: list[float]) -> list[int]:
    """``total`` split in proportion to ``weights`` as whole numbers that sum to ``total`` (largest remainders get
    the leftover units; ties to the lower index)."""
    s = sum(weights)
    exact = [total * w / s for w in weights]
    out = [math.floor(x) for x in exact]
    order = sorted(range(len(weights)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in order[: total - sum(out)]:
        out[i] += 1
    return out


def _parse_counts(value: Any, spec: str) -> tuple[int, ...]:
    """``counts`` as a tuple of whole numbers >= 0: a list or tuple, or text such as '512, 0, 1536' (a form's text
    box); None or '' is empty."""
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip().strip("()[]").strip()
        parts = [p for p in re.split(r"[,\s]+", text) if p]
        try:
            value = tuple(int(p) for p in parts)
        except ValueError:
            raise SpecError("counts", value, "must be whole numbers >= 0 separated by commas, e.g. '512, 0, 1536'",
                            spec=spec) from None
    if not isinstance(value, (list, tuple)):
        raise SpecError("counts", value, "must be a list of whole numbers >= 0 (tokens per expert)", spec=spec)
    return tuple(check_int(spec, "counts", v, 0, MAX_DIM) for v in value)


@dataclasses.dataclass(frozen=True)
class MoeSpec(Spec):
    """Grouped GEMM of a mixture of experts: tokens X [1, tokens, hidden_in], sorted by expert, times each expert's
    weight W [experts, hidden_in, hidden_out] gives Y [1, tokens, hidden_out].

    W is stored column-major per expert (strides [hidden_in * hidden_out, 1, hidden_in]): the frontend's MoE layout,
    which is also an ``nn.Linear`` weight [hidden_out, hidden_in] as PyTorch stores it. ``offsets``
    [experts, 1, 1] int32 holds the row where each expert's tokens start (the last expert's end is ``tokens``):
    the form cuDNN 9.19's own engines take (the 1.32 frontend also describes an [experts + 1] form with the end
    appended, for its newer engines; on 9.19 that form was refused, see docs/FINDINGS.md). ``seed`` permutes which
    expert gets which share (0: expert 0 the largest).
    """

    op: ClassVar[str] = "moe"
    menu_order: ClassVar[int] = 60
    sweep_axes: ClassVar[tuple[str, ...]] = ("distribution", "tokens")
    title: ClassVar[str] = "MoE grouped GEMM"
    description: ClassVar[str] = ("mixture of experts: MoeSpec (grouped GEMM over experts; balanced, Zipf, hot-expert "
                                  "or explicit routing)")
    field_order: ClassVar[tuple[str, ...]] = ("experts", "tokens", "hidden_in", "hidden_out", "dtype",
                                              "distribution", "skew", "hot_share", "counts", "seed")

    experts: int = 8
    tokens: int = 2048
    hidden_in: int = 1024
    hidden_out: int = 1024
    dtype: str = "bf16"
    distribution: str = "uniform"
    skew: float = 1.2
    hot_share: float = 0.5
    counts: tuple[int, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("experts", "tokens", "hidden_in", "hidden_out"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._check_choices("dtype", "distribution")
        # Validated whatever the distribution (junk never enters), read only by the distribution that uses it.
        self._set("skew", check_float(name, "skew", self.skew, 0.0, MAX_SKEW, lo_open=True))
        self._set("hot_share", check_float(name, "hot_share", self.hot_share, 0.0, 1.0))
        self._set("counts", _parse_counts(self.counts, name))
        self._set("seed", check_int(name, "seed", self.seed, 0, MAX_SEED))
        if self.distribution == "counts":
            if len(self.counts) != self.experts:
                raise SpecError("counts", list(self.counts), f"must list one count per expert ({self.experts} "
                                f"numbers) with distribution='counts'", spec=name)
            if sum(self.counts) != self.tokens:
                raise SpecError("counts", list(self.counts), f"must sum to tokens={self.tokens} (they sum to "
                                f"{sum(self.counts)})", spec=name)
        self.check_elements({"X": ("tokens", "hidden_in"), "W": ("experts", "hidden_in", "hidden_out"),
                             "offsets": ("experts",), "Y": ("tokens", "hidden_out")})

    # --- rules a form shows ---------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": MOE_DTYPES, "distribution": DISTRIBUTIONS}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """Sizes 1 to MAX_DIM; the seed from 0."""
        return {**super().field_limits(values), "seed": (0, MAX_SEED)}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """The distribution parameters the chosen distribution does not read."""
        distribution = values.get("distribution")
        reads = _READS.get(distribution, ()) if isinstance(distribution, str) else ()
        return frozenset(f for fields in _READS.values() for f in fields if f not in reads)

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        experts = read_int(values, "experts", cls.experts)
        return {"skew": "Zipf exponent > 0", "hot_share": "expert 0's share, 1: one-hot",
                "counts": f"{experts} numbers summing to tokens", "seed": "0: expert 0 largest"}

    # --- the routing ----------------------------------------------------------------------------------------

    def expert_counts(self) -> tuple[int, ...]:
        """Tokens routed to each expert, in expert order (they sum to ``tokens``)."""
        e, t = self.experts, self.tokens
        if self.distribution == "counts":
            counts = list(self.counts)
        elif self.distribution == "zipf":
            counts = _largest_remainder(t, [1.0 / (i + 1) ** self.skew for i in range(e)])
        elif self.distribution == "hot":
            hot = t if e == 1 else round(self.hot_share * t)
            counts = [hot, *_largest_remainder(t - hot, [1.0] * (e - 1))] if e > 1 else [hot]
        else:
            counts = _largest_remainder(t, [1.0] * e)
        if self.seed and self.distribution != "counts":
            random.Random(self.seed).shuffle(counts)
        return tuple(counts)

    def boundaries(self) -> tuple[int, ...]:
        """Where each expert's tokens start, then ``tokens``: expert e owns rows boundaries[e] to boundaries[e + 1]."""
        return (0, *itertools.accumulate(self.expert_counts()))

    def offsets(self) -> tuple[int, ...]:
        """The values of the offsets tensor: the row where each expert's tokens start."""
        return self.boundaries()[:-1]

    def imbalance(self) -> float:
        """The largest expert's tokens over the balanced share (1.0: balanced; ``experts``: one-hot)."""
        return max(self.expert_counts()) * self.experts / self.tokens

    # --- tensors and throughput -----------------------------------------------------------------------------

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        t, k, n, e = self.tokens, self.hidden_in, self.hidden_out, self.experts
        return {"X": (1, t, k), "W": (e, k, n), "offsets": (e, 1, 1), "Y": (1, t, n)}

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Row-major X, Y and offsets; W column-major per expert (its last two dims swapped in memory)."""
        shapes = self.tensor_shapes()
        return {name: packed_strides(dims, (0, 2, 1) if name == "W" else (0, 1, 2)) for name, dims in shapes.items()}

    def tensor_dtypes(self) -> dict[str, str]:
        """The offsets are int32; every other tensor is in ``dtype``."""
        return {name: "int32" if name == "offsets" else self.dtype for name in self.tensor_shapes()}

    def io_names(self) -> tuple[tuple[str, ...], str]:
        return ("X", "W", "offsets"), "Y"

    def flops(self) -> int:
        """2 * tokens * hidden_in * hidden_out: every token goes through one expert, whatever the split."""
        return 2 * self.tokens * self.hidden_in * self.hidden_out

    def dense_equivalent(self) -> tuple[int, int, int]:
        """(m, n, k) of the one dense GEMM of the same FLOPs: all tokens through a single weight."""
        return self.tokens, self.hidden_out, self.hidden_in

    def min_bytes(self) -> int:
        """X and Y once, the weights of the experts that get tokens (an idle expert's weight need not be read), the
        offsets."""
        b = DTYPE_BYTES[self.dtype]
        used = sum(1 for c in self.expert_counts() if c)
        return (b * self.tokens * (self.hidden_in + self.hidden_out) + b * used * self.hidden_in * self.hidden_out
                + DTYPE_BYTES["int32"] * self.experts)

    def support_hint(self) -> str:
        """The cuDNN version the grouped GEMM needs (on 9.19 it ran hidden sizes of 1020 too: sizes are not the
        usual cause)."""
        return "cuDNN's MoE grouped GEMM needs cuDNN 9.15 or later (moe_grouped_matmul, fp16/bf16 tokens)."

    def label(self) -> str:
        route = {"uniform": "uniform", "zipf": f"zipf {self.skew:g}", "hot": f"hot {self.hot_share:g}",
                 "counts": "counts"}[self.distribution]
        return (f"moe {self.dtype} {self.tokens} tok/{self.experts} experts {self.hidden_in}->{self.hidden_out} {route}"
                + (f" seed {self.seed}" if self.seed else ""))

