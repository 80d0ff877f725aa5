"""Fusion beyond epilogues as real frontend graphs without a GPU: conv_fprop + genstats, and the scale-bias-relu
prologue before conv_fprop (optionally with genstats), as ``inspect()`` shows them; their scripts' reference code."""

from __future__ import annotations

import torch

import cudnn_lab as cl
from cudnn_lab.graph import fusion as gfusion
from cudnn_lab.graph import drawing
from cudnn_lab.reference import fusion as rfusion
from cudnn_lab.specs.fusion import ConvGenstatsSpec, ConvPrologueSpec

SMALL = dict(n=2, c=8, h=6, w=6, k=16)


def test_conv_genstats_graph() -> None:
    info = cl.build_graph(ConvGenstatsSpec(**SMALL)).inspect()
    assert [n["type"] for n in info["nodes"]] == ["CONV_FPROP", "GENSTATS"]
    genstats = info["nodes"][1]
    assert genstats["inputs"] == {"input": "Y"} and genstats["outputs"] == {"SUM": "SUM", "SQ_SUM": "SQ_SUM"}
    t = info["tensors"]
    assert t["Y"]["is_virtual"] is False and t["Y"]["dtype"] == "data_type.HALF"  # y is written and read by genstats
    assert t["SUM"]["dim"] == [1, 16, 1, 1] and t["SQ_SUM"]["dtype"] == "data_type.FLOAT"
    assert t["X"]["stride"] == [288, 1, 48, 8]


def test_prologue_graph_feeds_the_conv_from_virtual_pointwise_results() -> None:
    spec = ConvPrologueSpec(**SMALL, dtype="bf16", param_dtype="fp32")
    info = cl.build_graph(spec).inspect()
    assert [n["name"] for n in info["nodes"]] == ["scale", "bias", "relu", "conv_fprop"]
    t = info["tensors"]
    assert all(t[f"{m}::Y"]["is_virtual"] for m in ("scale", "bias", "relu"))
    assert info["nodes"][3]["inputs"]["image"] == "relu::Y"
    assert t["scale"]["dtype"] == "data_type.FLOAT" and t["X"]["dtype"] == "data_type.BFLOAT16"
    recipe = cl.build_graph(spec).recipe
    # the conv's image (virtual) in the data's type: with float32 intermediates 9.19 had no engine (FINDINGS.md)
    assert recipe.intermediate_dtype == "bf16" and recipe.tensor("relu::Y").dtype is None
    assert "intermediate_data_type=cudnn.data_type.BFLOAT16" in cl.build_graph(spec).to_script().replace(" ", "")
    assert all(dict(op.params)["compute_data_type"].path == "data_type.FLOAT" for op in recipe.ops)
    stats = ConvPrologueSpec(**SMALL, dtype="fp16", param_dtype="fp16", genstats=True)
    assert [n["name"] for n in cl.build_graph(stats).inspect()["nodes"]][-1] == "genstats"
    assert "scale+bias+relu->conv+genstats" in drawing(stats).source


def test_scripts_reference_code_agrees_with_the_reference() -> None:
    for spec, code in ((ConvGenstatsSpec(**SMALL), gfusion.genstats_code),
                       (ConvPrologueSpec(**SMALL, padding=0, stride=2), gfusion.prologue_code)):
        inputs = rfusion.make_inputs(spec)
        namespace: dict = {"torch": torch}
        body = "\n".join(f"    {line}" for line in code(spec))
        exec(f"def reference(inputs):\n{body}\n", namespace)  # noqa: S102 - the kit's own generated code
        torch.testing.assert_close(namespace["reference"](inputs), rfusion.reference_outputs(spec, inputs)["Y"])
        assert "def build_graph" in cl.build_graph(spec).to_script()
