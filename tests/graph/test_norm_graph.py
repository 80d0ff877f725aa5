"""build_graph(NormSpec): the real cuDNN frontend graph (inspect() needs no GPU) holds the norm node (or the fused
residual add, or batchnorm inference's pointwise chain) with the frontend's ports and parameters, every tensor with
its dims, strides and own dtype, epsilon/momentum passed by value; the exported script rebuilds the same graph and its
reference agrees with the kit's."""

from __future__ import annotations

import itertools

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph.norm import recipe, reference_code
from cudnn_lab.reference import make_inputs
from cudnn_lab.reference.norm import backward64
from cudnn_lab.specs import NormSpec
from cudnn_lab.specs.norm import KINDS, PHASES
from scripting import (CUDNN_DT, assert_drawing_shows_every_tensor, assert_float_compute_context,
                       assert_flat_reference_code, load, rebuilt_by_script, script_and_kit_main_output)

SIZES = dict(rows=6, features=16, n=2, c=8, h=3, w=5)


def _layout(kind: str, phase: str, i: int) -> str:
    return "NHWC" if (kind, phase) == ("batchnorm", "inference") or i % 2 == 0 else "NCHW"


SPECS = {f"{k}_{p}_{dt}": NormSpec(kind=k, phase=p, dtype=dt, layout=_layout(k, p, i), **SIZES)
         for i, (k, p, dt) in enumerate(itertools.product(KINDS, PHASES, ["fp16", "bf16", "fp32"]))}
SPECS["layernorm_training_residual"] = NormSpec(residual=True, epsilon=1e-3, **SIZES)
SPECS["rmsnorm_inference_residual_bf16"] = NormSpec(kind="rmsnorm", phase="inference", residual=True, dtype="bf16",
                                                    **SIZES)

NODE_TYPES = {("layernorm", "training"): "LAYERNORM", ("layernorm", "inference"): "LAYERNORM",
              ("layernorm", "backward"): "LAYERNORM_BWD", ("rmsnorm", "training"): "RMSNORM",
              ("rmsnorm", "inference"): "RMSNORM", ("rmsnorm", "backward"): "RMSNORM_BWD",
              ("batchnorm", "training"): "BATCHNORM", ("batchnorm", "backward"): "BATCHNORM_BWD",
              ("instancenorm", "training"): "INSTANCENORM", ("instancenorm", "inference"): "INSTANCENORM",
              ("instancenorm", "backward"): "INSTANCENORM_BWD"}


@pytest.fixture(params=list(SPECS), ids=list(SPECS))
def spec(request) -> NormSpec:
    return SPECS[request.param]


def torch_strides(spec: NormSpec, name: str) -> tuple[int, ...]:
    """PyTorch's own strides: channels_last for x-like tensors of batchnorm/instancenorm in NHWC and for every
    layernorm/rmsnorm tensor (as the frontend's samples make them); contiguous otherwise."""
    dims = spec.tensor_shapes()[name]
    if spec.kind in ("layernorm", "rmsnorm") or spec.layout == "NHWC":
        return torch.empty(dims).to(memory_format=torch.channels_last).stride()
    return torch.empty(dims).stride()



def _norm_node(spec: NormSpec) -> dict:
    nodes = cl.build_graph(spec).inspect()["nodes"]
    return next(n for n in nodes if n["type"] != "POINTWISE")


# --- the graph ---------------------------------------------------------------------------------------------------

def test_every_stored_tensor_has_dims_strides_and_its_dtype(spec: NormSpec) -> None:
    tensors = cl.build_graph(spec).inspect()["tensors"]
    shapes, dtypes = spec.tensor_shapes(), spec.tensor_dtypes()
    stored = {n for n, t in tensors.items() if not t["is_virtual"]}
    assert stored == set(shapes)
    for name in stored:
        t = tensors[name]
        assert tuple(t["dim"]) == shapes[name], name
        assert tuple(t["stride"]) == torch_strides(spec, name), name
        assert t["dtype"] == CUDNN_DT[dtypes[name]], name


def test_statistics_and_scalars_are_float32_whatever_the_dtype(spec: NormSpec) -> None:
    tensors = cl.build_graph(spec).inspect()["tensors"]
    for name in ("mean", "inv_var", "running_mean", "running_var", "next_running_mean", "next_running_var",
                 "epsilon", "momentum"):
        if name in tensors:
            assert tensors[name]["dtype"] == "data_type.FLOAT", name
    if spec.kind == "batchnorm":
        for name in ("scale", "bias", "DScale", "DBias"):
            if name in tensors:
                assert tensors[name]["dtype"] == "data_type.FLOAT", name


def test_epsilon_and_momentum_are_passed_by_value(spec: NormSpec) -> None:
    lab = cl.build_graph(spec)
    for name, t in lab.tensors.items():
        by_value = name in ("epsilon", "momentum")
        assert t.is_pass_by_value is by_value, name
        if by_value:
            assert t.dim == [1, 1, 1, 1]
            assert lab.recipe.tensor(name).value == spec.scalars()[name]
    assert [n for n in ("epsilon", "momentum") if n in lab.tensors] == list(spec.scalars())


def test_virtual_tensors_only_inside_fused_chains(spec: NormSpec) -> None:
    tensors = cl.build_graph(spec).inspect()["tensors"]
    virtual = sorted(n for n, t in tensors.items() if t["is_virtual"])
    if spec.residual:
        assert virtual == ["add::Y"]
    elif (spec.kind, spec.phase) == ("batchnorm", "inference"):
        assert virtual == ["mul_inv_var::Y", "mul_scale::Y", "sub_mean::Y"]
    else:
        assert virtual == []
    for name in virtual:
        assert tuple(tensors[name]["dim"]) == spec.x_dims


