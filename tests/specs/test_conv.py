"""ConvSpec: validation (every bad value names its field and value), geometry against PyTorch, FLOPs, bytes."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from cudnn_lab.errors import CudnnLabError, SpecError
from cudnn_lab.specs import ConvSpec, spec_from_json
from cudnn_lab.specs.base import DTYPE_BYTES, MAX_ELEMENTS

SMALL = dict(n=2, c=8, h=9, w=7, k=12, r=3, s=3, padding=1)


def small(**kw) -> ConvSpec:
    return ConvSpec(**{**SMALL, **kw})


# --- valid geometry, generated ------------------------------------------------------------------------------------

@st.composite
def conv_specs(draw) -> ConvSpec:
    """Only valid ConvSpecs: padding within the dilated filter's reach, h/w large enough for the dilated filter."""
    groups = draw(st.integers(1, 4))
    c, k = groups * draw(st.integers(1, 4)), groups * draw(st.integers(1, 4))
    geo = {}
    for side, size in (("r", "h"), ("s", "w")):
        f = draw(st.integers(1, 5))
        d = draw(st.integers(1, 3))
        p = draw(st.integers(0, d * (f - 1)))
        lo = max(1, d * (f - 1) + 1 - 2 * p)
        geo[side], geo[size], geo["d" + side], geo["p" + side] = f, draw(st.integers(lo, lo + 8)), d, p
    stride = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    dtype = draw(st.sampled_from(["fp32", "fp16", "bf16"]))
    compute = draw(st.sampled_from(["fp32", "fp16"])) if dtype == "fp16" else "fp32"
    direction = draw(st.sampled_from(["fprop", "dgrad", "wgrad"]))
    epilogue: tuple[str, ...] = ()
    if direction == "fprop":
        operands = draw(st.lists(st.sampled_from(["bias", "scale", "add"]), unique=True, max_size=3))
        acts = draw(st.lists(st.sampled_from(["relu", "gelu", "sigmoid", "tanh"]), max_size=3))
        epilogue = tuple(draw(st.permutations(operands + acts)))
    return ConvSpec(n=draw(st.integers(1, 4)), c=c, h=geo["h"], w=geo["w"], k=k, r=geo["r"], s=geo["s"],
                    padding=(geo["pr"], geo["ps"]), stride=stride, dilation=(geo["dr"], geo["ds"]), groups=groups,
                    layout=draw(st.sampled_from(["NCHW", "NHWC"])), dtype=dtype, compute_dtype=compute,
                    direction=direction, epilogue=epilogue)


@settings(max_examples=150, deadline=None)
@given(conv_specs())
def test_random_valid_conv_spec_round_trips_through_json(spec: ConvSpec) -> None:
    again = spec_from_json(spec.to_json())
    assert again == spec
    assert type(again) is ConvSpec
    assert hash(again) == hash(spec)


@settings(max_examples=60, deadline=None)
@given(conv_specs())
def test_random_valid_conv_output_size_matches_torch(spec: ConvSpec) -> None:
    x = torch.zeros(spec.x_dims)
    w = torch.zeros(spec.w_dims)
    y = F.conv2d(x, w, stride=spec.stride, padding=spec.padding, dilation=spec.dilation, groups=spec.groups)
    assert tuple(y.shape) == spec.y_dims


# --- geometry -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("geo", [
    dict(n=1, c=3, h=8, w=8, k=4, r=3, s=3, padding=1, stride=1, dilation=1),
    dict(n=2, c=4, h=11, w=7, k=6, r=3, s=3, padding=0, stride=2, dilation=1),
    dict(n=1, c=4, h=10, w=9, k=8, r=3, s=5, padding=(2, 1), stride=(1, 2), dilation=(2, 1)),
    dict(n=3, c=6, h=5, w=5, k=6, r=1, s=1, padding=0, stride=3, dilation=1, groups=3),
    dict(n=1, c=8, h=13, w=6, k=8, r=5, s=2, padding=(4, 1), stride=(3, 1), dilation=(2, 3), groups=8),
])
def test_output_size_matches_torch_conv2d(geo: dict) -> None:
    spec = ConvSpec(dtype="fp32", **geo)
    y = F.conv2d(torch.zeros(spec.x_dims), torch.zeros(spec.w_dims), stride=spec.stride, padding=spec.padding,
                 dilation=spec.dilation, groups=spec.groups)
    assert (y.shape[2], y.shape[3]) == spec.out_hw
    assert tuple(y.shape) == spec.y_dims


