"""The Lab's Sweep view, headless: axis values validated and marked, recorded sweeps drawn, two GPUs compared,
Run sweep disabled without a GPU, and the live path (progress, ETA, figure filling in) with cl.sweep replaced."""

from __future__ import annotations

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.ui import Lab
from cudnn_lab.ui.controls import INVALID_BORDER
from cudnn_lab.ui.sweepview import (MAX_POINTS, NO_GPU_SWEEP_TEXT, parse_values, plot_fields, sweep_fields,
                                    validate_axes)

SPEC = cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


def recorded_sweeps() -> list[str]:
    names = list(cl.recorded_datasets(kind="sweep")["name"])
    if len(names) < 2:
        pytest.skip("fewer than two recorded sweeps are shipped")
    return names


@pytest.fixture
def lab() -> Lab:
    return Lab(SPEC, gpu=False)


def traces(fig) -> list:
    return [t for t in fig.data if t.type in ("scatter", "bar")]


# ------------------------------------------------------------------------------------------------ pure helpers

def test_sweep_fields_are_the_operations_fields() -> None:
    assert "n" in sweep_fields("conv") and "epilogue" not in sweep_fields("conv")
    assert {"seq_q", "kv_heads", "causal", "head_dim"} <= set(sweep_fields("sdpa"))
    assert {"window", "mode"} <= set(sweep_fields("pool")) and "kind" in sweep_fields("norm")


def test_values_parse_as_the_field_is_typed() -> None:
    assert parse_values("conv", "n", "1, 8,32") == [1, 8, 32]
    assert parse_values("conv", "layout", "NCHW, NHWC") == ["NCHW", "NHWC"]
    assert parse_values("conv", "padding", "1, 2x1") == [1, (2, 1)]
    assert parse_values("sdpa", "causal", "false, true") == [False, True]
    assert parse_values("sdpa", "head_dim", "64, 128") == [64, 128]
    assert parse_values("sdpa", "kv_heads", "none, 4") == [None, 4]
    assert parse_values("sdpa", "attn_scale", "0.1, none") == [0.1, None]
    assert parse_values("norm", "epsilon", "1e-5, 1e-3") == [1e-5, 1e-3]


@pytest.mark.parametrize("field, text, says", [
    ("n", "", "one or more values"), ("n", "1,,2", "empty value"), ("n", "1, x", "whole number"),
    ("n", "2, 2", "listed twice"), ("layout", "NCHW, CHWN", "must be one of NCHW, NHWC"),
    ("epilogue", "relu", "not a field"),
])
def test_bad_values_are_refused_naming_the_field(field: str, text: str, says: str) -> None:
    with pytest.raises(cl.SpecError, match=says):
        parse_values("conv", field, text)


def test_validate_axes_checks_values_against_the_spec() -> None:
    over, errors, invalid = validate_axes(SPEC, [("n", "1, 2"), ("layout", "NCHW, NHWC")])
    assert over == {"n": [1, 2], "layout": ["NCHW", "NHWC"]} and errors == {} and invalid == 0
    over, errors, _ = validate_axes(SPEC, [("padding", "1, 5"), ("", "")])
    assert over is None and "padding=5" in errors[0] and "larger than the filter allows" in errors[0]
    # padding 3 is fine with dilation 2 only: a value valid in some combination is not marked; the rest is skipped
    over, errors, invalid = validate_axes(SPEC, [("padding", "1, 3"), ("dilation", "1, 2")])
    assert errors == {} and invalid == 1
    over, errors, _ = validate_axes(SPEC, [("n", "1, 2"), ("layout", "")])  # an axis without values is unused
    assert over == {"n": [1, 2]} and errors == {}
    _, errors, _ = validate_axes(SPEC, [("n", ""), ("layout", "")])
    assert "one or more values" in errors[0]
    _, errors, _ = validate_axes(SPEC, [("n", "1"), ("n", "2")])
    assert "already swept" in errors[1]
    many = ", ".join(str(i) for i in range(1, MAX_POINTS + 2))
    _, errors, _ = validate_axes(SPEC, [("n", many), ("", "")])
    assert "more than the panel sweeps" in errors[0]


