"""Forecast (issue 35): the validation table recomputed from shipped data, the answer's shape, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError, OptionError
from cudnn_lab.specs.base import spec_from_dict
from cudnn_lab.whatif import speed as fc
from cudnn_lab.whatif import gpu_facts, published

RECORDED = fc.RECORDED_DIR


def test_validation_never_worse_than_baseline() -> None:
    grew = fc.check_baseline()
    assert grew == [], grew


def test_validation_table_covers_every_dataset_and_baselines() -> None:
    rows = fc.validate()
    datasets = {r.dataset for r in rows}
    assert datasets == {"h100_h200", "sm_scaling", "published"}
    for r in rows:
        if r.n:
            assert set(fc.PREDICTORS) <= set(r.mape), r
            assert all(v >= 0 for v in r.mape.values())
    both = {(r.source, r.target) for r in rows if r.dataset == "h100_h200"}
    assert both == {("h100", "h200"), ("h200", "h100")}
    text = fc.format_validation()
    assert "Issue 35 targets" in text and ("met" in text or "MISSED" in text)


def test_published_rows_checked_against_provenance_and_peaks() -> None:
    rows = published.load_published()
    facts = gpu_facts.load_gpu_facts()
    assert {r.gpu for r in rows} <= set(facts)
    for r in rows:
        assert r.gpu_name == facts[r.gpu].name
        # training CSVs state NVIDIA's peak per row; the inference schema has none, so the datasheet's is used
        expected = (facts[r.gpu].published_peak(r.data_type) if r.phase == "training"
                    else facts[r.gpu].peak_tflops(r.data_type))
        assert expected is not None and abs(r.peak_mma_tflops / expected - 1) <= published.PEAK_TOLERANCE


def _copy_published(tmp_path: Path) -> Path:
    dest = tmp_path / "published"
    shutil.copytree(published.PUBLISHED_DIR, dest)
    return dest


def test_inconsistent_gpu_name_is_refused_naming_file_row_field(tmp_path: Path) -> None:
    folder = _copy_published(tmp_path)
    path = folder / "gb200_llama3.1_training_20260928_115301.csv"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace("NVIDIA GB200", "NVIDIA GB300")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"gb200_llama3\.1.*row 4 field gpu_name"):
        published.load_published(folder)


def test_inconsistent_peak_is_refused(tmp_path: Path) -> None:
    folder = _copy_published(tmp_path)
    path = folder / "a100_llama3.1_training_20260928_133751.csv"
    text = path.read_text().replace(",312.000\n", ",624.000\n", 1)
    path.write_text(text)
    with pytest.raises(DataError, match=r"row 2 field peak_mma_tflops"):
        published.load_published(folder)


def test_published_table_for_another_op_is_refused(tmp_path: Path) -> None:
    folder = _copy_published(tmp_path)
    path = folder / "h200_llama3.1_training_20260928_130009.csv"
    path.write_text("op,time_ms\nconv,1.0\n")
    with pytest.raises(DataError, match=r"h200_llama3\.1.*header lacks"):
        published.load_published(folder)


def test_damaged_gpu_facts_name_file_and_field(tmp_path: Path) -> None:
    data = json.loads(gpu_facts.FACTS_PATH.read_text())
    data["gpus"]["h200"]["hbm_gbps"] = -1
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"gpus\.json.*gpus\.h200\.hbm_gbps"):
        gpu_facts.load_gpu_facts(path)
    path.write_text("{not json")
    with pytest.raises(DataError, match="gpus.json"):
        gpu_facts.load_gpu_facts(path)


def test_damaged_source_recording_names_file_and_field(tmp_path: Path) -> None:
    src = RECORDED / "h100_conv_nhwc_fp16.json"
    data = json.loads(src.read_text())
    spec = spec_from_dict(data["spec"])
    data["plans"][0]["median_ms"] = -3
    bad = tmp_path / "h100_conv_nhwc_fp16.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"h100_conv_nhwc_fp16\.json.*plans\[0\]\.median_ms"):
        fc.forecast(spec, "h200", source=bad)
    other = json.loads((RECORDED / "h100_matmul_bf16_tn_4096.json").read_text())
    with pytest.raises(DataError, match="field spec"):
        fc.forecast(spec, "h200", source=other)


def test_forecast_h100_to_h200_answers_each_proposed_plan() -> None:
    data = json.loads((RECORDED / "h100_conv_nhwc_fp16.json").read_text())
    spec = spec_from_dict(data["spec"])
    f = cl.forecast(spec, "h200", source=RECORDED / "h100_conv_nhwc_fp16.json")
    assert f.target == "h200" and f.source_gpu == "h100" and not f.measure_this
    assert f.plans, f.summary()
    for p in f.plans:
        if p.predicted_ms is not None:
            assert p.low_ms is not None and p.high_ms is not None
            assert p.low_ms <= p.predicted_ms <= p.high_ms
            assert p.validation_mape is not None and set(p.assumptions) >= {"transfer", "roofline"}
        else:
            assert p.measure_this
    again = fc.Forecast.from_dict(json.loads(json.dumps(f.to_dict())))
    assert again == f
    assert len(f.frame()) == len(f.plans)
    assert "h200" in f.summary()


def test_forecast_without_validation_says_measure_this() -> None:
    data = json.loads((RECORDED / "h100_conv_nhwc_fp16.json").read_text())
    spec = spec_from_dict(data["spec"])
    for target in ("b200", "gb200", "sm100"):
        f = fc.forecast(spec, target, source=RECORDED / "h100_conv_nhwc_fp16.json")
        assert f.measure_this and all(p.predicted_ms is None for p in f.plans), target
    sdpa = json.loads((RECORDED / "h200_sdpa_bf16_causal.json").read_text())
    for target in ("b200", "b300"):  # NVIDIA's rows for them are head dim 512 only: this is head dim 128
        f = fc.forecast(spec_from_dict(sdpa["spec"]), target, source=RECORDED / "h200_sdpa_bf16_causal.json")
        assert f.measure_this and target in f.measure_this and "head dim 128" in f.measure_this and not f.plans


def test_only_the_bound_and_the_estimator_vote() -> None:
    from cudnn_lab.whatif.speed_models import BOUND, disagreement

    # a transfer 3x the peak ratio, the bandwidth ratio and the roofline ratio (naive baselines): still answered
    assert disagreement({"transfer": 3.0, "peak_ratio": 1.0, "bandwidth_ratio": 1.0, "roofline": 1.0,
                         BOUND: 0.5}) == ""
    assert disagreement({"transfer": 0.8, BOUND: 1.0}) == ""  # 20% under the bound: within 25%
    assert "roofline bound" in disagreement({"transfer": 0.7, BOUND: 1.0})
    assert "nvidia_estimator_ratio" in disagreement({"transfer": 1.0, BOUND: 0.1, "nvidia_estimator_ratio": 1.5})


def test_no_shipped_measurement_beats_its_datasheet_bound() -> None:
    from cudnn_lab.whatif import speed_validation as sv
    from cudnn_lab.whatif.speed_models import (BOUND, _ok_plans, _recorded_pairs, published_predictions,
                                               recorded_predictions)

    facts = gpu_facts.load_gpu_facts()
    for _, a, b in _recorded_pairs():
        for s_rec, t_rec, src, tgt in ((a, b, "h100", "h200"), (b, a, "h200", "h100")):
            plans = _ok_plans(t_rec)
            for name, p in _ok_plans(s_rec).items():
                if name in plans:
                    bound = recorded_predictions(p, s_rec["spec"], facts[src], facts[tgt], 1.0, 1.0)[0][BOUND]
                    assert float(plans[name]["median_ms"]) >= bound, (name, src, tgt)
    for target in ("a100_80gb_pcie", "b200", "b300", "gb200", "gb300", "rtx_pro_6000"):
        for s, t in sv._published_pairs(published.load_published(), "h200", target):
            assert t.time_ms >= published_predictions(s, facts[target], facts["h200"], 1.0)[0][BOUND], (target, s)


def test_every_number_has_a_validation_row() -> None:
    validated = {(r.source, r.target, r.family) for r in fc.validate() if r.n}
    for path in sorted(RECORDED.glob("h200_*.json"))[:12]:
        spec = spec_from_dict(json.loads(path.read_text())["spec"])
        for target in ("h100", "a100_80gb_pcie", "gb300", "rtx_pro_6000"):
            f = fc.forecast(spec, target, source=path)
            for p in f.plans:
                if p.predicted_ms is not None:
                    assert (f.source_gpu, f.target, f.family) in validated or (
                        f.family == "sdpa" and ("h200", f.target, "sdpa") in validated), (path.name, target)


def test_unknown_target_is_an_option_error() -> None:
    data = json.loads((RECORDED / "h100_conv_nhwc_fp16.json").read_text())
    with pytest.raises(OptionError, match="target"):
        fc.forecast(spec_from_dict(data["spec"]), "not-a-gpu", source=RECORDED / "h100_conv_nhwc_fp16.json")


def test_the_forecast_lives_in_speed_and_no_module_shadows_cl_forecast() -> None:
    import importlib
    import inspect

    assert cl.forecast is fc.forecast and inspect.isfunction(cl.forecast)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("cudnn_lab.whatif.forecast")


def test_carve_outs_below_the_gate_say_measure_this_and_the_table_shows_it() -> None:
    from cudnn_lab.whatif import speed_validation as sv

    rows = [r for r in fc.validate() if r.dataset == "sm_scaling"]
    assert rows
    for r in rows:
        full = int(r.source.split()[1])
        sms = int(r.target.split()[0])
        if sms / full < sv.SM_GATE:
            assert r.measure_this_share == 1.0 and r.answered_mape is None, r
        else:
            assert r.measure_this_share == 0.0 and r.answered_mape == pytest.approx(r.mape["transfer"]), r
    data = json.loads((RECORDED / "h100_conv_nhwc_fp16.json").read_text())
    spec = spec_from_dict(data["spec"])
    low = fc.forecast(spec, 66, source=RECORDED / "h100_conv_nhwc_fp16.json")
    assert low.measure_this and "66 of 132" in low.measure_this and not low.plans
    high = fc.forecast(spec, 120, source=RECORDED / "h100_conv_nhwc_fp16.json")
    assert not high.measure_this and any(p.predicted_ms is not None for p in high.plans), high.summary()


def test_answered_error_never_hides_the_error_on_all_rows() -> None:
    text = fc.format_validation()
    for r in fc.validate():
        if r.n and 0 < r.measure_this_share < 1:
            assert r.answered_mape is not None
            assert f"{r.mape['transfer']:.1f}% on all rows" in text or r.family not in ("all", "conv", "sdpa"), r
