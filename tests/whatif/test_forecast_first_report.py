"""What a first report in a fresh process pays for the forecasts and the recorded answers (issue 39), kept without
weakening them: the validation's fits computed from one error grid are the fits a fresh grid per held-out set gives,
the forecasts of several targets find the shipped recording once, a compare frame's answers are shared by the frames
pandas derives from it (not deep-copied at each step), and the report starts cuDNN's worker before it gathers."""

from __future__ import annotations

import copy
import itertools
import math
import threading

import numpy as np
import pytest

from cudnn_lab import report_inputs
from cudnn_lab.results.datasets import load_results
from cudnn_lab.whatif import forecasts, heuristics, speed, speed_validation
from cudnn_lab.whatif.gpu_facts import load_gpu_facts

RECORDING = "h100_conv_nhwc_fp16"
TARGETS = ("h100", "h200", "sm80", "sm90", "sm100")


def _pair_items(src_key: str, scope: str) -> tuple[list[tuple], list[str]]:
    """The validation's items and their problems, as _validate_pairs gathers them."""
    facts = load_gpu_facts()
    items, _, problems = speed_validation.pair_items(facts[src_key], facts["h200" if src_key == "h100" else "h100"],
                                                     scope)
    return items, problems


@pytest.mark.parametrize("src_key,scope", [("h100", "best"), ("h200", "every")])
def test_held_out_fits_from_one_grid_are_the_fits_of_a_fresh_grid(src_key: str, scope: str) -> None:
    items, problems = _pair_items(src_key, scope)
    grid = speed_validation._pair_errors(items)
    assert grid.shape == (len(speed_validation.ALPHAS), len(speed_validation.SCALES), len(items))
    held = np.array([problems.index(p) for p in problems])
    for name in dict.fromkeys(problems):
        kept = [it for it, p in zip(items, problems) if p != name]
        taken = grid.take(np.flatnonzero(held != problems.index(name)), axis=2)
        assert speed_validation._grid_best(taken) == speed_validation._fit_pairs(kept), name


def test_carve_out_fits_are_those_of_one_grid_point_at_a_time() -> None:
    points = speed_validation._sm_points()
    for skip in [None, *dict.fromkeys(plan for plan, _, _ in points)][:6]:
        c, r = (np.array(x) for x in zip(*[(c, r) for plan, c, r in points if plan != skip]))
        best: tuple[float, tuple[float, float, float]] = (math.inf, speed_validation.SM_DEFAULT)
        for e, p, q in itertools.product(*speed_validation.SM_GRID):
            err = float(np.mean(np.abs(((c / e) ** p + q ** p) ** (1 / p) / r - 1.0)))
            if err < best[0] - 1e-12:
                best = (err, (e, p, q))
        assert speed_validation._sm_fit(skip) == best[1], skip


def test_forecasts_of_several_targets_find_the_shipped_recording_once(monkeypatch) -> None:
    spec = load_results(RECORDING).spec
    expected = [speed.forecast(spec, t) for t in TARGETS]
    reads: list[str] = []
    read = speed._read_recording
    monkeypatch.setattr(speed, "_read_recording", lambda path: (reads.append(path.name), read(path))[1])
    found = forecasts.forecasts_for(spec, TARGETS)
    source = found[0].source
    assert source == "h200_conv_nhwc_fp16.json"
    # the search reads each shipped recording once at most (it read them all again for each target); then the
    # source once per target and, for its own GPU's target, the other GPU's recording
    assert max(reads.count(name) for name in set(reads) - {source}) == 1
    assert reads.count(source) == 1 + len(TARGETS)
    # the answers of a forecast per target (named 'sm80 (a100_80gb_pcie)' there); h200 from the H100 recording
    assert [{**f.to_dict(), "target": t} for f, t in zip(found, TARGETS) if t != "h200"] == \
        [{**f.to_dict(), "target": t} for f, t in zip(expected, TARGETS) if t != "h200"]
    assert found[1].source == "h100_conv_nhwc_fp16.json" and found[1].plans


def test_a_compare_frames_answers_are_shared_not_deep_copied() -> None:
    result = load_results(RECORDING)
    frame = heuristics.compare(result.spec, ["h100", "h200", "sm80"], measured=result, recorded=True)
    answers = frame.attrs["answers"]
    assert [w.target for w in answers] == ["h100", "h200", "sm80"]
    assert copy.deepcopy(frame.attrs)["answers"] is answers
    assert frame.iloc[:2].attrs["answers"] is answers and frame[["engine_id"]].attrs["answers"] is answers
    row = frame.iloc[0]
    assert row.attrs["answers"] is answers  # a row of the table: pandas copied every plan dict for each before


def _asked_from(monkeypatch) -> list[str]:
    """The threads that start cuDNN's worker during the test (none starts: the machine answers no GPU)."""
    names: list[str] = []

    def started(cudnn_lib):
        names.append(threading.current_thread().name)
        raise heuristics.NoGPUError("no GPU in this test")

    monkeypatch.setattr(heuristics, "_started", started)
    return names


def _join_starts() -> None:
    for thread in threading.enumerate():
        if thread.name == "cudnn_lab asker start":
            thread.join(timeout=30)


def test_the_report_starts_cudnns_worker_before_it_gathers_the_answers(monkeypatch) -> None:
    names = _asked_from(monkeypatch)
    answers = report_inputs.report_answers(load_results(RECORDING))
    _join_starts()
    assert "forecast" in answers.answers and "compare" in answers.answers
    assert names.count("cudnn_lab asker start") == 1 and threading.current_thread().name in names


def test_no_worker_is_started_for_a_problem_without_recorded_answers(monkeypatch) -> None:
    result = load_results(RECORDING)
    monkeypatch.setattr(report_inputs, "recorded_whatifs", lambda: [])
    names = _asked_from(monkeypatch)
    answers = report_inputs.report_answers(result)
    _join_starts()
    assert "forecast" not in answers.answers and names == []