def test_plot_fields_of_a_recorded_sweep() -> None:
    frame = cl.load_results(recorded_sweeps()[0])
    varying, constant = plot_fields(frame[frame["op"] == "sdpa"])
    assert set(varying) == {"seq_q", "seq_kv", "causal"} and "head_dim" in constant


# ------------------------------------------------------------------------------------------------ the view

def test_axis_validation_marks_bad_values_in_place(lab: Lab) -> None:
    view = lab.sweep_view
    assert view.axis_fields[0].value == "n" and view.axis_fields[1].value == "layout"
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
    assert lab.messages == []


def test_axes_follow_the_operation(lab: Lab) -> None:
    lab.spec = cl.SdpaSpec(batch=1, heads=8, seq_q=128, seq_kv=128, head_dim=64)
    view = lab.sweep_view
    assert tuple(view.axis_fields[0].options) == sweep_fields("sdpa") and view.axis_fields[0].value == "seq_q"
    view.axis_fields[0].value = "kv_heads"
    view.axis_values[0].value = "1, 3"
    assert "kv_heads=3" in view.invalid[0] and "must divide heads=8" in view.invalid[0]
    view.axis_values[0].value = "1, 2, none"
    assert view.validate() == {"kv_heads": [1, 2, None]}


def test_sweep_button_disabled_without_gpu(lab: Lab) -> None:
    view = lab.sweep_view
    assert view.run_button.disabled and view.run_button.tooltip == NO_GPU_SWEEP_TEXT
    assert NO_GPU_SWEEP_TEXT in view.run_note.value
    view.axis_values[0].value = "1, 2"
    view.run_button.click()  # a disabled button's handler still runs headless: it must not raise
    assert any("NoGPUError" in m for m in lab.messages) and view.frame is None


def test_load_a_recorded_sweep_draws_it(lab: Lab) -> None:
    names = recorded_sweeps()
    view = lab.sweep_view
    assert [v for _, v in view.recorded.options] == names and not view.load_button.disabled
    view.recorded.value = names[-1]
    view.load_button.click()
    assert lab.messages == [] and isinstance(view.frame, pd.DataFrame) and view.mode == "latency"
    assert view.op_filter.value == "conv"  # the Lab's operation first
    assert view.x.value in view.x.options and "n" in view.x.options and "layout" in view.x.options
    assert len(traces(view.fig)) >= 1 and len(traces(view.figure)) >= 1  # the widget shows the figure
    assert "Latency along" in view.fig.layout.title.text and "NVIDIA" in view.fig.layout.title.text
    # x and colour come from the sweep's spec_* columns and redraw the figure
    view.x.value = "k"
    view.color.value = "layout"
    assert view.fig.layout.xaxis.title.text.startswith("k") and {t.name for t in traces(view.fig)} == {"NCHW",
                                                                                                      "NHWC"}
    view.y.value = "TFLOP/s"
    assert "TFLOP/s" in view.fig.layout.yaxis.title.text
    view.op_filter.value = "sdpa"
    assert set(view.x.options) == {"seq_q", "seq_kv", "causal"} and len(traces(view.fig)) >= 1
    assert lab.messages == []


def test_compare_two_recorded_gpus(lab: Lab) -> None:
    names = recorded_sweeps()
    view = lab.sweep_view
    view.compare_a.value, view.compare_b.value = names[0], names[1]
    view.compare_button.click()
    assert lab.messages == [] and view.mode == "compare"
    title = view.fig.layout.title.text
    assert "Best-plan latency" in title and "shared points" in title and len(traces(view.fig)) >= 1
    assert "H100" in title and "H200" in title
    view.op_filter.value = "sdpa"  # the comparison of one operation's points: bars with the ratio
    assert view.mode == "compare" and "8 shared points" in view.fig.layout.title.text
    assert any(t.type == "bar" for t in view.fig.data)


