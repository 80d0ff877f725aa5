"""compare and drift (issue 37): each target asked once, names compared as the kit canonicalizes them; a measured
run of another problem, a missing target list and unknown keywords refused naming the argument; and the verdicts
pinned where the truth is known (a plan is its engine and knobs, however its name is spelt; the best rank and the
best measured time are the smallest)."""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab import whatif as wi
from cudnn_lab.errors import OptionError

CONV = cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
CONV_PLAIN = dataclasses.replace(CONV, epilogue=())
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("names", [["h100", "h100"], ["h100", "H100"], [" h100 ", "h100", "H100"]])
def test_a_target_named_twice_is_asked_once(names: list[str]) -> None:
    frame = wi.compare(CONV, names, recorded=True)
    assert [c for c in frame.columns if c != "engine_id"] == ["h100 plans", "h100 rank"]
    assert int(frame["h100 plans"].sum()) == len(wi.plans_for(CONV, "h100", recorded=True).proposals)
    assert len(frame.attrs["answers"]) == 1


def test_a_compute_capability_spelt_two_ways_is_one_target() -> None:
    frame = wi.compare(CONV, ["sm90", "9.0", "90", "h200"], recorded=True)
    assert [c for c in frame.columns if c.endswith("plans")] == ["sm90 plans", "h200 plans"]
    assert int(frame["sm90 plans"].sum()) == len(wi.plans_for(CONV, "sm90", recorded=True).proposals)


def test_the_cli_asks_a_repeated_target_once(tmp_path: Path) -> None:
    spec = tmp_path / "conv.json"
    spec.write_text(CONV.to_json())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "cudnn_lab.cli", "plans", str(spec), "--target", "h100",
                          "--target", "h100", "--recorded"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("h100 plans") == 1
    rows = [re.fullmatch(r"\s*(\d+)\s+(\d+|<NA>)\s+(\d+|<NA>)\s*", line) for line in out.stdout.splitlines()]
    plans = sum(int(m.group(2)) for m in rows if m and m.group(2) != "<NA>")
    assert plans == len(wi.plans_for(CONV, "h100", recorded=True).proposals)  # 44, not 88


@pytest.mark.parametrize("targets", [None, 5, [5], [object()], [], ["b300"]])
def test_bad_targets_are_refused_naming_targets(targets: Any) -> None:
    with pytest.raises(OptionError) as e:
        wi.compare(CONV, targets, recorded=True)
    assert e.value.option == "targets"


def test_a_single_target_name_is_one_target_not_its_letters() -> None:
    frame = wi.compare(CONV, "h200", recorded=True)
    assert [c for c in frame.columns if c.endswith("plans")] == ["h200 plans"]


@pytest.mark.parametrize("call", [lambda: wi.compare(CONV, ["h100"], colour="red"),
                                  lambda: wi.compare(CONV, ["h100"], sm=66),
                                  lambda: wi.drift(CONV, 91400, "h200", recorded=True),
                                  lambda: wi.drift(CONV, 91400, "h200", colour="red")])
def test_unknown_keywords_are_the_kits_error_naming_them(call: Any) -> None:
    with pytest.raises(OptionError) as e:
        call()
    assert e.value.option in ("colour", "sm", "recorded")


@pytest.mark.parametrize(("args", "option"), [((None,), "other"), ((True,), "other"), ((91400, 5), "target"),
                                               ((91400, ["h100", "h200"]), "target")])
def test_drift_refuses_missing_or_odd_arguments_naming_them(args: tuple[Any, ...], option: str) -> None:
    with pytest.raises(OptionError) as e:
        wi.drift(CONV, *args)
    assert e.value.option == option


def test_spec_none_is_refused_naming_spec() -> None:
    for call in (lambda: wi.compare(None, ["h100"]), lambda: wi.drift(None, 91400)):
        with pytest.raises(OptionError, match="spec"):
            call()


def test_a_measured_run_of_another_problem_is_refused() -> None:
    other = cl.load_results("h200_conv_nhwc_fp16_bias_relu")  # the same conv with a bias+ReLU epilogue
    assert other.spec != CONV_PLAIN
    with pytest.raises(OptionError) as e:
        wi.compare(CONV_PLAIN, ["h200"], measured=other, recorded=True)
    assert e.value.option == "measured"
    with pytest.raises(OptionError, match="measured"):
        wi.compare(CONV, ["h200"], measured="run.json", recorded=True)


# ------------------------------------------------------------------------------------------------ verdicts

def test_the_rank_column_is_each_engines_best_rank() -> None:
    frame = wi.compare(CONV, ["h200"], recorded=True).set_index("engine_id")
    answer = wi.plans_for(CONV, "h200", recorded=True)
    ranks: dict[int, list[int]] = {}
    for p in answer.proposals:
        ranks.setdefault(p["engine_id"], []).append(min(p["ranks"].values()))
    spread = [e for e, r in ranks.items() if min(r) != max(r)]
    assert spread  # engines with plans ranked apart: the best and the worst differ there
    for engine, r in ranks.items():
        assert frame.loc[engine, "h200 rank"] == min(r)
        assert frame.loc[engine, "h200 plans"] == len(r)


