"""Memory layouts as strides: what NCHW and NHWC mean for a 4-D tensor, and the reverse reading."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING


def packed_strides(dims: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    """Strides of a packed tensor whose dims are laid out in memory from ``order[0]`` (slowest) to last (fastest)."""
    strides = [0] * len(dims)
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= dims[axis]
    return tuple(strides)


def layout_strides(dims: Sequence[int], layout: str) -> tuple[int, ...]:
    """Strides of a logical [N, C, H, W] (or [K, C, R, S]) tensor stored as NCHW or NHWC.

    cuDNN always takes dims in N, C, H, W order; the layout lives only in the strides.
    Non-4-D tensors are row-major.
    """
    if len(dims) == 4 and layout == "NHWC":
        return packed_strides(dims, (0, 2, 3, 1))
    return packed_strides(dims, tuple(range(len(dims))))


class InLayout:
    """Mixin of a family whose every tensor is stored in its ``layout`` (dims always given N, C, H, W; tensors of
    another rank row-major)."""

    if TYPE_CHECKING:  # what the family's Spec gives the mixin (a field or a ClassVar), named so it is checked
        @property
        def layout(self) -> str: ...

        def tensor_shapes(self) -> dict[str, tuple[int, ...]]: ...

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Strides of every tensor in the spec's layout (dims in N, C, H, W order)."""
        return {name: layout_strides(dims, self.layout) for name, dims in self.tensor_shapes().items()}


def describe_layout(dims: Sequence[int], strides: Sequence[int], axes: str | None = None) -> str:
    """Name the layout that strides imply: 'NCHW', 'NHWC', 'row-major', 'transposed' or 'strided'.

    A tensor whose size-1 dims make NCHW and NHWC the same memory order (a bias [1, K, 1, 1]) says so. ``axes``
    names the logical dims of a family whose 4-D tensors are not images (attention's ``"BHSD"``): the layout is
    then those letters in memory order, slowest first ('BSHD', 'BHSD').
    """
    dims, strides = tuple(dims), tuple(strides)
    if not dims or len(dims) != len(strides):
        return "unknown"
    if axes is not None and len(axes) == len(dims) <= 5:
        for order in itertools.permutations(range(len(dims))):
            if _same(dims, strides, packed_strides(dims, order)):
                return "".join(axes[i] for i in order)
        return "strided"
    if len(dims) == 4:
        # A dim of extent 1 may carry any stride; compare only what matters.
        matches = [name for name, order in (("NCHW", (0, 1, 2, 3)), ("NHWC", (0, 2, 3, 1)))
                   if _same(dims, strides, packed_strides(dims, order))]
        if len(matches) == 2:
            return "NCHW = NHWC (size-1 dims)"
        if matches:
            return matches[0]
    if _same(dims, strides, packed_strides(dims, tuple(range(len(dims))))):
        return "row-major"
    if len(dims) >= 2:
        order = tuple(range(len(dims) - 2)) + (len(dims) - 1, len(dims) - 2)
        if _same(dims, strides, packed_strides(dims, order)):
            return "transposed"
    return "strided"


def _same(dims: Sequence[int], a: Sequence[int], b: Sequence[int]) -> bool:
    return all(d == 1 or x == y for d, x, y in zip(dims, a, b))
