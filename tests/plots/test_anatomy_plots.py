"""The anatomy figures and tables (plots.engine_space, engine_knobs, kernels_table, kernels_html) on recordings: the
H200's of 2026-11-21 (kept in tests/data) was made before exploration and kernel profiling existed (the figures
refuse with a sentence saying how to get a sample, the kernel view says there are none); the shipped H100's of
2026-11-25 carry kernels, notes and (the plain NHWC conv) a sampled engine space, and draw them."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab import plots
from cudnn_lab.errors import OptionError
from cudnn_lab.plots.anatomy import NO_KERNELS_TEXT, ORIGIN_COLORS, origin_group

pytest.importorskip("plotly")

@pytest.fixture(scope="module")
def recorded(old_conv_recording: str):
    return cl.load_results(old_conv_recording)


@pytest.mark.parametrize("figure", [plots.engine_space, plots.engine_knobs])
def test_a_recording_without_exploration_has_no_engine_space_figure(recorded, figure) -> None:
    assert recorded.exploration["explored"] == 0  # recorded before exploration existed
    with pytest.raises(OptionError) as e:
        figure(recorded)
    text = str(e.value)
    assert "no engine-space sample" in text
    assert "cl.run(spec, explore=200)" in text and "GPU" in text
    assert recorded.spec.label() in text


def test_kernels_table_of_a_recording_without_kernels_is_empty_with_its_columns(recorded) -> None:
    table = plots.kernels_table(recorded)
    assert table.empty
    assert list(table.columns) == ["plan", "kernel", "kind", "count", "us", "total_us", "kernel_sum_us",
                                   "replayed_us", "launch_gap_us"]


def test_kernels_view_of_a_recording_without_kernels_says_so_in_one_sentence(recorded) -> None:
    text = plots.kernels_html(recorded)
    assert NO_KERNELS_TEXT in text
    assert "<table" not in text
    assert NO_KERNELS_TEXT.count(". ") == 0 and NO_KERNELS_TEXT.endswith(".")


@pytest.mark.parametrize("make", [plots.engine_space, plots.engine_knobs, plots.kernels_table, plots.kernels_html])
def test_a_sweep_frame_or_other_value_is_refused(make) -> None:
    sweep = cl.load_results("h200_standard")
    with pytest.raises(OptionError, match="sweep frame"):
        make(sweep)
    with pytest.raises(OptionError, match="single RunResult"):
        make(42)


def test_option_types_are_checked_before_the_sample(recorded) -> None:
    with pytest.raises(OptionError, match="selected"):
        plots.engine_space(recorded, selected=3)
    with pytest.raises(OptionError, match="engine id"):
        plots.engine_knobs(recorded, engine="62")
    with pytest.raises(OptionError, match="engine id"):
        plots.engine_knobs(recorded, engine=True)
    with pytest.raises(OptionError, match="knob name"):
        plots.engine_knobs(recorded, knob=13)


def test_origin_groups() -> None:
    assert origin_group(True, "heuristics") == "proposed"
    assert origin_group(None, None) == "proposed"  # recordings before the column: proposed
    assert origin_group(False, "neighbour of eng0_k2=1") == "neighbour"
    assert origin_group(False, "random near eng0_k2=1") == "random"
    assert origin_group(False, "random") == "random"


@pytest.fixture(scope="module")
def explored():
    return cl.load_results("h100_conv_nhwc_fp16")


def test_engine_space_of_a_recording_with_a_sample_draws_every_configuration_that_ran(explored) -> None:
    ran = explored.plans[explored.plans["status"] == "ok"]
    fig = plots.engine_space(explored)
    groups = {t.name: len(t.x) for t in fig.data if t.name in ORIGIN_COLORS}  # less the legend's dashed line
    assert "proposed" in groups and set(groups) - {"proposed"}, groups  # proposals and sampled ones, told apart
    assert sum(groups.values()) == int(ran["median_ms"].notna().sum())
    ticks = {int(t) for t in fig.layout.xaxis.ticktext}
    assert ticks == {int(e) for e in ran["engine_id"].dropna()}
    title = fig.layout.title.text
    assert explored.spec.label() in title and "sampled beyond the proposals" in title
    assert "explored configurations" not in title  # the answer is the caller's sentence, not a 6-line title


def test_engine_knobs_defaults_to_the_busiest_engine_and_refuses_an_engine_that_did_not_run(explored) -> None:
    counts = explored.ok["engine_id"].dropna().astype(int).value_counts()
    fig = plots.engine_knobs(explored)
    assert f"Engine {int(counts.index[0])}:" in fig.layout.title.text
    assert sum(len(t.x) for t in fig.data if t.name in ORIGIN_COLORS) <= int(counts.iloc[0])
    with pytest.raises(OptionError, match="must be an engine that ran"):
        plots.engine_knobs(explored, engine=10_000)
    with pytest.raises(OptionError, match="must be a knob of engine"):
        plots.engine_knobs(explored, knob="NO_SUCH_KNOB")


def test_kernels_of_an_nchw_plan_show_the_layout_transposes_beside_the_gemm() -> None:
    nchw, nhwc = cl.load_results("h100_conv_nchw_fp16_bias_relu"), cl.load_results("h100_conv_nhwc_fp16_bias_relu")
    table = plots.kernels_table(nchw)
    best = table[table["plan"] == nchw.best["plan"]]
    assert "transpose" in set(best["kind"]) and "implicit_gemm" in set(best["kind"]), best
    assert not (plots.kernels_table(nhwc)["kind"] == "transpose").any()  # NHWC needs none
    html = plots.kernels_html(nchw)
    assert "nchwToNhwcKernel" in html and NO_KERNELS_TEXT not in html
