"""Self-contained reports: the HTML holds everything, and opens in a browser with no network."""

from __future__ import annotations

import shutil

import pytest

import cudnn_lab as cl
from cudnn_lab.report import report_html, save_report
from cudnn_lab.cli import report_answers


def _report(result: cl.RunResult) -> str:
    """The report as the Lab and `cudnn-lab report` write it: with the answers they gather (cli.report_answers)."""
    return report_html(result, report_answers(result))


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def result() -> cl.RunResult:
    return cl.load_results("h100_conv_nhwc_fp16_bias_relu")  # a frontend graph: drawn, scripted, with kernels


def test_report_embeds_plotly_once_and_fetches_nothing(result: cl.RunResult) -> None:
    text = _report(result)
    assert text.count("window.PlotlyConfig") == 1  # the library, inline, once
    assert text.count("Plotly.newPlot") >= 4  # every figure uses it
    assert "<script src=" not in text and "<link" not in text


def test_report_holds_graph_table_device_spec_and_script(result: cl.RunResult) -> None:
    text = _report(result)
    for needle in ("<h2>Graph</h2>", "<table", result.device["gpu"], result.spec.to_dict()["op"], "def build_graph",
                   result.best["plan"]):
        assert needle in text


def test_report_without_dot_shows_the_dot_source(result: cl.RunResult, monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    text = _report(result)
    assert "digraph" in text and "apt-get install graphviz" in text


@pytest.mark.browser
def test_report_opens_offline_with_graph_plots_and_table(result: cl.RunResult, tmp_path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
    from tests.conftest import chromium_path

    path = save_report(result, tmp_path / "report.html", report_answers(result))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(offline=True)
            page = context.new_page()
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
            assert page.locator(".graph svg").count() == 1
            assert page.locator(".js-plotly-plot").count() >= 4
            assert page.locator("table tr").count() > len(result.plans)
            page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
        finally:
            browser.close()
    assert all(url.startswith(("file:", "data:", "blob:")) for url in requests), requests


def test_pooling_report_draws_the_classic_call_and_says_why_no_script() -> None:
    from cudnn_lab.results import RunResult, plans_frame

    result = RunResult(spec=cl.PoolSpec(n=2, c=8, h=8, w=8), plans=plans_frame([]), device={"gpu": "test GPU"},
                       torch={}, ceilings={}, settings={})
    text = _report(result)
    assert "cudnnPoolingForward" in text and "No standalone script" in text


def test_report_plan_table_is_readable_with_every_column_one_click_away(result: cl.RunResult) -> None:
    text = _report(result)
    plans = text.split("<h2>Plans</h2>")[1]
    compact = plans.split("<details")[0]
    for head in ("median (µs)", "IQR (µs)", "error (rel. L2)", "workspace", "knobs"):
        assert f">{head}</th>" in compact
    assert "median_ms" not in compact and "{&quot;k" not in compact  # headers in words, knobs by name
    assert "<details class='cl-all-columns'>" in plans and ">build (ms)</th>" in plans
    assert "RECORDED" in text and "MEASURED HERE" not in text  # a loaded recording says so unasked


def test_report_figures_fill_the_page_width(result: cl.RunResult) -> None:
    text = _report(result)
    assert '"width":920' not in text.replace(" ", "") and "width:100%" in text.replace(" ", "")


def test_sweep_report_holds_the_roofline_each_operations_latency_and_the_points() -> None:
    from cudnn_lab.report import sweep_report_html

    frame = cl.load_results("h100_standard")
    text = sweep_report_html(frame)
    assert text.count("window.PlotlyConfig") == 1 and "<script src=" not in text
    assert "Roofline (best plan per point)" in text and "RECORDED" in text and "NVIDIA H100 80GB HBM3" in text
    for op in ("conv", "matmul", "norm", "sdpa"):
        assert f"operation: {op}" in text
    points = text.split("<h2>Points</h2>")[1]
    assert points.count("<tr>") == 1 + frame["point_id"].nunique() and "regret" in points
    assert "MEASURED HERE" in sweep_report_html(frame, recorded=False)


def test_cli_report_of_a_sweep_name_file_and_store(tmp_path) -> None:
    """`cudnn-lab report h200_standard -o r.html`, as the README shows, and of a sweep file or store."""
    from cudnn_lab import cli
    from cudnn_lab.results.store import Store

    assert cli.main(["report", "h200_standard", "-o", str(tmp_path / "r.html")]) == 0
    assert "NVIDIA H200" in (tmp_path / "r.html").read_text()
    path = cl.recorded_datasets(kind="sweep")["path"].iloc[0]
    assert cli.main(["report", path, "-o", str(tmp_path / "f.html")]) == 0
    frame = cl.load_results(path)
    store = Store(tmp_path / "store")
    for pid, point in list(frame.groupby("point_id", sort=False))[:3]:
        store.append(pid, point)
    assert cli.main(["report", str(tmp_path / "store"), "-o", str(tmp_path / "s.html")]) == 0
    assert "3 points" in (tmp_path / "s.html").read_text()


def test_a_recording_without_exploration_reports_no_engine_space_figure() -> None:
    from cudnn_lab.report import _figures

    result = cl.load_results("h200_conv_nhwc_fp16_bias_relu")
    titles = [f.layout.title.text.split("<br>")[0] for f in _figures(result)]
    assert len(titles) == 5 and not any("Engine space" in t for t in titles)
    assert "Engine space" not in _report(result)
