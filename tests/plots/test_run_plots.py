"""Plotly figures of a RunResult, built by hand (no GPU): what is drawn, in what order, and what is left out."""

from __future__ import annotations

import json
import math

import pytest

import cudnn_lab as cl
from cudnn_lab import plots
from cudnn_lab.numerics import TOLERANCES
from cudnn_lab.results import RunResult, plans_frame

pytest.importorskip("plotly")

DEVICE = {"gpu": "test GPU", "cudnn_backend": 91900}
SPEC = cl.ConvSpec(n=2, c=16, h=8, w=8, k=16, r=3, s=3, padding=1, dtype="fp16")


def _row(plan: str, engine: int, rank: int, median: float | None, *, status: str = "ok",
         rel_l2: float | None = 1e-4, passed: bool | None = True) -> dict:
    ok = status == "ok"
    return {"plan": plan, "engine_id": engine, "knobs": json.dumps({"k": rank}), "heuristic_rank": rank,
            "status": status, "error": None if ok else "CUDNN_STATUS_NOT_SUPPORTED",
            "median_ms": median if ok else None, "iqr_ms": median * 0.1 if ok and median else None,
            "samples": 50 if ok else None, "timing_mode": "cuda_graph" if ok else None,
            "tflops": SPEC.flops() / (median * 1e-3) / 1e12 if ok and median else None,
            "gbps": SPEC.min_bytes() / (median * 1e-3) / 1e9 if ok and median else None,
            "rel_l2": rel_l2 if ok else None, "pass_cudnn": passed if ok else None,
            "pass_torch": passed if ok else None}


def _result(rows: list[dict] | None = None, *, torch: dict | None = None, ceilings: dict | None = None,
            histograms: dict | None = None) -> RunResult:
    if rows is None:
        rows = [
            _row("eng0_a", 0, 0, 0.30),           # heuristic pick, slower than the best
            _row("eng4_b", 4, 1, 0.10),           # best
            _row("eng4_c", 4, 2, 0.20, rel_l2=2e-2, passed=False),
            _row("eng7_d", 7, 3, None, status="build_failed"),
            _row("eng9_e", 9, 4, None, status="run_failed"),
        ]
    result = RunResult(spec=SPEC, plans=plans_frame(rows), device=dict(DEVICE), torch=torch or {},
                       ceilings={} if ceilings is None else ceilings, settings={})
    result.histograms = histograms or {}
    return result


def _points(fig) -> dict[str, tuple]:
    """plan -> (trace, index) for every plotted plan point (traces carry the plan names in customdata)."""
    out = {}
    for trace in fig.data:
        for i, name in enumerate(trace.customdata if trace.customdata is not None else ()):
            out[name] = (trace, i)
    return out


def _line_width(fig, plan: str) -> float:
    trace, i = _points(fig)[plan]
    width = trace.marker.line.width
    return width[i] if isinstance(width, (list, tuple)) else width


