"""A result whose plan names are not the kit's ``eng<id>_k<n>=<v>...`` can still be read, drawn and reported
(issue 37): a plan's knobs come from its ``knobs`` column where its name does not carry them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.report import save_report
from cudnn_lab.results import RunResult, anatomy

EXPLORED = "h100_conv_nhwc_fp16"  # a recording with an engine-space sample: the report draws the knob figure


def _renamed(tmp_path: Path, name: str) -> RunResult:
    """A shipped recording with every plan renamed ``custom-<i>`` (its histograms follow), loaded back."""
    data = cl.load_results(name).to_dict()
    names = {}
    for i, row in enumerate(data["plans"]):
        names[row["plan"]] = row["plan"] = f"custom-{i}"
    data["histograms"] = {names.get(k, k): v for k, v in data["histograms"].items()}
    path = tmp_path / f"{name}_renamed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return RunResult.load(path)


def test_knob_points_come_from_the_knobs_column_when_the_name_has_none(tmp_path) -> None:
    original = cl.load_results(EXPLORED)
    renamed = _renamed(tmp_path, EXPLORED)
    version = original.device.get("cudnn_backend")
    want = [(p["knob"], p["value"], p["engine_id"]) for p in anatomy.knob_points(original.plans, version)]
    got = [(p["knob"], p["value"], p["engine_id"]) for p in anatomy.knob_points(renamed.plans, version)]
    assert got == want
    assert any(knob is not None for knob, _, _ in got)


@pytest.mark.parametrize("name", [EXPLORED, "h100_matmul_fp16_bias"])
def test_a_result_with_other_plan_names_is_reported(tmp_path, name) -> None:
    result = _renamed(tmp_path, name)
    assert "custom-" in result.summary()
    html = save_report(result, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "custom-0" in html
