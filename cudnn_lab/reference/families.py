"""The reference layer's family registry: spec class -> the PyTorch functions of that op family.

Each family module (``conv``, ``matmul``, ``sdpa``, ``norm``, ``pool``) registers one :class:`Reference`;
``reference/__init__.py`` imports them all and dispatches through :data:`REFERENCES`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..registry import FamilyRegistry


@dataclasses.dataclass(frozen=True)
class Reference:
    """One family's PyTorch side (see the functions of the same names in :mod:`cudnn_lab.reference`).

    ``input_names(spec)``: every tensor the graph reads, in the frontend call's order;
    ``make_inputs(spec, *, device, seed)``; ``make_outputs(spec, *, device)``: the graph's outputs, NaN-filled, main
    first; ``reference_outputs(spec, inputs, *, cpu_flop_limit)``: each output in float64;
    ``torch_op(spec, inputs, *, cpu_flop_limit)``: a zero-argument callable running the op in PyTorch eager.
    Optional: ``comparable(spec, outputs, inputs)``: the outputs as the references compare them (FP8 outputs
    dequantized, padded rows zeroed), where they differ from the raw outputs (None: they do not); ``quantization(spec,
    inputs, *, seed)``: what quantizing FP8 inputs cost (per input and in the output), for FP8 problems (else None).
    """

    input_names: Callable[[Any], tuple[str, ...]]
    make_inputs: Callable[..., dict[str, Any]]
    make_outputs: Callable[..., dict[str, Any]]
    reference_outputs: Callable[..., dict[str, Any]]
    torch_op: Callable[..., Callable[[], Any]]
    comparable: Callable[..., dict[str, Any] | None] | None = None
    quantization: Callable[..., dict[str, Any] | None] | None = None


REFERENCES: FamilyRegistry[Reference] = FamilyRegistry("PyTorch reference")
