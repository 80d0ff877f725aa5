"""Block-scaled (MXFP8, NVFP4) graphs: each operand dequantized by its block scales, then the family's product.

A family that has a block-scaled form registers its product in :data:`BLOCK_SCALED` (``graph/matmul.py``,
``graph/conv.py``): given the graph and the cuDNN types of the format, it declares its operands and their scales,
the ``block_scale_dequantize`` calls and the product, and returns the product's tensor. This module adds what every
family shares: the graph (deviceless on a target's description, or on a handle), NVFP4's FP32 tensor scale and the
bf16 output. cudnn is imported only when a graph is built.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Protocol

from ..registry import FamilyRegistry
from .families import checked

__all__ = ["BLOCK_SCALED", "BlockTypes", "BlockProduct", "block_scaled_graph", "padded"]

#: The cuDNN data type of each block-format element or scale name (reference/block_formats.py's names).
_CUDNN_TYPES = {"e4m3": "FP8_E4M3", "e5m2": "FP8_E5M2", "e2m1": "FP4_E2M1", "e8m0": "FP8_E8M0"}


class BlockFormatLike(Protocol):
    """What the graph needs of a block format (:class:`cudnn_lab.reference.block_formats.BlockFormat`)."""

    @property
    def element(self) -> str: ...
    @property
    def scale_format(self) -> str: ...
    @property
    def block_size(self) -> int: ...
    @property
    def tensor_scale(self) -> bool: ...


@dataclasses.dataclass(frozen=True)
class BlockTypes:
    """The cuDNN types a family's block-scaled product is declared with."""

    element: Any     # cudnn.data_type of the operands
    scale: Any       # cudnn.data_type of the block scales
    block_size: int  # elements per scale along the reduction axis
    reorder: Any     # cudnn.tensor_reordering.F8_128x4, the scales' layout
    compute: Any     # cudnn.data_type.FLOAT


@dataclasses.dataclass(frozen=True)
class BlockProduct:
    """What a family's builder returns: the product tensor, the dims of a scalar of its rank, its output's name."""

    out: Any
    scalar_dims: tuple[int, ...]
    output_name: str


#: Spec class -> its block-scaled product: ``builder(graph, spec, types) -> BlockProduct``.
BLOCK_SCALED: FamilyRegistry[Callable[[Any, Any, BlockTypes], BlockProduct]] = FamilyRegistry("block-scaled graph")


def padded(value: int, to: int) -> int:
    """``value`` rounded up to a multiple of ``to`` (the F8_128x4 scale layout pads rows to 128, columns to 4)."""
    return -(-value // to) * to


def block_scaled_graph(spec: Any, fmt: BlockFormatLike, *, description: dict[str, Any] | None = None,
                       handle: Any = None) -> Any:
    """The real cudnn.pygraph of ``spec``'s product in block format ``fmt``: the family's dequantize-then-product
    with FP32 compute; NVFP4 multiplies the result by an FP32 tensor scale; output bf16. ``description``: a
    target's device description (deviceless). Builds without a GPU up to ``inspect()``."""
    builder = BLOCK_SCALED[checked(spec)]
    import cudnn

    options: dict[str, Any] = {}
    if description is not None:
        options["device_property"] = cudnn.create_device_properties(json.dumps(description))
    if handle is not None:
        options["handle"] = handle
    fp32 = cudnn.data_type.FLOAT
    g = cudnn.pygraph(intermediate_data_type=fp32, compute_data_type=fp32, **options)
    types = BlockTypes(element=getattr(cudnn.data_type, _CUDNN_TYPES[fmt.element]),
                       scale=getattr(cudnn.data_type, _CUDNN_TYPES[fmt.scale_format]), block_size=fmt.block_size,
                       reorder=cudnn.tensor_reordering.F8_128x4, compute=fp32)
    product = builder(g, spec, types)
    out = product.out
    if fmt.tensor_scale:
        dims = list(product.scalar_dims)
        alpha = g.tensor(name="tensor_descale", dim=dims, stride=[1] * len(dims), data_type=fp32)
        out = g.mul(out, alpha, compute_data_type=fp32, name="tensor_scale")
    out.set_output(True).set_data_type(cudnn.data_type.BFLOAT16).set_name(product.output_name)
    return g
