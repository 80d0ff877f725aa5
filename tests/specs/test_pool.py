"""PoolSpec: validation (every bad value names its field), geometry against PyTorch, FLOPs, bytes, round trips."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import cudnn_lab as cl
from cudnn_lab.errors import CudnnLabError, SpecError
from cudnn_lab.specs import POOL_MODES, PoolSpec, layout_strides, spec_from_dict, spec_from_json
from cudnn_lab.specs.base import DTYPE_BYTES

SMALL = dict(n=2, c=3, h=9, w=7, window=3, stride=2, padding=1)


def small(**kw) -> PoolSpec:
    return PoolSpec(**{**SMALL, **kw})


@st.composite
def pool_specs(draw) -> PoolSpec:
    """Only valid PoolSpecs: padding at most half the window, h/w + 2*padding at least the window."""
    geo = {}
    for side in ("h", "w"):
        k = draw(st.integers(1, 6))
        p = draw(st.integers(0, k // 2))
        lo = max(1, k - 2 * p)
        geo[side], geo["k" + side], geo["p" + side] = draw(st.integers(lo, lo + 9)), k, p
    return PoolSpec(n=draw(st.integers(1, 3)), c=draw(st.integers(1, 5)), h=geo["h"], w=geo["w"],
                    mode=draw(st.sampled_from(POOL_MODES)), window=(geo["kh"], geo["kw"]),
                    stride=draw(st.tuples(st.integers(1, 4), st.integers(1, 4))), padding=(geo["ph"], geo["pw"]),
                    layout=draw(st.sampled_from(["NCHW", "NHWC"])),
                    dtype=draw(st.sampled_from(["fp32", "fp16", "bf16"])))


@settings(max_examples=150, deadline=None)
@given(pool_specs())
def test_random_valid_pool_spec_round_trips_and_matches_pytorch_geometry(spec: PoolSpec) -> None:
    again = spec_from_json(spec.to_json())
    assert again == spec and type(again) is PoolSpec and hash(again) == hash(spec)
    x = torch.zeros(spec.x_dims)
    kw = dict(kernel_size=spec.window, stride=spec.stride, padding=spec.padding)
    assert tuple(F.max_pool2d(x, **kw).shape) == spec.y_dims
    assert tuple(F.avg_pool2d(x, **kw).shape) == spec.y_dims


def test_defaults_and_public_names() -> None:
    spec = cl.PoolSpec()
    assert spec.op == "pool"
    assert (spec.mode, spec.window, spec.stride, spec.padding, spec.layout, spec.dtype) == ("max", 3, 2, 1, "NHWC",
                                                                                          "fp16")
    assert spec.y_dims == (16, 64, 28, 28)
    assert "PoolSpec" in cl.__all__ and cl.PoolSpec is PoolSpec
    assert spec_from_dict(spec.to_dict()) == spec


def test_pairs_are_normalized_and_round_trip_as_lists() -> None:
    spec = small(window=(3, 3), stride=(2, 1), padding=[1, 0])
    assert spec.window == 3 and spec.stride == (2, 1) and spec.padding == (1, 0)
    d = spec.to_dict()
    assert d["stride"] == [2, 1] and d["op"] == "pool"
    assert PoolSpec.from_dict(d) == spec


def test_tensor_shapes_strides_and_io_names() -> None:
    spec = small(layout="NHWC")
    assert spec.io_names() == (("X",), "Y")
    shapes = spec.tensor_shapes()
    assert shapes == {"X": (2, 3, 9, 7), "Y": (2, 3, 5, 4)}
    assert spec.tensor_strides() == {n: layout_strides(d, "NHWC") for n, d in shapes.items()}
    assert small(layout="NCHW").tensor_strides()["X"] == (189, 63, 7, 1)


def test_flops_count_one_op_per_window_element_per_output() -> None:
    spec = small(window=(3, 2), padding=(1, 1))
    p, q = spec.out_hw
    assert spec.flops() == 2 * 3 * p * q * 3 * 2


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_min_bytes_read_x_once_write_y_once(dtype: str) -> None:
    spec = small(dtype=dtype)
    assert spec.min_bytes() == DTYPE_BYTES[dtype] * (math.prod(spec.x_dims) + math.prod(spec.y_dims))


def test_label_names_mode_layout_dtype_and_geometry() -> None:
    label = small(mode="avg_exclude_pad", layout="NCHW", dtype="bf16", stride=(2, 1)).label()
    for part in ("pool", "avg_exclude_pad", "NCHW", "bf16", "n2", "c3", "9x7", "win3x3", "str2x1", "pad1"):
        assert part in label


@pytest.mark.parametrize("field,value,needle", [
    ("mode", "min", "max, avg, avg_exclude_pad"),
    ("mode", "MAX", "max, avg, avg_exclude_pad"),
    ("layout", "CHWN", "NCHW, NHWC"),
    ("dtype", "fp64", "fp32, fp16, bf16"),
    ("dtype", "int8", "fp32, fp16, bf16"),
    ("n", 0, "from 1"),
    ("c", -3, "from 1"),
    ("h", 2.5, "integer"),
    ("w", True, "bool"),
    ("window", 0, "from 1"),
    ("window", (3, 3, 3), "pair"),
    ("stride", 0, "from 1"),
    ("padding", -1, "from 0"),
])
def test_bad_values_name_field_and_allowed_values(field: str, value, needle: str) -> None:
    with pytest.raises(SpecError) as info:
        small(**{field: value})
    assert info.value.field == field
    assert needle in str(info.value)
    assert isinstance(info.value, (CudnnLabError, ValueError))


@pytest.mark.parametrize("window,padding", [(3, 2), (2, 2), ((3, 5), (1, 3)), (1, 1)])
def test_padding_above_half_the_window_is_refused(window, padding) -> None:
    with pytest.raises(SpecError) as info:
        small(window=window, padding=padding, h=20, w=20)
    assert info.value.field == "padding"
    assert "half the window" in str(info.value)


@pytest.mark.parametrize("window,padding", [(3, 1), (2, 1), (4, 2), ((5, 3), (2, 1)), (1, 0)])
def test_padding_up_to_half_the_window_is_accepted(window, padding) -> None:
    spec = small(window=window, padding=padding)
    x = torch.zeros(spec.x_dims)
    assert tuple(F.max_pool2d(x, spec.window, spec.stride, spec.padding).shape) == spec.y_dims


def test_window_larger_than_padded_input_is_refused() -> None:
    with pytest.raises(SpecError) as info:
        small(h=2, window=5, padding=1)
    assert info.value.field == "h"
    assert "window" in str(info.value)


def test_global_pooling_is_valid() -> None:
    spec = small(h=7, w=7, window=7, stride=7, padding=0)
    assert spec.y_dims == (2, 3, 1, 1)


def test_huge_problems_are_refused_before_allocation() -> None:
    with pytest.raises(SpecError) as info:
        PoolSpec(n=1024, c=1024, h=1024, w=1024)
    assert info.value.field == "n"


def test_unknown_field_in_dict_is_named() -> None:
    d = small().to_dict()
    d["kernel"] = 3
    with pytest.raises(SpecError) as info:
        spec_from_dict(d)
    assert info.value.field == "kernel"


def test_spec_is_frozen_and_replace_validates() -> None:
    spec = small()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.mode = "avg"  # type: ignore[misc]
    assert spec.replace(mode="avg").mode == "avg"
    with pytest.raises(SpecError):
        spec.replace(padding=2)
