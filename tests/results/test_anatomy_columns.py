"""Plan anatomy in the result schema, on the shipped recordings: knob names, kernels, notes and the engine space are
saved and loaded, shown by the CLI's plan table and the report, and older recordings without them still load."""

from __future__ import annotations

import json

import pytest

import cudnn_lab as cl
from cudnn_lab import kernel_names, knobs
from cudnn_lab.errors import DataError
from cudnn_lab.results import PLAN_COLUMNS, RunResult
from cudnn_lab.results.anatomy import (answer_text, beat_heuristics, kernel_story, kernels_table, knob_points,
                                       with_knob_names)

ANATOMY = ("knob_names", "proposed", "origin", "kernels", "kernel_count", "kernel_ms", "launch_gap_ms",
           "numeric_notes", "deterministic")


def _runs():
    names = cl.recorded_datasets("run")["name"].tolist()
    assert names
    return [cl.load_results(n) for n in names]


def test_the_schema_has_the_anatomy_columns():
    assert set(ANATOMY) <= set(PLAN_COLUMNS)


def test_every_recording_loads_with_the_anatomy_columns_and_named_knobs():
    for result in _runs():
        assert set(ANATOMY) <= set(result.plans.columns)
        named = with_knob_names(result.plans, result.device["cudnn_backend"])
        for plan, label in zip(named["plan"], named["knob_names"]):
            parsed = knobs.parse_plan_name(plan)
            if parsed and parsed[1]:
                assert label and "unknown" not in label, (plan, label)
                assert label == knobs.label(plan, result.device["cudnn_backend"])


def test_a_saved_result_keeps_its_anatomy_and_engine_space(tmp_path):
    result = _runs()[0]
    path = result.save(tmp_path / "r.json")
    back = RunResult.load(path)
    assert list(back.plans.columns) == list(result.plans.columns)
    assert back.engine_space == result.engine_space
    data = json.loads(path.read_text())
    assert "engine_space" in data and all(c in data["plans"][0] for c in ANATOMY)


@pytest.mark.parametrize("column,value", [("kernel_ms", "fast"), ("proposed", "yes"), ("kernels", 3),
                                          ("deterministic", 1)])
def test_a_wrongly_typed_anatomy_cell_is_a_data_error_naming_it(tmp_path, column, value):
    path = _runs()[0].save(tmp_path / "r.json")
    data = json.loads(path.read_text())
    data["plans"][0][column] = value
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=column):
        RunResult.load(path)


def test_a_malformed_engine_space_is_a_data_error(tmp_path):
    path = _runs()[0].save(tmp_path / "r.json")
    data = json.loads(path.read_text())
    data["engine_space"] = {"engines": [{"engine_id": "sixty-two"}]}
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"engine_space\.engines\[0\]\.engine_id"):
        RunResult.load(path)


def test_without_exploration_the_answer_says_nothing_was_explored():
    result = next(r for r in _runs() if r.exploration["explored"] == 0 and r.engine_space.get("error") is None
                  and (r.plans["engine_id"] >= 0).any())
    assert result.exploration["explored"] == 0 and result.exploration["beaten"] is None
    assert answer_text(result.exploration).startswith("No configuration outside")
    assert result.heuristic_pick["plan"] == result.plans.sort_values("heuristic_rank").query("status == 'ok'")[
        "plan"].iloc[0]


def test_cli_plan_table_names_the_knobs():
    from cudnn_lab.cli import plan_table

    for result in _runs():
        table = plan_table(result)
        assert "knob_names" in table.columns and "plan" in table.columns
        # 'proposed' is shown only where something beyond the proposals was explored
        assert ("proposed" in table.columns) == bool(result.exploration["explored"]), result.spec.label()
        with_knobs = table[table["plan"].map(lambda p: bool((knobs.parse_plan_name(p) or (0, {}))[1]))]
        assert with_knobs["knob_names"].str.contains("=").all()


def test_report_shows_knob_names():
    from cudnn_lab.report import report_html

    result = next(r for r in _runs() if r.plans["plan"].str.contains("_k").any())
    page = report_html(result)
    first = next(p for p in result.plans["plan"] if knobs.parse_plan_name(p) and knobs.parse_plan_name(p)[1])
    assert knobs.label(first, result.device["cudnn_backend"]) in page


def test_engine_space_points_come_from_the_plan_names():
    result = _runs()[0]
    points = knob_points(result.plans, result.device["cudnn_backend"])
    assert {p["plan"] for p in points} == set(result.plans["plan"])
    assert all(p["proposed"] for p in points)


def test_recorded_kernels_read_plainly_where_a_recording_has_them():
    """Active once the recordings are re-made with kernels (CUPTI) on a GPU."""
    results = [r for r in _runs() if r.plans["kernels"].notna().any()]
    if not results:
        pytest.skip("no shipped recording has kernels yet (re-record on a GPU with kernels=True)")
    for result in results:
        table = kernels_table(result.plans)
        assert not table.empty
        for _, row in result.plans[result.plans["kernels"].notna()].iterrows():
            sub = table[table["plan"] == row["plan"]]
            assert row["kernel_ms"] == pytest.approx(sub["total_us"].sum() / 1e3, rel=1e-3)
            assert kernel_story(row["kernels"])
        assert all(kernel_names.read(k).kind for k in table["kernel"])
        assert beat_heuristics(result.plans)["best_proposed"] is not None
