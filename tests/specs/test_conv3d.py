"""Conv3dSpec (issue 38): 5-D shapes and strides per layout, output sizes per axis, FLOPs, bytes, validation that
names the field, the form's rules, and grouped/depthwise convs as video models use them."""

from __future__ import annotations

import math

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.specs import Conv3dSpec, spec_from_json
from cudnn_lab.sweeps import parse_axis


def test_output_size_per_axis_and_shapes() -> None:
    spec = Conv3dSpec(n=1, c=3, d=16, h=224, w=224, k=1152, t=2, r=14, s=14, padding=0, stride=(2, 14, 14))
    assert spec.out_dhw == (8, 16, 16) and spec.y_dims == (1, 1152, 8, 16, 16)
    assert spec.tensor_shapes() == {"X": (1, 3, 16, 224, 224), "W": (1152, 3, 2, 14, 14), "Y": (1, 1152, 8, 16, 16)}
    assert spec.stride == (2, 14, 14) and Conv3dSpec(stride=(2, 2, 2)).stride == 2  # equal sides stored as one int


@pytest.mark.parametrize("layout,order", [("NCDHW", (0, 1, 2, 3, 4)), ("NDHWC", (0, 2, 3, 4, 1))])
def test_strides_follow_the_layout(layout: str, order: tuple[int, ...]) -> None:
    spec = Conv3dSpec(n=2, c=8, d=3, h=5, w=7, k=16, layout=layout)
    dims = spec.x_dims
    strides = spec.tensor_strides()["X"]
    # the fastest axis in memory has stride 1, and each axis steps over everything faster than it
    step = 1
    for axis in reversed(order):
        assert strides[axis] == step
        step *= dims[axis]


@pytest.mark.parametrize("direction,ins,out", [("fprop", ("X", "W"), "Y"), ("dgrad", ("DY", "W"), "DX"),
                                               ("wgrad", ("X", "DY"), "DW")])
def test_directions_name_their_tensors(direction: str, ins: tuple[str, ...], out: str) -> None:
    spec = Conv3dSpec(direction=direction)
    assert spec.io_names() == (ins, out) and spec.output_names() == (out,)
    assert spec.flops() == 2 * spec.n * spec.k * math.prod(spec.out_dhw) * spec.c * 27


def test_depthwise_counts_one_channel_per_group() -> None:
    spec = Conv3dSpec(n=4, c=192, k=192, groups=192, d=16, h=28, w=28, t=3, r=3, s=3, padding=1)
    assert spec.depthwise and spec.w_dims == (192, 1, 3, 3, 3) and " dw" in spec.label()
    assert spec.flops() == 2 * 4 * 192 * 16 * 28 * 28 * 27
    assert spec.min_bytes() == 2 * (2 * 4 * 192 * 16 * 28 * 28 + 192 * 27)


def test_epilogue_operands_are_5d_and_min_bytes_counts_them() -> None:
    spec = Conv3dSpec(epilogue=("bias", "add", "relu"))
    shapes = spec.tensor_shapes()
    assert shapes["bias"] == (1, spec.k, 1, 1, 1) and shapes["residual"] == spec.y_dims
    assert spec.input_names() == ("X", "W", "bias", "residual")
    assert spec.min_bytes() == 2 * sum(math.prod(d) for d in shapes.values())


@pytest.mark.parametrize("fields,field,words", [
    (dict(padding=(1, 1)), "padding", "triple"),
    (dict(padding=3), "padding", "larger than the filter"),
    (dict(t=5, padding=(0, 1, 1), d=3), "d", "too small"),
    (dict(groups=3), "groups", "must divide"),
    (dict(layout="NHWC"), "layout", "NCDHW, NDHWC"),
    (dict(dtype="fp8_e4m3"), "dtype", "fp32, fp16, bf16"),
    (dict(direction="wgrad", epilogue=("relu",)), "epilogue", "fprop"),
    (dict(stride=0), "stride", "from 1"),
    (dict(compute_dtype="fp16", dtype="bf16"), "compute_dtype", "fp32"),
])
def test_bad_fields_are_named(fields: dict, field: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        Conv3dSpec(**fields)
    assert info.value.field == field and words in str(info.value)


def test_round_trips_through_json_and_dicts() -> None:
    spec = Conv3dSpec(padding=(1, 0, 0), stride=(1, 2, 2), t=3, r=1, s=1, epilogue=("bias",))
    assert spec_from_json(spec.to_json()) == spec and spec.to_dict()["op"] == "conv3d"


def test_the_form_rules_follow_each_other() -> None:
    values = Conv3dSpec(d=4, h=6, w=6, t=3, r=3, s=3, padding=(1, 1, 1)).to_dict()
    lim = Conv3dSpec.field_limits(values)
    assert lim["t"] == (2, 6) and lim["padding"] == (0, 2) and lim["groups"] == (1, 64)
    assert lim["d"][0] == 1 and lim["dilation"][0] == 1
    assert "epilogue" in Conv3dSpec.hidden_fields({**values, "direction": "dgrad"})
    assert "depthwise" in Conv3dSpec.field_hints(values)["groups"]


def test_a_sweep_axis_reads_triples() -> None:
    assert parse_axis(Conv3dSpec, "stride", "1, 1x2x2") == (1, (1, 2, 2))
    with pytest.raises(SpecError):
        parse_axis(Conv3dSpec, "stride", "1x2x2x2")


def test_the_package_exports_it() -> None:
    assert cl.Conv3dSpec is Conv3dSpec and cl.spec_from_dict({"op": "conv3d"}) == Conv3dSpec()
    assert Conv3dSpec().gemm_mn() == (2 * 8 * 32 * 32, 64) and Conv3dSpec(direction="dgrad").gemm_mn() is None
