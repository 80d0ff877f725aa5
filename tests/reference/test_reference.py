"""The PyTorch side: input layouts, the poisoned output, the float64 reference and PyTorch eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudnn_lab.errors import SpecError
from cudnn_lab.numerics import compare
from cudnn_lab.reference import (input_names, make_inputs, make_output, reference, tensor_strides, torch_eager,
                                 torch_op)
from cudnn_lab.specs import ConvSpec, MatmulSpec, layout_strides


def conv(**kw) -> ConvSpec:
    base = dict(n=2, c=4, h=7, w=6, k=6, r=3, s=3, padding=1, stride=1, dilation=1, dtype="fp32", layout="NCHW")
    base.update(kw)
    return ConvSpec(**base)


def mm(**kw) -> MatmulSpec:
    base = dict(batch=2, m=5, n=7, k=3, dtype="fp32")
    base.update(kw)
    return MatmulSpec(**base)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
def test_conv_input_strides_follow_layout(layout, direction):
    spec = conv(layout=layout, direction=direction)
    shapes = spec.tensor_shapes()
    for name, t in make_inputs(spec).items():
        assert t.stride() == layout_strides(shapes[name], layout), name


def test_nhwc_inputs_are_channels_last():
    x = make_inputs(conv(layout="NHWC"))["X"]
    assert x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes_live_in_the_strides(ta, tb):
    spec = mm(transpose_a=ta, transpose_b=tb)
    t = make_inputs(spec)
    b, m, n, k = spec.batch, spec.m, spec.n, spec.k
    assert t["A"].shape == (b, m, k) and t["B"].shape == (b, k, n)
    assert t["A"].stride() == ((m * k, 1, m) if ta else (m * k, k, 1))
    assert t["B"].stride() == ((k * n, 1, k) if tb else (k * n, n, 1))


def test_conv_epilogue_operands_are_made():
    spec = conv(layout="NHWC", epilogue=("bias", "scale", "add", "relu"))
    t = make_inputs(spec)
    assert input_names(spec) == ("X", "W", "bias", "scale", "residual")
    assert set(t) == set(input_names(spec))
    for name in ("bias", "scale", "residual"):
        assert t[name].shape == spec.tensor_shapes()[name]
        assert t[name].stride() == tensor_strides(spec, name)


def test_inputs_are_never_all_zero_and_in_the_spec_dtype():
    for dtype, tdt in (("fp16", torch.float16), ("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for name, t in make_inputs(conv(dtype=dtype, epilogue=("bias",))).items():
            assert t.dtype == tdt
            assert (t != 0).float().mean() > 0.99, name


def test_inputs_are_reproducible_and_seeded():
    spec = conv()
    a, b, c = make_inputs(spec, seed=3), make_inputs(spec, seed=3), make_inputs(spec, seed=4)
    assert torch.equal(a["X"], b["X"])
    assert not torch.equal(a["X"], c["X"])


def test_adding_an_epilogue_keeps_the_main_inputs():
    plain, fused = make_inputs(conv()), make_inputs(conv(epilogue=("bias", "relu")))
    assert torch.equal(plain["X"], fused["X"]) and torch.equal(plain["W"], fused["W"])


def test_filter_is_scaled_so_output_stays_order_one():
    spec = conv(c=64, k=32, h=8, w=8, n=2)
    y = reference(spec, make_inputs(spec))
    assert 0.05 < y.std() < 2.0


def test_output_is_poisoned_with_nan_in_the_graphs_layout():
    spec = conv(layout="NHWC", dtype="fp16")
    y = make_output(spec)
    assert y.shape == spec.y_dims and y.dtype == torch.float16
    assert y.stride() == layout_strides(spec.y_dims, "NHWC")
    assert torch.isnan(y).all()


def test_matmul_output_is_poisoned():
    assert torch.isnan(make_output(mm(dtype="bf16"))).all()


def test_conv_fprop_reference_is_float64_conv2d():
    spec = conv(stride=2, dilation=(1, 2), padding=(1, 2))
    t = make_inputs(spec)
    y = reference(spec, t)
    assert y.dtype == torch.float64
    want = F.conv2d(t["X"].double(), t["W"].double(), stride=2, padding=(1, 2), dilation=(1, 2))
    assert torch.equal(y, want)


def _autograd_grads(spec: ConvSpec, x: torch.Tensor, w: torch.Tensor, dy: torch.Tensor):
    x = x.double().detach().requires_grad_()
    w = w.double().detach().requires_grad_()
    y = F.conv2d(x, w, stride=spec.stride, padding=spec.padding, dilation=spec.dilation, groups=spec.groups)
    y.backward(dy.double())
    return x.grad, w.grad


@pytest.mark.parametrize("geom", [dict(), dict(stride=2), dict(stride=2, h=8, dilation=2, padding=2),
                                  dict(groups=2)])
def test_dgrad_reference_agrees_with_autograd(geom):
    spec = conv(direction="dgrad", **geom)
    t = make_inputs(spec)
    x = torch.zeros(spec.x_dims)
    dx, _ = _autograd_grads(spec, x, t["W"], t["DY"])
    torch.testing.assert_close(reference(spec, t), dx)


@pytest.mark.parametrize("geom", [dict(), dict(stride=2), dict(stride=2, h=8, dilation=2, padding=2),
                                  dict(groups=2)])
def test_wgrad_reference_agrees_with_autograd(geom):
    spec = conv(direction="wgrad", **geom)
    t = make_inputs(spec)
    _, dw = _autograd_grads(spec, t["X"], torch.zeros(spec.w_dims), t["DY"])
    torch.testing.assert_close(reference(spec, t), dw)


def test_grouped_conv_reference_matches_per_group_convs():
    spec = conv(c=4, k=6, groups=2)
    t = make_inputs(spec)
    x, w = t["X"].double(), t["W"].double()
    halves = [F.conv2d(x[:, 2 * g:2 * g + 2], w[3 * g:3 * g + 3], padding=1) for g in range(2)]
    torch.testing.assert_close(reference(spec, t), torch.cat(halves, dim=1))


def test_conv_epilogue_bias_scale_add_relu():
    spec = conv(layout="NHWC", epilogue=("bias", "scale", "add", "relu"))
    t = make_inputs(spec)
    y = F.conv2d(t["X"].double(), t["W"].double(), padding=1)
    want = torch.relu((y + t["bias"].double()) * t["scale"].double() + t["residual"].double())
    torch.testing.assert_close(reference(spec, t), want)


@pytest.mark.parametrize("step,fn", [("gelu", lambda y: 0.5 * y * (1 + torch.erf(y / 2 ** 0.5))),
                                     ("sigmoid", torch.sigmoid), ("tanh", torch.tanh)])
def test_conv_activation_epilogues(step, fn):
    spec = conv(epilogue=(step,))
    t = make_inputs(spec)
    torch.testing.assert_close(reference(spec, t), fn(F.conv2d(t["X"].double(), t["W"].double(), padding=1)))


def test_epilogue_order_matters():
    relu_add, add_relu = conv(epilogue=("relu", "add")), conv(epilogue=("add", "relu"))
    t = make_inputs(relu_add)
    y1, y2 = reference(relu_add, t), reference(add_relu, t)
    assert not torch.allclose(y1, y2)
    assert (y2 >= 0).all() and (y1 < 0).any()  # relu last clamps; add last may go negative


def test_matmul_reference_with_transposes_and_bias():
    spec = mm(transpose_a=True, transpose_b=True, epilogue=("bias",))
    t = make_inputs(spec)
    want = t["A"].double().contiguous() @ t["B"].double().contiguous() + t["bias"].double()
    torch.testing.assert_close(reference(spec, t), want)
    assert reference(spec, t).shape == spec.tensor_shapes()["C"]


@pytest.mark.parametrize("spec", [conv(), conv(layout="NHWC", epilogue=("bias", "relu")), conv(direction="dgrad"),
                                  conv(direction="wgrad"), mm(transpose_a=True)], ids=str)
def test_torch_eager_fp32_is_within_torch_band_on_cpu(spec):
    t = make_inputs(spec)
    out = torch_eager(spec, t)
    assert out.dtype == torch.float32
    assert compare(out, reference(spec, t), "fp32").passed_torch


def test_torch_op_is_a_reusable_callable():
    spec = mm()
    t = make_inputs(spec)
    op = torch_op(spec, t)
    assert torch.equal(op(), op())


def test_cpu_reference_refuses_huge_problems():
    spec = ConvSpec(n=64, c=256, h=56, w=56, k=256, r=3, s=3, dtype="fp16")
    with pytest.raises(SpecError) as info:
        reference(spec, _fake_inputs(spec))
    assert info.value.field == "n" and "too long" in str(info.value)


def test_cpu_flop_limit_is_a_keyword():
    spec = mm(batch=1, m=4, n=4, k=4)
    t = make_inputs(spec)
    with pytest.raises(SpecError, match="batch"):
        reference(spec, t, cpu_flop_limit=10)


def test_missing_inputs_raise_a_clear_error():
    spec = conv(epilogue=("add",))
    t = make_inputs(spec)
    del t["residual"]
    with pytest.raises(SpecError, match="residual"):
        reference(spec, t)


def _fake_inputs(spec):
    """Zero-stride expanded tensors of the right shapes: no memory, enough to reach the size check."""
    shapes = spec.tensor_shapes()
    return {n: torch.zeros(1, dtype=torch.float16).expand(shapes[n]) for n in input_names(spec)}


@st.composite
def small_conv_specs(draw) -> ConvSpec:
    groups = draw(st.sampled_from([1, 2]))
    r, s = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ph, pw = draw(st.integers(0, dh * (r - 1))), draw(st.integers(0, dw * (s - 1)))
    h = draw(st.integers(max(1, dh * (r - 1) + 1 - 2 * ph), 9))
    w = draw(st.integers(max(1, dw * (s - 1) + 1 - 2 * pw), 9))
    return ConvSpec(n=draw(st.integers(1, 2)), c=groups * draw(st.integers(1, 3)), h=h, w=w,
                    k=groups * draw(st.integers(1, 3)), r=r, s=s, padding=(ph, pw),
                    stride=(draw(st.integers(1, 3)), draw(st.integers(1, 3))), dilation=(dh, dw), groups=groups,
                    layout=draw(st.sampled_from(["NCHW", "NHWC"])), dtype="fp32",
                    direction=draw(st.sampled_from(["fprop", "dgrad", "wgrad"])))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_conv_specs())
def test_reference_shape_matches_spec(spec):
    out = reference(spec, make_inputs(spec))
    assert tuple(out.shape) == spec.tensor_shapes()[spec.io_names()[1]]


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("direction", ["dgrad", "wgrad"])
def test_conv_gradients_equal_autograd_in_the_layout_memory_format(layout: str, direction: str) -> None:
    """dgrad/wgrad call convolution_backward as autograd does (placeholder in the layout's memory format): the
    same numbers as autograd through conv2d, and NHWC results stay channels_last."""
    from cudnn_lab.reference import conv as conv_ref

    spec = ConvSpec(n=2, c=8, h=9, w=7, k=16, r=3, s=3, padding=1, stride=2, layout=layout, dtype="fp32",
                    direction=direction)
    t = {k: v.double() for k, v in conv_ref.make_inputs(spec).items()}
    mine = conv_ref.compute(spec, t)
    x = (t["X"] if "X" in t else torch.randn(spec.x_dims, dtype=torch.float64)).clone().requires_grad_(True)
    w = (t["W"] if "W" in t else torch.randn(spec.w_dims, dtype=torch.float64)).clone().requires_grad_(True)
    torch.nn.functional.conv2d(x, w, stride=2, padding=1).backward(t["DY"])
    expected = x.grad if direction == "dgrad" else w.grad
    torch.testing.assert_close(mine, expected, rtol=1e-12, atol=1e-12)
    if layout == "NHWC" and direction == "dgrad":
        assert mine.is_contiguous(memory_format=torch.channels_last)


def test_each_pytorch_sdpa_backend_is_forced_alone_and_a_refusal_says_pytorchs_reason() -> None:
    """reference/sdpa.backend_ops on the CPU: the math backend runs and agrees with the float64 reference; cuDNN's
    backend cannot run on the CPU and says so in PyTorch's words (the path a GPU's refusals take too)."""
    from cudnn_lab.reference.sdpa import SDPA_BACKENDS, backend_ops, reference_outputs
    from cudnn_lab.specs import SdpaSpec

    spec = SdpaSpec(batch=1, heads=2, seq_q=16, seq_kv=16, head_dim=16, causal=True, dtype="fp16")
    inputs = make_inputs(spec)
    ops = backend_ops(spec, inputs)
    assert set(ops) == set(SDPA_BACKENDS)
    out = ops["sdpa_math"]()
    ref = reference_outputs(spec, inputs)["O"]
    assert torch.allclose(out.double(), ref.double().reshape(out.shape), atol=2e-2)
    with pytest.raises(RuntimeError, match="CUDNN_ATTENTION backend refused this shape: .+"):
        ops["sdpa_cudnn"]()
