"""The PyTorch side of pooling: X's real layout, the NaN-poisoned Y, the float64 reference, PyTorch eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudnn_lab.errors import SpecError
from cudnn_lab.numerics import compare
from cudnn_lab.reference import make_inputs, make_outputs, reference_outputs, torch_eager, torch_op
from cudnn_lab.specs import ConvSpec, PoolSpec, layout_strides


def pool(**kw) -> PoolSpec:
    base = dict(n=2, c=5, h=9, w=8, window=3, stride=2, padding=1, dtype="fp32", layout="NCHW", mode="max")
    base.update(kw)
    return PoolSpec(**base)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_input_and_output_follow_layout_and_dtype(layout: str, dtype: str) -> None:
    spec = pool(layout=layout, dtype=dtype)
    x = make_inputs(spec)["X"]
    y = make_outputs(spec)["Y"]
    assert tuple(x.shape) == spec.x_dims and tuple(y.shape) == spec.y_dims
    assert x.stride() == layout_strides(spec.x_dims, layout)
    assert y.stride() == layout_strides(spec.y_dims, layout)
    assert x.dtype == y.dtype == {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    if layout == "NHWC":
        assert x.is_contiguous(memory_format=torch.channels_last)


def test_inputs_are_random_nonzero_both_signs_and_reproducible() -> None:
    spec = pool(n=4, c=8, h=16, w=16)
    x = make_inputs(spec, seed=3)["X"]
    assert (x != 0).float().mean() > 0.99
    assert x.min() < -0.5 and x.max() > 0.5  # negatives: a max that pads with zeros would be caught
    assert torch.equal(x, make_inputs(spec, seed=3)["X"])
    assert not torch.equal(x, make_inputs(spec, seed=4)["X"])
    nhwc = make_inputs(spec.replace(layout="NHWC"), seed=3)["X"]
    assert nhwc.untyped_storage().nbytes() == x.numel() * x.element_size()  # dense: no gaps in the layout


def test_output_is_poisoned_with_nan() -> None:
    assert make_outputs(pool())["Y"].isnan().all()


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode,padding", [("max", 1), ("avg", 1), ("avg_exclude_pad", 1), ("max", 0),
                                          ("avg", (1, 0)), ("avg_exclude_pad", (0, 1))])
def test_reference_is_float64_pytorch_pooling(mode: str, padding, layout: str) -> None:
    spec = pool(mode=mode, padding=padding, layout=layout)
    x = make_inputs(spec)["X"]
    y = reference_outputs(spec, {"X": x})["Y"]
    assert y.dtype == torch.float64 and tuple(y.shape) == spec.y_dims
    kw = dict(kernel_size=3, stride=2, padding=spec.padding)
    want = F.max_pool2d(x.double(), **kw) if mode == "max" else F.avg_pool2d(x.double(), **kw,
                                                                             count_include_pad=mode == "avg")
    assert torch.equal(y, want)


def test_average_modes_differ_only_at_the_border() -> None:
    spec = pool(mode="avg", h=9, w=9, stride=1)
    x = make_inputs(spec)["X"]
    inc = reference_outputs(spec, {"X": x})["Y"]
    exc = reference_outputs(spec.replace(mode="avg_exclude_pad"), {"X": x})["Y"]
    assert torch.allclose(inc[..., 1:-1, 1:-1], exc[..., 1:-1, 1:-1])
    corner = x[0, 0, :2, :2].double().sum()
    assert torch.isclose(inc[0, 0, 0, 0], corner / 9) and torch.isclose(exc[0, 0, 0, 0], corner / 4)


def test_max_reference_ignores_padding_for_all_negative_input() -> None:
    spec = pool(mode="max")
    x = -make_inputs(spec)["X"].abs() - 0.1
    assert (reference_outputs(spec, {"X": x})["Y"] < 0).all()


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_torch_op_runs_in_native_dtype_and_agrees_with_reference(dtype: str) -> None:
    spec = pool(mode="avg", dtype=dtype, layout="NHWC")
    inputs = make_inputs(spec)
    fn = torch_op(spec, inputs)
    y = fn()
    assert y.dtype == inputs["X"].dtype
    assert compare(y, reference_outputs(spec, inputs)["Y"], dtype).passed_torch
    assert torch.equal(torch_eager(spec, inputs), y)


def test_missing_or_misshapen_input_is_named() -> None:
    spec = pool()
    with pytest.raises(SpecError) as info:
        reference_outputs(spec, {})
    assert "X" in str(info.value)
    with pytest.raises(SpecError) as info:
        reference_outputs(spec, {"X": torch.zeros(1, 2, 3, 4)})
    assert info.value.field == "inputs['X']"


def test_cpu_reference_refuses_huge_problems() -> None:
    spec = PoolSpec(n=4, c=256, h=1024, w=1024, window=7, stride=1, padding=3, dtype="fp16")
    fake = {"X": torch.zeros(1, dtype=torch.float16).expand(spec.x_dims)}  # right shape, no memory
    with pytest.raises(SpecError) as info:
        reference_outputs(spec, fake)
    assert "CPU limit" in str(info.value)


def test_pool_module_rejects_other_specs() -> None:
    from cudnn_lab.reference import pool as ref_pool

    with pytest.raises(SpecError):
        ref_pool.make_inputs(ConvSpec())
