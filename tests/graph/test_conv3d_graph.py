"""build_graph(Conv3dSpec): the real cuDNN frontend graph (inspect() needs no GPU) holds a conv_fprop / conv_dgrad /
conv_wgrad node on 5-D tensors with padding/stride/dilation as 3-lists and the layout's strides, then the epilogue;
the exported script's float64 reference agrees with the kit's."""

from __future__ import annotations

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph import drawing
from cudnn_lab.graph.families import reference_code
from cudnn_lab.reference import make_inputs, reference_outputs
from cudnn_lab.specs import Conv3dSpec
from scripting import load

SMALL = dict(n=2, c=8, d=5, h=6, w=7, k=16)
SPECS = {
    "fprop_ndhwc_fp16_bias_relu": Conv3dSpec(**SMALL, epilogue=("bias", "relu")),
    "fprop_ncdhw_fp32_strided": Conv3dSpec(**SMALL, layout="NCDHW", dtype="fp32", stride=(1, 2, 2),
                                           padding=(1, 0, 0), t=3, r=1, s=1),
    "dgrad_ndhwc_bf16_dilated": Conv3dSpec(**SMALL, direction="dgrad", dtype="bf16", dilation=(1, 2, 2),
                                           padding=(1, 2, 2)),
    "wgrad_ncdhw_fp16": Conv3dSpec(**SMALL, direction="wgrad", layout="NCDHW"),
    "fprop_depthwise_scale_add": Conv3dSpec(**{**SMALL, "k": 8}, groups=8, epilogue=("scale", "add")),
}


@pytest.fixture(params=list(SPECS), ids=list(SPECS))
def spec(request) -> Conv3dSpec:
    return SPECS[request.param]


def test_every_tensor_is_declared_with_its_dims_and_strides(spec: Conv3dSpec) -> None:
    tensors = cl.build_graph(spec).inspect()["tensors"]
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    for name in shapes:
        assert tuple(tensors[name]["dim"]) == shapes[name], name
        assert tuple(tensors[name]["stride"]) == strides[name], name
        assert len(tensors[name]["dim"]) == 5


def test_the_conv_node_takes_3_lists(spec: Conv3dSpec) -> None:
    nodes = cl.build_graph(spec).inspect()["nodes"]
    conv = nodes[0]
    assert conv["type"] == f"CONV_{spec.direction.upper()}"
    from cudnn_lab.specs.conv3d import triple
    assert conv["params"]["padding"] == list(triple(spec.padding))
    assert conv["params"]["stride"] == list(triple(spec.stride))
    assert conv["params"]["dilation"] == list(triple(spec.dilation))
    assert [n["type"] for n in nodes[1:]] == ["POINTWISE"] * len(spec.epilogue)


def test_the_drawing_names_the_5d_layout(spec: Conv3dSpec) -> None:
    src = drawing(spec).source
    assert spec.layout in src and "X" in src or "DY" in src


def test_the_scripts_reference_agrees_with_the_kits(spec: Conv3dSpec) -> None:
    ns = load(cl.build_graph(spec).to_script())
    inputs = make_inputs(spec)
    got = ns["reference"](inputs)
    want = reference_outputs(spec, inputs)[spec.io_names()[1]]
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    assert reference_code(spec)[-1] == "return y"
