"""The block-scaled graph is built in the graph layer: every family whose spec names a block-scale axis registers its
product in graph/block_scale.py's registry, and a family without one is refused there by name."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.graph.block_scale import BLOCK_SCALED, block_scaled_graph
from cudnn_lab.reference.block_formats import block_format
from cudnn_lab.specs import spec_classes


def test_every_family_with_a_block_scale_axis_registers_its_block_scaled_product() -> None:
    with_axis = {cls for cls in spec_classes().values() if cls.block_scale_axis is not None}
    assert with_axis >= {cl.MatmulSpec, cl.ConvSpec}
    assert all(BLOCK_SCALED.get(cls) is not None for cls in with_axis), with_axis
    assert BLOCK_SCALED.get(cl.SdpaSpec) is None


def test_a_family_without_a_block_scaled_form_is_refused_by_name() -> None:
    with pytest.raises(SpecError, match="block-scaled graph"):
        block_scaled_graph(cl.SdpaSpec(), block_format("mxfp8_e4m3"))


@pytest.mark.parametrize(("spec", "output"), [(cl.MatmulSpec(m=128, n=128, k=256), "C"),
                                              (cl.ConvSpec(n=1, c=64, h=8, w=8, k=64, r=3, s=3, padding=1,
                                                           layout="NHWC", dtype="bf16", out_dtype="bf16"), "Y")])
def test_the_shared_part_adds_nvfp4s_tensor_scale_and_the_bf16_output(spec: cl.Spec, output: str) -> None:
    nv = block_scaled_graph(spec, block_format("nvfp4")).inspect()
    mx = block_scaled_graph(spec, block_format("mxfp8_e4m3")).inspect()
    assert "tensor_scale" in {n["name"] for n in nv["nodes"]}
    assert "tensor_scale" not in {n["name"] for n in mx["nodes"]}
    assert mx["tensors"][output]["dtype"].endswith("BFLOAT16")
