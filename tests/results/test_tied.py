"""results/metrics.py tied_with_best: plans within 3% or within each other's spread are tied with the best."""

from __future__ import annotations

from cudnn_lab.results import plans_frame
from cudnn_lab.results.metrics import TIE_REL, best, tied_with_best


def rows(*plans: tuple[str, float, float, bool]) -> object:
    return plans_frame([{"plan": p, "status": "ok", "median_ms": ms, "iqr_ms": iqr, "pass_cudnn": ok,
                         "heuristic_rank": i} for i, (p, ms, iqr, ok) in enumerate(plans)])


def test_a_clear_winner_stands_alone() -> None:
    assert tied_with_best(rows(("a", 1.10, 0.01, True), ("b", 1.00, 0.01, True), ("c", 2.0, 0.01, True))) == ["b"]


def test_plans_within_three_percent_are_tied_best_first_then_by_median() -> None:
    plans = rows(("a", 1.02, 0.001, True), ("b", 1.00, 0.001, True), ("c", 1.029, 0.001, True),
                 ("d", 1.05, 0.001, True))
    assert TIE_REL == 0.03
    assert tied_with_best(plans) == ["b", "a", "c"]
    assert best(plans)["plan"] == "b"


def test_overlapping_spreads_tie_even_beyond_three_percent() -> None:
    # b: 1.00 +- 0.05; a: 1.08 +- 0.05: the ranges meet, so a repeated run may name either.
    assert tied_with_best(rows(("a", 1.08, 0.10, True), ("b", 1.00, 0.10, True))) == ["b", "a"]


def test_a_plan_outside_cudnns_band_is_never_tied_with_a_passing_best() -> None:
    assert tied_with_best(rows(("a", 0.99, 0.0, False), ("b", 1.00, 0.0, True))) == ["b"]


def test_nothing_ran_means_no_names() -> None:
    assert tied_with_best(plans_frame([{"plan": "a", "status": "build_failed"}])) == []
