"""benchmarks/plans.py's verdict rows, from a round the H200 recorded (2026-11-29): where a default-options run's
floor is cuDNN's compile of one plan (in the run's process or in a helper), and kit/CUPTI from readings in turns."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "benchmarks" / "results" / "h200_2026-11-29_round39_defaults.json"
CUPTI = ROOT / "benchmarks" / "results" / "h200_2026-11-29_round39_plans_cupti.json"
#: the first round that took three readings in turns (H200, 2026-11-29)
CUPTI_READS = ROOT / "benchmarks" / "results" / "h200_2026-11-29_round43_plans_cupti.json"


@pytest.fixture(scope="module")
def plans():
    spec = importlib.util.spec_from_file_location("bench_plans", ROOT / "benchmarks" / "plans.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_plans"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("bench_plans", None)


@pytest.fixture(scope="module")
def rows() -> dict:
    return json.loads(RECORDED.read_text())["fresh"]["defaults"]["rows"]


def test_a_plan_a_helper_compiled_is_the_floor_when_it_is_the_slowest(plans, rows) -> None:
    r = rows["DenseNet conv + concatenate"]
    helper_ms = [p["build_ms"] for p in r["parallel_build"]["plans"]]
    ms, where = plans.compile_floor(r)
    assert where == "in a helper" and r["slowest_build_ms"] is None
    assert ms == max(helper_ms) and ms <= r["run_s"] * 1e3
    row = next(t for t in plans.targets([], {"defaults": {"rows": {"DenseNet conv + concatenate": r}}}, None))
    assert f"(in a helper) {ms / 1e3:.2f} s is the floor" in row[2]
    assert f"the kit's time beside it {r['run_s'] - ms / 1e3:.2f} s" in row[2]


def test_a_plan_built_in_the_runs_process_is_the_floor_without_helpers(plans, rows) -> None:
    r = rows["DeepSpeech2 bidirectional GRU"]
    ms, where = plans.compile_floor(r)
    assert (ms, where) == (r["slowest_build_ms"], "in the run's process")
    assert "in a helper in n/a" in plans._defaults_line(r)


def test_a_run_that_built_nothing_has_no_floor_and_damaged_times_are_skipped(plans, rows) -> None:
    r = dict(rows["GPT-2 layernorm training"], slowest_build_ms=None, parallel_build={"plans": []})
    assert plans.compile_floor(r) is None
    damaged = dict(r, parallel_build={"plans": [{"build_ms": None}, {"build_ms": float("nan")}, {"build_ms": 5.0}]})
    assert plans.compile_floor(damaged) == (5.0, "in a helper")


def test_kit_over_cupti_is_judged_on_the_median_of_readings_in_turns_and_shows_their_range(plans) -> None:
    recorded = json.loads(CUPTI.read_text())["rows"]
    conv = next(r for r in recorded if r["problem"] == "rn50 1x1 64->256" and r["kernels_per_call"] == 1)
    row = dict(conv, **{"kit/cupti": 1.025, "kit/cupti_reads": [1.039, 1.025, 1.021]})
    (target,) = [t for t in plans.targets([row], {}, None) if "kit (" in t[0]]
    assert target[3] is True and "median of 3 readings in turns with CUPTI's, 1.021..1.039" in target[2]
    assert [t[3] for t in plans.targets([conv], {}, None) if "kit (" in t[0]] == [False]  # the round's one reading


def test_a_recorded_three_reading_row_is_judged_on_its_own_median_and_range(plans) -> None:
    recorded = json.loads(CUPTI_READS.read_text())["rows"]
    conv = next(r for r in recorded if r["problem"] == "rn50 1x1 64->256")
    reads = conv["kit/cupti_reads"]
    assert len(reads) == plans.KIT_CUPTI_READS and min(reads) <= conv["kit/cupti"] <= max(reads)
    (target,) = [t for t in plans.targets([conv], {}, None) if "kit (" in t[0]]
    assert target[3] is (abs(conv["kit/cupti"] - 1.0) <= 0.03)
    assert f"{conv['kit/cupti']:.3f} (median of 3 readings in turns with CUPTI's, {min(reads):.3f}..{max(reads):.3f}" \
        in target[2]
