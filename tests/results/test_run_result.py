"""RunResult: heuristic pick, best plan and regret from the plan table; JSON round trip keeps everything."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cudnn_lab.errors import CudnnLabError, DataError, OptionError
from cudnn_lab.results import PLAN_COLUMNS, SCHEMA_VERSION, RunResult, plans_frame
from cudnn_lab.specs import ConvSpec, MatmulSpec


@pytest.fixture
def rows() -> list[dict]:
    """Five plans in heuristic order: the first failed to build, one ran fastest but failed the check."""
    return [
        dict(plan="eng0_k1=2", engine_id=0, heuristic_rank=0, rank_A=0, status="build_failed", error="no kernel",
             behavior_notes=""),
        dict(plan="eng4_k24=27", engine_id=4, heuristic_rank=1, rank_A=1, status="ok", median_ms=0.031,
             iqr_ms=0.001, pass_cudnn=True, pass_torch=True, rel_l2=2e-4, nan_count=0, capped=False,
             timing_mode="cuda_graph", knobs='{"KERNEL_CFG": 27}'),
        dict(plan="eng8", engine_id=8, heuristic_rank=2, rank_B=0, status="ok", median_ms=0.012,
             pass_cudnn=False, pass_torch=False, rel_l2=0.3, nan_count=5, capped=True, timing_mode="events"),
        dict(plan="eng9", engine_id=9, heuristic_rank=3, rank_B=1, status="ok", median_ms=0.025, pass_cudnn=True,
             pass_torch=True, rel_l2=1e-4, nan_count=0, capped=False, timing_mode="cuda_graph"),
        dict(plan="eng11", engine_id=11, heuristic_rank=4, rank_FALLBACK=0, status="run_failed", median_ms=0.001,
             error="illegal address"),
    ]


def result_from(rows: list[dict], **kw) -> RunResult:
    base = dict(spec=ConvSpec(n=2, c=8, h=8, w=8, k=8), plans=plans_frame(rows),
                device={"gpu": "NVIDIA H100 80GB HBM3", "cudnn_backend": 91900}, torch={"benchmark_off_ms": 0.04},
                ceilings={"tflops": 700.0}, settings={"heuristics": ["A", "B"]}, warnings=["a note"],
                created="2026-01-01T00:00:00+00:00")
    return RunResult(**{**base, **kw})


@pytest.fixture
def result(rows) -> RunResult:
    return result_from(rows)


def test_plans_frame_columns_are_plan_columns(rows) -> None:
    assert tuple(plans_frame(rows).columns) == PLAN_COLUMNS


def test_plans_frame_of_no_rows_has_the_columns() -> None:
    frame = plans_frame([])
    assert tuple(frame.columns) == PLAN_COLUMNS and frame.empty


def test_plans_frame_drops_unknown_keys(rows) -> None:
    assert tuple(plans_frame([{**rows[0], "bogus": 1}]).columns) == PLAN_COLUMNS


def test_plans_frame_dtypes_do_not_depend_on_which_keys_rows_have() -> None:
    sparse = plans_frame([{"plan": "p", "status": "ok"}])
    full = plans_frame([{c: None for c in PLAN_COLUMNS} | {"plan": "p", "status": "ok"}])
    assert sparse.dtypes.to_dict() == full.dtypes.to_dict()


def test_plans_frame_counts_are_nullable_integers(rows) -> None:
    frame = plans_frame(rows)
    assert str(frame["heuristic_rank"].dtype) == "Int64" and str(frame["rank_B"].dtype) == "Int64"
    assert frame["rank_B"].isna().sum() == sum("rank_B" not in r for r in rows)


def test_ok_keeps_only_plans_that_ran(result, rows) -> None:
    assert list(result.ok["plan"]) == [r["plan"] for r in rows if r["status"] == "ok"]


def test_heuristic_pick_is_lowest_rank_that_ran(result, rows) -> None:
    ok = [r for r in rows if r["status"] == "ok"]
    assert result.heuristic_pick["plan"] == min(ok, key=lambda r: r["heuristic_rank"])["plan"]
    assert result.heuristic_pick["plan"] != rows[0]["plan"]  # rank 0 failed to build


def test_heuristic_pick_follows_rank_not_row_order(rows) -> None:
    assert result_from(list(reversed(rows))).heuristic_pick["plan"] == result_from(rows).heuristic_pick["plan"]


def test_best_is_fastest_passing_plan(result, rows) -> None:
    passing = [r for r in rows if r["status"] == "ok" and r.get("pass_cudnn")]
    assert result.best["plan"] == min(passing, key=lambda r: r["median_ms"])["plan"]


def test_faster_failing_plan_is_not_best(result, rows) -> None:
    fastest_ok = min((r for r in rows if r["status"] == "ok"), key=lambda r: r["median_ms"])
    assert fastest_ok["pass_cudnn"] is False
    assert result.best["plan"] != fastest_ok["plan"]


def test_plan_that_did_not_run_is_never_best(result, rows) -> None:
    fastest = min((r for r in rows if "median_ms" in r), key=lambda r: r["median_ms"])
    assert fastest["status"] != "ok"
    assert result.best["plan"] != fastest["plan"]


def test_best_falls_back_to_fastest_when_none_passes(rows) -> None:
    for r in rows:
        if "pass_cudnn" in r:
            r["pass_cudnn"] = False
    ok = [r for r in rows if r["status"] == "ok"]
    assert result_from(rows).best["plan"] == min(ok, key=lambda r: r["median_ms"])["plan"]


def test_unchecked_plan_can_be_best(rows) -> None:
    rows[2].pop("pass_cudnn")  # the fastest plan ran, but was not checked
    assert result_from(rows).best["plan"] == rows[2]["plan"]


def test_regret_is_pick_time_over_best_time(result) -> None:
    assert result.regret == pytest.approx(result.heuristic_pick["median_ms"] / result.best["median_ms"])
    assert result.regret > 1.0


def test_regret_is_one_when_pick_is_best(rows) -> None:
    rows[1]["median_ms"] = min(r["median_ms"] for r in rows if r["status"] == "ok" and r.get("pass_cudnn")) / 2
    r = result_from(rows)
    assert r.heuristic_pick["plan"] == r.best["plan"] and r.regret == 1.0


def test_no_plan_ran_raises_lab_error(rows) -> None:
    r = result_from([row for row in rows if row["status"] != "ok"])
    with pytest.raises(CudnnLabError, match="No plan ran"):
        _ = r.heuristic_pick
    with pytest.raises(CudnnLabError, match="No plan ran"):
        _ = r.best


def test_torch_ms_reads_benchmark_off_time(result) -> None:
    assert result.torch_ms == result.torch["benchmark_off_ms"]
    assert result_from([], torch={}).torch_ms is None


def test_summary_names_pick_best_and_device(result) -> None:
    text = result.summary()
    for part in (result.heuristic_pick["plan"], result.best["plan"], "NVIDIA H100", "regret", "a note"):
        assert part in text
    assert "(cuDNN 9.19.0)" in text.splitlines()[0] and "91900" not in text


def test_html_repr_holds_summary_and_table(result) -> None:
    page = result._repr_html_()
    assert "<table" in page and result.best["plan"] in page


def test_to_dict_is_json_serialisable(result) -> None:
    data = json.loads(json.dumps(result.to_dict()))
    assert data["schema"] == SCHEMA_VERSION
    assert len(data["plans"]) == len(result.plans)
    assert data["plans"][0]["median_ms"] is None  # missing values are null, not NaN


def test_json_round_trip_keeps_frame_and_spec(result) -> None:
    again = RunResult.from_dict(json.loads(json.dumps(result.to_dict())))
    pd.testing.assert_frame_equal(again.plans, result.plans)
    assert again.spec == result.spec
    assert (again.device, again.torch, again.ceilings, again.settings, again.warnings, again.created) == (
        result.device, result.torch, result.ceilings, result.settings, result.warnings, result.created)


def test_round_trip_keeps_pick_best_and_regret(result) -> None:
    again = RunResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.heuristic_pick["plan"] == result.heuristic_pick["plan"]
    assert again.best["plan"] == result.best["plan"] and again.regret == result.regret


def test_round_trip_of_a_matmul_result(rows) -> None:
    r = result_from(rows, spec=MatmulSpec(batch=2, m=8, n=8, k=8, transpose_b=True, epilogue=("bias",)))
    assert RunResult.from_dict(json.loads(json.dumps(r.to_dict()))).spec == r.spec


def test_save_and_load(result, tmp_path) -> None:
    path = result.save(tmp_path / "run.json")
    assert path == tmp_path / "run.json"
    json.loads(path.read_text())  # plain JSON on disk
    loaded = RunResult.load(path)
    pd.testing.assert_frame_equal(loaded.plans, result.plans)
    assert loaded.spec == result.spec and loaded.best["plan"] == result.best["plan"]
    assert loaded.loaded_from == path and result.loaded_from is None  # where it came from: not saved in the file


def test_save_accepts_a_string_path(result, tmp_path) -> None:
    assert RunResult.load(str(result.save(str(tmp_path / "r.json")))).spec == result.spec


@pytest.mark.parametrize("schema", [None, 0, SCHEMA_VERSION + 1, "1"])
def test_from_dict_with_wrong_schema_raises_data_error(result, schema) -> None:
    data = {**result.to_dict(), "schema": schema}
    with pytest.raises(DataError, match="field schema"):
        RunResult.from_dict(data)


def test_from_dict_without_schema_raises_data_error(result) -> None:
    data = result.to_dict()
    del data["schema"]
    with pytest.raises(DataError, match="schema.*missing"):
        RunResult.from_dict(data)


@pytest.mark.parametrize("data", [None, [], "run.json"])
def test_from_dict_of_non_dict_raises_data_error(data) -> None:
    with pytest.raises(DataError, match="must be an object"):
        RunResult.from_dict(data)


def test_from_dict_with_bad_spec_names_the_spec_field(result) -> None:
    data = result.to_dict()
    data["spec"]["padding"] = 99
    with pytest.raises(DataError, match="field spec: .*padding=99"):
        RunResult.from_dict(data)


# ---------------------------------------------------------------------------------------------- from_records

def _records(rows: list[dict], **kw) -> dict:
    return {"plans": rows, "device": {"gpu": "NVIDIA H100 80GB HBM3", "cudnn_backend": 91900},
            "torch": {"benchmark_off_ms": 0.04}, "ceilings": {"tflops": 700.0, "gbps": 3000.0},
            "settings": {"plans": "all"}, "warnings": ["w"], "histograms": {}, "created": "2026-01-01", **kw}


def test_from_records_makes_the_plan_frame_and_keeps_the_context(rows) -> None:
    spec = ConvSpec(n=2, c=8, h=8, w=8, k=8)
    r = RunResult.from_records(spec, _records(rows))
    assert tuple(r.plans.columns) == PLAN_COLUMNS and len(r.plans) == len(rows)
    assert r.spec == spec and r.device["gpu"].startswith("NVIDIA") and r.warnings == ["w"]
    assert r.best["plan"] == "eng9" and r.heuristic_pick["plan"] == "eng4_k24=27"


def test_from_records_derives_throughput_from_the_median(rows) -> None:
    spec = ConvSpec(n=2, c=8, h=8, w=8, k=8)
    r = RunResult.from_records(spec, _records(rows))
    row = r.plans.set_index("plan").loc["eng9"]
    assert row["tflops"] == pytest.approx(spec.flops() / (0.025e-3) / 1e12)
    assert row["gbps"] == pytest.approx(spec.min_bytes() / (0.025e-3) / 1e9)
    intensity = spec.flops() / spec.min_bytes()
    roof = min(700.0, 3000.0 * intensity / 1e3)
    assert row["pct_of_ceiling"] == pytest.approx(100 * row["tflops"] / roof)
    assert pd.isna(r.plans.set_index("plan").loc["eng0_k1=2", "tflops"])  # did not run: no throughput


@pytest.mark.parametrize("key, value", [("plans", None), ("plans", {"a": 1}), ("device", "H100"),
                                        ("warnings", "w")])
def test_from_records_refuses_wrong_records(rows, key, value) -> None:
    with pytest.raises(OptionError, match=key):
        RunResult.from_records(ConvSpec(), _records(rows, **{key: value}))
