"""The views of one result, fed a recording made on a real GPU: plan table, label, heuristics sentence, figures,
the selected plan highlighted everywhere; pick and best are the results layer's."""

from __future__ import annotations

import ipywidgets as W
import pytest
from lab_samples import plan_names

import cudnn_lab as cl
from cudnn_lab.provenance import provenance
from cudnn_lab.results import metrics
from cudnn_lab.ui.figures import FigureHost
from cudnn_lab.ui.results_view import ANATOMY_FIGURES, RESULT_FIGURES, ResultView, pick_name
from cudnn_lab.ui.status import StatusLog


@pytest.fixture
def view() -> ResultView:
    log = StatusLog(W)
    return ResultView(W, FigureHost(W, log), log)


def outline_of(fig, plan: str) -> float:
    for trace in fig.data:
        xs = list(trace.x) if trace.x is not None else []
        ids = list(trace.customdata) if trace.customdata is not None else xs
        if plan in ids:
            widths = trace.marker.line.width
            return list(widths)[ids.index(plan)] if isinstance(widths, (list, tuple)) else widths
    raise AssertionError(f"{plan} not drawn")


def test_before_a_result_every_figure_says_so(view: ResultView) -> None:
    assert view.result is None and "No results yet" in view.plans_html.value
    figures = view._figures.figures
    assert set(figures) == set(RESULT_FIGURES + ANATOMY_FIGURES)
    assert all("No results yet" in f.layout.annotations[0].text for f in figures.values())


def recorded(result):
    return provenance(result, recorded=True, name="shipped recording")


def test_a_recording_fills_every_view(view: ResultView, recorded_result) -> None:
    view.show(recorded_result, recorded(recorded_result), recorded_result.spec)
    table = view.plans_html.value
    for plan in recorded_result.plans["plan"]:
        assert plan in table  # the full table names every plan
    titles = [c["title"] for c in view.plans_table.columns]
    for column in ("rank", "engine", "knobs", "median (µs)", "IQR (µs)", "error (rel. L2)", "passes",
                   "workspace"):
        assert column in titles
    assert view.plans_table.plans_shown() == plan_names(recorded_result)  # the heuristic's order at first
    assert "<details class='cl-all-columns'>" in table and ">behaviour notes</th>" in table  # the rest: one click
    assert "RECORDED" in view.info.value and "shipped recording" in view.info.value
    assert recorded_result.device["gpu"] in view.info.value and recorded_result.device["driver"] in view.info.value
    assert "9.19.0" in view.info.value and recorded_result.created[:10] in view.info.value
    pick = metrics.pick(recorded_result.plans)["plan"]
    assert view.selected == pick == pick_name(recorded_result)
    assert [v for _, v in view.plan_select.options] == plan_names(recorded_result)
    regret = metrics.regret(recorded_result.plans)
    assert f"{regret:.2f}x" in view.heuristics_html.value  # the sentence uses the results layer's regret
    for key in RESULT_FIGURES:
        assert len(view._figures.figures[key].data) >= 1, key
        assert len(view._figures.shown(key)["data"]) >= 1, key  # the pane shows the figure
    assert view._log.messages == []


def test_selecting_a_plan_highlights_it_everywhere(view: ResultView, recorded_result) -> None:
    view.show(recorded_result, recorded(recorded_result), recorded_result.spec)
    pick, other = view.selected, plan_names(recorded_result)[-1]
    view.plan_select.value = other
    assert view.selected == other
    assert view.plans_table.selected == other
    for key in ("latency", "heuristics", "errors", "roofline"):
        fig = view._figures.figures[key]
        assert outline_of(fig, other) > outline_of(fig, pick), key
    view.select(None)
    assert view.selected is None and view.plans_table.selected is None
    view.plans_table.selected = other  # a click on a row in the Plans table: the same path as the dropdown
    assert view.selected == other == view.plan_select.value
    assert outline_of(view._figures.figures["latency"], other) > outline_of(view._figures.figures["latency"], pick)
    with pytest.raises(cl.OptionError):
        view.select("eng999")


def test_a_changed_problem_marks_the_result_stale(view: ResultView, recorded_result) -> None:
    view.show(recorded_result, recorded(recorded_result), recorded_result.spec)
    assert "cl-stale" not in view.info.value
    view.label(recorded_result.spec.replace(n=8))
    assert "cl-stale" in view.info.value and recorded_result.spec.label() in view.info.value


def test_a_run_measured_here_says_so(view: ResultView, recorded_result) -> None:
    view.show(recorded_result, provenance(recorded_result, recorded=False), recorded_result.spec)
    assert "MEASURED HERE" in view.info.value and "RECORDED" not in view.info.value


@pytest.mark.parametrize("name", ["h100_pool_max_fp16", "h200_rnn_gru_fp32_bwd"])
def test_the_heuristics_view_of_a_classic_call_says_it_has_none(view: ResultView, name: str) -> None:
    """Issue 24: a classic call (no heuristics) gets one sentence naming the cuDNN call that runs instead, no empty
    figure box, and no 'first choice' or 'engine -1' anywhere in the Heuristics view."""
    result = cl.load_results(name)
    view.show(result, recorded(result), result.spec)
    text = view.heuristics_html.value
    assert "A classic call has no heuristics" in text
    assert ("cudnnPoolingForward" if "pool" in name else "cudnnRNNForward") in text
    assert "engine -1" not in text and "first choice" not in text
    assert view._figures.shown("heuristics") is None and view._figures.pane("heuristics").layout.display == "none"
    other = cl.load_results("h100_conv_nhwc_fp16")  # a graph result: the heuristics figure is back
    view.show(other, recorded(other), other.spec)
    assert "first choice" in view.heuristics_html.value and view._figures.shown("heuristics") is not None
