"""The labels every what-if answer carries, kept low so that figures and tables can print them without importing
the what-if modules (which sit above the plots in the layers)."""

from __future__ import annotations

__all__ = ["ANSWER_LABEL", "EMULATED_LABEL", "SCALING_LABEL", "LIVE_SUFFIX", "DEVICELESS_LIMIT", "recorded_label"]

#: On every answer of cuDNN's heuristics (what-if on a target, a block format asked of cuDNN).
ANSWER_LABEL = "cuDNN's heuristics' answer, not a measurement"
#: What an answer for a described target (not the card in use) may lack, as seen (docs/FINDINGS.md, What-if; cuDNN
#: 9.19.0, 2026-11-26): said by the CLI and the What-if view alike.
DEVICELESS_LIMIT = ("cuDNN's limit: asked without the card, cuDNN 9.19.0 left out plans of runtime-compiled engines "
                    "(matmul, layernorm/rmsnorm, FP8 conv) that the card itself proposed.")
#: On every block-format answer emulated on the CPU.
EMULATED_LABEL = "emulated in float64 on this machine, not measured: no Blackwell kernel ran"
#: What an SM carve-out scales and what it does not; every SM-scaling result and its figure carry it.
SCALING_LABEL = "only the compute share is scaled: memory bandwidth and L2 are the whole GPU's"
#: What a live answer's target label ends with: asked here, of the card in this machine.
LIVE_SUFFIX = " (this GPU)"


def recorded_label(label: str) -> str:
    """A recorded answer's target label as read back anywhere: "NVIDIA H200 (this GPU)" (the card in use when it
    was recorded) becomes "NVIDIA H200 (recorded on it)", so "this GPU" is said only of a live answer; other labels
    are kept."""
    return label.removesuffix(LIVE_SUFFIX) + " (recorded on it)" if label.endswith(LIVE_SUFFIX) else label
