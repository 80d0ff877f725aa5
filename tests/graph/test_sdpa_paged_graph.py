"""build_graph of a paged K/V cache and of sink tokens: the real cuDNN frontend node takes the block tables, the
longest sequence and the sink logits (inspect() needs no GPU); the drawing shows them (rendered by ``dot``); the
exported script rebuilds the same graph and its reference, gathering the pages, agrees with the kit's."""

from __future__ import annotations

import shutil

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph import drawing, to_svg
from cudnn_lab.reference import make_inputs, reference_outputs
from cudnn_lab.specs import SdpaSpec
from scripting import load

SPECS = {
    "decode_bshd_bf16": SdpaSpec(batch=3, heads=8, kv_heads=2, seq_q=1, seq_kv=256, head_dim=64, dtype="bf16",
                                 causal=True, diagonal_alignment="bottom_right", page_size=32, num_pages=40),
    "prefill_bhsd_fp16_lengths": SdpaSpec(batch=2, heads=4, seq_q=32, seq_kv=128, head_dim=64, layout="BHSD",
                                          page_size=16, seq_lens_kv=(128, 50), seq_lens_q=(32, 9)),
    "sink_training_gqa": SdpaSpec(batch=2, heads=4, kv_heads=2, seq_q=48, seq_kv=48, head_dim=64, causal=True,
                                  sink=True, direction="fwd_training"),
    "sink_paged": SdpaSpec(batch=2, heads=4, seq_q=16, seq_kv=64, head_dim=64, sink=True, page_size=16),
}


@pytest.fixture(params=list(SPECS), ids=list(SPECS))
def spec(request: pytest.FixtureRequest) -> SdpaSpec:
    return SPECS[request.param]


def test_the_node_takes_the_tables_the_maximum_and_the_sink(spec: SdpaSpec) -> None:
    info = cl.build_graph(spec).inspect()
    (node,) = info["nodes"]
    ins, params = node["inputs"], node["params"]
    if spec.paged:
        assert ins["paged_attention_k_table"] == "Page_table_K" and ins["paged_attention_v_table"] == "Page_table_V"
        assert params["paged_attention_max_seq_len_kv"] == spec.seq_kv and params["use_padding_mask"] is True
        assert ins["seq_len_q"] == "seq_len_q" and ins["seq_len_kv"] == "seq_len_kv"
    else:
        assert "paged_attention_k_table" not in ins and "paged_attention_max_seq_len_kv" not in params
    assert (ins.get("sink_token") == "Sink") == spec.sink
    tensors = info["tensors"]
    for name, dims in spec.tensor_shapes().items():
        t = tensors[name]
        assert list(t["dim"]) == list(dims) and list(t["stride"]) == list(spec.tensor_strides()[name])
    if spec.paged:  # K and V are the pools: [pages, kv heads, page size, head dim]
        assert list(tensors["K"]["dim"]) == [spec.cache_pages, spec.h_kv, spec.page_size, spec.head_dim]
        assert "INT32" in str(tensors["Page_table_K"]["dtype"]).upper()
    if spec.sink:
        assert list(tensors["Sink"]["dim"]) == [1, spec.heads, 1, 1] and "FLOAT" in str(tensors["Sink"]["dtype"])


@pytest.mark.skipif(shutil.which("dot") is None, reason="the graphviz 'dot' program is not installed")
def test_drawing_renders_the_extra_inputs(spec: SdpaSpec) -> None:
    svg = to_svg(drawing(spec))
    for name in spec.io_names()[0]:
        assert name in svg, name


def test_script_rebuilds_the_same_graph(spec: SdpaSpec) -> None:
    ns = load(cl.build_graph(spec).to_script())
    graph, _ = ns["build_graph"]()
    assert graph.inspect() == cl.build_graph(spec).inspect()
    assert set(ns["INPUTS"]) == set(spec.io_names()[0])


@pytest.mark.parametrize("name", ["decode_bshd_bf16", "sink_training_gqa", "sink_paged"])
def test_script_reference_gathers_pages_and_folds_the_sink_like_the_kit(name: str) -> None:
    spec = SPECS[name]  # full lengths: the script does not rebuild the padding mask
    inputs = make_inputs(spec, seed=5)
    got = load(cl.build_graph(spec).to_script())["reference"](inputs)
    want = reference_outputs(spec, inputs)["O"]
    assert want.abs().max() > 0
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