def _annotation_texts(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def _bar_order(fig) -> list[str]:
    return list(fig.layout.xaxis.categoryarray)


# --------------------------------------------------------------------------------------------------- latency_bar

def test_bars_sorted_by_median_and_only_ok_plans():
    fig = plots.latency_bar(_result())
    assert _bar_order(fig) == ["eng4_b", "eng4_c", "eng0_a"]
    plotted = {x for t in fig.data if t.type == "bar" for x in t.x}
    assert plotted == {"eng0_a", "eng4_b", "eng4_c"}


def test_bar_heights_are_medians_in_us_with_half_iqr_error_bars():
    fig = plots.latency_bar(_result())
    trace, i = _points(fig)["eng0_a"]
    assert trace.y[i] == pytest.approx(300.0)
    assert trace.error_y.array[i] == pytest.approx(15.0)  # iqr 0.03 ms = 30 us, +-15 us


def test_pick_and_best_annotations_on_their_bars():
    fig = plots.latency_bar(_result())
    by_text = {a.text: a.x for a in fig.layout.annotations}
    assert by_text["heuristic pick"] == "eng0_a"
    assert by_text["best"] == "eng4_b"


def test_best_skips_a_faster_plan_that_fails_the_band():
    rows = [_row("fast_bad", 1, 0, 0.05, rel_l2=1.0, passed=False), _row("slow_good", 2, 1, 0.2)]
    by_text = {a.text: a.x for a in plots.latency_bar(_result(rows)).layout.annotations}
    assert by_text["best"] == "slow_good"


def _legend_names(fig) -> list[str]:
    return [t.name for t in fig.data if t.showlegend is not False]


def test_torch_lines_present_when_measured():
    fig = plots.latency_bar(_result(torch={"benchmark_off_ms": 0.25, "benchmark_on_ms": 0.15}))
    lines = sorted(s.y0 for s in fig.layout.shapes if s.line.dash in ("dash", "dot"))
    assert lines == pytest.approx([150.0, 250.0])
    names = _legend_names(fig)  # named in the legend (a label on the line would cover bars), with the time
    assert "PyTorch 250 µs" in names and "cudnn.benchmark 150 µs" in names
    assert not any("PyTorch" in t for t in _annotation_texts(fig))


def test_torch_lines_absent_without_torch_numbers():
    fig = plots.latency_bar(_result(torch={}))
    assert not fig.layout.shapes
    assert not any("PyTorch" in t for t in _annotation_texts(fig))


def test_only_benchmark_off_line_when_on_missing():
    fig = plots.latency_bar(_result(torch={"benchmark_off_ms": 0.25, "benchmark_on_ms": None}))
    assert [s.y0 for s in fig.layout.shapes] == pytest.approx([250.0])


def test_bars_coloured_by_engine_with_one_legend_entry_each():
    fig = plots.latency_bar(_result())
    bars = [t for t in fig.data if t.type == "bar"]
    assert sorted(t.name for t in bars) == ["engine 0", "engine 4"]
    colors = plots.engine_colors(_result().plans)
    for t in bars:
        assert t.marker.color == colors[int(t.name.split()[1])]


def test_selected_plan_has_thicker_outline_in_bar():
    fig = plots.latency_bar(_result(), selected="eng4_c")
    assert _line_width(fig, "eng4_c") == plots.SELECTED_LINE_WIDTH
    assert _line_width(fig, "eng4_b") == plots.LINE_WIDTH


def test_title_names_spec_gpu_and_cudnn():
    fig = plots.latency_bar(_result())
    title = fig.layout.title.text
    assert SPEC.label() in title and "test GPU" in title and "91900" in title and "9.19.0" in title


def test_axis_titles_carry_units():
    fig = plots.latency_bar(_result())
    assert "(µs" in fig.layout.yaxis.title.text
    assert "FLOP/byte" in plots.roofline(_result()).layout.xaxis.title.text
    assert "TFLOP/s" in plots.roofline(_result()).layout.yaxis.title.text


def test_hover_text_names_plan_engine_knobs_median_and_iqr():
    trace, i = _points(plots.latency_bar(_result()))["eng0_a"]
    hover = trace.hovertext[i]
    for part in ("eng0_a", "engine 0", '{"k": 0}', "median 300.00 µs", "IQR 30.00 µs"):
        assert part in hover


def test_hover_text_names_the_knobs_not_their_numbers():
    rows = [dict(_row("eng4_k2=1_k13=0", 4, 0, 0.1), knobs='{"k2": 1, "k13": 0}'),
            dict(_row("eng5_k24=46", 5, 1, 0.2), knobs='{"k24": 46}', knob_names="KERNEL_CFG=46"),
            dict(_row("eng6", 6, 2, 0.3), knobs="{}")]
    fig = plots.latency_bar(_result(rows))
    knob_lines = {name: next(line for line in trace.hovertext[i].split("<br>") if line.startswith("knobs "))
                  for name, (trace, i) in _points(fig).items()}
    assert knob_lines == {"eng4_k2=1_k13=0": "knobs TILE_SIZE=1, TILEK=0", "eng5_k24=46": "knobs KERNEL_CFG=46",
                          "eng6": "knobs none"}


def test_only_the_pick_ran():
    rows = [_row("pick", 3, 0, 0.1)] + [_row(f"p{i}", 5, i, None, status="not_built") for i in range(1, 4)]
    fig = plots.latency_bar(_result(rows))
    assert _bar_order(fig) == ["pick"]
    assert {"heuristic pick", "best"} <= set(_annotation_texts(fig))
    for make in (plots.heuristic_vs_measured, plots.errors_per_plan, plots.roofline):
        assert set(_points(make(_result(rows)))) == {"pick"}


def test_no_plan_ran_gives_a_figure_that_says_so():
    rows = [_row("a", 1, 0, None, status="build_failed"), _row("b", 2, 1, None, status="run_failed")]
    result = _result(rows)
    for make in (plots.latency_bar, plots.heuristic_vs_measured, plots.errors_per_plan, plots.roofline):
        fig = make(result, selected="a")
        assert not _points(fig)
        assert any("no plan ran" in t for t in _annotation_texts(fig))


# ---------------------------------------------------------------------------------------- heuristic_vs_measured

def test_heuristic_vs_measured_ranks():
    fig = plots.heuristic_vs_measured(_result())
    ranks = {}
    for name, (trace, i) in _points(fig).items():
        ranks[name] = (trace.x[i], trace.y[i])
    # heuristic order among plans that ran: eng0_a, eng4_b, eng4_c; measured: eng4_b, eng4_c, eng0_a
    assert ranks == {"eng0_a": (1, 3), "eng4_b": (2, 1), "eng4_c": (3, 2)}


def test_heuristic_vs_measured_has_diagonal():
    fig = plots.heuristic_vs_measured(_result())
    diag = [t for t in fig.data if t.mode == "lines"]
    assert len(diag) == 1 and list(diag[0].x) == list(diag[0].y)


def test_selected_plan_highlighted_in_scatter():
    fig = plots.heuristic_vs_measured(_result(), selected="eng0_a")
    assert _line_width(fig, "eng0_a") > _line_width(fig, "eng4_b")


#: Recorded classic calls (no frontend graph, so no heuristics): the call each runs.
CLASSIC = {"h100_pool_max_fp16": "cudnnPoolingForward", "h100_softmax_fp16_channel": "cudnnSoftmaxForward",
           "h100_activation_swish_fp16": "cudnnActivationForward",
           "h100_transform_nchw_to_nhwc_fp16": "cudnnTransformTensor", "h100_rnn_lstm_fp16": "cudnnRNNForward",
           "h200_rnn_gru_fp32_bwd": ("cudnnRNNForward + cudnnRNNBackwardData_v8 + "
                                     "cudnnRNNBackwardWeights_v8")}


@pytest.mark.parametrize("name", sorted(CLASSIC))
def test_a_classic_call_has_no_heuristics_and_no_engine(name):
    """Issue 24: the Heuristics view of a classic call says in one sentence that there are no heuristics and
    which cuDNN call runs instead; neither it nor the figure speaks of a first choice or of engine -1."""
    from cudnn_lab.plots.run import classic_call
    from cudnn_lab.ui.tables import heuristic_summary

    result = cl.load_results(name)
    assert classic_call(result) == CLASSIC[name]
    text = heuristic_summary(result)
    assert text.startswith("A classic call has no heuristics") and CLASSIC[name] in text
    assert text.count(". ") == 0 and text.endswith(".")  # one sentence
    fig = plots.heuristic_vs_measured(result)
    shown = fig.to_json()
    for said in (text, shown):
        assert "engine -1" not in said and "first choice" not in said.lower() and "engine_id" not in said
    assert not _points(fig) and "Heuristic order" not in fig.layout.title.text
    assert any(CLASSIC[name] in t and "no heuristics" in t for t in _annotation_texts(fig))


def test_a_graph_result_keeps_its_heuristics():
    from cudnn_lab.plots.run import classic_call
    from cudnn_lab.ui.tables import heuristic_summary

    assert classic_call(_result()) is None and "first choice" in heuristic_summary(_result())
    assert classic_call(cl.load_results("h100_conv_nhwc_fp16")) is None


# --------------------------------------------------------------------------------------------------- errors_per_plan

def test_error_plot_band_lines_at_rtols():
    fig = plots.errors_per_plan(_result())
    ys = sorted(s.y0 for s in fig.layout.shapes)
    bands = TOLERANCES["fp16"]
    assert ys == pytest.approx(sorted([bands["torch"].rtol, bands["cudnn"].rtol]))
    assert all(s.y0 == s.y1 for s in fig.layout.shapes)
    names = " ".join(_legend_names(fig))  # in the legend, not written over the points
    assert "PyTorch band" in names and "cuDNN band" in names


def test_error_plot_band_lines_follow_dtype():
    result = _result()
    result.spec = SPEC.replace(dtype="fp32")
    ys = sorted(s.y0 for s in plots.errors_per_plan(result).layout.shapes)
    assert ys == pytest.approx(sorted(b.rtol for b in TOLERANCES["fp32"].values()))


def test_error_plot_log_y_and_colour_by_pass():
    fig = plots.errors_per_plan(_result())
    assert fig.layout.yaxis.type == "log"
    groups = {t.name: set(t.customdata) for t in fig.data if t.customdata is not None}  # not the legend lines
    assert groups == {"pass": {"eng0_a", "eng4_b"}, "fail": {"eng4_c"}}
    assert {t.name: t.marker.color for t in fig.data if t.customdata is not None} == {
        "pass": plots.PASS_COLOR, "fail": plots.FAIL_COLOR}


def test_error_plot_draws_exact_and_infinite_errors_within_the_axis():
    rows = [_row("exact", 1, 0, 0.1, rel_l2=0.0), _row("nan_out", 2, 1, 0.2, rel_l2=math.inf, passed=False),
            _row("normal", 3, 2, 0.3, rel_l2=1e-4)]
    fig = plots.errors_per_plan(_result(rows))
    lo, hi = (10 ** v for v in fig.layout.yaxis.range)
    for trace, i in _points(fig).values():
        assert lo < trace.y[i] < hi and math.isfinite(trace.y[i]) and trace.y[i] > 0
    trace, i = _points(fig)["nan_out"]
    assert trace.marker.symbol[i] == "triangle-up"


def test_selected_plan_highlighted_in_error_plot():
    fig = plots.errors_per_plan(_result(), selected="eng4_b")
    assert _line_width(fig, "eng4_b") > _line_width(fig, "eng0_a")


def test_failed_plans_excluded_from_every_figure():
    result = _result()
    for make in (plots.latency_bar, plots.heuristic_vs_measured, plots.errors_per_plan, plots.roofline):
        assert set(_points(make(result, selected="eng7_d"))) == {"eng0_a", "eng4_b", "eng4_c"}


# --------------------------------------------------------------------------------------------------- error_histogram

def test_histogram_bars_from_edges_and_counts():
    hist = {"edges": [-6.0, -5.0, -4.0, -3.0], "counts": [10, 50, 2]}
    fig = plots.error_histogram(_result(histograms={"eng4_b": hist}), "eng4_b")
    (bar,) = fig.data
    assert list(bar.x) == pytest.approx([-5.5, -4.5, -3.5])
    assert list(bar.y) == [10, 50, 2]
    assert "eng4_b" in fig.layout.title.text and "test GPU" in fig.layout.title.text


def test_histogram_missing_plan_gives_annotation():
    fig = plots.error_histogram(_result(histograms={}), "eng4_b")
    assert not fig.data
    assert any("no error histogram" in t and "eng4_b" in t for t in _annotation_texts(fig))


def test_histogram_defaults_to_heuristic_pick():
    hist = {"edges": [-3.0, -2.0], "counts": [5]}
    fig = plots.error_histogram(_result(histograms={"eng0_a": hist}))
    assert list(fig.data[0].y) == [5] and "eng0_a" in fig.layout.title.text


# --------------------------------------------------------------------------------------------------- roofline

def test_roofline_with_ceilings_draws_both_roofs():
    fig = plots.roofline(_result(ceilings={"tflops": 100.0, "gbps": 2000.0}))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    roofs = {t.name.split()[0]: t for t in fig.data if t.mode == "lines"}
    assert set(roofs) == {"compute", "memory"}
    assert roofs["compute"].name == "compute 100 TFLOP/s" and roofs["memory"].name == "memory 2000 GB/s"
    assert list(roofs["compute"].y) == [100.0, 100.0]
    ridge = 100.0 * 1e3 / 2000.0
    assert roofs["memory"].x[-1] == pytest.approx(ridge)
    assert roofs["memory"].y[-1] == pytest.approx(100.0)


def test_roofline_points_at_intensity_and_tflops():
    fig = plots.roofline(_result(ceilings={"tflops": 100.0, "gbps": 2000.0}))
    trace, i = _points(fig)["eng4_b"]
    assert trace.x[i] == pytest.approx(SPEC.flops() / SPEC.min_bytes())
    assert trace.y[i] == pytest.approx(SPEC.flops() / 0.1e-3 / 1e12)


def test_roofline_handles_empty_ceilings():
    fig = plots.roofline(_result(ceilings={}))
    assert "ceilings not measured" in _annotation_texts(fig)
    assert not [t for t in fig.data if t.mode == "lines"]
    assert set(_points(fig)) == {"eng0_a", "eng4_b", "eng4_c"}


def test_selected_plan_highlighted_in_roofline():
    fig = plots.roofline(_result(), selected="eng4_b")
    assert _line_width(fig, "eng4_b") > _line_width(fig, "eng4_c")


# --------------------------------------------------------------------------------------------------- engine colours

def test_engine_colours_distinct_and_stable():
    result = _result()
    colors = plots.engine_colors(result.plans)
    assert set(colors) == {0, 4, 7, 9}
    assert len(set(colors.values())) == 4
    assert plots.engine_colors(result) == colors


def test_engine_colours_consistent_across_figures():
    result = _result(ceilings={"tflops": 100.0, "gbps": 2000.0})
    seen: dict[str, set] = {}
    for make in (plots.latency_bar, plots.heuristic_vs_measured, plots.roofline):
        for t in make(result).data:
            if t.name and t.name.startswith("engine "):
                seen.setdefault(t.name, set()).add(t.marker.color)
    colors = plots.engine_colors(result.plans)
    assert seen == {f"engine {e}": {colors[e]} for e in (0, 4)}


def test_histogram_uses_engine_colour():
    hist = {"edges": [-3.0, -2.0], "counts": [5]}
    result = _result(histograms={"eng4_c": hist})
    (bar,) = plots.error_histogram(result, "eng4_c").data
    assert bar.marker.color == plots.engine_colors(result.plans)[4]


def test_importing_plots_loads_neither_plotly_nor_ipywidgets():
    import subprocess
    import sys

    code = "import sys, cudnn_lab.plots; print(sorted(m for m in ('plotly', 'ipywidgets') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_moe_recording_draws_the_dense_gemm_and_grouped_mm_beside_pytorch():
    """Issue 28: what the routing costs: the MoE recording's latency figure has a line (and the roofline a marker)
    for one dense GEMM of the same FLOPs and for torch._grouped_mm, beside PyTorch's loop, at their measured times."""
    r = cl.load_results("h100_moe_bf16_8x2048")
    fig = plots.latency_bar(r)
    legend = " ".join(t.name or "" for t in fig.data)
    for title, key in (("dense GEMM, same FLOPs", "dense_gemm_ms"), ("torch._grouped_mm", "grouped_mm_ms"),
                       ("PyTorch", "benchmark_off_ms")):
        assert f"{title} {r.torch[key] * 1e3:.3g} µs" in legend
    lines = {round(s.y0, 6) for s in fig.layout.shapes if s.type == "line" and s.y0 == s.y1}
    assert round(r.torch["dense_gemm_ms"] * 1e3, 6) in lines
    roof = plots.roofline(r)
    assert {"dense GEMM, same FLOPs", "torch._grouped_mm"} <= {t.name for t in roof.data}
