"""Numerical notes' helpers that need no GPU: which plans a note graph can remake by name (issue 36)."""

from __future__ import annotations

from cudnn_lab.gpu.notes import remade_configs


def test_plans_named_with_replayable_knobs_are_remade_in_order_once_each() -> None:
    out = remade_configs(["eng62_k2=5_k13=1_k18=0_k25=1_k27=4_k28=1", "eng0", "eng0"])
    assert out is not None and [e for e, _ in out] == [62, 0]
    assert {k.name: v for k, v in out[0][1].items()}["TILE_SIZE"] == 5 and out[1][1] == {}


def test_a_plan_that_cannot_be_remade_makes_the_whole_list_fall_back_to_the_heuristics() -> None:
    assert remade_configs(["eng62_k2=5", "not a plan name"]) is None
    assert remade_configs(["eng0", "eng45_k2=5_k5=4_k14=4"]) is None  # k5: a knob the frontend cannot name
