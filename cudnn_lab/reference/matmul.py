"""The PyTorch side of matrix multiplications (:class:`~cudnn_lab.specs.MatmulSpec`): ``torch.matmul`` (a transposed
operand is a column-major tensor already), then the epilogue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..specs import MatmulSpec
from . import epilogue, fp8
from .families import BLOCK_PRODUCTS, REFERENCES, BlockProduct, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch


def compute(spec: MatmulSpec, t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """A @ B (and the epilogue) on tensors ``t`` in their own dtype."""
    import torch

    return epilogue.apply_epilogue(spec, torch.matmul(t["A"], t["B"]), t)


def make_inputs(spec: MatmulSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    return epilogue.make_inputs(spec, spec.k, device=device, seed=seed)


reference_outputs, torch_op = epilogue.functions(compute, "batch")

_PLAIN = Reference(epilogue.input_names, make_inputs, epilogue.make_outputs, reference_outputs, torch_op)
# FP8 (spec.fp8): quantized operands and descales, the reference from the same FP8 values, torch._scaled_mm.
REFERENCES.add(MatmulSpec, fp8.dispatch(_PLAIN, fp8.fp8_family(compute, lambda spec: spec.k, "batch",
                                                                       split_dim=1)))


@BLOCK_PRODUCTS.register(MatmulSpec)
def block_product(spec: MatmulSpec) -> BlockProduct:
    """A batched GEMM, A [b, m, k] @ B [b, k, n], blocked along k; an outlier row of A reaches its row of C."""
    import torch

    return BlockProduct("A", "B", {"A": -1, "B": -2}, spec.k, "m", torch.matmul, lambda rows: rows)
