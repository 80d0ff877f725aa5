"""The Lab's Sweep view, headless, fed sweeps recorded on real GPUs: axis values validated and marked in place,
recorded sweeps drawn by spec field, two GPUs compared, Run sweep without a GPU refused with the real NoGPUError.
The live sweep on a GPU is tests/ui/test_lab_gpu.py's."""

from __future__ import annotations

import html

import ipywidgets as W
import pandas as pd
import pytest
from lab_samples import SWEEPS

import cudnn_lab as cl
from cudnn_lab.options import RunOptions
from cudnn_lab.ui import Lab
from cudnn_lab.ui.figures import FigureHost
from cudnn_lab.ui.status import Busy, StatusLog
from cudnn_lab.ui.style import INVALID_BORDER
from cudnn_lab.ui.sweep_axes import sweep_fields
from cudnn_lab.ui.sweepview import NO_GPU_SWEEP_TEXT, SweepView, compare_pair

SPEC = cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


def make_view(spec: cl.Spec = SPEC, gpu: bool = False) -> SweepView:
    """A Sweep view on its own: the parts it is given are the Lab's kinds, with no Lab around them."""
    log = StatusLog(W)
    return SweepView(log=log, figures=FigureHost(W, log), busy=Busy(), spec=lambda: spec,
                     run_options=RunOptions, gpu=gpu)


@pytest.fixture
def view() -> SweepView:
    return make_view()


def traces(fig) -> list:
    return [t for t in fig.data if t.type in ("scatter", "bar")]


def test_the_view_stands_without_a_lab(view: SweepView) -> None:
    assert view.axis_fields[0].value == "n" and view.axis_fields[1].value == "layout"
    assert tuple(view.axis_fields[0].options) == sweep_fields("conv")
    assert view.fig.layout.annotations[0].text.startswith("No sweep yet")
    assert [v for _, v in view.recorded.options] == list(cl.recorded_datasets(kind="sweep")["name"])
    assert view.policy.value == RunOptions().plans


def test_axis_validation_marks_bad_values_in_place(view: SweepView) -> None:
    view.axis_values[0].value = "1, 0"
    box = view.axis_values[0]
    assert "cl-invalid" in box._dom_classes and box.layout.border == INVALID_BORDER
    assert "n=0" in view.axis_messages[0].value and view.axis_messages[0].layout.display != "none"
    assert view.validate() is None and 0 in view.invalid
    view.axis_values[0].value = "1, 2, 4"
    view.axis_values[1].value = "NCHW, NHWC"
    assert view.invalid == {} and "cl-invalid" not in box._dom_classes and not box.layout.border
    assert view.validate() == {"n": [1, 2, 4], "layout": ["NCHW", "NHWC"]} and "6 points" in view.count.value
    view.axis_values[1].value = "NCHW, nchw"
    assert 1 in view.invalid and "must be one of NCHW, NHWC" in view.invalid[1]
    assert view._log.messages == []


def test_axes_follow_the_operation() -> None:
    view = make_view(cl.SdpaSpec(batch=1, heads=8, seq_q=128, seq_kv=128, head_dim=64))
    assert tuple(view.axis_fields[0].options) == sweep_fields("sdpa") and view.axis_fields[0].value == "seq_q"
    view.axis_fields[0].value = "kv_heads"
    view.axis_values[0].value = "1, 3"
    assert "kv_heads=3" in view.invalid[0] and "must divide heads=8" in view.invalid[0]
    view.axis_values[0].value = "1, 2, none"
    assert view.validate() == {"kv_heads": [1, 2, None]}
    view.set_op("pool")
    assert tuple(view.axis_fields[0].options) == sweep_fields("pool") and view.axis_values[0].value == ""


def test_run_sweep_without_a_gpu_is_refused(view: SweepView) -> None:
    assert view.run_button.disabled and view.run_button.tooltip == NO_GPU_SWEEP_TEXT
    assert NO_GPU_SWEEP_TEXT in view.run_note.value
    view.axis_values[0].value = "1, 2"
    view.run_button.click()  # a disabled button's handler still runs headless: it must not raise
    assert any("NoGPUError" in m for m in view._log.messages) and view.frame is None


def test_run_sweep_meets_the_real_no_gpu_error() -> None:
    """Offered as if a GPU were here: the real ``cl.sweep`` refuses, the buttons come back."""
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    view = make_view(gpu=True)
    assert not view.run_button.disabled
    view.axis_values[0].value = "1, 2"
    view.run_button.click()
    assert any("NoGPUError" in m for m in view._log.messages) and not view._busy.busy
    assert not view.run_button.disabled and view.frame is None


def test_bad_values_do_not_start_a_sweep() -> None:
    view = make_view(gpu=True)
    view.axis_values[0].value = "0"
    view.run_button.click()
    assert any("marked in red" in m for m in view._log.messages) and not view.run_button.disabled


