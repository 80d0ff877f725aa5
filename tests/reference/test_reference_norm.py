"""The normalization reference: inputs in the graph's dtypes and strides (epsilon/momentum on the host), NaN-poisoned
outputs, the float64 reference of every output against PyTorch's own float64 ops and autograd, the statistics'
definitions, and PyTorch's op in the native dtype."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from cudnn_lab import reference as ref
from cudnn_lab.errors import SpecError
from cudnn_lab.numerics import compare
from cudnn_lab.reference import norm as rnorm
from cudnn_lab.reference.common import check_cpu_work
from cudnn_lab.specs import ConvSpec, NormSpec
from cudnn_lab.specs.norm import KINDS, PHASES

SIZES = dict(rows=12, features=40, n=3, c=8, h=4, w=5)
TORCH_DT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def spec_of(kind: str, phase: str, dtype: str = "fp32", **kw) -> NormSpec:
    layout = kw.pop("layout", "NHWC")
    return NormSpec(kind=kind, phase=phase, dtype=dtype, layout=layout, **{**SIZES, **kw})


ALL = [(k, p) for k in KINDS for p in PHASES]


def f64(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {n: t.double() for n, t in inputs.items()}


# --- inputs and outputs ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,phase", ALL)
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_inputs_have_the_graphs_dtypes_strides_and_shapes(kind: str, phase: str, dtype: str) -> None:
    spec = spec_of(kind, phase, dtype, layout="NHWC" if kind != "instancenorm" else "NCHW")
    inputs = ref.make_inputs(spec)
    assert list(inputs) == list(spec.input_names())
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    for name, t in inputs.items():
        assert tuple(t.shape) == shapes[name], name
        assert t.dtype == TORCH_DT[dtypes[name]], name
        assert t.device.type == "cpu"
        if name not in ("epsilon", "momentum"):
            assert tuple(t.stride()) == strides[name], name
            assert torch.isfinite(t).all() and (t != 0).any(), name


def test_scalars_are_host_float32_with_the_specs_values() -> None:
    spec = spec_of("batchnorm", "training", "bf16", epsilon=1e-3, momentum=0.25)
    inputs = ref.make_inputs(spec, device="meta")  # every other tensor goes to the device; scalars stay home
    for name, value in (("epsilon", 1e-3), ("momentum", 0.25)):
        t = inputs[name]
        assert t.device.type == "cpu" and t.dtype == torch.float32 and tuple(t.shape) == (1, 1, 1, 1)
        assert t.item() == pytest.approx(value)
    assert inputs["X"].device.type == "meta"


def test_ranges_keep_scales_and_variances_positive() -> None:
    inputs = ref.make_inputs(spec_of("batchnorm", "training"))
    for name in ("scale", "running_var"):
        assert (inputs[name] >= 0.5).all() and (inputs[name] <= 1.5).all()
    inputs = ref.make_inputs(spec_of("batchnorm", "inference"))
    assert (inputs["inv_var"] >= 0.5).all()


def test_inputs_are_reproducible_and_seeded() -> None:
    spec = spec_of("layernorm", "training", residual=True)
    a, b, c = ref.make_inputs(spec, seed=1), ref.make_inputs(spec, seed=1), ref.make_inputs(spec, seed=2)
    for name in ("X", "residual", "scale", "bias"):
        assert torch.equal(a[name], b[name]) and not torch.equal(a[name], c[name])
    assert not torch.equal(a["X"], a["residual"])


@pytest.mark.parametrize("kind", KINDS)
def test_backward_statistics_are_xs_own(kind: str) -> None:
    spec = spec_of(kind, "backward", "fp16", epsilon=1e-3)
    inputs = ref.make_inputs(spec)
    x = inputs["X"].double()
    dims = rnorm.stat_dims(spec)
    if kind == "rmsnorm":
        assert "mean" not in inputs
        want_inv = torch.rsqrt(x.pow(2).mean(dim=dims, keepdim=True) + 1e-3)
    else:
        mean = x.mean(dim=dims, keepdim=True)
        torch.testing.assert_close(inputs["mean"].double(), mean.expand(inputs["mean"].shape), rtol=1e-6,
                                   atol=1e-7)
        want_inv = torch.rsqrt(x.var(dim=dims, unbiased=False, keepdim=True) + 1e-3)
    assert inputs["inv_var"].dtype == torch.float32
    torch.testing.assert_close(inputs["inv_var"].double(), want_inv.expand(inputs["inv_var"].shape), rtol=1e-6,
                               atol=0)


@pytest.mark.parametrize("kind,phase", ALL)
def test_outputs_are_nan_poisoned_in_their_dtypes_main_first(kind: str, phase: str) -> None:
    spec = spec_of(kind, phase, "bf16")
    outs = ref.make_outputs(spec)
    assert list(outs) == list(spec.output_names())
    for name, t in outs.items():
        assert t.isnan().all(), name
        assert t.dtype == TORCH_DT[spec.tensor_dtypes()[name]], name
        assert tuple(t.stride()) == spec.tensor_strides()[name], name


# --- the float64 reference against PyTorch's float64 ops ------------------------------------------------------------

@pytest.mark.parametrize("phase", ["training", "inference"])
@pytest.mark.parametrize("residual", [False, True])
def test_layernorm_matches_torch(phase: str, residual: bool) -> None:
    spec = spec_of("layernorm", phase, "fp16", residual=residual, epsilon=1e-3)
    inputs = ref.make_inputs(spec)
    got = ref.reference_outputs(spec, inputs)
    t = f64(inputs)
    x = t["X"] + t["residual"] if residual else t["X"]
    want = F.layer_norm(x, (40, 1, 1), t["scale"].reshape(40, 1, 1), t["bias"].reshape(40, 1, 1), 1e-3)
    assert got["Y"].dtype == torch.float64
    torch.testing.assert_close(got["Y"], want, rtol=1e-12, atol=1e-12)
    if phase == "training":
        torch.testing.assert_close(got["mean"], x.mean(dim=(1, 2, 3), keepdim=True))
        torch.testing.assert_close(got["inv_var"],
                                   torch.rsqrt(x.var(dim=(1, 2, 3), unbiased=False, keepdim=True) + 1e-3))
    else:
        assert list(got) == ["Y"]


@pytest.mark.parametrize("residual", [False, True])
def test_rmsnorm_matches_torch_plus_bias(residual: bool) -> None:
    spec = spec_of("rmsnorm", "training", residual=residual)
    inputs = ref.make_inputs(spec)
    got = ref.reference_outputs(spec, inputs)
    t = f64(inputs)
    x = t["X"] + t["residual"] if residual else t["X"]
    want = F.rms_norm(x, (40, 1, 1), t["scale"].reshape(40, 1, 1), 1e-5) + t["bias"]
    torch.testing.assert_close(got["Y"], want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got["inv_var"], torch.rsqrt(x.pow(2).mean(dim=(1, 2, 3), keepdim=True) + 1e-5))
    assert list(got) == ["Y", "inv_var"]


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_batchnorm_training_matches_torch_and_its_running_statistics(layout: str) -> None:
    spec = spec_of("batchnorm", "training", "fp16", layout=layout, momentum=0.3, epsilon=1e-4)
    inputs = ref.make_inputs(spec)
    got = ref.reference_outputs(spec, inputs)
    t = f64(inputs)
    rm, rv = t["running_mean"].reshape(8).clone(), t["running_var"].reshape(8).clone()
    y = F.batch_norm(t["X"], rm, rv, t["scale"].reshape(8), t["bias"].reshape(8), True, 0.3, 1e-4)
    torch.testing.assert_close(got["Y"], y, rtol=1e-12, atol=1e-12)
    # PyTorch updates running_var with the unbiased variance, as cuDNN does (checked on an H200)
    torch.testing.assert_close(got["next_running_mean"].reshape(8), rm, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got["next_running_var"].reshape(8), rv, rtol=1e-12, atol=1e-12)
    x = t["X"]
    torch.testing.assert_close(got["mean"], x.mean(dim=(0, 2, 3), keepdim=True))
    torch.testing.assert_close(got["inv_var"],
                               torch.rsqrt(x.var(dim=(0, 2, 3), unbiased=False, keepdim=True) + 1e-4))


def test_batchnorm_inference_matches_torch_eval_mode() -> None:
    spec = spec_of("batchnorm", "inference", "bf16", epsilon=1e-3)
    inputs = ref.make_inputs(spec)
    got = ref.reference_outputs(spec, inputs)["Y"]
    t = f64(inputs)
    var = t["inv_var"].pow(-2) - 1e-3  # the running variance that inv_var stands for
    want = F.batch_norm(t["X"], t["mean"].reshape(8), var.reshape(8), t["scale"].reshape(8), t["bias"].reshape(8),
                        False, 0.0, 1e-3)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("phase", ["training", "inference"])
def test_instancenorm_matches_torch(phase: str) -> None:
    spec = spec_of("instancenorm", phase, layout="NCHW")
    inputs = ref.make_inputs(spec)
    got = ref.reference_outputs(spec, inputs)
    t = f64(inputs)
    want = F.instance_norm(t["X"], weight=t["scale"].reshape(8), bias=t["bias"].reshape(8), eps=1e-5)
    torch.testing.assert_close(got["Y"], want, rtol=1e-12, atol=1e-12)
    if phase == "training":
        assert got["mean"].shape == (3, 8, 1, 1)
        torch.testing.assert_close(got["inv_var"],
                                   torch.rsqrt(t["X"].var(dim=(2, 3), unbiased=False, keepdim=True) + 1e-5))


# --- backward against float64 autograd -------------------------------------------------------------------------------

def _forward_for_autograd(spec: NormSpec, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    c, eps = spec.channels, spec.epsilon
    if spec.kind == "layernorm":
        return F.layer_norm(x, (c, 1, 1), w.reshape(c, 1, 1), b.reshape(c, 1, 1), eps)
    if spec.kind == "rmsnorm":
        return F.rms_norm(x, (c, 1, 1), w.reshape(c, 1, 1), eps) + b
    if spec.kind == "batchnorm":
        return F.batch_norm(x, None, None, w.reshape(c), b.reshape(c), True, 0.0, eps)
    return F.instance_norm(x, weight=w.reshape(c), bias=b.reshape(c), eps=eps)


def _autograd_backward(spec: NormSpec, t: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """(dx, dscale, dbias) of the float64 forward by autograd, from the inputs' X, scale and DY (a zero bias)."""
    x = t["X"].clone().requires_grad_(True)
    w = t["scale"].clone().requires_grad_(True)
    b = torch.zeros_like(w, requires_grad=True)
    return torch.autograd.grad(_forward_for_autograd(spec, x, w, b), (x, w, b), t["DY"])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_backward_matches_float64_autograd(kind: str, layout: str) -> None:
    spec = spec_of(kind, "backward", "fp32", layout=layout, epsilon=1e-3)
    inputs = ref.make_inputs(spec, seed=5)
    got = ref.reference_outputs(spec, inputs)
    t = f64(inputs)
    dx, dw, db = _autograd_backward(spec, t)
    # the saved statistics are float32-rounded, so agreement is at float32's level, not float64's
    torch.testing.assert_close(got["DX"], dx, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got["DScale"], dw, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got["DBias"], db, rtol=1e-12, atol=1e-12)
    assert list(got) == ["DX", "DScale", "DBias"]
    assert got["DScale"].shape == (1, spec.channels, 1, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_backward_formula_is_exact_with_exact_statistics(kind: str) -> None:
    spec = spec_of(kind, "backward", "fp32")
    t = f64(ref.make_inputs(spec, seed=2))
    mean, _, inv_var = rnorm._statistics64(spec, t["X"])
    t["inv_var"] = inv_var.expand(spec.stats_dims)
    if kind != "rmsnorm":
        t["mean"] = mean.expand(spec.stats_dims)
    got = rnorm.backward64(spec, t)
    dx, dw, db = _autograd_backward(spec, t)
    torch.testing.assert_close(got["DX"], dx, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(got["DScale"], dw, rtol=1e-10, atol=1e-12)


# --- PyTorch's own op, native dtype ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,phase", ALL)
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_torch_op_runs_in_the_native_dtype_and_agrees(kind: str, phase: str, dtype: str) -> None:
    spec = spec_of(kind, phase, dtype, residual=kind in ("layernorm", "rmsnorm") and phase == "training")
    inputs = ref.make_inputs(spec)
    fn = ref.torch_op(spec, inputs)
    out = fn()
    main = spec.output_names()[0]
    want = ref.reference_outputs(spec, inputs)[main]
    assert out.dtype == TORCH_DT[dtype] and out.shape == want.shape
    metrics = compare(out, want, dtype)
    assert metrics.passed_cudnn, metrics.summary()
    assert torch.equal(fn(), out) or kind == "batchnorm"  # repeatable (batchnorm updates its running copies)


def test_torch_op_does_not_touch_the_inputs() -> None:
    spec = spec_of("batchnorm", "training")
    inputs = ref.make_inputs(spec)
    before = {n: t.clone() for n, t in inputs.items()}
    ref.torch_op(spec, inputs)()
    for name, t in inputs.items():
        assert torch.equal(t, before[name]), name


# --- errors ------------------------------------------------------------------------------------------------------

def test_dispatch_goes_through_the_registry() -> None:
    spec = spec_of("rmsnorm", "inference")
    assert ref.REFERENCES[spec].reference_outputs is rnorm.reference_outputs


def test_wrong_spec_type_is_refused() -> None:
    with pytest.raises(SpecError):
        rnorm.make_inputs(ConvSpec())


def test_missing_or_misshapen_inputs_are_named() -> None:
    spec = spec_of("layernorm", "training")
    inputs = ref.make_inputs(spec)
    with pytest.raises(SpecError) as err:
        ref.reference_outputs(spec, {n: t for n, t in inputs.items() if n != "bias"})
    assert "bias" in str(err.value)
    with pytest.raises(SpecError) as err:
        ref.reference_outputs(spec, {**inputs, "X": inputs["X"][:3]})
    assert err.value.field == "inputs['X']"


def test_host_scalars_may_sit_beside_device_tensors() -> None:
    spec = spec_of("layernorm", "training")
    inputs = ref.make_inputs(spec, device="meta")
    names, host = spec.input_names(), set(spec.scalars())
    assert ref.check_inputs(spec, inputs, names, host).type == "meta"
    with pytest.raises(SpecError) as err:
        bad = {**inputs, "scale": torch.empty(inputs["scale"].shape, dtype=torch.float16)}
        ref.check_inputs(spec, bad, names, host)
    assert "one device" in str(err.value)


def test_cpu_size_limit_names_the_size_field() -> None:
    spec = NormSpec(kind="layernorm", phase="backward", rows=1 << 20, features=1 << 11)  # 2.6e10 FLOPs
    with pytest.raises(SpecError) as err:
        check_cpu_work(spec, torch.device("cpu"), "rows")
    assert err.value.field == "rows" and "CPU" in str(err.value)
    check_cpu_work(spec, torch.device("meta"), "rows")  # only the CPU is limited
    fake = {n: torch.empty(1).expand(d) for n, d in spec.tensor_shapes().items()}  # right shapes, no memory
    with pytest.raises(SpecError) as err:
        ref.reference_outputs(spec, fake)
    assert err.value.field == "rows"


def test_every_combination_has_a_reference_for_every_output() -> None:
    for kind, phase in itertools.product(KINDS, PHASES):
        spec = spec_of(kind, phase, "fp16", rows=4, features=8, n=2, c=8, h=2, w=3)
        inputs = ref.make_inputs(spec)
        outs, want = ref.make_outputs(spec), ref.reference_outputs(spec, inputs)
        assert list(outs) == list(want)
        for name in outs:
            assert outs[name].shape == want[name].shape and want[name].dtype == torch.float64, (kind, phase, name)
            assert torch.isfinite(want[name]).all()
