"""The float64 reference of 3-D convolutions agrees with independent math: conv3d against an explicit sum over the
filter (unfold), dgrad and wgrad against float64 autograd through conv3d; depthwise and strided shapes too."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudnn_lab.reference import make_inputs, make_outputs, reference_outputs, torch_op
from cudnn_lab.specs import Conv3dSpec
from cudnn_lab.specs.conv3d import triple

SMALL = dict(n=2, c=4, d=4, h=5, w=6, k=6, dtype="fp32")
GEOMS = {"plain": {}, "strided": dict(stride=(1, 2, 2), padding=(1, 0, 0), t=3, r=1, s=1),
         "dilated": dict(dilation=(1, 2, 1), padding=(1, 2, 1)), "grouped": dict(groups=2)}


def explicit_conv(x: torch.Tensor, w: torch.Tensor, spec: Conv3dSpec) -> torch.Tensor:
    """y[n, k, z, y, x] = sum over c, t, r, s of x_padded[...] * w[k, c, t, r, s], by loops over the filter taps."""
    (pd, ph, pw), (sd, sh, sw), (dd, dh, dw) = triple(spec.padding), triple(spec.stride), triple(spec.dilation)
    xp = F.pad(x, (pw, pw, ph, ph, pd, pd))
    od, p, q = spec.out_dhw
    g, cg, kg = spec.groups, spec.c // spec.groups, spec.k // spec.groups
    y = torch.zeros(spec.y_dims, dtype=torch.float64)
    for gi in range(g):
        for a in range(spec.t):
            for b in range(spec.r):
                for e in range(spec.s):
                    patch = xp[:, gi * cg:(gi + 1) * cg, a * dd: a * dd + sd * (od - 1) + 1: sd,
                               b * dh: b * dh + sh * (p - 1) + 1: sh, e * dw: e * dw + sw * (q - 1) + 1: sw]
                    y[:, gi * kg:(gi + 1) * kg] += torch.einsum("nczyx,kc->nkzyx", patch,
                                                                w[gi * kg:(gi + 1) * kg, :, a, b, e])
    return y


@pytest.mark.parametrize("geom", list(GEOMS))
def test_fprop_matches_an_explicit_sum(geom: str) -> None:
    spec = Conv3dSpec(**SMALL, **GEOMS[geom])
    inputs = make_inputs(spec)
    y = reference_outputs(spec, inputs)["Y"]
    torch.testing.assert_close(y, explicit_conv(inputs["X"].double(), inputs["W"].double(), spec),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("geom", list(GEOMS))
@pytest.mark.parametrize("layout", ["NCDHW", "NDHWC"])
def test_gradients_match_float64_autograd(geom: str, layout: str) -> None:
    for direction, out in (("dgrad", "DX"), ("wgrad", "DW")):
        spec = Conv3dSpec(**SMALL, **GEOMS[geom], direction=direction, layout=layout)
        inputs = make_inputs(spec, seed=3)
        got = reference_outputs(spec, inputs)[out]
        fwd = spec.replace(direction="fprop")
        x = (inputs["X"] if "X" in inputs else torch.rand(spec.x_dims)).double().requires_grad_(True)
        w = (inputs["W"] if "W" in inputs else torch.rand(spec.w_dims)).double().requires_grad_(True)
        y = F.conv3d(x, w, stride=triple(fwd.stride), padding=triple(fwd.padding), dilation=triple(fwd.dilation),
                     groups=fwd.groups)
        gx, gw = torch.autograd.grad(y, (x, w), inputs["DY"].double())
        torch.testing.assert_close(got, gx if out == "DX" else gw, rtol=1e-11, atol=1e-11)


def test_inputs_and_outputs_take_the_layout_and_the_torch_op_runs() -> None:
    spec = Conv3dSpec(**{**SMALL, "dtype": "fp32"}, layout="NDHWC", epilogue=("bias", "relu"))
    inputs = make_inputs(spec)
    assert inputs["X"].stride() == spec.tensor_strides()["X"]
    assert inputs["X"].is_contiguous(memory_format=torch.channels_last_3d)
    out = make_outputs(spec)["Y"]
    assert out.stride() == spec.tensor_strides()["Y"] and torch.isnan(out).all()
    eager = torch_op(spec, inputs)()
    torch.testing.assert_close(eager.double(), reference_outputs(spec, inputs)["Y"], rtol=1e-5, atol=1e-5)
    assert (eager >= 0).all()  # the ReLU ran
