"""build_graph(SdpaSpec): the real cuDNN frontend graph (inspect() needs no GPU) holds one sdpa / sdpa_backward
node with the spec's keyword arguments, and every tensor with its dims, the layout's strides and its dtype; the
exported script rebuilds the same graph and its reference agrees with the kit's."""

from __future__ import annotations

import json
import math

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph.sdpa import recipe, reference_code
from cudnn_lab.reference import make_inputs, reference_outputs
from cudnn_lab.reference.sdpa import attention
from cudnn_lab.specs import SdpaSpec
from scripting import (CUDNN_DT, assert_drawing_shows_every_tensor, assert_float_compute_context,
                       assert_flat_reference_code, load, rebuilt_by_script, run_without_gpu, script_and_kit_main_output)

BASE = dict(batch=2, heads=4, seq_q=16, seq_kv=24, head_dim=64)

SPECS = {
    "fwd_inference_bshd_fp16": SdpaSpec(**BASE),
    "fwd_inference_bhsd_bf16_causal": SdpaSpec(**BASE, layout="BHSD", dtype="bf16", causal=True),
    "fwd_training_bshd_gqa_window": SdpaSpec(**BASE, kv_heads=2, causal=True, sliding_window=5,
                                             direction="fwd_training"),
    "fwd_training_bhsd_mqa_d128": SdpaSpec(**{**BASE, "head_dim": 128}, kv_heads=1, layout="BHSD",
                                           direction="fwd_training", attn_scale=0.3),
    "bwd_bshd_fp16": SdpaSpec(**BASE, direction="bwd"),
    "bwd_bhsd_bf16_gqa_causal": SdpaSpec(**BASE, kv_heads=2, layout="BHSD", dtype="bf16", causal=True,
                                         direction="bwd"),
    "bwd_bshd_window_d256": SdpaSpec(**{**BASE, "head_dim": 256}, causal=True, sliding_window=3, direction="bwd"),
    # issue 38: odd head sizes and MLA (Q/K 192, V/O 128), forward and backward
    "fwd_inference_d96": SdpaSpec(**{**BASE, "head_dim": 96}, causal=True),
    "bwd_bhsd_bf16_d80": SdpaSpec(**{**BASE, "head_dim": 80}, layout="BHSD", dtype="bf16", direction="bwd"),
    "fwd_training_mla_192_128": SdpaSpec(**{**BASE, "head_dim": 192}, head_dim_v=128, causal=True,
                                         direction="fwd_training"),
    "bwd_mla_gqa_192_128": SdpaSpec(**{**BASE, "head_dim": 192}, head_dim_v=128, kv_heads=2, dtype="bf16",
                                    causal=True, direction="bwd"),
}


@pytest.fixture(params=list(SPECS), ids=list(SPECS))
def spec(request) -> SdpaSpec:
    return SPECS[request.param]


def torch_strides(spec: SdpaSpec, name: str) -> tuple[int, ...]:
    """PyTorch's own strides: BSHD is a contiguous [b, s, h, d] tensor transposed to [b, h, s, d]."""
    dims = spec.tensor_shapes()[name]
    if name == "Stats" or spec.layout == "BHSD":
        return torch.empty(dims).stride()
    b, h, s, d = dims
    return torch.empty(b, s, h, d).transpose(1, 2).stride()



# --- the graph ---------------------------------------------------------------------------------------------------

def test_every_tensor_has_dims_strides_and_dtype(spec: SdpaSpec) -> None:
    tensors = cl.build_graph(spec).inspect()["tensors"]
    shapes, dtypes = spec.tensor_shapes(), spec.tensor_dtypes()
    assert set(tensors) == set(shapes)
    for name, t in tensors.items():
        assert tuple(t["dim"]) == shapes[name], name
        assert tuple(t["stride"]) == torch_strides(spec, name), name
        assert t["dtype"] == CUDNN_DT[dtypes[name]], name
        assert t["is_virtual"] is False, name


def test_kv_tensors_have_kv_heads(spec: SdpaSpec) -> None:
    tensors = cl.build_graph(spec).inspect()["tensors"]
    for name in ("K", "V", "dK", "dV"):
        if name in tensors:
            assert tensors[name]["dim"][1] == spec.h_kv
    assert tensors["Q"]["dim"][1] == spec.heads


def test_one_node_with_its_ports(spec: SdpaSpec) -> None:
    (node,) = cl.build_graph(spec).inspect()["nodes"]
    if spec.direction == "bwd":
        assert node["type"] == "SDPA_BWD" and node["name"] == "sdpa_backward"
        assert node["inputs"] == {"q": "Q", "k": "K", "v": "V", "o": "O", "dO": "dO", "stats": "Stats"}
        assert node["outputs"] == {"dQ": "dQ", "dK": "dK", "dV": "dV"}
    else:
        assert node["type"] == "SDPA" and node["name"] == "sdpa"
        assert node["inputs"] == {"q": "Q", "k": "K", "v": "V"}
        want = {"O": "O", "Stats": "Stats"} if spec.direction == "fwd_training" else {"O": "O"}
        assert node["outputs"] == want