@pytest.mark.parametrize("geo", [dict(), dict(groups=4), dict(stride=2, padding=0), dict(r=1, s=5, padding=(0, 2))])
def test_flops_is_two_n_k_p_q_c_r_s_over_groups(geo: dict) -> None:
    spec = small(**geo)
    p, q = spec.out_hw
    assert spec.flops() == 2 * spec.n * spec.k * p * q * spec.c * spec.r * spec.s // spec.groups
    # The same count another way: one multiply-add per output element per filter tap.
    assert spec.flops() == 2 * math.prod(spec.y_dims) * math.prod(spec.w_dims[1:])


@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
def test_flops_do_not_depend_on_direction(direction: str) -> None:
    assert small(direction=direction).flops() == small().flops()


def test_weight_dims_divide_channels_by_groups() -> None:
    spec = small(c=8, k=12, groups=4)
    assert spec.w_dims == (12, 2, 3, 3)


@pytest.mark.parametrize("direction,names", [
    ("fprop", ("X", "W", "Y")), ("dgrad", ("DY", "W", "DX")), ("wgrad", ("X", "DY", "DW"))])
def test_tensor_shapes_name_each_directions_tensors(direction: str, names: tuple[str, ...]) -> None:
    spec = small(direction=direction)
    shapes = spec.tensor_shapes()
    assert tuple(shapes) == names
    dims = {"X": spec.x_dims, "DX": spec.x_dims, "W": spec.w_dims, "DW": spec.w_dims, "Y": spec.y_dims,
            "DY": spec.y_dims}
    assert shapes == {n: dims[n] for n in names}


def test_io_names_split_inputs_from_output() -> None:
    assert small(direction="dgrad").io_names() == (("DY", "W"), "DX")


def test_epilogue_operands_appear_in_tensor_shapes() -> None:
    spec = small(epilogue=("scale", "bias", "add", "relu"))
    shapes = spec.tensor_shapes()
    assert shapes["bias"] == shapes["scale"] == (1, spec.k, 1, 1)
    assert shapes["residual"] == spec.y_dims


def test_activation_only_epilogue_adds_no_tensor() -> None:
    assert set(small(epilogue=("relu", "gelu")).tensor_shapes()) == {"X", "W", "Y"}


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_min_bytes_counts_every_tensor_once_at_dtype_width(dtype: str) -> None:
    spec = small(dtype=dtype, epilogue=("bias", "add"))
    elements = sum(math.prod(d) for d in spec.tensor_shapes().values())
    assert spec.min_bytes() == DTYPE_BYTES[dtype] * elements


def test_fp32_needs_twice_the_bytes_of_fp16() -> None:
    assert small(dtype="fp32").min_bytes() == 2 * small(dtype="fp16").min_bytes()


def test_label_names_direction_layout_dtype_and_epilogue() -> None:
    label = small(direction="fprop", layout="NCHW", dtype="bf16", epilogue=("bias", "relu"), groups=2).label()
    for part in ("conv", "fprop", "NCHW", "bf16", "n2", "c8", "9x7", "k12", "3x3", "+bias+relu", "g2"):
        assert part in label


def test_pair_padding_is_shown_hxw_in_label() -> None:
    assert "pad2x1" in small(r=5, padding=(2, 1)).label()


def test_fp16_may_compute_in_fp16() -> None:
    assert small(dtype="fp16", compute_dtype="fp16").compute_dtype == "fp16"


def test_defaults_are_valid() -> None:
    spec = ConvSpec()
    assert spec.y_dims == (spec.n, spec.k, spec.h, spec.w)  # 3x3, padding 1, stride 1 keeps the size


def test_depthwise_groups_equal_to_channels_is_valid() -> None:
    spec = small(c=8, k=8, groups=8)
    assert spec.w_dims == (8, 1, 3, 3)


# --- every invalid value is a SpecError naming field and value ---------------------------------------------------

