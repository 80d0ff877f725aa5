"""Issue 35 step 4: the forecast of cuDNN's pick per target in the Lab's What-if view and in the report, labelled a
forecast (not a measurement): for a problem recorded on an H100 and an H200, h200 gets a number (from the H100
recording, with its interval, predictor and validation error) and a target without a validated forecast gets
"measure this" with the reason; a damaged recording is one sentence in the part."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from lab_samples import CONV_RECORDING

import cudnn_lab as cl
from cudnn_lab.cli import report_answers
from cudnn_lab.plots.forecast import FORECAST_LABEL, forecast_rows
from cudnn_lab.plots.registry import entry
from cudnn_lab.plots.tables import us_text
from cudnn_lab.report import ReportAnswers, report_html
from cudnn_lab.ui import Lab
from cudnn_lab.whatif import speed
from cudnn_lab.whatif.forecasts import forecasts_for


@pytest.fixture(scope="module")
def conv() -> cl.RunResult:
    return cl.load_results(CONV_RECORDING)


def _shown(targets: list[str]) -> Lab:
    lab = Lab(gpu=False)
    lab.load_recorded(CONV_RECORDING)
    lab.whatif_view.targets = targets
    lab.view = "What-if"
    return lab


def test_the_view_shows_a_number_for_h200_and_measure_this_where_none_is_validated(conv: cl.RunResult) -> None:
    view = _shown(["h200", "sm100"]).whatif_view
    assert view.forecasts is not None and [f.target for f in view.forecasts] == ["h200", "sm100 (b200)"]
    part = view.forecast_html.value
    assert part == entry("forecast").draw(view.forecasts)  # the registry's table, in the view's part
    assert FORECAST_LABEL in part and "not a measurement" in part
    h200, sm100 = view.forecasts
    assert h200.source_gpu == "h100"  # forecast from the H100 recording, not from the H200's own
    ours = cl.forecast(conv.spec, "h200", speed.RECORDED_DIR / f"{CONV_RECORDING}.json")
    pick = ours.pick
    assert pick is not None and pick.predicted_ms is not None and pick.validation_mape is not None
    number = f"{us_text(pick.predicted_ms)} ({us_text(pick.low_ms)}–{us_text(pick.high_ms)})"
    assert f">{number}<" in part and f">{pick.predictor} ±{pick.validation_mape:.1f}%<" in part
    rows = {r["target"]: r for r in forecast_rows(view.forecasts)}
    assert rows["sm100 (b200)"]["forecast"] == "measure this" and rows["sm100 (b200)"]["why"]
    assert html.escape(rows["sm100 (b200)"]["why"]) in part


def test_a_damaged_recording_is_one_sentence_in_the_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "h200_damaged.json").write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(speed, "RECORDED_DIR", tmp_path)
    view = _shown(["h200"]).whatif_view
    part = view.forecast_html.value
    assert view.forecasts is None and "cl-forecast-none" in part and "h200_damaged.json" in part
    assert part.count("<p") == 1 and "<table" not in part
    assert view.frame is not None  # the rest of the view still answers


def test_the_report_draws_the_forecasts_it_is_given_in_the_what_if_section(conv: cl.RunResult) -> None:
    gathered = report_answers(conv)
    forecasts = gathered.answers["forecast"]
    assert {"h200", "h100"} <= {f.target for f in forecasts}
    text = report_html(conv, gathered)
    section = text.split("<h2>What-if")[1].split("</details>")[0]
    assert entry("forecast").draw(forecasts) in section and FORECAST_LABEL in section
    alone = report_html(conv, ReportAnswers(answers={"forecast": forecasts_for(conv.spec, ["h200"])}))
    assert FORECAST_LABEL in alone.split("<h2>What-if")[1] and "cl-forecast-table" in alone
    assert FORECAST_LABEL not in report_html(conv)  # drawn only when given
