"""What cuDNN's attention takes and how closely it matches a float64 reference: the SDPA family's dtypes, layouts,
directions and head dims, its FP8 scalars, what a paged cache and sink tokens need from the GPU and cuDNN, and its
tolerance bands. Data for :class:`~.sdpa.SdpaSpec`, kept apart from the spec's validation and geometry."""

from __future__ import annotations

from ..errors import SpecError
from .base import MAX_DIM, check_int
from .fp8 import FP8_DTYPES, GpuRequirement, is_fp8
from .tolerance import CUDNN_SOURCE, ToleranceBand

SDPA_DTYPES: tuple[str, ...] = ("fp16", "bf16", *FP8_DTYPES)
#: What an FP8 attention writes (O, or dQ/dK/dV): FP8 on Hopper; fp16/bf16 need Blackwell and cuDNN 9.13.
SDPA_FP8_OUT_DTYPES: tuple[str, ...] = (*FP8_DTYPES, "fp16", "bf16")
#: Fields only FP8 attention reads (ignored, as given, otherwise; a form hides them).
FP8_FIELDS: tuple[str, ...] = ("out_dtype", "scale_q", "scale_k", "scale_v", "scale_o", "scale_do")
#: FP8 scalar inputs, [1, 1, 1, 1] fp32, in the frontend's order; and the amax outputs.
FP8_FWD_SCALARS = ("descale_Q", "descale_K", "descale_V", "descale_S", "scale_S", "scale_O")
FP8_BWD_SCALARS = ("descale_Q", "descale_K", "descale_V", "descale_O", "descale_dO", "descale_S", "descale_dP",
                    "scale_S", "scale_dQ", "scale_dK", "scale_dV", "scale_dP")
FP8_FWD_AMAX = ("Amax_S", "Amax_O")
FP8_BWD_AMAX = ("Amax_dQ", "Amax_dK", "Amax_dV", "Amax_dP")
#: Which side's lengths each tensor's tokens follow (for the padding mask and ragged packing).
TOKEN_SIDE = {"Q": "q", "O": "q", "dO": "q", "dQ": "q", "Stats": "q", "K": "kv", "V": "kv", "dK": "kv", "dV": "kv"}
SDPA_LAYOUTS: tuple[str, ...] = ("BSHD", "BHSD")
SDPA_DIRECTIONS: tuple[str, ...] = ("fwd_inference", "fwd_training", "bwd")
#: cuDNN's head-size rule on Hopper (sm90), cuDNN 9.19, for Q/K (d_qk) and V/O (d_v) alike: fp16/bf16 take multiples
#: of 8, FP8 multiples of 16; the backward up to 256, the fp16/bf16 forward (inference and training) further. Sources:
#: cudnn-frontend 1.32 include/cudnn_frontend/node/sdpa_support_surface.h (forward: 'hidden_dim should be multiple of
#: 8'; FP8: 'hidden_dim shoud be less than or equal to 256 and hidden_dim should be multiple of 16'),
#: scaled_dot_product_flash_attention.h (backward on sm90: 'Num hidden_dim should be less than or equal to 256 and
#: hidden_dim should be multiple of 8'), the cuDNN docs' SDPA support matrix (Hopper bprop: d <= 256; d_qk = 192 with
#: d_vo = 128), and cuDNN itself asked on an H200 (scripts/probe_shapes.py, 2026-11-29: the fp16/bf16 forward ran and
#: passed the band at every size tried from 264 to 1024 and at MLA 576/512; the backward refused 264 and 288;
#: benchmarks/results/h200_2026-11-29_probe_shapes*.json). The kit takes what was asked: past 1024 is not known.
SDPA_HEAD_DIM_MAX = 256
SDPA_FWD_HEAD_DIM_MAX = 1024
SDPA_HEAD_DIM_STEP: dict[str, int] = {"fp16": 8, "bf16": 8, **{dt: 16 for dt in FP8_DTYPES}}
#: The head sizes real models use, for menus and probes (any multiple of the step up to the maximum is taken).
SDPA_COMMON_HEAD_DIMS: tuple[int, ...] = (64, 72, 80, 96, 112, 128, 160, 192, 256)
HEAD_DIM_SOURCE = ("cudnn-frontend 1.32 sdpa_support_surface.h / scaled_dot_product_flash_attention.h, the cuDNN "
                   "SDPA support matrix (Hopper bprop: d <= 256) and cuDNN 9.19 asked on an H200 (forward to 1024)")


def head_dim_max(dtype: str, direction: str | None = None) -> int:
    """The largest head size cuDNN 9.19 on Hopper takes for ``dtype`` in ``direction`` (None: every direction, the
    backward's 256)."""
    forward = direction in ("fwd_inference", "fwd_training")
    return SDPA_FWD_HEAD_DIM_MAX if forward and dtype in ("fp16", "bf16") else SDPA_HEAD_DIM_MAX


def head_dim_rule(dtype: str, direction: str | None = None) -> str:
    """cuDNN's head-size rule for ``dtype`` (and ``direction``) on Hopper, as a sentence for messages and hints."""
    step = SDPA_HEAD_DIM_STEP.get(dtype, 8)
    return f"a multiple of {step} from {step} to {head_dim_max(dtype, direction)}"


