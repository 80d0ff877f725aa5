"""The report of every shipped recording and sweep stays under 2 MB with plotly.js embedded once, and still opens
offline: the embedded bundle is plotly's cartesian one (cudnn_lab/data/plotly), gzipped, of the plotly.js version
the Python package `plotly` writes its figures for; a figure it cannot draw gets the full bundle instead."""

from __future__ import annotations

import base64
import gzip
import re

import pytest

import cudnn_lab as cl
from cudnn_lab import report
from cudnn_lab.report import report_html, sweep_report_html
from cudnn_lab.cli import report_answers


def _report(result: cl.RunResult) -> str:
    """The report as the Lab and `cudnn-lab report` write it: with the answers they gather (cli.report_answers)."""
    return report_html(result, report_answers(result))


LIMIT = 2_000_000  # bytes of UTF-8: 2 MB


def _bundle(text: str) -> bytes:
    """The plotly.js embedded in a report, unpacked."""
    found = re.findall(r"<script id='cl-plotlyjs' type='application/gzip;base64'>([^<]*)</script>", text)
    assert len(found) == 1, "plotly.js must be embedded exactly once"
    return gzip.decompress(base64.b64decode(found[0]))


@pytest.mark.parametrize("name", list(cl.recorded_datasets("run")["name"]))
def test_the_report_of_every_recording_is_under_2_mb(name: str) -> None:
    text = _report(cl.load_results(name))
    assert len(text.encode("utf-8")) < LIMIT, f"{name}: {len(text.encode('utf-8')) / 1e6:.2f} MB"
    assert text.count("id='cl-plotlyjs'") == 1 and "<script src=" not in text


@pytest.mark.parametrize("name", list(cl.recorded_datasets("sweep")["name"]))
def test_the_report_of_every_shipped_sweep_is_under_2_mb(name: str) -> None:
    text = sweep_report_html(cl.load_results(name))
    assert len(text.encode("utf-8")) < LIMIT, f"{name}: {len(text.encode('utf-8')) / 1e6:.2f} MB"
    assert text.count("id='cl-plotlyjs'") == 1


def test_the_shipped_bundle_is_the_version_plotly_writes_for() -> None:
    from plotly.offline import get_plotlyjs_version

    assert report.bundle_version() == get_plotlyjs_version(), (
        "plotly moved to another plotly.js: update cudnn_lab/data/plotly (its README says how)")


def test_the_biggest_report_embeds_the_cartesian_bundle_once_and_draws_every_trace_with_it() -> None:
    result = cl.load_results("h200_conv_nhwc_fp16")
    text = _report(result)
    js = _bundle(text).decode("utf-8")
    assert js.startswith("/**\n* plotly.js (cartesian - minified) v") and "window.Plotly = Plotly" in js
    registered = set(re.findall(r'moduleType:"trace",name:"([a-z0-9]+)"', js))
    assert registered == set(report.BUNDLE_TRACES)
    used = {t.type for f in report._figures(result) for t in f.data}
    assert used and used <= registered
    # each figure: its JSON and one Plotly.newPlot, its template shared (said once, not once per figure)
    assert text.count("Plotly.newPlot(") == 7 == text.count("<div class='figure' id=")
    assert text.count('\\"plotly_white\\"') <= 1 and text.count("JSON.parse(clTemplates[0])") == 7


def test_a_figure_the_cartesian_bundle_cannot_draw_gets_the_full_bundle() -> None:
    import plotly.graph_objects as go

    figs = [go.Figure(go.Scatter(x=[1, 2], y=[3, 4])), go.Figure(go.Sunburst(labels=["a", "b"], parents=["", "a"]))]
    js = _bundle(report._figures_html(figs)).decode("utf-8")
    assert js.startswith("/**\n* plotly.js v") and "sunburst" in js
    assert "(cartesian" not in js.splitlines()[1]
    cartesian = _bundle(report._figures_html(figs[:1])).decode("utf-8")
    assert "(cartesian" in cartesian.splitlines()[1]