BAD = [
    # (changes to SMALL, field, substrings the message must hold)
    (dict(n=0), "n", ["n=0", "from 1"]),
    (dict(c=-3), "c", ["c=-3"]),
    (dict(h=0), "h", ["h=0"]),
    (dict(w=2 ** 21), "w", [f"w={2 ** 21}"]),
    (dict(k=1.5), "k", ["k=1.5", "integer"]),
    (dict(n="4"), "n", ["n='4'"]),
    (dict(r=0), "r", ["r=0"]),
    (dict(s=None), "s", ["s=None"]),
    (dict(padding=5), "padding", ["padding=5", "r-1=2"]),
    (dict(padding=(1, 5)), "padding", ["padding=(1, 5)", "s-1=2"]),
    (dict(padding=5, dilation=2), "padding", ["padding=5", "dilation*(r-1)=4"]),
    (dict(padding=-1), "padding", ["padding=-1"]),
    (dict(padding=(1, 1, 1)), "padding", ["padding=(1, 1, 1)", "pair"]),
    (dict(stride=0), "stride", ["stride=0", "from 1 to 64"]),
    (dict(stride=65), "stride", ["stride=65"]),
    (dict(stride=(1, 0)), "stride", ["stride=0"]),
    (dict(dilation=0), "dilation", ["dilation=0"]),
    (dict(groups=0), "groups", ["groups=0"]),
    (dict(groups=16), "groups", ["groups=16", "from 1 to 8"]),
    (dict(groups=3), "groups", ["groups=3", "must divide c=8"]),
    (dict(c=8, k=6, groups=4), "groups", ["groups=4", "must divide k=6"]),
    (dict(layout="CHWN"), "layout", ["layout='CHWN'", "NCHW", "NHWC"]),
    (dict(layout="nhwc"), "layout", ["layout='nhwc'"]),
    (dict(dtype="fp64"), "dtype", ["dtype='fp64'", "fp32"]),
    (dict(dtype="fp32", compute_dtype="fp16"), "compute_dtype", ["compute_dtype='fp16'"]),
    (dict(compute_dtype="int8"), "compute_dtype", ["compute_dtype='int8'"]),
    (dict(direction="backward"), "direction", ["direction='backward'", "fprop", "dgrad", "wgrad"]),
    (dict(epilogue=("swish",)), "epilogue", ["epilogue='swish'"]),
    (dict(direction="dgrad", epilogue=("relu",)), "epilogue", ["epilogue=('relu',)", "direction='fprop'"]),
    (dict(direction="wgrad", epilogue=("bias",)), "epilogue", ["epilogue=('bias',)", "direction='fprop'"]),
    (dict(h=2, r=5, s=1, padding=0), "h", ["h=2", "too small", "at least 5"]),
    (dict(w=4, s=3, dilation=3, padding=0), "w", ["w=4", "at least 7"]),
    (dict(h=1, r=5, padding=1), "h", ["h=1", "at least 5"]),
    (dict(n=100_000, c=64, h=64, w=64), "n", ["n=100000", str(MAX_ELEMENTS)]),
]


@pytest.mark.parametrize("changes,field,parts", BAD, ids=[str(b[0]) for b in BAD])
def test_invalid_value_raises_spec_error_naming_field_and_value(changes: dict, field: str, parts: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        small(**changes)
    err = info.value
    assert err.field == field
    assert str(err).startswith(f"ConvSpec.{field}=")
    for part in parts:
        assert part in str(err), (part, str(err))


def test_spec_error_is_a_value_error_and_a_lab_error() -> None:
    with pytest.raises(ValueError):
        small(padding=5)
    with pytest.raises(CudnnLabError):
        small(padding=5)


@pytest.mark.parametrize("field", ["n", "c", "h", "w", "k", "r", "s", "groups"])
def test_bool_is_rejected_for_int_fields(field: str) -> None:
    with pytest.raises(SpecError, match=f"{field}=True.*not a bool"):
        small(**{field: True})


@pytest.mark.parametrize("field", ["padding", "stride", "dilation"])
def test_bool_is_rejected_inside_pairs(field: str) -> None:
    with pytest.raises(SpecError, match=field):
        small(**{field: (True, 1)})


def test_padding_equal_to_dilated_reach_is_allowed() -> None:
    spec = small(h=9, r=3, padding=4, dilation=2)
    assert spec.padding == 4


def test_input_exactly_as_large_as_dilated_filter_is_allowed() -> None:
    spec = small(h=5, w=5, r=3, s=3, padding=0, dilation=2)
    assert spec.out_hw == (1, 1)
