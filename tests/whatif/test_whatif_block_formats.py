"""Blackwell block formats as a what-if on any machine: the emulated error of MXFP8/NVFP4 products against float64 and
per-tensor FP8, the block-scaled cuDNN graph (built without a GPU), and cuDNN's recorded answer for it."""

from __future__ import annotations

import json

import pytest

import cudnn_lab as cl
from cudnn_lab.whatif import block_formats as bw
from cudnn_lab.whatif import block_answers
from cudnn_lab.errors import DataError, NoGPUError, OptionError, SpecError

MATMUL = cl.MatmulSpec(batch=1, m=128, n=64, k=512, dtype="bf16")
CONV = cl.ConvSpec(n=2, c=64, h=8, w=8, k=32, r=3, s=3, padding=1)


def test_public_names():
    assert cl.block_format_whatif is bw.block_format_whatif and cl.block_scale_plans is bw.block_scale_plans


def test_matmul_whatif_is_labelled_emulated_and_serializable():
    w = cl.block_format_whatif(MATMUL, "mxfp8_e4m3")
    assert w.label == bw.EMULATED_LABEL and "emulated" in w.summary() and "measured" not in w.label.split(",")[0]
    assert set(w.operands) == {"A", "B"} and w.reduction_axis == "K"
    d = json.loads(json.dumps(w.to_dict()))
    assert d["fmt"]["block_size"] == 32 and d["label"].startswith("emulated")
    assert 0 < w.output_rel_l2 < 0.2 and 0 <= w.accumulate_rel_l2 < 1e-5
    assert w.bulk_rel_l2 == pytest.approx(w.output_rel_l2)  # no outliers: the bulk is everything
    rows = w.rows()
    assert [r["format"].split()[0] for r in rows] == ["mxfp8_e4m3", "per-tensor"]


def test_block_scaling_beats_per_tensor_fp8_away_from_outlier_rows():
    # A few rows 1e5 larger set per-tensor FP8's one scale: the ordinary rows fall into e4m3's subnormals. Blocks
    # along K give every row its own scales, so the ordinary rows keep their precision.
    w = cl.block_format_whatif(MATMUL, "mxfp8_e4m3", scale_rule="ceil", outliers=0.02, outlier_factor=1e5)
    assert w.per_tensor_bulk_rel_l2 > 3 * w.bulk_rel_l2
    plain = cl.block_format_whatif(MATMUL, "mxfp8_e4m3", scale_rule="ceil")
    assert plain.output_rel_l2 == pytest.approx(plain.per_tensor_output_rel_l2, rel=0.05)  # no outliers: a tie


def test_fewer_bits_cost_accuracy_and_ocp_floor_clips():
    fp4 = cl.block_format_whatif(MATMUL, "nvfp4")
    fp8 = cl.block_format_whatif(MATMUL, "mxfp8_e4m3", scale_rule="ceil")
    floor = cl.block_format_whatif(MATMUL, "mxfp8_e4m3")
    assert fp4.output_rel_l2 > 2 * fp8.output_rel_l2
    assert floor.output_rel_l2 > fp8.output_rel_l2 and floor.operands["A"]["saturated"] > 0
    assert fp8.operands["A"]["saturated"] == 0
    assert fp4.per_tensor_dtype == "fp8_e4m3"
    assert cl.block_format_whatif(MATMUL, "mxfp8_e5m2").per_tensor_dtype == "fp8_e5m2"