# Batchnorm inference is built as pointwise ops: see test_batchnorm_inference_is_a_pointwise_chain.
NODE_SPECS = [name for name, s in SPECS.items() if (s.kind, s.phase) != ("batchnorm", "inference")]


@pytest.mark.parametrize("name", NODE_SPECS)
def test_norm_node_ports_and_parameters(name: str) -> None:
    spec = SPECS[name]
    node = _norm_node(spec)
    assert node["type"] == NODE_TYPES[(spec.kind, spec.phase)]
    source = "add::Y" if spec.residual else "X"
    if spec.phase == "backward":
        want = {"grad": "DY", "input": "X", "scale": "scale", "inv_variance": "inv_var"}
        if spec.kind != "rmsnorm":
            want["mean"] = "mean"
        assert node["inputs"] == want
        assert node["outputs"] == {"DX": "DX", "DScale": "DScale", "DBias": "DBias"}
        return
    outputs = {n: n for n in spec.output_names()}  # the frontend's port names are the kit's tensor names
    assert node["outputs"] == outputs
    if spec.kind == "batchnorm":
        assert node["inputs"] == {"input": "X", "scale": "scale", "bias": "bias", "in_running_mean": "running_mean",
                                  "in_running_var": "running_var", "epsilon": "epsilon", "momentum": "momentum"}
        assert node["params"] == {}  # batchnorm has only a training phase
        return
    assert node["inputs"] == {"input": source, "scale": "scale", "bias": "bias", "epsilon": "epsilon"}
    phase = "TRAINING" if spec.phase == "training" else "INFERENCE"
    assert str(node["params"]["norm_forward_phase"]) == f"norm_forward_phase.{phase}"  # a live cudnn enum


def test_batchnorm_inference_is_a_pointwise_chain() -> None:
    spec = SPECS["batchnorm_inference_fp16"]
    nodes = cl.build_graph(spec).inspect()["nodes"]
    assert [n["type"] for n in nodes] == ["POINTWISE"] * 4
    assert [n["params"]["mode"] for n in nodes] == ["sub", "mul", "mul", "add"]
    assert [n["inputs"]["IN_1"] for n in nodes] == ["mean", "inv_var", "scale", "bias"]
    assert [n["inputs"]["IN_0"] for n in nodes] == ["X", "sub_mean::Y", "mul_inv_var::Y", "mul_scale::Y"]
    assert nodes[-1]["outputs"] == {"OUT_0": "Y"}


def test_residual_add_feeds_the_norm() -> None:
    nodes = cl.build_graph(SPECS["layernorm_training_residual"]).inspect()["nodes"]
    assert [n["type"] for n in nodes] == ["POINTWISE", "LAYERNORM"]
    assert nodes[0]["params"]["mode"] == "add"
    assert nodes[0]["inputs"] == {"IN_0": "X", "IN_1": "residual"}
    assert nodes[1]["inputs"]["input"] == "add::Y"


def test_graph_context_types(spec: NormSpec) -> None:
    assert_float_compute_context(spec)


def test_roles_and_recipe_order(spec: NormSpec) -> None:
    lab = cl.build_graph(spec)
    assert [t.name for t in lab.recipe.inputs] == list(spec.input_names())
    assert [t.name for t in lab.recipe.outputs] == list(spec.output_names())


def test_inference_drops_the_statistics_results() -> None:
    (op,) = recipe(SPECS["layernorm_inference_fp16"]).ops
    assert op.results == ("Y", "", "")  # the frontend still returns (Y, None, None)
    (op,) = recipe(SPECS["rmsnorm_inference_fp32"]).ops
    assert op.results == ("Y", "")
    (op,) = recipe(SPECS["rmsnorm_backward_fp16"]).ops
    assert ("has_dbias", True) in op.params


def test_drawing_shows_every_tensor(spec: NormSpec) -> None:
    assert_drawing_shows_every_tensor(spec)


# --- the exported script -----------------------------------------------------------------------------------------

def test_script_compiles_and_rebuilds_the_same_graph(spec: NormSpec) -> None:
    ns, tensors = rebuilt_by_script(spec)
    assert list(ns["INPUTS"]) == list(spec.input_names())
    for name, (_dims, _strides, _dtype, value) in ns["INPUTS"].items():
        assert value == spec.scalars().get(name)
        assert tensors[name].is_pass_by_value is (value is not None)


def test_reference_code_ends_with_return_y(spec: NormSpec) -> None:
    assert_flat_reference_code(reference_code(spec))


def test_script_reference_agrees_with_kit_reference(spec: NormSpec) -> None:
    got, want = script_and_kit_main_output(spec)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm", "batchnorm", "instancenorm"])
def test_script_backward_uses_the_statistics_it_is_given(kind: str) -> None:
    # The script feeds random mean/inv_var; its reference must be cuDNN's formula with those, not x's own stats.
    spec = NormSpec(kind=kind, phase="backward", dtype="fp32", **SIZES)
    inputs = make_inputs(spec, seed=1)
    gen = torch.Generator().manual_seed(0)
    for name in ("mean", "inv_var"):
        if name in inputs:
            inputs[name] = torch.rand(inputs[name].shape, generator=gen) + 0.5
    got = load(cl.build_graph(spec).to_script())["reference"](inputs)
    want = backward64(spec, {n: t.double() for n, t in inputs.items()})["DX"]
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
