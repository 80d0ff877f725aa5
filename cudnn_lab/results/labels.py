"""The labels every what-if answer carries, kept low so that figures and tables can print them without importing
the what-if modules (which sit above the plots in the layers)."""

from __future__ import annotations

__all__ = ["ANSWER_LABEL", "EMULATED_LABEL", "SCALING_LABEL"]

#: On every answer of cuDNN's heuristics (what-if on a target, a block format asked of cuDNN).
ANSWER_LABEL = "cuDNN's heuristics' answer, not a measurement"
#: On every block-format answer emulated on the CPU.
EMULATED_LABEL = "emulated in float64 on this machine, not measured: no Blackwell kernel ran"
#: What an SM carve-out scales and what it does not; every SM-scaling result and its figure carry it.
SCALING_LABEL = "only the compute share is scaled: memory bandwidth and L2 are the whole GPU's"
