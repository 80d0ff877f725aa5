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


@dataclasses.dataclass(frozen=True)
class BlockProduct:
    """One family's GEMM-like product as the block-format what-if emulates it on the CPU (whatif/block_formats.py):
    the two operands (``first`` carries the outlier rows), each one's blocked axis (the reduction axis, in
    ``axes``), the product's ``fan_in`` (sums per output element), the size field to shrink when the CPU refuses
    (``size_field``), ``product(first, second)`` in the tensors' own dtype, and ``touched(rows)``: which output
    elements an outlier row reaches (broadcastable to the output), from a mask of the first operand's rows."""

    first: str
    second: str
    axes: dict[str, int]
    fan_in: int
    size_field: str
    product: Callable[[Any, Any], Any]
    touched: Callable[[Any], Any]


#: Spec class -> ``spec -> BlockProduct`` for the families with a block-scale axis (registered by their reference
#: modules; a spec's ``check_block_scale`` has passed before it is called).
BLOCK_PRODUCTS: FamilyRegistry[Callable[[Any], BlockProduct]] = FamilyRegistry("block-scaled CPU product")
