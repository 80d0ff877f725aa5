"""Progressive runs without a GPU: the Progress protocol and stop arguments of cl.run, a partial result (made from a
shipped recording) saved, loaded and shown, the Lab's table filling from rows, and the CLI's first-plan line."""

from __future__ import annotations

import threading

import pytest

import cudnn_lab as cl
from cudnn_lab.cli import FirstPlan
from cudnn_lab.errors import NoGPUError, OptionError
from cudnn_lab.results import RunResult
from cudnn_lab.runs import check_progress, check_stop

RECORDING = "h100_conv_nhwc_fp16_bias_relu"


class Rows:
    """A progress object with only a row hook."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def row(self, row: dict) -> None:
        self.rows.append(row)


def _recorded() -> RunResult:
    return cl.load_results(RECORDING)


def _partial(result: RunResult, n: int) -> RunResult:
    """``result`` as a run stopped after its first ``n`` plans (heuristic order) would return it."""
    plans = result.plans.sort_values("heuristic_rank", kind="stable").head(n).reset_index(drop=True)
    settings = {**result.settings, "partial": True, "stopped": f"stop asked after {n} of {len(result.plans)} plans"}
    return RunResult(spec=result.spec, plans=plans, device=result.device, torch={}, ceilings={}, settings=settings,
                     warnings=list(result.warnings), created=result.created)


def test_progress_may_be_a_function_or_an_object_with_a_row_hook() -> None:
    rows = Rows()
    assert check_progress(rows) is rows and check_progress(print) is print
    assert check_progress(None) is None and check_progress(False) is None
    for bad in (True, "bar", 3, object()):
        with pytest.raises(OptionError, match="progress"):
            check_progress(bad)


def test_stop_may_be_a_function_or_an_event() -> None:
    event = threading.Event()
    stop = check_stop(event)
    assert stop is not None and stop() is False
    event.set()
    assert stop() is True
    assert check_stop(None) is None and check_stop(lambda: True)() is True
    for bad in (True, "now", 1):
        with pytest.raises(OptionError, match="stop"):
            check_stop(bad)


def test_run_refuses_a_bad_stop_before_the_gpu_and_takes_a_row_hook() -> None:
    with pytest.raises(OptionError, match="stop"):
        cl.run(cl.ConvSpec(), stop="now")
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:
        with pytest.raises(NoGPUError):
            cl.run(cl.ConvSpec(), progress=Rows(), stop=threading.Event())


def test_a_recorded_run_is_not_partial_and_a_stopped_one_is_saved_and_loaded_as_partial(tmp_path) -> None:
    result = _recorded()
    assert result.partial is False and "PARTIAL" not in result.summary()
    part = _partial(result, 2)
    assert part.partial and len(part.plans) == 2
    assert "PARTIAL: stop asked after 2 of" in part.summary()
    back = RunResult.load(part.save(tmp_path / "part.json"))
    assert back.partial and back.settings["stopped"] == part.settings["stopped"]
    assert list(back.plans["plan"]) == list(part.plans["plan"])


def test_the_lab_table_fills_in_as_rows_arrive_and_stop_is_off_when_idle() -> None:
    from cudnn_lab.ui import Lab
    from cudnn_lab.ui.lab import LiveRows

    lab = Lab(gpu=False)
    assert lab.stop_button.disabled  # idle
    lab.stop()
    assert not lab._stop.is_set()  # nothing to stop
    result = _recorded()
    rows = result.plans.sort_values("heuristic_rank", kind="stable").to_dict("records")
    lab.view = "Plans"  # the user watches the rows arrive
    live = LiveRows(lab, result.spec)
    table = lab.results.plans_table
    for i, row in enumerate(rows[:3], start=1):
        live.row(row)
        assert [r["plan"] for r in table.rows] == [r["plan"] for r in rows[:i]]  # one model, refilled
        assert f"Run in progress: {i} plan" in lab.results.plans_html.value  # not "no results yet"
    ok = next(r["plan"] for r in rows[:3] if r["status"] == "ok")
    assert table.pick == ok
    lab.show_result(result)  # the run's end: the whole table replaces the line
    assert "Run in progress" not in lab.results.plans_html.value


def test_the_lab_banner_and_status_say_a_result_is_partial() -> None:
    from cudnn_lab.ui import Lab

    lab = Lab(gpu=False)
    lab.show_result(_partial(_recorded(), 2))
    assert "PARTIAL run (stop asked after 2 of" in lab.results.info.value
    assert "PARTIAL" in lab.status_log.status.value
    lab.redraw()  # the banner is drawn again: the note stays
    assert "PARTIAL run" in lab.results.info.value
    lab.show_result(_recorded())
    assert "PARTIAL" not in lab.results.info.value


def test_the_cli_says_the_first_measured_plan_once(capsys) -> None:
    first = FirstPlan()
    first.row({"plan": "eng9", "status": "build_failed", "heuristic_rank": 0})
    first.row({"plan": "eng4_k24=27", "status": "ok", "heuristic_rank": 1, "median_ms": 0.0123, "pass_cudnn": True})
    first.row({"plan": "eng7", "status": "ok", "heuristic_rank": 2, "median_ms": 0.01, "pass_cudnn": True})
    err = capsys.readouterr().err
    assert err.count("first measured plan") == 1 and "eng4_k24=27" in err and "12.3 us" in err
    assert "passes cuDNN's band" in err and "eng7" not in err
