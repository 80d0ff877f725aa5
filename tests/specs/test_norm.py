"""NormSpec: validation (every bad value names its field and value, unsupported combinations say what is
supported), tensors per kind and phase, dtypes, strides, FLOPs, bytes, label and round-trips."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudnn_lab as cl
from cudnn_lab.errors import CudnnLabError, SpecError
from cudnn_lab.specs import NormSpec, spec_from_dict, spec_from_json
from cudnn_lab.specs.base import MAX_ELEMENTS
from cudnn_lab.specs.norm import FLOPS_PER_ELEMENT, KINDS, PHASES

SMALL = dict(rows=6, features=16, n=2, c=8, h=3, w=5)
ALL = [(k, p) for k in KINDS for p in PHASES]


def small(**kw) -> NormSpec:
    return NormSpec(**{**SMALL, **kw})


# --- construction and round-trips --------------------------------------------------------------------------------

def test_defaults_are_a_valid_bert_layernorm() -> None:
    spec = NormSpec()
    assert (spec.kind, spec.phase, spec.dtype) == ("layernorm", "training", "fp16")
    assert spec.x_dims == (2048, 768, 1, 1)


def test_exported_from_the_package() -> None:
    assert cl.NormSpec is NormSpec
    assert "NormSpec" in cl.__all__
    assert NormSpec.op == "norm"


@pytest.mark.parametrize("kind,phase", ALL)
def test_every_kind_and_phase_round_trips(kind: str, phase: str) -> None:
    spec = small(kind=kind, phase=phase, dtype="bf16", epsilon=1e-3, momentum=0.25)
    assert spec_from_json(spec.to_json()) == spec
    again = spec_from_dict(spec.to_dict())
    assert type(again) is NormSpec and again == spec and hash(again) == hash(spec)


@st.composite
def norm_specs(draw) -> NormSpec:
    kind = draw(st.sampled_from(KINDS))
    phase = draw(st.sampled_from(PHASES))
    dtype = draw(st.sampled_from(["fp16", "bf16", "fp32"]))
    layout = "NHWC" if (kind, phase) == ("batchnorm", "inference") else draw(st.sampled_from(["NCHW", "NHWC"]))
    step = 4 if dtype == "fp32" else 8
    c = step * draw(st.integers(1, 8)) if kind == "batchnorm" and phase != "inference" else draw(st.integers(1, 64))
    residual = kind in ("layernorm", "rmsnorm") and phase != "backward" and draw(st.booleans())
    return NormSpec(kind=kind, phase=phase, rows=draw(st.integers(1, 300)), features=draw(st.integers(1, 4096)),
                    n=draw(st.integers(1, 8)), c=c, h=draw(st.integers(2, 30)), w=draw(st.integers(1, 30)),
                    layout=layout, dtype=dtype, epsilon=draw(st.floats(1e-12, 1.0)),
                    momentum=draw(st.floats(0.0, 1.0)), residual=residual)


@settings(max_examples=150, deadline=None)
@given(norm_specs())
def test_random_valid_norm_spec_round_trips_and_is_consistent(spec: NormSpec) -> None:
    assert spec_from_json(spec.to_json()) == spec
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    assert set(shapes) == set(strides) == set(dtypes) == {*spec.input_names(), *spec.output_names()}
    assert spec.io_names() == (spec.input_names(), spec.output_names()[0])
    assert spec.flops() > 0 and spec.min_bytes() > 0


def test_replace_revalidates() -> None:
    spec = small(kind="batchnorm")
    with pytest.raises(SpecError) as err:
        spec.replace(c=12)
    assert err.value.field == "c"


# --- validation: each bad value names its field and value ----------------------------------------------------------

@pytest.mark.parametrize("field,value", [
    ("kind", "groupnorm"), ("kind", None), ("phase", "forward"), ("phase", "TRAINING"), ("dtype", "fp8"),
    ("layout", "CHWN"), ("rows", 0), ("features", -3), ("n", 0), ("c", 1.5), ("h", True), ("w", "8"),
    ("epsilon", 0), ("epsilon", -1e-5), ("epsilon", 2.0), ("epsilon", float("nan")), ("epsilon", float("inf")),
    ("epsilon", True), ("epsilon", "1e-5"), ("momentum", -0.1), ("momentum", 1.5), ("momentum", None),
    ("residual", 1), ("residual", "yes"),
])
def test_bad_values_name_field_and_value(field: str, value: object) -> None:
    with pytest.raises(SpecError) as err:
        small(**{field: value})
    assert err.value.field == field
    assert f"{field}={value!r}" in str(err.value)
    assert isinstance(err.value, CudnnLabError) and isinstance(err.value, ValueError)


def test_epsilon_and_momentum_accept_their_bounds_and_ints() -> None:
    assert small(epsilon=1).epsilon == 1.0 and isinstance(small(epsilon=1).epsilon, float)
    assert small(momentum=0).momentum == 0.0 and small(momentum=1.0).momentum == 1.0
    assert small(epsilon=1e-12).epsilon == 1e-12


@pytest.mark.parametrize("dtype,c,ok", [("fp16", 8, True), ("fp16", 12, False), ("bf16", 3, False),
                                        ("bf16", 24, True), ("fp32", 12, True), ("fp32", 3, False),
                                        ("fp32", 4, True), ("fp16", 4, False)])
@pytest.mark.parametrize("phase", ["training", "backward"])
def test_batchnorm_channels_are_16_bytes(dtype: str, c: int, ok: bool, phase: str) -> None:
    if ok:
        assert small(kind="batchnorm", phase=phase, dtype=dtype, c=c).c == c
        return
    with pytest.raises(SpecError) as err:
        small(kind="batchnorm", phase=phase, dtype=dtype, c=c)
    text = str(err.value)
    assert err.value.field == "c" and f"c={c}" in text
    assert f"multiple of {16 // (4 if dtype == 'fp32' else 2)}" in text and "instancenorm" in text


def test_batchnorm_inference_takes_any_channel_count() -> None:
    assert small(kind="batchnorm", phase="inference", c=3).c == 3


def test_batchnorm_inference_needs_nhwc_and_says_why() -> None:
    with pytest.raises(SpecError) as err:
        small(kind="batchnorm", phase="inference", layout="NCHW")
    text = str(err.value)
    assert err.value.field == "layout" and "NHWC" in text
    assert "batchnorm_inference" in text and "pointwise" in text and "float32" in text
    assert "training and backward take NCHW" in text  # what IS supported


@pytest.mark.parametrize("phase", ["training", "backward"])
def test_batchnorm_training_and_backward_take_nchw(phase: str) -> None:
    assert small(kind="batchnorm", phase=phase, layout="NCHW").layout == "NCHW"


@pytest.mark.parametrize("kind", ["batchnorm", "instancenorm"])
def test_residual_only_for_layernorm_and_rmsnorm(kind: str) -> None:
    with pytest.raises(SpecError) as err:
        small(kind=kind, residual=True)
    assert err.value.field == "residual" and "layernorm and rmsnorm" in str(err.value)


def test_residual_only_in_forward_phases() -> None:
    for kind in ("layernorm", "rmsnorm"):
        for phase in ("training", "inference"):
            assert small(kind=kind, phase=phase, residual=True).residual
        with pytest.raises(SpecError) as err:
            small(kind=kind, phase="backward", residual=True)
        assert err.value.field == "residual" and "backward" in str(err.value)


def test_degenerate_reductions_are_refused() -> None:
    with pytest.raises(SpecError) as err:
        small(kind="instancenorm", h=1, w=1)
    assert err.value.field == "h" and "h*w" in str(err.value)
    with pytest.raises(SpecError) as err:
        small(kind="batchnorm", n=1, h=1, w=1)
    assert err.value.field == "n" and "n*h*w" in str(err.value)
    assert small(kind="batchnorm", phase="backward", n=1, h=1, w=1).n == 1  # the backward takes saved stats
    assert small(kind="instancenorm", h=1, w=2).w == 2


def test_sizes_a_kind_does_not_use_are_ignored() -> None:
    # layernorm ignores n, c, h, w and layout: a batchnorm-only rule (c a multiple of 8) does not apply
    spec = small(kind="layernorm", c=3, h=1, w=1, layout="NCHW")
    assert spec.x_dims == (6, 16, 1, 1)
    assert small(kind="instancenorm", rows=1, features=1).x_dims == (2, 8, 3, 5)


def test_too_many_elements_names_the_size_field() -> None:
    with pytest.raises(SpecError) as err:
        NormSpec(rows=1 << 20, features=1 << 12)
    assert err.value.field == "rows" and str(MAX_ELEMENTS) in str(err.value)
    with pytest.raises(SpecError) as err:
        NormSpec(kind="instancenorm", n=1 << 10, c=1 << 10, h=1 << 6, w=1 << 6)
    assert err.value.field == "n"


def test_from_dict_rejects_unknown_fields() -> None:
    data = small().to_dict()
    data["groups"] = 4
    with pytest.raises(SpecError) as err:
        spec_from_dict(data)
    assert err.value.field == "groups"


# --- tensors --------------------------------------------------------------------------------------------------------

def test_layernorm_training_tensors() -> None:
    spec = small(kind="layernorm")
    assert spec.input_names() == ("X", "scale", "bias", "epsilon")
    assert spec.output_names() == ("Y", "mean", "inv_var")
    assert spec.tensor_shapes() == {"X": (6, 16, 1, 1), "scale": (1, 16, 1, 1), "bias": (1, 16, 1, 1),
                                    "epsilon": (1, 1, 1, 1), "Y": (6, 16, 1, 1), "mean": (6, 1, 1, 1),
                                    "inv_var": (6, 1, 1, 1)}
    # channels-last rows, as the frontend's samples store them
    assert spec.tensor_strides()["X"] == (16, 1, 16, 16)
    assert spec.tensor_strides()["scale"] == (16, 1, 16, 16)
    assert spec.tensor_strides()["mean"] == (1, 1, 1, 1)
    assert spec.tensor_dtypes() == {"X": "fp16", "scale": "fp16", "bias": "fp16", "epsilon": "fp32", "Y": "fp16",
                                    "mean": "fp32", "inv_var": "fp32"}
    assert spec.scalars() == {"epsilon": 1e-5}


def test_layernorm_with_residual_reads_it_after_x() -> None:
    spec = small(residual=True)
    assert spec.input_names() == ("X", "residual", "scale", "bias", "epsilon")
    assert spec.tensor_shapes()["residual"] == spec.x_dims


@pytest.mark.parametrize("phase,outs", [("training", ("Y", "inv_var")), ("inference", ("Y",)),
                                        ("backward", ("DX", "DScale", "DBias"))])
def test_rmsnorm_tensors(phase: str, outs: tuple[str, ...]) -> None:
    spec = small(kind="rmsnorm", phase=phase)
    assert spec.output_names() == outs
    if phase == "backward":
        assert spec.input_names() == ("DY", "X", "scale", "inv_var")  # no mean: rmsnorm has none


def test_batchnorm_training_tensors_are_float32_per_channel() -> None:
    spec = small(kind="batchnorm", layout="NCHW", momentum=0.3)
    assert spec.input_names() == ("X", "scale", "bias", "running_mean", "running_var", "epsilon", "momentum")
    assert spec.output_names() == ("Y", "mean", "inv_var", "next_running_mean", "next_running_var")
    shapes, dtypes = spec.tensor_shapes(), spec.tensor_dtypes()
    for name in ("scale", "bias", "running_mean", "running_var", "mean", "inv_var", "next_running_mean",
                 "next_running_var"):
        assert shapes[name] == (1, 8, 1, 1) and dtypes[name] == "fp32", name
    assert dtypes["X"] == dtypes["Y"] == "fp16"
    assert spec.tensor_strides()["X"] == (120, 15, 5, 1)
    assert spec.scalars() == {"epsilon": 1e-5, "momentum": 0.3}


def test_batchnorm_inference_reads_saved_statistics() -> None:
    spec = small(kind="batchnorm", phase="inference")
    assert spec.input_names() == ("X", "mean", "inv_var", "scale", "bias")
    assert spec.output_names() == ("Y",)
    assert spec.scalars() == {}  # epsilon is folded into inv_var
    assert spec.tensor_strides()["X"] == (120, 1, 40, 8)  # NHWC


def test_batchnorm_backward_gradients_are_float32() -> None:
    dtypes = small(kind="batchnorm", phase="backward").tensor_dtypes()
    assert dtypes["DX"] == dtypes["DY"] == "fp16"
    assert dtypes["DScale"] == dtypes["DBias"] == dtypes["scale"] == "fp32"


def test_instancenorm_statistics_per_image_and_channel() -> None:
    spec = small(kind="instancenorm")
    assert spec.tensor_shapes()["mean"] == (2, 8, 1, 1)
    assert spec.tensor_dtypes()["scale"] == "fp16" and spec.tensor_dtypes()["mean"] == "fp32"
    assert spec.reduced_elements == 15


@pytest.mark.parametrize("kind,phase", ALL)
def test_backward_mirrors_the_forward_shapes(kind: str, phase: str) -> None:
    spec = small(kind=kind, phase=phase)
    shapes = spec.tensor_shapes()
    for name in ("X", "Y", "DY", "DX"):
        if name in shapes:
            assert shapes[name] == spec.x_dims
    for name in ("scale", "bias", "DScale", "DBias"):
        if name in shapes:
            assert shapes[name] == (1, spec.channels, 1, 1)


# --- throughput model -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,phase", ALL)
def test_flops_are_per_element_estimates(kind: str, phase: str) -> None:
    spec = small(kind=kind, phase=phase)
    assert spec.flops() == FLOPS_PER_ELEMENT[(kind, phase)] * math.prod(spec.x_dims)
    assert 4 <= FLOPS_PER_ELEMENT[(kind, phase)] <= 12


def test_residual_adds_one_flop_per_element() -> None:
    assert small(residual=True).flops() - small().flops() == 6 * 16


def test_min_bytes_counts_each_tensor_in_its_dtype_without_host_scalars() -> None:
    spec = small(kind="layernorm", dtype="bf16")
    x = 6 * 16
    assert spec.min_bytes() == 2 * (x + 16 + 16 + x) + 4 * (6 + 6)
    bn = small(kind="batchnorm", dtype="fp32", c=8)
    x = 2 * 8 * 3 * 5
    assert bn.min_bytes() == 4 * (x + x) + 4 * 8 * 8


def test_label_names_what_matters() -> None:
    assert small().label() == "layernorm training fp16 6x16 eps1e-05"
    assert small(kind="rmsnorm", phase="inference", residual=True, epsilon=1e-6).label() == \
        "rmsnorm inference fp16 6x16 +residual eps1e-06"
    assert small(kind="batchnorm", layout="NCHW", momentum=0.2).label() == \
        "batchnorm training fp16 NCHW n2 c8 3x5 eps1e-05 mom0.2"
    assert small(kind="instancenorm", phase="backward", dtype="fp32").label() == \
        "instancenorm backward fp32 NHWC n2 c8 3x5"


@pytest.mark.parametrize("kind", KINDS)
def test_support_hint_says_which_shapes_run(kind: str) -> None:
    hint = small(kind=kind).support_hint()
    assert kind in hint and "[1," in hint and "float32" in hint


def test_every_combination_is_either_valid_or_refused_with_a_spec_error() -> None:
    for kind, phase, dtype, layout in itertools.product(KINDS, PHASES, ["fp16", "bf16", "fp32"], ["NCHW", "NHWC"]):
        try:
            spec = small(kind=kind, phase=phase, dtype=dtype, layout=layout)
        except SpecError as e:
            assert (kind, phase, layout) == ("batchnorm", "inference", "NCHW"), e
        else:
            assert spec.label()
