"""What cuDNN's attention takes and how closely it matches a float64 reference: the SDPA family's dtypes, layouts,
directions and head dims, its FP8 scalars, what a paged cache and sink tokens need from the GPU and cuDNN, and its
tolerance bands. Data for :class:`~.sdpa.SdpaSpec`, kept apart from the spec's validation and geometry."""

from __future__ import annotations

from .fp8 import FP8_DTYPES, GpuRequirement
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
#: Head sizes this kit builds SDPA graphs for (cuDNN's fused flash-attention engines cover these on Hopper).
SDPA_HEAD_DIMS: tuple[int, ...] = (64, 128, 256)

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
