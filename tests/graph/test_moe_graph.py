"""The MoE grouped GEMM as a real frontend graph without a GPU: one MOE_GROUPED_MATMUL node in mode NONE fed the
tokens, the column-major expert weights and the int32 offsets, as ``inspect()`` shows it; its drawing and its
script's reference code."""

from __future__ import annotations

import torch

import cudnn_lab as cl
import cudnn_lab.reference as ref
from cudnn_lab.graph import drawing, recipe_for
from cudnn_lab.graph.families import reference_code
from cudnn_lab.specs.moe import MoeSpec
from scripting import load

SMALL = dict(experts=4, tokens=64, hidden_in=32, hidden_out=48)


def test_graph_is_one_moe_node_with_the_frontends_ports() -> None:
    info = cl.build_graph(MoeSpec(**SMALL)).inspect()
    assert [n["type"] for n in info["nodes"]] == ["MOE_GROUPED_MATMUL"]
    node = info["nodes"][0]
    assert node["inputs"] == {"token": "X", "weight": "W", "first_token_offset": "offsets"}
    assert node["outputs"] == {"OUT_0": "Y"} and str(node["params"]["mode"]).endswith("NONE")
    t = info["tensors"]
    assert t["W"]["dim"] == [4, 32, 48] and t["W"]["stride"] == [32 * 48, 1, 32]
    assert t["offsets"]["dim"] == [4, 1, 1] and t["offsets"]["dtype"] == "data_type.INT32"
    assert t["Y"]["dim"] == [1, 64, 48] and t["Y"]["is_virtual"] is False


def test_recipe_takes_the_spec_dtype_with_fp32_compute() -> None:
    recipe = recipe_for(MoeSpec(**SMALL, dtype="fp16"))
    assert (recipe.io_dtype, recipe.intermediate_dtype, recipe.compute_dtype) == ("fp16", "fp32", "fp32")
    assert recipe.tensor("X").dtype == "fp16" and recipe.tensor("offsets").dtype == "int32"
    assert cl.build_graph(MoeSpec(**SMALL, dtype="fp16")).inspect()["context"]["io_data_type"] == "data_type.HALF"


def test_drawing_shows_the_three_inputs_and_the_label() -> None:
    spec = MoeSpec(**SMALL, distribution="zipf", skew=2.0)
    source = drawing(spec).source
    assert all(name in source for name in ("<b>X</b>", "<b>W</b>", "<b>offsets</b>", "<b>Y</b>"))
    assert spec.label() in source


def test_script_reference_agrees_with_the_kit_reference() -> None:
    spec = MoeSpec(**SMALL, distribution="counts", counts=(0, 40, 23, 1))
    lines = reference_code(spec)
    assert lines[-1] == "return y"
    inputs = ref.make_inputs(spec)
    got = load(cl.build_graph(spec).to_script())["reference"](inputs)
    assert torch.equal(got, ref.reference(spec, inputs))