def test_conv_blocks_run_along_c():
    w = cl.block_format_whatif(CONV, "nvfp4")
    assert w.reduction_axis == "C" and set(w.operands) == {"X", "W"}
    assert w.operands["X"]["blocks"] == 2 * (64 // 16) * 8 * 8
    assert w.operands["W"]["blocks"] == 32 * (64 // 16) * 3 * 3
    hot = cl.block_format_whatif(CONV, "mxfp8_e4m3", scale_rule="ceil", outliers=0.05, outlier_factor=1e5)
    assert hot.per_tensor_bulk_rel_l2 > 3 * hot.bulk_rel_l2  # pixels whose window holds no outlier pixel


@pytest.mark.parametrize("spec,field", [(cl.ConvSpec(n=1, c=32, h=8, w=8, k=8, direction="dgrad"), "direction"),
                                        (cl.ConvSpec(n=1, c=32, h=8, w=8, k=8, groups=2), "groups")])
def test_convs_the_whatif_does_not_model_are_refused(spec, field):
    with pytest.raises(SpecError) as e:
        cl.block_format_whatif(spec)
    assert e.value.field == field


@pytest.mark.parametrize("kwargs,name,error", [
    ({"fmt": "mxfp6"}, "fmt", SpecError), ({"block_size": 64}, "block_size", SpecError),
    ({"scale_format": "e5m2"}, "scale_format", SpecError), ({"outliers": 0.9}, "outliers", OptionError),
    ({"outlier_factor": 0.5}, "outlier_factor", OptionError), ({"per_tensor": "fp16"}, "per_tensor", OptionError),
    ({"seed": -1}, "seed", OptionError),
])
def test_bad_parameters_name_the_field(kwargs, name, error):
    with pytest.raises(error) as e:
        cl.block_format_whatif(MATMUL, **kwargs)
    assert getattr(e.value, "field", getattr(e.value, "option", None)) == name


def test_other_families_and_huge_problems_are_refused():
    with pytest.raises(OptionError):
        cl.block_format_whatif(cl.SdpaSpec(batch=1, heads=1, seq_q=64, seq_kv=64, head_dim=64))
    with pytest.raises(SpecError) as e:
        cl.block_format_whatif(cl.MatmulSpec(m=8192, n=8192, k=8192))
    assert e.value.field == "m"


@pytest.mark.parametrize("fmt,el,sf,blocks", [("mxfp8_e4m3", "FP8_E4M3", "FP8_E8M0", ([1, 32], [32, 1])),
                                              ("nvfp4", "FP4_E2M1", "FP8_E4M3", ([1, 16], [16, 1]))])
def test_block_scaled_matmul_graph_is_a_real_frontend_graph(fmt, el, sf, blocks):
    g = bw.block_scaled_graph(cl.MatmulSpec(m=256, n=256, k=512), fmt)
    info = g.inspect()
    nodes = {n["name"]: n for n in info["nodes"]}
    assert [nodes[f"dequantize_{x}"]["params"]["block_size"] for x in "AB"] == list(blocks)
    assert "matmul" in nodes and (("tensor_scale" in nodes) == (fmt == "nvfp4"))
    tensors = info["tensors"]
    assert tensors["A"]["dtype"].endswith(el) and tensors["B"]["dtype"].endswith(el)
    assert tensors["SFA"]["dtype"].endswith(sf) and tensors["SFB"]["dtype"].endswith(sf)
    k_blocks = 512 // blocks[0][1]
    assert tensors["SFA"]["dim"] == [1, 256, k_blocks] and tensors["SFB"]["dim"] == [1, k_blocks, 256]


def test_block_scaled_conv_graph_builds():
    info = bw.block_scaled_graph(CONV, "mxfp8_e4m3").inspect()
    nodes = {n["name"]: n for n in info["nodes"]}
    assert nodes["dequantize_X"]["params"]["block_size"] == [1, 32, 1, 1] and "conv_fprop" in nodes


def test_recorded_answers_are_labelled_and_read_back():
    answers = bw.recorded_block_scale_answers()
    assert answers and all(a.cudnn_version == 91900 and "recorded on NVIDIA H200, 2026-11-26" in a.source
                           for a in answers)
    spec = bw.RECORD_PROBLEMS[0][0]
    sm100 = bw.block_scale_plans(spec, "mxfp8_e4m3", "sm100", recorded=True)
    assert sm100.ok and sm100.plan_count > 0 and sm100.engines and "not a measurement" in sm100.summary()
    assert "synthetic" in sm100.target_label
    here = bw.block_scale_plans(spec, "nvfp4", None, recorded=True)
    assert not here.ok and here.refused == "declined" and "H200" in here.target_label
    assert bw.BlockScaleAnswer.from_dict(sm100.to_dict()) == sm100


def test_unrecorded_question_without_a_gpu_says_so():
    with pytest.raises(NoGPUError) as e:
        bw.block_scale_plans(MATMUL, "nvfp4", "sm100", recorded=True)
    assert "recorded" in str(e.value)


def test_a_malformed_recording_is_refused(tmp_path, monkeypatch):
    (tmp_path / "bad.json").write_text(json.dumps({"format": bw.FORMAT, "answers": [{"fmt": "nvfp4"}]}))
    monkeypatch.setattr(block_answers, "BLOCK_SCALE_DIR", tmp_path)
    with pytest.raises(DataError):
        bw.recorded_block_scale_answers()
    (tmp_path / "bad.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(DataError):
        bw.recorded_block_scale_answers()
