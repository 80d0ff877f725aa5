"""The forecast's model lines in a run's Latency and Roofline views (issue 35): drawn only when asked, with the
numbers whatif/ gives (the plots do not recompute them), each named with its validation error; a note where none."""

from __future__ import annotations

import math

import pytest

from cudnn_lab import plots
from cudnn_lab.results import RunResult, metrics
from cudnn_lab.whatif.speed_lines import model_lines
from cudnn_lab.whatif.speed_models import RECORDED_DIR

pytest.importorskip("plotly")


@pytest.fixture(scope="module")
def run() -> RunResult:
    return RunResult.load(RECORDED_DIR / "h200_conv_nhwc_fp16.json")


def _named(fig, name):
    return [t for t in fig.data if t.name == name]


def test_model_lines_come_from_the_forecast_with_their_errors(run):
    lines = model_lines(run)
    assert lines.gpu == "h200" and lines.source.startswith("h100_")
    assert {line.predictor for line in lines.lines} >= {"transfer", "roofline"}
    for line in lines.lines:
        assert line.mape is not None and f"{line.mape:.1f}%" in line.label
        assert line.times_ms and all(math.isfinite(v) and v > 0 for v in line.times_ms.values())


def test_latency_draws_the_model_points_beside_the_bars(run):
    plain = plots.latency_bar(run)
    fig = plots.latency_bar(run, models=True)
    lines = model_lines(run)
    for line in lines.lines:
        assert not _named(plain, line.label)
        (trace,) = _named(fig, line.label)
        assert list(trace.y) == pytest.approx([line.times_ms[p] * 1e3 for p in trace.x])
    assert "model lines: " in fig.layout.title.text and "model lines" not in plain.layout.title.text


def test_roofline_draws_the_datasheet_roofs_and_model_points(run):
    fig = plots.roofline(run, models=True)
    lines = model_lines(run)
    roofs = [t for t in fig.data if (t.name or "").startswith("datasheet roofline h200")]
    assert len(roofs) == 1 and max(roofs[0].y) == pytest.approx(lines.datasheet_tflops)
    assert f"{lines.roofline_mape:.1f}%" in roofs[0].name
    (transfer,) = _named(fig, next(line.label for line in lines.lines if line.predictor == "transfer"))
    want = sorted(metrics.tflops(run.spec.flops(), ms) for ms in lines.lines[0].times_ms.values())
    assert sorted(transfer.y) == pytest.approx(want)
    measured = metrics.intensity(run.spec.flops(), run.spec.min_bytes())
    models = [t for t in fig.data if t.name in {line.label for line in lines.lines}]
    xs = [t.x[0] for t in models]
    assert all(len(set(t.x)) == 1 for t in models) and measured < xs[0] < xs[-1] < 3 * measured  # beside, apart


def test_the_note_wraps_under_the_title() -> None:
    """The note's lines are at most 60 characters: a line of 80 was cut in a 460 px pane (the Lab at 1280 px)."""
    fig = plots.latency_bar(RunResult.load(RECORDED_DIR / "h100_conv_nhwc_fp16_bias_relu.json"), models=True)
    title = fig.layout.title.text
    notes = [part for part in title.split("<br>") if "model lines" in part or "json" in part]
    assert notes and all(len(part.split(">", 1)[1].split("<")[0]) <= 60 for part in notes)
    assert fig.layout.margin.t >= 36 + 19 * (title.count("<br>") + 1)  # room for every line


def test_a_gpu_without_facts_gets_a_note_not_a_line(run):
    other = RunResult.load(RECORDED_DIR / "h200_conv_nhwc_fp16.json")
    object.__setattr__(other, "device", {**other.device, "gpu": "test GPU"})
    lines = model_lines(other)
    assert not lines.lines and "test GPU" in lines.note
    fig = plots.latency_bar(other, models=True)
    assert len(fig.data) == len(plots.latency_bar(other).data)
    assert "model lines: none" in fig.layout.title.text


def test_the_rooflines_note_on_its_roofs_has_a_line_of_its_own() -> None:
    """At 1280 with the file browser (a 430 px pane) the device line with '; roofs measured on this GPU' after it was
    cut; each title line now holds one thing."""
    fig = plots.roofline(RunResult.load(RECORDED_DIR / "h100_conv_nhwc_fp16_bias_relu.json"))
    lines = [line.split(">", 1)[-1].removesuffix("</span>") for line in fig.layout.title.text.split("<br>")]
    assert "roofs measured on this GPU" in lines
    assert not any("; roofs measured" in line for line in lines)