def test_the_measured_column_is_each_engines_fastest_plan() -> None:
    run = cl.load_results("h200_conv_nhwc_fp16")
    mine = copy.copy(run)
    mine.plans = run.plans.copy()
    engine = int(mine.plans["engine_id"].value_counts().index[0])
    rows = mine.plans.index[mine.plans["engine_id"] == engine]
    assert len(rows) >= 2
    mine.plans.loc[rows, "median_ms"] = 5.0
    mine.plans.loc[rows[1], "median_ms"] = 2.0  # the known best of this engine
    frame = wi.compare(run.spec, ["h200"], measured=mine, recorded=True).set_index("engine_id")
    col = "measured on NVIDIA H200: best ms"
    assert frame.loc[engine, col] == 2.0
    best = mine.plans.dropna(subset=["median_ms"]).groupby("engine_id")["median_ms"].min()
    shown = frame[col].dropna()
    assert len(shown) and all(shown[e] == best[e] for e in shown.index)


def _plan(engine: int, knobs: dict[str, int], rank: int, *, reverse: bool = False) -> dict[str, Any]:
    items = sorted(knobs.items(), reverse=reverse)
    name = f"eng{engine}_" + "_".join(f"{k}={v}" for k, v in items)
    return {"plan": name, "engine_id": engine, "knobs": dict(items), "behavior_notes": [], "ranks": {"A": rank}}


def _answer(version: int, *plans: dict[str, Any]) -> wi.WhatIf:
    base = wi.plans_for(CONV, "h200", recorded=True)
    return dataclasses.replace(base, cudnn_version=version, proposals=tuple(plans))


def test_first_choice_changed_is_pinned_both_ways() -> None:
    p1 = {"k2": 1, "k13": 0}
    p2 = {"k2": 3, "k13": 1}
    old = _answer(91400, _plan(41, p1, 0), _plan(41, p2, 1))
    same = _answer(91900, _plan(41, p2, 1), _plan(41, p1, 0, reverse=True))  # p1 spelt the other way round
    assert same.proposals[1]["plan"] != old.proposals[0]["plan"]
    assert wi.Drift(old, same).first_choice_changed is False
    moved = _answer(91900, _plan(41, p1, 1), _plan(41, p2, 0))
    assert wi.Drift(old, moved).first_choice_changed is True
    other_engine = _answer(91900, _plan(42, p1, 0))
    assert wi.Drift(old, other_engine).first_choice_changed is True
    assert wi.Drift(old, _answer(91900)).first_choice_changed is True
    assert wi.Drift(_answer(91400), _answer(91900)).first_choice_changed is False
    frame = wi.Drift(old, same).frame()
    assert list(frame["in"]) == ["both", "both"]  # spelt differently, still the same plans
    assert "is the same" in wi.Drift(old, same).summary() and "changed" in wi.Drift(old, moved).summary()


def test_recorded_drift_verdict_matches_the_answers() -> None:
    d = wi.drift(CONV, 91400, "h200")
    def first(w: wi.WhatIf) -> tuple[int, dict[str, int]]:
        p = min((p for p in w.proposals if "A" in p["ranks"]), key=lambda p: p["ranks"]["A"])
        return p["engine_id"], p["knobs"]
    assert d.first_choice_changed == (first(d.old) != first(d.new))


def test_drift_takes_only_answers() -> None:
    with pytest.raises(OptionError):
        wi.Drift("old", pd.DataFrame())


@pytest.mark.parametrize("order", ["best first", "best last", "best between"])
def test_the_rank_column_takes_the_best_rank_whatever_the_order(monkeypatch, order) -> None:
    """Constructed answers where the truth is known: engine 41's plans ranked 7, 0 (in another mode) and 3, listed
    in every order; its column must say 0 (the worst, 7, or the first listed would fail one of the orders)."""
    from cudnn_lab.whatif import heuristics

    def plan(knob: int, ranks: dict[str, int]) -> dict[str, Any]:
        return {**_plan(41, {"k2": knob}, 0), "ranks": ranks}

    best, mid, worst = plan(1, {"A": 9, "B": 0}), plan(2, {"A": 3}), plan(3, {"A": 7})
    plans = {"best first": (best, worst, mid), "best last": (worst, mid, best),
             "best between": (worst, best, mid)}[order]
    answer = _answer(91900, *plans, _plan(42, {"k2": 1}, 5))
    monkeypatch.setattr(heuristics, "plans_for", lambda spec, target, **kw: answer)
    frame = heuristics.compare(CONV, ["h200"]).set_index("engine_id")
    assert frame.loc[41, "h200 rank"] == 0
    assert frame.loc[41, "h200 plans"] == 3
    assert frame.loc[42, "h200 rank"] == 5
