"""FP8 and attention-variant graphs, built for real by the cuDNN frontend (inspect() needs no GPU): FP8 tensors
carry their dtype, the descale multiplies and the amax reduction follow cuDNN's FP8 composition, sdpa_fp8 gets its
scalars and its own bound keywords, variants get lengths, ragged offsets, bias, ALiBi and dropout; the drawing and
the exported script show them."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.graph.sdpa import recipe as sdpa_recipe
from scripting import load

GEMM = cl.MatmulSpec(m=64, n=48, k=32, dtype="fp8_e4m3", transpose_b=True)


def _dt(info: dict, name: str) -> str:
    return info["tensors"][name]["dtype"].rsplit(".", 1)[-1]


def test_fp8_gemm_graph_is_matmul_then_two_descale_multiplies():
    info = cl.build_graph(GEMM).inspect()
    assert [(n["name"], n["type"]) for n in info["nodes"]] == [("matmul", "MATMUL"), ("descale_a", "POINTWISE"),
                                                               ("descale_b", "POINTWISE")]
    assert _dt(info, "A") == _dt(info, "B") == "FP8_E4M3" and _dt(info, "C") == "BFLOAT16"
    assert _dt(info, "descale_A") == "FLOAT" and info["tensors"]["descale_A"]["dim"] == [1, 1, 1]
    assert info["tensors"]["B"]["stride"] == [32 * 48, 1, 32]  # column-major: K contiguous
    assert info["nodes"][1]["inputs"] == {"IN_0": "matmul::C", "IN_1": "descale_A"}
    assert info["nodes"][2]["outputs"] == {"OUT_0": "C"}


def test_fp8_gemm_with_amax_reduces_the_descaled_product():
    spec = GEMM.replace(amax=True, b_dtype="fp8_e5m2", out_dtype="fp32")
    info = cl.build_graph(spec).inspect()
    nodes = {n["name"]: n for n in info["nodes"]}
    assert nodes["amax"]["type"] == "REDUCTION" and "AMAX" in str(nodes["amax"]["params"]["mode"])
    assert nodes["amax"]["inputs"]["input"] == "descale_b::OUT"
    assert nodes["scale_c"]["inputs"]["IN_1"] == "scale_C" and nodes["scale_c"]["outputs"]["OUT_0"] == "C"
    assert _dt(info, "B") == "FP8_E5M2" and _dt(info, "Amax") == "FLOAT" and _dt(info, "C") == "FLOAT"
    assert not info["tensors"]["Amax"]["is_virtual"]


def test_fp8_conv_graph_and_its_drawing():
    spec = cl.ConvSpec(n=2, c=32, h=8, w=8, k=16, dtype="fp8_e5m2", out_dtype="bf16")
    g = cl.build_graph(spec)
    info = g.inspect()
    assert [n["type"] for n in info["nodes"]] == ["CONV_FPROP", "POINTWISE", "POINTWISE"]
    assert _dt(info, "X") == _dt(info, "W") == "FP8_E5M2" and _dt(info, "Y") == "BFLOAT16"
    source = g.to_dot().source
    assert "fp8_e5m2" in source and "descale_X" in source


def test_fp8_script_dequantizes_in_its_reference():
    text = cl.build_graph(GEMM).to_script()
    assert "cudnn.data_type.FP8_E4M3" in text and "torch.float8_e4m3fn" in text
    ns = load(text)
    graph, tensors = ns["build_graph"]()
    assert {"A", "B", "descale_A", "descale_B", "C"} <= set(tensors)
    assert "descale_A" in "\n".join(cl.graph.REFERENCE_CODE[GEMM](GEMM))


ATTN = dict(batch=2, heads=4, seq_q=64, seq_kv=64, head_dim=128)


def test_sdpa_fp8_forward_node_keywords_and_outputs():
    spec = cl.SdpaSpec(**ATTN, dtype="fp8_e4m3", direction="fwd_training", causal=True, sliding_window=8)
    info = cl.build_graph(spec).inspect()
    (node,) = info["nodes"]
    assert node["type"] == "SDPA_FP8"
    assert {"descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"} <= set(node["inputs"])
    assert node["inputs"]["scale_o"] == "scale_O"
    # sdpa_fp8 names its bounds right_bound / left_bound, not diagonal_band_*
    assert node["params"]["right_bound"] == 0 and node["params"]["left_bound"] == 8
    assert "diagonal_band_right_bound" not in node["params"]
    assert {_dt(info, n) for n in ("Q", "K", "V", "O")} == {"FP8_E4M3"}
    assert _dt(info, "Stats") == _dt(info, "Amax_S") == _dt(info, "Amax_O") == "FLOAT"


def test_sdpa_fp8_backward_node_takes_its_twelve_scalars():
    spec = cl.SdpaSpec(**ATTN, dtype="fp8_e4m3", direction="bwd", out_dtype="fp8_e5m2")
    (node,) = cl.build_graph(spec).inspect()["nodes"]
    assert node["type"] == "SDPA_FP8_BWD"
    want = {"descale_q", "descale_k", "descale_v", "descale_o", "descale_dO", "descale_s", "descale_dP", "scale_s",
            "scale_dQ", "scale_dK", "scale_dV", "scale_dP"}
    assert want <= set(node["inputs"]) and node["inputs"]["descale_dO"] == "descale_dO"
    assert set(node["outputs"].values()) >= {"dQ", "dK", "dV", "Amax_dQ", "Amax_dP"}


def test_variants_graph_lengths_bias_dropout_alibi():
    padded = cl.SdpaSpec(**ATTN, direction="fwd_training", seq_lens_q=(64, 10), seq_lens_kv=(64, 20),
                         bias="tensor", dropout=0.1)
    info = cl.build_graph(padded).inspect()
    (node,) = info["nodes"]
    assert node["params"]["use_padding_mask"] is True
    assert node["inputs"]["seq_len_q"] == "seq_len_q" and _dt(info, "seq_len_kv") == "INT32"
    assert node["inputs"]["bias"] == "Bias" and info["tensors"]["Bias"]["dim"] == [1, 4, 64, 64]
    assert node["inputs"]["dropout_0"] == "Dropout_mask" and node["inputs"]["dropout_1"] == "Dropout_scale"
    alibi = cl.SdpaSpec(**ATTN, causal=True, bias="alibi")
    (node,) = cl.build_graph(alibi).inspect()["nodes"]
    assert node["params"]["use_alibi_mask"] is True and node["params"]["diagonal_band_right_bound"] == 0
    br = cl.SdpaSpec(**{**ATTN, "seq_q": 1}, causal=True, diagonal_alignment="bottom_right")
    (node,) = cl.build_graph(br).inspect()["nodes"]
    assert "BOTTOM_RIGHT" in str(node["params"]["diagonal_alignment"])


def test_ragged_tensors_carry_their_offsets():
    spec = cl.SdpaSpec(**ATTN, direction="bwd", seq_lens_q=(64, 10), seq_lens_kv=(64, 20), ragged=True)
    rec = sdpa_recipe(spec)
    assert rec.tensor("Q").ragged_offset == "Q_offset" and rec.tensor("dV").ragged_offset == "dV_offset"
    assert rec.tensor("Q_offset").dtype == "int64" and rec.tensor("Q_offset").ragged_offset is None
    g = cl.build_graph(spec)
    tensors = g.tensors
    for name in ("Q", "K", "Stats", "dQ", "dK"):
        assert tensors[name].ragged_offset is tensors[f"{name}_offset"], name
    params = g.inspect()["nodes"][0]["params"]
    assert params["max_total_seq_len_q"] == 128 and params["max_total_seq_len_kv"] == 128  # 74 and 84 -> 128
    script = g.to_script()
    assert "tensors['Q'].set_ragged_offset(tensors['Q_offset'])" in script
    assert ".set_ragged_offset(tensors['dQ_offset'])" in script


@pytest.mark.parametrize("spec", [GEMM, cl.SdpaSpec(**ATTN, dtype="fp8_e5m2", causal=True)],
                         ids=["gemm", "sdpa"])
def test_drawings_show_the_fp8_dtype(spec):
    source = cl.build_graph(spec).to_dot().source
    assert "fp8_e4m3" in source or "fp8_e5m2" in source
