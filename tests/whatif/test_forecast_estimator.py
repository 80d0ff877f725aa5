"""NVIDIA's GEMM estimator (nvidia-matmul-heuristics) as the forecast's optional, labelled predictor (issue 35 (c)):
it answers where installed (skipped where not), stays out of the table and the forecast where absent, and is never
the predictor a forecast answers with."""

from __future__ import annotations

import json
import math

import pytest

import cudnn_lab as cl
from cudnn_lab.specs.base import spec_from_dict
from cudnn_lab.whatif import speed_nvmmh, speed_validation
from cudnn_lab.whatif.speed_models import RECORDED_DIR

SOURCE = RECORDED_DIR / "h100_matmul_bf16_tn_4096.json"


def _spec() -> dict:
    return json.loads(SOURCE.read_text())["spec"]


def test_absent_estimator_answers_nothing(monkeypatch):
    monkeypatch.setattr(speed_nvmmh, "_module", lambda: None)
    assert not speed_nvmmh.available()
    assert speed_nvmmh.version() is None
    assert speed_nvmmh.estimate_ms(_spec(), "h200") is None
    assert speed_nvmmh.predictions(_spec(), "h100", "h200", 1.0) == ({}, {})


def test_estimator_times_a_gemm_on_each_known_gpu():
    pytest.importorskip("nvMatmulHeuristics")
    spec = _spec()
    times = {g: speed_nvmmh.estimate_ms(spec, g) for g in ("h100", "h200", "b200")}
    assert all(t is not None and math.isfinite(t) and t > 0 for t in times.values())
    assert times["b200"] < times["h100"]  # a GPU with twice the tensor peak is estimated faster
    bigger = dict(spec, m=2 * spec["m"])
    assert speed_nvmmh.estimate_ms(bigger, "h100") > times["h100"]
    assert speed_nvmmh.estimate_ms(dict(spec, op="conv"), "h100") is None
    assert speed_nvmmh.estimate_ms(spec, "no_such_gpu") is None
    assert speed_nvmmh.estimate_ms(dict(spec, dtype="int4"), "h100") is None


def test_estimator_columns_in_the_validation_table():
    pytest.importorskip("nvMatmulHeuristics")
    rows = [r for r in speed_validation.validate() if r.dataset == "h100_h200" and r.family == "matmul"
            and r.scope == "best"]
    assert {(r.source, r.target) for r in rows} == {("h100", "h200"), ("h200", "h100")}
    for r in rows:
        assert r.mape["nvidia_estimator"] >= 0 and r.mape["nvidia_estimator_ratio"] >= 0
        assert speed_nvmmh.LABEL in r.note
    others = [r for r in speed_validation.validate() if r.family != "matmul"]
    assert not any(k in r.mape for r in others for k in speed_validation.EXTRA)
    assert "nvidia_estimator" in speed_validation.format_validation().splitlines()[0]


def test_forecast_labels_the_estimator_beside_the_transfer():
    pytest.importorskip("nvMatmulHeuristics")
    f = cl.forecast(spec_from_dict(_spec()), "h200", source=SOURCE)
    answered = [p for p in f.plans if p.predicted_ms is not None]
    assert answered
    for p in answered:
        assert p.predictor == "transfer"
        assert p.predictions["nvidia_estimator"] > 0
        assert speed_nvmmh.LABEL in p.assumptions["nvidia_estimator"]
        assert "validated at" in p.assumptions["nvidia_estimator_ratio"]