def head_dim_ok(dtype: str, d: int, direction: str | None = None) -> bool:
    """True when cuDNN 9.19 on Hopper takes head size ``d`` (Q/K or V) for ``dtype`` in ``direction`` (None: in every
    direction)."""
    step = SDPA_HEAD_DIM_STEP.get(dtype, 8)
    return step <= d <= head_dim_max(dtype, direction) and d % step == 0


def check_head_dims(spec: str, dtype: str, head_dim: object, head_dim_v: object,
                    direction: str | None = None) -> tuple[int, int | None]:
    """(head_dim, head_dim_v) checked against cuDNN's Hopper rule for ``dtype`` and ``direction`` (validated); a
    SpecError names the field, the rule, its source and the nearest sizes. FP8 takes one head size (the kit's)."""
    out: list[int | None] = []
    top = head_dim_max(dtype, direction)
    for field, v in (("head_dim", head_dim), ("head_dim_v", head_dim_v)):
        if v is None and field == "head_dim_v":
            out.append(None)
            continue
        d = check_int(spec, field, v, 1, MAX_DIM)
        if not head_dim_ok(dtype, d, direction):
            step, below = SDPA_HEAD_DIM_STEP[dtype], d - d % SDPA_HEAD_DIM_STEP[dtype]
            near = sorted({c for c in (below, below + step) if step <= c <= top} or {top})
            side = "Q and K" if field == "head_dim" else "V and O"
            where = f"{dtype} attention, {direction}" if direction else f"{dtype} attention"
            if d % step or top == SDPA_HEAD_DIM_MAX:  # what cuDNN itself refuses
                why = (f"cuDNN 9.19 on Hopper refuses other head sizes ('hidden_dim should be multiple of {step}', "
                       f"head sizes up to {top} here; {HEAD_DIM_SOURCE})")
            else:  # past the largest size asked: cuDNN's answer is not known
                why = (f"{top} is the largest head size cuDNN 9.19 was asked on Hopper (it ran every size tried up "
                       f"to it; larger ones were not asked: scripts/probe_shapes.py --beyond; {HEAD_DIM_SOURCE})")
            raise SpecError(field, v, f"must be {head_dim_rule(dtype, direction)} for {where} ({side}): {why}; "
                            f"nearest: {' or '.join(map(str, near))}", spec=spec)
        out.append(d)
    d_qk, d_v = out
    assert d_qk is not None
    if d_v is not None and d_v != d_qk and is_fp8(dtype):
        raise SpecError("head_dim_v", d_v, "must be None (= head_dim) for FP8 attention: the kit offers different "
                        "Q/K and V head sizes (MLA) in fp16/bf16 only", spec=spec)
    return d_qk, d_v

#: What a paged cache and sink tokens need (cuDNN SDPA itself needs Ampere or newer).
SDPA_PAGED = GpuRequirement("a paged K/V cache in attention", min_cc=(8, 0), min_cudnn=90500,
                            source="cudnn-frontend v1.8.0 release notes (paged attention on cuDNN 9.5.0 and later)")
SDPA_SINK = GpuRequirement("sink tokens in attention", min_cc=(8, 0), min_cudnn=91300,
                           source="cudnn-frontend docs/operations/Attention.md (sink_token, cuDNN 9.13.0 and later)")

#: Memory order of a logical [b, h, s, d] tensor, slowest axis first.
MEMORY_ORDERS = {"BSHD": (0, 2, 1, 3), "BHSD": (0, 1, 2, 3)}


# SDPA rounds the softmax P and its gradient dS to fp16/bf16 before the second GEMMs, so sums over many rows (dV of
# the first keys under a causal mask, GQA's summed dK/dV) carry errors near 1e-2 in bf16; PyTorch's flash attention
# shows the same: cuDNN's own SDPA tests accept 2e-2.
HALF_BANDS = {d: {"cudnn": ToleranceBand(2e-2, 2e-2, CUDNN_SOURCE + " for SDPA")} for d in ("fp16", "bf16")}
# FP8 attention, outputs dequantized: cuDNN's test/python/sdpa/fp8.py accepts atol 0.08, rtol 0.2 for O and atol
# 0.04, rtol 0.2 for dQ, dK, dV. torch.testing compares FP8 exactly, which a float64 reference never meets: the first
# band is one rounding step of the output's FP8 format (2 x its unit roundoff, as rtol and atol).
FP8_STEPS = (("fp8_e4m3", 2.0**-3), ("fp8_e5m2", 2.0**-2))


def fp8_bands(dtype: str, step: float, direction: str, atol: float) -> dict[str, ToleranceBand]:
    """The two bands of FP8 attention in ``dtype`` for one direction (cuDNN's test's atol of that direction)."""
    return {"torch": ToleranceBand(step, step, f"one rounding step of {dtype} (2 x its unit roundoff)"),
            "cudnn": ToleranceBand(0.2, atol, CUDNN_SOURCE + f" for FP8 SDPA (test/python/sdpa/fp8.py), {direction}")}
