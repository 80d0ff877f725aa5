"""conv + reduction, conv + concatenate in place, conv_dgrad + relu_backward and the standalone reduction as real
frontend graphs without a GPU (``inspect()``), and their scripts' reference code against the references."""

from __future__ import annotations

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph import drawing
from cudnn_lab.graph.families import reference_code
from cudnn_lab.reference import reference_outputs
from cudnn_lab.reference import make_inputs

SMALL = dict(n=2, c=8, h=6, w=6, k=16)


def test_conv_reduction_graph_keeps_y_virtual_and_writes_float_r() -> None:
    spec = cl.ConvReductionSpec(**SMALL, mode="max", axes="nhw")
    info = cl.build_graph(spec).inspect()
    assert [n["type"] for n in info["nodes"]] == ["CONV_FPROP", "REDUCTION"]
    t = info["tensors"]
    assert t["Y"]["is_virtual"] and t["R"]["dim"] == [1, 16, 1, 1] and t["R"]["dtype"] == "data_type.FLOAT"
    assert "reduction_mode.MAX" in cl.build_graph(spec).to_script()
    assert cl.build_graph(spec.replace(axes="c")).inspect()["tensors"]["R"]["dim"] == [2, 1, 6, 6]


def test_conv_concat_graph_puts_the_other_input_in_place() -> None:
    spec = cl.ConvConcatSpec(**SMALL, k0=24, dtype="bf16")
    lab = cl.build_graph(spec)
    info = lab.inspect()
    assert [n["type"] for n in info["nodes"]] == ["CONV_FPROP", "CONCATENATE"]
    assert info["nodes"][1]["inputs"] == {"inputs_0": "Y", "inputs_1": "Y0"}
    assert info["tensors"]["Y1"]["dim"] == [2, 40, 6, 6] and info["tensors"]["Y"]["is_virtual"]
    ops = {op.method: dict(op.params) for op in lab.recipe.ops}
    assert ops["concatenate"] == {"axis": 1, "in_place_index": 1}
    assert lab.recipe.intermediate_dtype == "bf16"  # the conv's y in the data's type, as the frontend's sample


def test_conv_dgrad_relu_graph_masks_the_gradient_with_the_forward_input() -> None:
    spec = cl.ConvDgradReluSpec(**SMALL, stride=2, padding=0)
    info = cl.build_graph(spec).inspect()
    assert [n["type"] for n in info["nodes"]] == ["CONV_DGRAD", "POINTWISE"]
    assert info["nodes"][1]["inputs"] == {"IN_0": "dgrad::DX", "IN_1": "X"}
    assert info["tensors"]["dgrad::DX"]["dim"] == [2, 8, 6, 6] and info["tensors"]["DY"]["dim"] == [2, 16, 2, 2]
    assert "conv_dgrad+relu_bwd" in drawing(spec).source


@pytest.mark.parametrize("layout,strides", [("NHWC", [480, 1, 80, 8]), ("NCHW", [480, 60, 10, 1])])
def test_reduction_graph_one_node_in_the_layout(layout: str, strides: list[int]) -> None:
    spec = cl.ReductionSpec(n=2, c=8, h=6, w=10, mode="amax", axes="c", layout=layout)
    info = cl.build_graph(spec).inspect()
    assert [n["type"] for n in info["nodes"]] == ["REDUCTION"]
    assert info["tensors"]["X"]["stride"] == strides and info["tensors"]["R"]["dim"] == [2, 1, 6, 10]
    assert "reduction_mode.AMAX" in cl.build_graph(spec).to_script()


@pytest.mark.parametrize("spec", [
    cl.ConvReductionSpec(**SMALL), cl.ConvReductionSpec(**SMALL, mode="max", axes="nhw", stride=2),
    cl.ConvConcatSpec(**SMALL, k0=8), cl.ConvDgradReluSpec(**SMALL, stride=2, padding=0),
    *[cl.ReductionSpec(n=2, c=8, h=6, w=6, mode=m, axes=a)
      for m, a in (("add", "nhw"), ("mul", "hw"), ("min", "c"), ("max", "chw"), ("amax", "nchw"), ("avg", "nhw"),
                   ("norm1", "c"), ("norm2", "nhw"), ("mul_no_zeros", "nhw"))]], ids=lambda s: s.label())
def test_scripts_reference_code_agrees_with_the_reference(spec: cl.Spec) -> None:
    inputs = make_inputs(spec)
    namespace: dict = {"torch": torch}
    body = "\n".join(f"    {line}" for line in reference_code(spec))
    exec(f"def reference(inputs):\n{body}\n", namespace)  # noqa: S102 - the kit's own generated code
    main = spec.output_names()[0]
    torch.testing.assert_close(namespace["reference"](inputs).double(), reference_outputs(spec, inputs)[main])
