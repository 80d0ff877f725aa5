"""The one definition of pick, best, regret, throughput and the roofline, for a plan table and for sweep frames;
checked against hand-made tables and the recordings shipped with the kit."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.errors import OptionError
from cudnn_lab.results import metrics, plans_frame


def _plans(rows: list[tuple]) -> pd.DataFrame:
    """rows: (plan, rank, status, median_ms, pass_cudnn)."""
    return plans_frame([{"plan": p, "engine_id": i, "heuristic_rank": r, "status": s, "median_ms": m,
                         "pass_cudnn": ok} for i, (p, r, s, m, ok) in enumerate(rows)])


PLANS = _plans([("a", 0, "build_failed", None, None), ("b", 1, "ok", 0.30, True), ("c", 2, "ok", 0.10, False),
                ("d", 3, "ok", 0.20, None), ("e", 4, "run_failed", 0.01, None)])


def test_pick_is_the_first_plan_in_heuristic_order_that_ran() -> None:
    assert metrics.pick(PLANS)["plan"] == "b"


def test_best_is_the_fastest_passing_plan_and_unchecked_counts_as_passing() -> None:
    assert metrics.best(PLANS)["plan"] == "d"  # c is faster but fails the band; e did not run


def test_best_falls_back_to_the_fastest_when_none_passes() -> None:
    plans = _plans([("x", 0, "ok", 0.3, False), ("y", 1, "ok", 0.2, False)])
    assert metrics.best(plans)["plan"] == "y"


def test_regret_is_pick_over_best() -> None:
    assert metrics.regret(PLANS) == pytest.approx(0.30 / 0.20)


def test_no_plan_ran_gives_none_everywhere() -> None:
    plans = _plans([("a", 0, "build_failed", None, None)])
    assert metrics.pick(plans) is None and metrics.best(plans) is None and metrics.regret(plans) is None
    assert metrics.timed(plans).empty


def test_timed_sorts_fastest_first_and_drops_untimed() -> None:
    assert list(metrics.timed(PLANS)["plan"]) == ["c", "d", "b"]


def test_throughput_from_flops_bytes_and_milliseconds() -> None:
    assert metrics.throughput(2e12, 4e9, 1000.0) == (pytest.approx(2.0), pytest.approx(4.0))
    assert metrics.tflops(1e9, 0) is None and metrics.gbps(1e9, None) is None and metrics.tflops(None, 1) is None


def test_ridge_and_roof_of_measured_ceilings() -> None:
    assert metrics.ridge(800.0, 4000.0) == pytest.approx(200.0)  # FLOP/byte where 800 TFLOP/s meets 4 TB/s
    assert metrics.roof(50.0, 800.0, 4000.0) == pytest.approx(200.0)  # memory bound: 4000 GB/s x 50 FLOP/B
    assert metrics.roof(1000.0, 800.0, 4000.0) == pytest.approx(800.0)  # compute bound
    assert metrics.roof(10.0, None, 4000.0) == pytest.approx(40.0) and metrics.roof(10.0, None, None) is None
    assert metrics.ridge(0, 4000.0) is None and metrics.ridge(float("nan"), 1.0) is None
    assert metrics.pct_of_roof(100.0, 50.0, 800.0, 4000.0) == pytest.approx(50.0)


@pytest.mark.parametrize("value, finite", [(1, True), (0.5, True), (float("nan"), False), (None, False),
                                           ("1", True), ("x", False), (True, False), (pd.NA, False),
                                           (10**400, False)])
def test_is_finite(value, finite) -> None:
    assert metrics.is_finite(value) is finite


def test_recorded_run_agrees_with_its_own_columns() -> None:
    result = cl.load_results("h200_conv_nhwc_fp16")
    best = metrics.best(result.plans)
    spec = result.spec
    assert best["tflops"] == pytest.approx(metrics.tflops(spec.flops(), best["median_ms"]))
    at = metrics.intensity(spec.flops(), spec.min_bytes())
    pct = metrics.pct_of_roof(best["tflops"], at, result.ceilings["tflops"], result.ceilings["gbps"])
    assert best["pct_of_ceiling"] == pytest.approx(pct)
    assert result.regret == metrics.regret(result.plans) >= 1.0


@pytest.fixture(scope="module")
def sweep() -> pd.DataFrame:
    return cl.load_results("h200_standard")


def test_sweep_flags_agree_with_the_plan_table_rules(sweep) -> None:
    """The recorded is_pick / is_best flags are what metrics.pick and metrics.best say for each point."""
    ran = metrics.sweep_ran(sweep)
    for _, rows in list(ran.groupby("point_id"))[:40]:
        assert metrics.pick(rows)["plan"] == rows[rows["is_pick"]]["plan"].iloc[0]
        assert metrics.best(rows)["median_ms"] == rows[rows["is_best"]]["median_ms"].iloc[0]


def test_sweep_chosen_gives_one_row_per_point_that_ran(sweep) -> None:
    ran_points = metrics.sweep_ran(sweep)["point_id"].nunique()
    for which in ("pick", "best"):
        chosen = metrics.sweep_chosen(sweep, which)
        assert len(chosen) == chosen["point_id"].nunique() == ran_points
    assert len(metrics.sweep_chosen(sweep, "all")) == len(metrics.sweep_ran(sweep))


def test_sweep_chosen_without_flags_applies_the_same_rules(sweep) -> None:
    flagged = metrics.sweep_chosen(sweep, "best").set_index("point_id")["median_ms"]
    derived = metrics.sweep_chosen(sweep.drop(columns=["is_pick", "is_best"]), "best").set_index("point_id")
    pd.testing.assert_series_equal(derived["median_ms"].sort_index(), flagged.sort_index())


def test_sweep_regret_is_pick_over_best_per_point(sweep) -> None:
    rows = metrics.sweep_regret(sweep)
    assert len(rows) == rows["point_id"].nunique() > 0
    assert (rows["regret"] >= 1.0 - 1e-12).all()
    first = rows.iloc[0]
    assert first["regret"] == pytest.approx(first["median_ms"] / first["best_ms"])


def test_sweep_regret_of_nothing_is_empty() -> None:
    assert metrics.sweep_regret(pd.DataFrame()).empty


def test_row_rates_fall_back_to_flops_over_median() -> None:
    row = pd.Series({"flops": 2e12, "min_bytes": 1e9, "median_ms": 1000.0, "tflops": None, "gbps": math.nan})
    assert metrics.row_tflops(row) == pytest.approx(2.0) and metrics.row_gbps(row) == pytest.approx(1.0)
    assert metrics.row_intensity(row) == pytest.approx(2000.0)


def test_which_must_be_known() -> None:
    with pytest.raises(OptionError, match="which"):
        metrics.sweep_chosen(pd.DataFrame({"median_ms": [1.0]}), "fastest")


def test_baseline_lines_list_every_measured_baseline_with_its_title() -> None:
    """The eager op (off, on) first, then a family's extras (MoE's dense GEMM and grouped_mm); failed, missing and
    non-positive ones are left out; an extra the table does not know keeps its own name."""
    info = {"benchmark_off_ms": 0.2, "benchmark_off_iqr_ms": 0.01, "benchmark_on_ms": float("nan"),
            "grouped_mm_ms": 0.21, "dense_gemm_ms": 0.18, "dense_gemm_iqr_ms": 0.001, "new_thing_ms": 0.3,
            "broken_error": "no kernel", "zero_ms": 0.0, "allow_tf32_cudnn": True}
    lines = metrics.baseline_lines(info)
    assert [name for name, _, _ in lines] == ["benchmark_off", "dense_gemm", "grouped_mm", "new_thing"]
    assert lines[1][1] == "dense GEMM, same FLOPs" and lines[3][1] == "new thing" and lines[1][2] == 0.18
    assert metrics.baseline_lines(None) == []
