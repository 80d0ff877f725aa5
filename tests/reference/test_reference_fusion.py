"""The fusion references on the CPU: y as conv2d of the (prologue-transformed) x, the statistics as y's per-channel
sum and sum of squares, inputs chosen so every channel's statistics are far from zero."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from cudnn_lab.reference import fusion as R
from cudnn_lab.specs.fusion import ConvGenstatsSpec, ConvPrologueSpec

SMALL = dict(n=2, c=8, h=6, w=6, k=16)


def test_genstats_reference() -> None:
    spec = ConvGenstatsSpec(**SMALL, stride=2, padding=0)
    inputs = R.make_inputs(spec, seed=4)
    out = R.reference_outputs(spec, inputs)
    y = F.conv2d(inputs["X"].double(), inputs["W"].double(), stride=2)
    torch.testing.assert_close(out["Y"], y)
    torch.testing.assert_close(out["SUM"].flatten(), y.sum((0, 2, 3)))
    torch.testing.assert_close(out["SQ_SUM"].flatten(), (y * y).sum((0, 2, 3)))
    assert out["SUM"].shape == (1, 16, 1, 1)
    assert (out["SUM"] > 0.1 * y.numel() / 16 * y.mean()).all()  # no channel's sum is near zero
    assert inputs["X"].min() >= 0 and inputs["W"].stride() == spec.tensor_strides()["W"]
    outs = R.make_outputs(spec)
    assert outs["SUM"].dtype == torch.float32 and outs["Y"].dtype == torch.float16
    assert all(torch.isnan(t).all() for t in outs.values())


def test_prologue_reference_applies_scale_bias_relu_per_input_channel() -> None:
    spec = ConvPrologueSpec(**SMALL, param_dtype="fp16", genstats=True, dtype="fp16")  # 9.19: fp16 only
    inputs = R.make_inputs(spec, seed=2)
    out = R.reference_outputs(spec, inputs)
    x = torch.relu(inputs["X"].double() * inputs["scale"].double() + inputs["bias"].double())
    assert (x == 0).float().mean() > 0.1  # the ReLU does something
    y = F.conv2d(x, inputs["W"].double(), padding=1)
    torch.testing.assert_close(out["Y"], y)
    torch.testing.assert_close(out["SQ_SUM"].flatten(), (y * y).sum((0, 2, 3)))
    assert inputs["scale"].dtype == torch.float16 and inputs["X"].dtype == torch.float16
    eager_y = R.torch_op(spec, inputs)()
    assert eager_y.dtype == torch.float16
    torch.testing.assert_close(eager_y.double(), y, rtol=5e-2, atol=5e-2)
    stats = R.compute(spec, inputs)
    assert stats["SUM"].dtype == torch.float32 and stats["Y"].dtype == torch.float16
