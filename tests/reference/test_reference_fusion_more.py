"""The references of conv + reduction, conv + concatenate in place, conv_dgrad + relu_backward and the standalone
reduction on the CPU: float64 results from independent PyTorch expressions, inputs that keep results O(1) and away
from zero, the in-place part of a concatenation as the comparison sees it."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import cudnn_lab as cl
from cudnn_lab import reference as ref
from cudnn_lab.reference import fusion as RF
from cudnn_lab.reference import reduction as RR

SMALL = dict(n=2, c=8, h=6, w=6, k=16)


@pytest.mark.parametrize("mode,axes,dims", [("add", "c", (1,)), ("max", "nhw", (0, 2, 3))])
def test_conv_reduction_reference(mode: str, axes: str, dims: tuple[int, ...]) -> None:
    spec = cl.ConvReductionSpec(**SMALL, mode=mode, axes=axes)
    inputs = ref.make_inputs(spec, seed=3)
    y = F.conv2d(inputs["X"].double(), inputs["W"].double(), padding=1)
    want = y.sum(dims, keepdim=True) if mode == "add" else y.amax(dims, keepdim=True)
    out = ref.reference_outputs(spec, inputs)
    torch.testing.assert_close(out["R"], want)
    assert (want > 0.05).all()  # nonnegative data: sums and maxima far from zero
    eager = ref.torch_eager(spec, inputs)
    assert eager.dtype == torch.float32 and eager.shape == want.shape
    torch.testing.assert_close(eager.double(), want, rtol=1e-2, atol=1e-2)


def test_conv_concat_reference_and_the_in_place_part() -> None:
    spec = cl.ConvConcatSpec(**SMALL, k0=8)
    inputs = ref.make_inputs(spec, seed=1)
    out = ref.reference_outputs(spec, inputs)["Y1"]
    y = F.conv2d(inputs["X"].double(), inputs["W"].double(), padding=1)
    torch.testing.assert_close(out[:, :16], y)
    torch.testing.assert_close(out[:, 16:], inputs["Y0"].double())
    # what cuDNN leaves (the in-place channels unwritten) is compared as the caller's buffer holds them ...
    written = ref.make_outputs(spec)
    written["Y1"][:, :16] = y.half()
    seen = ref.comparable_outputs(spec, written, inputs)["Y1"]
    assert not seen.isnan().any() and torch.equal(seen[:, 16:], inputs["Y0"])
    # ... but a value cuDNN did write there is kept, so a wrong one still fails, and a conv element left NaN shows
    written["Y1"][0, 16, 0, 0] = 7.0
    written["Y1"][0, 0, 0, 0] = float("nan")
    seen = ref.comparable_outputs(spec, written, inputs)["Y1"]
    assert seen[0, 16, 0, 0] == 7.0 and seen[0, 0, 0, 0].isnan()
    assert ref.comparable_outputs(cl.ConvReductionSpec(**SMALL), {"R": out}, {}) == {"R": out}


def test_conv_dgrad_relu_reference_masks_by_the_forward_input() -> None:
    spec = cl.ConvDgradReluSpec(**SMALL, stride=2, padding=1)
    inputs = ref.make_inputs(spec, seed=5)
    dx = torch.nn.grad.conv2d_input([2, 8, 6, 6], inputs["W"].double(), inputs["DY"].double(), stride=2, padding=1)
    want = torch.where(inputs["X"].double() > 0, dx, torch.zeros_like(dx))
    out = ref.reference_outputs(spec, inputs)["DX"]
    torch.testing.assert_close(out, want)
    assert 0.3 < (out == 0).double().mean() < 0.7  # the mask drops about half
    assert (dx > 0).double().mean() > 0.5  # nonnegative dy and filter: the gradient is clearly nonzero
    assert RF.torch_op(spec, inputs)().dtype == torch.float16


@pytest.mark.parametrize("mode", ["add", "mul", "min", "max", "amax", "avg", "norm1", "norm2", "mul_no_zeros"])
def test_reduction_reference_per_mode(mode: str) -> None:
    spec = cl.ReductionSpec(n=2, c=8, h=5, w=6, mode=mode, axes="nhw", layout="NCHW")
    x = RR.make_inputs(spec, seed=2)["X"]
    xd = x.double()
    per_channel = xd.transpose(0, 1).reshape(8, -1)
    nz = torch.where(per_channel == 0, torch.ones_like(per_channel), per_channel)
    want = {"add": per_channel.sum(1), "mul": per_channel.prod(1), "min": per_channel.min(1).values,
            "max": per_channel.max(1).values, "amax": per_channel.abs().max(1).values, "avg": per_channel.mean(1),
            "norm1": per_channel.abs().sum(1), "norm2": per_channel.norm(dim=1), "mul_no_zeros": nz.prod(1)}[mode]
    out = RR.reference_outputs(spec, {"X": x})["R"]
    assert out.shape == (1, 8, 1, 1) and out.dtype == torch.float64
    torch.testing.assert_close(out.flatten(), want)
    assert (out.abs() > 0.05).all()
    if mode == "mul_no_zeros":
        assert (x == 0).any()  # the zeros it skips are there
    torch.testing.assert_close(RR.torch_op(spec, {"X": x})().double(), out, rtol=1e-5, atol=1e-5)