def test_busy_disables_every_button(view: SweepView) -> None:
    view._busy.set(True)
    assert view.run_button.disabled and view.load_button.disabled and view.compare_button.disabled
    view._busy.set(False)
    assert not view.load_button.disabled and not view.compare_button.disabled and view.run_button.disabled


def test_load_a_recorded_sweep_draws_it(view: SweepView) -> None:
    view.recorded.value = SWEEPS[-1]
    view.load_button.click()
    assert view._log.messages == [] and isinstance(view.frame, pd.DataFrame) and view.mode == "latency"
    assert view.op_filter.value == "conv"  # the operation of the Lab's problem first
    assert view.x.value in view.x.options and "n" in view.x.options and "layout" in view.x.options
    assert len(traces(view.fig)) >= 1 and view.figure.outputs  # the pane shows the figure
    assert view.sweep_options.layout.display == "flex" and view.compare_options.layout.display == "none"
    assert "Latency along" in view.fig.layout.title.text and "NVIDIA" in view.fig.layout.title.text
    view.x.value = "k"
    view.color.value = "layout"
    assert view.fig.layout.xaxis.title.text.startswith("k")
    assert {t.name for t in traces(view.fig)} == {"NCHW", "NHWC"}
    view.y.value = "TFLOP/s"
    assert "TFLOP/s" in view.fig.layout.yaxis.title.text
    view.op_filter.value = "sdpa"
    assert set(view.x.options) == {"seq_q", "seq_kv", "causal"} and len(traces(view.fig)) >= 1
    assert view._log.messages == [] and "Showing recorded sweep" in view._log.status.value


def test_compare_two_recorded_gpus(view: SweepView) -> None:
    view.compare_a.value, view.compare_b.value = SWEEPS
    view.compare_button.click()
    assert view._log.messages == [] and view.mode == "compare"
    title = view.fig.layout.title.text
    assert "Speedup of b over a" in title and "shared points" in title and len(traces(view.fig)) >= 1
    assert "H100" in title and "H200" in title and "FLOP/byte" in view.fig.layout.xaxis.title.text
    names = [t.name for t in view.fig.data]
    assert any(n.startswith("bandwidth ratio 1.40x") for n in names)
    assert any(n.startswith("compute ratio") for n in names)
    # the controls that do not apply to a comparison are hidden; the one that does (the chart) is shown
    assert view.sweep_options.layout.display == "none" and view.compare_options.layout.display == "flex"
    view.op_filter.value = "sdpa"  # one operation's points
    assert view.mode == "compare" and "8 shared points" in view.fig.layout.title.text
    view.chart.value = "latency per problem"  # both latencies per problem, the speedup on the right
    assert any(t.type == "bar" for t in view.fig.data) and view.fig.layout.yaxis2.ticksuffix == "x"
    assert view._log.messages == []


def test_compare_opens_on_two_gpus_that_share_points(view: SweepView) -> None:
    """Issue 24: the default pair is two different GPUs sharing the most points (the H100 and H200 standard
    sweeps), not the first two recordings (two sweeps of one GPU with no point in common: an empty chart)."""
    recorded = cl.recorded_datasets(kind="sweep").set_index("name")
    assert (view.compare_a.value, view.compare_b.value) == SWEEPS == compare_pair(recorded.reset_index())
    assert recorded.loc[view.compare_a.value, "gpu"] != recorded.loc[view.compare_b.value, "gpu"]
    view.compare_button.click()  # the comparison as it opens: shared points drawn, no empty chart
    assert view._log.messages == [] and view.mode == "compare"
    assert "73 shared points" in view.fig.layout.title.text and len(traces(view.fig)) >= 1
    assert not any("nothing to plot" in (a.text or "") for a in view.fig.layout.annotations)


def test_compare_pair_follows_the_data() -> None:
    """The choice is the data's: the pair of different GPUs with the most shared points; none for one GPU only."""
    sweeps = cl.recorded_datasets(kind="sweep")
    assert compare_pair(sweeps[sweeps["name"].str.contains("fp8")]) == ("h100_fp8_gemm", "h200_fp8_gemm")
    assert compare_pair(sweeps[sweeps["gpu"].str.contains("H100")]) is None  # one GPU: no pair of two
    assert compare_pair(sweeps.iloc[:0]) is None and compare_pair(None) is None


def test_loading_a_single_run_as_a_sweep_is_refused(view: SweepView) -> None:
    runs = cl.recorded_datasets(kind="run")
    view._log.guard(view.load, runs["name"][0])
    assert any("not a sweep" in m for m in view._log.messages) and view.frame is None


