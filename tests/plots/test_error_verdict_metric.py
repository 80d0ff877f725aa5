"""Verdict and plot on one metric (issue 39): cuDNN's verdict is per element (every output element within
atol + rtol·|ref|), so the error figure plots the share of elements outside that band, asked of numerics, with the
pass line drawn for it; the fp32 GRU backward recordings, whose rel L2 (3.5e-4) sat under the drawn 1e-3 rtol line
while all three plans failed, now plot above the line. Recordings shipped in cudnn_lab/data/."""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab import numerics, plots


def _plan_points(fig) -> dict[str, tuple[float, str]]:
    return {p: (y, t.name) for t in fig.data if t.customdata is not None for p, y in zip(t.customdata, t.y)}


def _pass_line(fig) -> float:
    (line,) = [s for s in fig.layout.shapes if s.type == "line"]
    return float(line.y0)


def test_failing_plans_plot_above_the_pass_line_on_the_verdicts_metric():
    r = cl.load_results("h100_rnn_gru_fp32_bwd")
    fig = plots.errors_per_plan(r)
    assert numerics.VERDICT_METRIC_TITLE in fig.layout.yaxis.title.text
    points, line = _plan_points(fig), _pass_line(fig)
    assert set(points) == set(r.ok["plan"])
    for _, row in r.ok.iterrows():
        y, verdict = points[row["plan"]]
        assert verdict == "fail" and y > line
        assert y == numerics.outside_share(row["within_cudnn"]) > 0


def test_passing_plans_plot_under_the_pass_line():
    r = cl.load_results("h100_conv_nhwc_fp16")
    fig = plots.errors_per_plan(r)
    points, line = _plan_points(fig), _pass_line(fig)
    passing = [p for p, (_, verdict) in points.items() if verdict == "pass"]
    assert passing and all(points[p][0] < line for p in passing)
    assert all(y > line for y, verdict in points.values() if verdict == "fail")