def test_node_params(spec: SdpaSpec) -> None:
    (node,) = cl.build_graph(spec).inspect()["nodes"]
    params = node["params"]
    assert params["attn_scale"] == pytest.approx(spec.scale)
    if spec.direction == "bwd":
        assert "generate_stats" not in params and "is_inference" not in params
    else:
        assert params["generate_stats"] is (spec.direction == "fwd_training")
    if spec.causal:
        assert str(params["diagonal_alignment"]) == "diagonal_alignment.TOP_LEFT"  # a live cudnn enum
        assert params["diagonal_band_right_bound"] == 0
    else:
        assert "diagonal_alignment" not in params and "diagonal_band_right_bound" not in params
    if spec.sliding_window:
        assert params["diagonal_band_left_bound"] == spec.sliding_window
    else:
        assert "diagonal_band_left_bound" not in params
    # the deprecated spellings are never used
    assert not {"use_causal_mask", "sliding_window_length", "is_inference"} & set(params)


def test_default_scale_is_one_over_sqrt_head_dim() -> None:
    (node,) = cl.build_graph(SdpaSpec(**{**BASE, "head_dim": 128})).inspect()["nodes"]
    assert node["params"]["attn_scale"] == 1 / math.sqrt(128)


def test_graph_context_types(spec: SdpaSpec) -> None:
    assert_float_compute_context(spec)


def test_roles_and_recipe_outputs_in_order(spec: SdpaSpec) -> None:
    lab = cl.build_graph(spec)
    ins, _ = spec.io_names()
    assert [t.name for t in lab.recipe.inputs] == list(ins)
    assert [t.name for t in lab.recipe.outputs] == list(spec.output_names())
    assert set(lab.roles.values()) == {"input", "output"}


def test_inference_drops_the_stats_result() -> None:
    (op,) = recipe(SPECS["fwd_inference_bshd_fp16"]).ops
    assert op.results == ("O", "")  # the frontend still returns (O, None)


def test_drawing_shows_every_tensor(spec: SdpaSpec) -> None:
    assert_drawing_shows_every_tensor(spec)


# --- the exported script -----------------------------------------------------------------------------------------

def test_script_compiles_and_rebuilds_the_same_graph(spec: SdpaSpec) -> None:
    ns, _ = rebuilt_by_script(spec)
    assert set(ns["INPUTS"]) == set(spec.io_names()[0])


def test_script_stats_tensor_is_float32() -> None:
    ns = load(cl.build_graph(SPECS["bwd_bshd_fp16"]).to_script())
    assert ns["INPUTS"]["Stats"][2] == "torch.float32"
    ns = load(cl.build_graph(SPECS["fwd_training_bshd_gqa_window"]).to_script())
    assert ns["OUTPUTS"]["Stats"][2] == "torch.float32"


def test_reference_code_ends_with_return_y(spec: SdpaSpec) -> None:
    assert_flat_reference_code(reference_code(spec))


def test_script_reference_agrees_with_kit_reference(spec: SdpaSpec) -> None:
    got, want = script_and_kit_main_output(spec)
    if spec.direction == "bwd":
        # the script uses the O and Stats it is given (rounded to fp16/bf16 and fp32 by make_inputs)
        assert ((got - want).norm() / want.norm()).item() < 2e-2
    else:
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_script_backward_reference_is_exact_with_exact_o_and_stats() -> None:
    spec = SPECS["bwd_bhsd_bf16_gqa_causal"]
    inputs = {n: t.double() for n, t in make_inputs(spec, seed=1).items()}
    o, stats = attention(spec, inputs["Q"], inputs["K"], inputs["V"])
    inputs["O"], inputs["Stats"] = o, stats
    got = load(cl.build_graph(spec).to_script())["reference"](inputs)
    torch.testing.assert_close(got, reference_outputs(spec, inputs)["dQ"], rtol=1e-10, atol=1e-12)


@pytest.mark.slow
def test_script_run_without_gpu_prints_the_graph(tmp_path) -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: this checks the no-GPU path of the script")
    spec = SPECS["fwd_training_bshd_gqa_window"]  # diagonal_alignment is an enum: printed as its name
    printed, stdout = run_without_gpu(spec, tmp_path)
    assert "No CUDA GPU" in stdout
    assert printed["nodes"][0]["params"]["diagonal_alignment"] == "diagonal_alignment.TOP_LEFT"
    assert printed == json.loads(json.dumps(cl.build_graph(spec).inspect(), default=str))
