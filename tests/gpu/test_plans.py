"""Plan bookkeeping that needs no GPU: knob settings read losslessly from plan names."""

from __future__ import annotations

from cudnn_lab.gpu.plans import check_modes, knobs_of


def test_knobs_come_from_the_plan_name_by_knob_number() -> None:
    assert knobs_of("eng32_k2=2_k6=3_k13=1_k14=0_k22=1", {}) == {"k2": 2, "k6": 3, "k13": 1, "k14": 0, "k22": 1}


def test_negative_knob_values_survive() -> None:
    assert knobs_of("eng4_k24=-1", {}) == {"k24": -1}


def test_plan_without_knobs_has_none() -> None:
    assert knobs_of("eng0", {}) == {}


def test_heuristic_modes_are_normalized_and_deduplicated() -> None:
    assert check_modes(["a", "FALLBACK", "A"]) == ("A", "FALLBACK")
