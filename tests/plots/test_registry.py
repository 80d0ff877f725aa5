"""The one registry of a run's figures (cudnn_lab/plots/registry.py): every entry draws for the shipped recordings
(made on real GPUs), and the figures the Lab's views, the HTML report and the CLI show are exactly the registry's."""

from __future__ import annotations

import ipywidgets as W
import pytest

import cudnn_lab as cl
from cudnn_lab.cli import REPORT_TEXT
from cudnn_lab.errors import OptionError
from cudnn_lab.plots.registry import RUN_FIGURES, VIEWS, figures_of_view, run_figure
from cudnn_lab.provenance import provenance
from cudnn_lab.report import _figures
from cudnn_lab.ui.figures import FigureHost
from cudnn_lab.ui.results_view import ANATOMY_FIGURES, RESULT_FIGURES, ResultView
from cudnn_lab.ui.status import StatusLog

RUNS = sorted(cl.recorded_datasets().query("kind == 'run'")["name"])
#: An explored frontend graph, a classic call (pooling) and a recording without an engine-space sample.
SAMPLES = ("h100_conv_nhwc_fp16", "h100_pool_max_fp16", "h200_conv_nhwc_fp16_bias_relu")


def _title(fig: object) -> str:
    return fig.layout.title.text.split("<br>")[0]  # type: ignore[attr-defined]


def test_names_are_unique_and_every_view_and_title_is_given() -> None:
    names = [f.name for f in RUN_FIGURES]
    assert len(names) == len(set(names)) and all(f.title and f.view for f in RUN_FIGURES)
    assert [f.name for view in VIEWS for f in figures_of_view(view)] == names  # a view's figures are adjacent
    assert run_figure("roofline").view == "Roofline"
    with pytest.raises(KeyError, match="latency"):
        run_figure("nonesuch")


@pytest.mark.parametrize("name", RUNS)
def test_every_entry_draws_for_a_shipped_recording(name: str) -> None:
    result = cl.load_results(name)
    for figure in RUN_FIGURES:
        if figure.applies(result):
            assert _title(figure.draw(result, None)), (name, figure.name)  # the Lab's plan pick: tests/ui


def test_a_figure_a_result_does_not_have_would_not_draw() -> None:
    result = cl.load_results("h200_conv_nhwc_fp16_bias_relu")  # recorded without an engine-space sample
    unsampled = [f for f in RUN_FIGURES if not f.applies(result)]
    assert [f.view for f in unsampled] == ["Anatomy", "Anatomy"]
    for figure in unsampled:
        with pytest.raises(OptionError, match="no engine-space sample"):
            figure.draw(result, None)


def test_the_lab_shows_the_registrys_figures_in_their_views() -> None:
    log = StatusLog(W)
    host = FigureHost(W, log)
    view = ResultView(W, host, log)
    assert set(RESULT_FIGURES + ANATOMY_FIGURES) == {f.name for f in RUN_FIGURES} == set(host.figures)
    for figure in RUN_FIGURES:
        assert host.pane(figure.name) in view.views[figure.view].children, figure.name
    for name in SAMPLES:
        result = cl.load_results(name)
        view.show(result, provenance(result, recorded=True, name=name), result.spec)
        wanted = {f.name for f in RUN_FIGURES if f.applies(result) and not f.said_instead(result)}
        assert set(host.figures) == wanted, name
        for figure in RUN_FIGURES:
            if figure.name in wanted:
                assert _title(host.figures[figure.name]) == _title(figure.draw(result, view.selected)), name
    assert log.messages == []


@pytest.mark.parametrize("name", SAMPLES)
def test_the_report_shows_the_registrys_figures(name: str) -> None:
    result = cl.load_results(name)
    wanted = [_title(f.draw(result, None)) for f in RUN_FIGURES if f.in_report and f.applies(result)]
    assert [_title(f) for f in _figures(result)] == wanted and wanted


def test_the_cli_names_every_figure_its_report_holds() -> None:
    for figure in RUN_FIGURES:
        assert (figure.title in REPORT_TEXT) == figure.in_report, figure.name
