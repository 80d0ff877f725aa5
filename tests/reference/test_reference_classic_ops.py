"""The references of softmax, activations and tensor transforms on the CPU: each against an independent formula,
PyTorch's eager op writing the output's layout and dtype, seeded inputs, poisoned outputs."""

from __future__ import annotations

import pytest
import torch

from cudnn_lab.reference import activation as A
from cudnn_lab.reference import softmax as S
from cudnn_lab.reference import transform as T
from cudnn_lab.specs.activation import ACTIVATIONS, ActivationSpec
from cudnn_lab.specs.softmax import SoftmaxSpec
from cudnn_lab.specs.transform import TransformSpec

SMALL = dict(n=2, c=3, h=4, w=5)


@pytest.mark.parametrize("mode", ["channel", "instance"])
@pytest.mark.parametrize("algo", ["accurate", "fast", "log"])
def test_softmax_reference_against_the_formula(mode: str, algo: str) -> None:
    spec = SoftmaxSpec(**SMALL, mode=mode, algo=algo, dtype="fp32")
    inputs = S.make_inputs(spec)
    x = inputs["X"].double()
    dims = (1,) if mode == "channel" else (1, 2, 3)
    e = torch.exp(x - x.amax(dim=dims, keepdim=True))
    want = e / e.sum(dim=dims, keepdim=True)
    got = S.reference_outputs(spec, inputs)["Y"]
    torch.testing.assert_close(got, want.log() if algo == "log" else want, rtol=1e-12, atol=1e-12)
    eager = S.torch_op(spec, inputs)()
    assert eager.dtype == torch.float32
    torch.testing.assert_close(eager.double(), got, rtol=1e-5, atol=1e-6)
    assert inputs["X"].stride() == spec.tensor_strides()["X"] and inputs["X"].abs().max() > 3


@pytest.mark.parametrize("mode", list(ACTIVATIONS))
def test_activation_reference_against_the_formula(mode: str) -> None:
    spec = ActivationSpec(**SMALL, mode=mode, dtype="fp32", coef={"elu": 0.7, "swish": 1.5}.get(mode))
    inputs = A.make_inputs(spec)
    x, c = inputs["X"].double(), spec.coef
    want = {"relu": x.clamp(min=0), "sigmoid": 1 / (1 + torch.exp(-x)), "tanh": torch.tanh(x),
            "clipped_relu": x.clamp(0, c), "elu": torch.where(x > 0, x, c * (torch.exp(x) - 1)) if c else x,
            "swish": x / (1 + torch.exp(-c * x)) if c else x}[mode]
    got = A.reference_outputs(spec, inputs)["Y"]
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(A.torch_op(spec, inputs)().double(), got, rtol=1e-5, atol=1e-6)
    assert (x > 6).any() and (x < 0).any()  # clipped ReLU's ceiling and the negative side are both exercised


def test_conversion_reference_is_the_rounded_value_and_eager_writes_the_output_layout() -> None:
    spec = TransformSpec(**SMALL, layout="NCHW", out_layout="NHWC", dtype="fp32", out_dtype="fp16")
    inputs = T.make_inputs(spec)
    ref = T.reference_outputs(spec, inputs)["Y"]
    assert torch.equal(ref, inputs["X"].half().double()) and not torch.equal(ref, inputs["X"].double())
    y = T.torch_op(spec, inputs)()
    assert y.dtype == torch.float16 and y.stride() == spec.tensor_strides()["Y"]
    out = T.make_outputs(spec)["Y"]
    assert out.dtype == torch.float16 and out.stride() == (60, 1, 15, 3) and torch.isnan(out).all()


@pytest.mark.parametrize("kw", [dict(kind="transpose", permutation="0312"), dict(kind="reshape"),
                                dict(kind="slice", axis=3, start=2, stop=5),
                                dict(kind="concatenate", axis=2, concat_size=2)])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_graph_kind_references_follow_the_logical_dims(kw: dict, layout: str) -> None:
    spec = TransformSpec(**SMALL, layout=layout, dtype="fp32", **kw)
    inputs = T.make_inputs(spec)
    x = inputs["X"]
    ref = T.reference_outputs(spec, inputs)["Y"]
    assert tuple(ref.shape) == spec.y_dims
    if spec.kind == "transpose":
        assert ref[1, 4, 0, 2] == x[1, 0, 2, 4]
    elif spec.kind == "reshape":
        assert ref[1, 2, 7] == x[1, 2, 1, 2]
    elif spec.kind == "slice":
        assert ref[0, 0, 0, 0] == x[0, 0, 0, 2] and ref[-1, -1, -1, -1] == x[1, 2, 3, 4]
        assert tuple(ref.shape) == (2, 3, 4, 3)
    else:
        assert torch.equal(ref[:, :, 4:], inputs["X2"].double()) and torch.equal(ref[:, :, :4], x.double())
    y = T.torch_op(spec, inputs)()
    assert torch.equal(y.double(), ref) and y.stride() == spec.tensor_strides()["Y"]
