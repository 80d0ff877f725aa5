"""Layouts as strides: NCHW/NHWC agree with PyTorch's contiguous/channels_last; describe_layout reads them back."""

from __future__ import annotations

import pytest
import torch

from cudnn_lab.specs import describe_layout, layout_strides
from cudnn_lab.specs.layout import packed_strides

SHAPES = [(2, 3, 4, 5), (16, 64, 56, 56), (1, 16, 1, 1), (2, 1, 3, 3), (4, 8, 1, 7), (1, 1, 1, 1)]


@pytest.mark.parametrize("dims", SHAPES)
def test_nchw_strides_equal_torch_contiguous(dims: tuple[int, ...]) -> None:
    assert layout_strides(dims, "NCHW") == torch.empty(dims).stride()


@pytest.mark.parametrize("dims", SHAPES)
def test_nhwc_strides_equal_torch_channels_last(dims: tuple[int, ...]) -> None:
    assert layout_strides(dims, "NHWC") == torch.empty(dims, memory_format=torch.channels_last).stride()


@pytest.mark.parametrize("dims", [(5,), (3, 4), (2, 3, 4), (2, 3, 4, 5, 6)])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_non_4d_tensors_are_row_major(dims: tuple[int, ...], layout: str) -> None:
    assert layout_strides(dims, layout) == torch.empty(dims).stride()


def test_packed_strides_follow_memory_order() -> None:
    # [b, k, m] stored, seen as [b, m, k]: what a transposed matmul operand is.
    assert packed_strides((2, 3, 4), (0, 2, 1)) == torch.empty(2, 4, 3).transpose(1, 2).stride()


@pytest.mark.parametrize("dims", [(2, 3, 4, 5), (16, 64, 56, 56), (4, 8, 1, 7)])
def test_describe_layout_names_nchw(dims: tuple[int, ...]) -> None:
    assert describe_layout(dims, torch.empty(dims).stride()) == "NCHW"


@pytest.mark.parametrize("dims", [(2, 3, 4, 5), (16, 64, 56, 56), (4, 8, 1, 7)])
def test_describe_layout_names_nhwc(dims: tuple[int, ...]) -> None:
    assert describe_layout(dims, torch.empty(dims, memory_format=torch.channels_last).stride()) == "NHWC"


@pytest.mark.parametrize("dims", [(1, 16, 1, 1), (8, 1, 1, 1), (1, 1, 1, 1), (2, 1, 3, 3)])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_describe_layout_says_when_size_one_dims_make_nchw_and_nhwc_the_same(dims, layout) -> None:
    assert describe_layout(dims, layout_strides(dims, layout)) == "NCHW = NHWC (size-1 dims)"


def test_size_one_dims_may_carry_any_stride() -> None:
    # A bias [1, K, 1, 1] as some frameworks stride it: the size-1 dims' strides do not matter.
    assert describe_layout((1, 16, 1, 1), (999, 1, 7, 3)) == "NCHW = NHWC (size-1 dims)"


@pytest.mark.parametrize("dims", [(7,), (3, 4), (2, 3, 4), (2, 3, 4, 5, 6)])
def test_describe_layout_names_row_major(dims: tuple[int, ...]) -> None:
    assert describe_layout(dims, torch.empty(dims).stride()) == "row-major"


@pytest.mark.parametrize("dims", [(3, 4), (2, 3, 4), (2, 3, 4, 5, 6)])
def test_describe_layout_names_transposed(dims: tuple[int, ...]) -> None:
    t = torch.empty(*dims[:-2], dims[-1], dims[-2]).transpose(-1, -2)
    assert tuple(t.shape) == dims
    assert describe_layout(dims, t.stride()) == "transposed"


def test_4d_with_last_two_dims_swapped_is_transposed() -> None:
    dims = (2, 3, 4, 5)
    assert describe_layout(dims, torch.empty(2, 3, 5, 4).transpose(2, 3).stride()) == "transposed"


@pytest.mark.parametrize("dims,strides", [
    ((2, 3, 4), (48, 12, 2)),                        # every other element
    ((2, 3, 4, 5), (60, 1, 3, 12)),                  # W outermost in C: neither NCHW nor NHWC
    ((4, 6), (1, 8)),                                # column-major with a padded leading dim
    ((2, 3, 4, 5), (0, 20, 5, 1)),                   # broadcast batch
])
def test_describe_layout_names_other_strides_strided(dims, strides) -> None:
    assert describe_layout(dims, strides) == "strided"


def test_describe_layout_of_a_sliced_torch_tensor_is_strided() -> None:
    t = torch.empty(2, 3, 8)[:, :, ::2]
    assert describe_layout(t.shape, t.stride()) == "strided"


@pytest.mark.parametrize("dims,strides", [((), ()), ((2, 3), (3,))])
def test_describe_layout_of_mismatched_or_empty_input_is_unknown(dims, strides) -> None:
    assert describe_layout(dims, strides) == "unknown"


@pytest.mark.parametrize("dims", SHAPES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_describe_layout_reads_back_layout_strides(dims: tuple[int, ...], layout: str) -> None:
    assert describe_layout(dims, layout_strides(dims, layout)) in (layout, "NCHW = NHWC (size-1 dims)")


def test_attention_axes_name_the_memory_order_in_their_own_letters():
    dims = (2, 4, 64, 32)  # B, H, S, D
    assert describe_layout(dims, packed_strides(dims, (0, 2, 1, 3)), "BHSD") == "BSHD"
    assert describe_layout(dims, packed_strides(dims, (0, 1, 2, 3)), "BHSD") == "BHSD"
    assert describe_layout(dims, (1, 1, 1, 7), "BHSD") == "strided"