def test_in_the_lab_the_view_follows_the_lab() -> None:
    lab = Lab(SPEC, gpu=False)
    view = lab.sweep_view
    lab.spec = cl.NormSpec(kind="rmsnorm", rows=32, features=64)
    assert tuple(view.axis_fields[0].options) == sweep_fields("norm")
    lab.run_form.policy.value = "heuristic"
    assert view._run_options().plans == "heuristic"
    view.compare(*SWEEPS)
    assert "Comparing" in lab.status.value and lab.figures["sweep"] is view.fig


# ------------------------------------------------------------------------------------------ frames checked first

def _damaged_sweep() -> tuple[pd.DataFrame, int]:
    """A recorded sweep with one row of an unknown operation (first), one impossible latency, and one point's rows
    twice: 2 + 1 + the point's rows cannot be drawn."""
    frame = cl.load_results(SWEEPS[0])
    first = frame["point_id"].iloc[0]
    doubled = frame[frame["point_id"] == first]
    frame = pd.concat([frame, doubled], ignore_index=True)
    frame.loc[0, "op"] = "convolution"
    frame.loc[1, "op"] = "not an op"
    frame.loc[len(frame) - len(doubled) - 1, "median_ms"] = -1.0
    return frame, 3 + len(doubled)


def test_a_damaged_frame_is_drawn_without_its_bad_rows_and_says_so(view: SweepView) -> None:
    frame, bad = _damaged_sweep()
    view.load(frame)  # the first row's operation is unknown: no TraitError from the operation choice
    assert view.op_filter.value == "conv" and view.mode == "latency" and len(traces(view.fig)) >= 1
    assert len(view.frame) == len(frame) - bad and view.frame["op"].isin(["conv", "matmul", "norm", "sdpa"]).all()
    assert not view.frame.duplicated(["point_id", "plan"]).any() and (view.frame["median_ms"] >= 0).all()
    said = view.dropped_text
    assert said.startswith(f"Not drawn: {bad} of {len(frame)} rows") and said.count(".") == 1
    assert "2 of an unknown operation (op)" in said and "1 with impossible values (median_ms)" in said
    assert "repeating a plan already in its point" in said
    assert html.escape(said) in view.info.value and said in view._log.status.value and view._log.messages == []


def test_a_damaged_frame_is_compared_without_its_bad_rows(view: SweepView) -> None:
    frame, _ = _damaged_sweep()
    view.compare(frame, SWEEPS[1])
    assert view.mode == "compare" and len(traces(view.fig)) >= 1 and view._log.messages == []
    assert "Not drawn" in view.dropped_text and "Not drawn" in view.info.value


def test_a_frame_with_no_point_ids_is_refused_with_a_data_error(view: SweepView) -> None:
    view._log.guard(lambda: view.show(pd.DataFrame({"op": ["conv"], "median_ms": [1.0]}), source="my frame"))
    assert any("DataError" in m and "point_id" in m for m in view._log.messages) and view.frame is None


def test_compare_does_not_keep_an_operation_filter_the_pair_lacks(view: SweepView) -> None:
    """Issue 39: after a recorded sweep shown with its conv points, comparing the two FP8 GEMM sweeps (matmul only)
    drew 'nothing to plot' under placeholder titles; the filter now follows the pair compared."""
    view.load("h100_standard")
    assert view.op_filter.value == "conv"  # the Lab's problem's operation, as loading chooses
    view.compare("h100_fp8_gemm", "h200_fp8_gemm")
    title = view.fig.layout.title.text
    assert "8 shared points" in title and "a: a" not in title and len(traces(view.fig)) >= 1
    assert not any("nothing to plot" in (a.text or "") for a in view.fig.layout.annotations)
    assert view.op_filter.value in ("", "matmul") and view._log.messages == []  # "": all operations
    view.compare(*SWEEPS)  # a pair that has conv points keeps a conv filter chosen by hand
    view.op_filter.value = "conv"
    view.compare(*SWEEPS)
    assert view.op_filter.value == "conv" and "shared points" in view.fig.layout.title.text


def test_who_wins_draws_the_backend_map_of_the_recorded_attention_sweep(view: SweepView) -> None:
    """Issue 38: the recorded attention sweep with PyTorch's backends shows which backend wins where; a sweep
    without them says how to get them instead of drawing nothing."""
    from cudnn_lab.ui.sweepview import NO_BACKENDS_TEXT

    view.load("h200_attention_backends")
    view.op_filter.value = "sdpa"
    view.y.value = "who wins"
    assert view._log.messages == [] and "Which backend wins where" in view.fig.layout.title.text
    assert {t.name for t in traces(view.fig)} >= {"cudnn wins"}
    view.y.value = "latency"
    assert "Latency along" in view.fig.layout.title.text
    view.load("h100_standard")
    view.y.value = "who wins"
    assert view._log.messages == []
    assert view.fig.layout.annotations[0].text.replace("<br>", " ") == NO_BACKENDS_TEXT