def test_loading_a_single_run_as_a_sweep_is_refused(lab: Lab) -> None:
    runs = cl.recorded_datasets(kind="run")
    if not len(runs):
        pytest.skip("no recorded run shipped")
    lab._guard(lab.sweep_view.load, runs["name"][0])
    assert any("not a sweep" in m for m in lab.messages)


def _fake_sweep(lab: Lab, recorded_result, seen: dict):
    """A cl.sweep stand-in: each point of the grid gets the hand-made result's plans, stored as it finishes."""
    from cudnn_lab.store import Store
    from cudnn_lab.sweeps import grid

    def fake(spec, over, *, store=None, progress=None, **options):
        seen.update(options, store=store, disabled=lab.sweep_view.run_button.disabled,
                    run_disabled=lab.run_button.disabled)
        points = grid(spec, over)
        progress(0, len(points), None, "starting")
        seen["figures"] = [len(traces(lab.sweep_view.fig))]
        frames = []
        for i, p in enumerate(points, 1):
            frame = recorded_result.plans.copy()
            for key, value in {"point_id": f"p{i}", "op": p.op, "label": p.label(), "spec": p.to_json(),
                               "point_status": "ok", "gpu": "NVIDIA H100 80GB HBM3", "cudnn": 91900,
                               "flops": p.flops(), "min_bytes": p.min_bytes(),
                               **{f"spec_{k}": v for k, v in p.to_dict().items() if k not in ("op", "epilogue")}
                               }.items():
                frame[key] = value
            frame["median_ms"] = frame["median_ms"] * i
            frame["is_pick"] = frame["plan"] == "eng4_k24=27"
            frame["is_best"] = frame["plan"] == "eng9_k3=0"
            Store(store).append(f"p{i}", frame)
            frames.append(frame)
            progress(i, len(points), 2.0 * (len(points) - i), p.label())
            seen["figures"].append(len(lab.sweep_view.fig.data[0].x) if lab.sweep_view.fig.data else 0)
            seen.setdefault("eta", []).append(lab.sweep_view.eta.value)
        return pd.concat(frames, ignore_index=True)

    return fake


def test_live_sweep_fills_the_figure_as_points_finish(lab: Lab, monkeypatch: pytest.MonkeyPatch,
                                                      recorded_result) -> None:
    seen: dict = {}
    monkeypatch.setattr(cl, "sweep", _fake_sweep(lab, recorded_result, seen), raising=False)
    view = lab.sweep_view
    lab.gpu = True
    view.set_busy(False)
    assert not view.run_button.disabled
    view.axis_values[0].value = "1, 2"
    view.axis_values[1].value = "NCHW, NHWC"
    view.policy.value = "all plans"
    view.run_button.click()
    assert lab.messages == [], lab.messages
    assert seen["disabled"] and seen["run_disabled"]  # busy while the sweep runs
    assert not view.run_button.disabled and not lab.run_button.disabled and not lab.busy
    assert seen["plans"] == "all" and seen["heuristics"] == ("A", "FALLBACK") and seen["store"] == view.store
    assert seen["figures"][0] == 0 and seen["figures"][-1] >= 2  # the figure filled in point by point
    assert "4/4 points" in view.eta.value and "about 6 s left" in seen["eta"][0]
    assert view.progress.value == view.progress.max == 4
    assert view.frame["point_id"].nunique() == 4 and view.mode == "latency"
    assert view.x.value == "n" and view.color.value == "layout"
    assert {t.name for t in traces(view.fig)} == {"NCHW", "NHWC"}
    assert "Sweep done: 4 points" in lab.status.value


def test_a_live_sweep_with_bad_values_does_not_start(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    called = []
    monkeypatch.setattr(cl, "sweep", lambda *a, **k: called.append(a), raising=False)
    lab.gpu = True
    lab.sweep_view.set_busy(False)
    lab.sweep_view.axis_values[0].value = "0"
    lab.sweep_view.run_button.click()
    assert called == [] and any("marked in red" in m for m in lab.messages)
    assert not lab.sweep_view.run_button.disabled
