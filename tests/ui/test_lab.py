"""The Lab panel, headless: widgets drive the spec and the graph, recorded results fill every view, state saves."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.ui import Lab
from cudnn_lab.ui.controls import INVALID_BORDER
from cudnn_lab.ui.lab import NO_GPU_TEXT, VIEWS



@pytest.fixture
def lab() -> Lab:
    return Lab(cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                           epilogue=("bias", "relu")), gpu=False)


def drawn(lab: Lab) -> str:
    """The Graph view's text: the SVG from dot, or the DOT source shown without it (unescaped)."""
    return html.unescape(lab.graph_html.value)


def bars(fig) -> list:
    return [t for t in fig.data if t.type == "bar"]


def test_graph_view_shows_the_tensors(lab: Lab) -> None:
    drawing = drawn(lab)
    for name in ("X", "W", "Y", "bias"):
        assert f">{name}<" in drawing
    assert "cl-graph" in lab.graph_box._dom_classes
    assert ("<svg" in drawing) == bool(lab.dot_path)
    assert "import cudnn" in lab.code_html.value and lab.messages == []


def test_widget_change_updates_spec_and_graph(lab: Lab) -> None:
    before = lab.graph_html.value
    lab.controls.conv["k"].value = 32
    assert lab.spec.k == 32
    assert lab.graph_html.value != before and "k32" in drawn(lab)
    lab.controls.conv["epilogue"].value = ["add"]
    assert lab.spec.epilogue == ("add",)
    assert ">residual<" in drawn(lab) and ">bias<" not in drawn(lab)


def test_switch_to_matmul_redraws(lab: Lab) -> None:
    lab.controls.op.value = "matmul"
    assert isinstance(lab.spec, cl.MatmulSpec)
    for name in ("A", "B", "C"):
        assert f">{name}<" in drawn(lab)
    assert "matmul" in lab.code_html.value


def test_redraw_is_a_plain_method(lab: Lab) -> None:
    lab.graph_html.value = ""
    lab.redraw()
    assert ">Y<" in drawn(lab)


def test_graph_without_dot_falls_back(lab: Lab) -> None:
    lab.dot_path = None
    lab.redraw()
    assert "<svg" not in lab.graph_html.value and "digraph" in lab.graph_html.value
    assert "graphviz" in lab.graph_html.value.lower() and ">bias<" in drawn(lab)
    wasm = lab._browser_graph()
    if wasm is not None:  # graphviz-anywidget draws the same DOT in the browser
        assert wasm in lab.graph_box.children and "bias" in wasm.dot_source
        lab.controls.conv["k"].value = 48
        assert "k48" in wasm.dot_source


def test_graph_without_dot_or_widget_shows_dot_text(lab: Lab) -> None:
    lab.dot_path, lab._wasm_graph = None, False
    lab.redraw()
    assert "digraph" in lab.graph_html.value and ">Y<" in drawn(lab)


def test_invalid_value_is_marked_not_raised(lab: Lab) -> None:
    spec, drawing = lab.spec, lab.graph_html.value
    lab.controls.conv["padding"].value = 5  # r = 3 allows at most 2
    pad = lab.controls.conv["padding"]
    assert "cl-invalid" in pad._dom_classes and pad.layout.border == INVALID_BORDER
    assert "larger than the filter allows" in lab.controls.messages["conv"]["padding"].value
    assert lab.spec == spec and lab.graph_html.value == drawing
    assert lab.messages == []  # an invalid value is not an error of the panel


def test_spec_setter_updates_controls_and_views(lab: Lab) -> None:
    spec = cl.MatmulSpec(batch=2, m=64, n=32, k=16, dtype="bf16", transpose_a=True)
    lab.spec = spec
    assert lab.spec == spec and lab.controls.op.value == "matmul"
    assert lab.controls.matmul["m"].value == 64 and lab.controls.matmul["transpose_a"].value is True
    assert spec.label() in drawn(lab)
    with pytest.raises(cl.SpecError):
        lab.spec = {"op": "conv"}


def test_no_gpu_disables_run_and_says_why(lab: Lab) -> None:
    assert lab.run_button.disabled
    assert NO_GPU_TEXT in lab.run_button.tooltip and NO_GPU_TEXT in lab.run_note.value
    assert lab.source.value == "Recorded"
    lab.run_button.click()  # a disabled button's handler still runs headless: it must not raise
    assert any("NoGPUError" in m for m in lab.messages)
    assert "NoGPUError" in lab.status.value


def test_real_probe_without_gpu_disables_run() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    lab = Lab(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8))
    assert lab.run_button.disabled and lab.run_button.tooltip == NO_GPU_TEXT


def test_load_recording_fills_every_view(lab: Lab, recorded_path: Path, recorded_result) -> None:
    lab.load_recorded(recorded_path)
    result = lab.result
    # The recording's spec becomes the lab's.
    assert result is not None and lab.spec == recorded_result.spec != cl.ConvSpec(n=2, c=8, h=8, w=8, k=16)
    table = lab.plans_html.value
    for plan in result.plans["plan"]:
        assert plan in table
    for column in ("rank", "engine", "knobs", "notes", "workspace", "median", "IQR", "error", "pass"):
        assert f"<th>{column}</th>" in table
    assert "KERNEL_CFG=27" in table and "RUNTIME_COMPILATION" in table and "build_failed" in table
    assert "NVIDIA H100" in lab.result_info.value and "580.65.06" in lab.result_info.value
    assert "9.19.0" in lab.result_info.value and "2026-01-02" in lab.result_info.value
    assert len(bars(lab.figures["latency"])) >= 1
    assert len(bars(lab.figure_widgets["latency"])) >= 1  # the widget shows the figure
    assert lab.selected == result.heuristic_pick["plan"] == "eng4_k24=27"
    assert "1.24x" in lab.heuristics_html.value  # pick 31 us vs best passing 25 us
    assert lab.recorded == str(recorded_path) and lab.messages == []


def test_select_plan_updates_every_figure(lab: Lab, recorded_path: Path) -> None:
    lab.load_recorded(recorded_path)
    lab.plan_select.value = "eng9_k3=0"
    assert lab.selected == "eng9_k3=0"
    selected_rows = [row for row in lab.plans_html.value.split("<tr") if "cl-selected" in row.split(">")[0]]
    assert len(selected_rows) == 1 and "eng9_k3=0" in selected_rows[0]

    def outline_of(fig, plan: str) -> float:
        for trace in fig.data:
            xs = list(trace.x) if trace.x is not None else []
            ids = list(trace.customdata) if trace.customdata is not None else xs
            if plan in ids:
                return list(trace.marker.line.width)[ids.index(plan)]
        raise AssertionError(f"{plan} not drawn")

    for key in ("latency", "heuristics", "errors", "roofline"):
        assert outline_of(lab.figures[key], "eng9_k3=0") > outline_of(lab.figures[key], "eng4_k24=27"), key
        assert outline_of(lab.figure_widgets[key], "eng9_k3=0") > 1, key
    lab.selected = "eng8"
    assert lab.plan_select.value == "eng8"
    lab.select(None)
    assert lab.selected is None and "cl-selected" not in lab.plans_html.value


def test_selecting_an_unknown_plan_is_refused(lab: Lab, recorded_path: Path) -> None:
    lab.load_recorded(recorded_path)
    with pytest.raises(cl.SpecError):
        lab.select("eng999")


def test_changed_controls_mark_results_stale(lab: Lab, recorded_path: Path, recorded_result) -> None:
    lab.load_recorded(recorded_path)
    assert "cl-stale" not in lab.result_info.value
    lab.controls.conv["n"].value = 8
    assert "cl-stale" in lab.result_info.value and lab.result.spec == recorded_result.spec


def test_load_button_loads_the_chosen_recording(lab: Lab, recorded_path: Path) -> None:
    lab.datasets.options = [("hand-made", str(recorded_path))]
    lab.datasets.value = str(recorded_path)
    lab.load_button.disabled = False
    lab.load_button.click()
    assert lab.result is not None and "eng9_k3=0" in lab.plans_html.value
    assert not lab.load_button.disabled  # re-enabled after loading


def test_loading_a_missing_recording_goes_to_the_log(lab: Lab, tmp_path: Path) -> None:
    lab.datasets.options = [("gone", str(tmp_path / "gone.json"))]
    lab.load_button.click()  # must not raise
    assert lab.result is None and lab.messages
    assert "cl-status-error" in lab.status.value
    assert any(o.get("name") == "stderr" for o in lab.log.outputs)


def test_recorded_datasets_fill_the_dropdown(lab: Lab) -> None:
    lister = getattr(cl, "recorded_datasets", None)
    if lister is None:
        pytest.skip("cudnn_lab.recorded_datasets() is not there yet")
    frame = lister(kind="run")
    assert len(lab.datasets.options) == len(frame) and all(n in frame.name.values for _, n in lab.datasets.options)
    if len(frame):
        lab.load_recorded(frame.name[0])
        assert lab.result is not None and lab.recorded == frame.name[0]
        assert lab.state()["recorded"] == frame.name[0]


def test_state_round_trip(lab: Lab, recorded_path: Path, tmp_path: Path) -> None:
    lab.load_recorded(recorded_path)
    lab.controls.conv["k"].value = 32  # spec edited after loading: the edit is what the state keeps
    lab.selected = "eng9_k3=0"
    lab.view = "Numerics"
    lab.controls.heuristics["B"].value = True
    lab.controls.policy.value = "all plans"
    lab.controls.timing.value = "cold L2"
    state = lab.state()
    assert state["spec"]["k"] == 32 and state["view"] == "Numerics" and state["selected"] == "eng9_k3=0"
    assert state["run"] == {"heuristics": ["A", "B", "FALLBACK"], "plans": "all", "timing": "events",
                            "cold_l2": True}
    assert state["recorded"] == str(recorded_path)
    json.dumps(state)  # plain JSON
    path = lab.save(tmp_path / "lab.json")
    again = Lab.load(path, gpu=False)
    assert again.state() == state
    assert again.spec == lab.spec and again.result is not None and again.view == "Numerics"
    assert again.tabs.selected_index == VIEWS.index("Numerics")
    assert Lab.from_state(state, gpu=False).state() == state


def test_state_of_a_fresh_lab_round_trips(lab: Lab) -> None:
    state = lab.state()
    assert state["recorded"] is None and state["selected"] is None
    assert Lab.from_state(state, gpu=False).state() == state


def test_bad_state_is_refused() -> None:
    with pytest.raises(cl.SpecError):
        Lab.from_state({"version": 99})


def test_displays_as_its_root_widget(lab: Lab) -> None:
    bundle = lab._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.root.model_id
    assert [lab.tabs.get_title(i) for i in range(len(VIEWS))] == list(VIEWS)


def test_warnings_in_callbacks_go_to_the_log(lab: Lab) -> None:
    import warnings

    def noisy() -> None:
        warnings.warn("careful", UserWarning)

    lab._guard(noisy)
    assert any("careful" in m for m in lab.messages)
    assert any("careful" in o.get("text", "") for o in lab.log.outputs)


def test_live_run_path_with_a_fake_runner(lab: Lab, monkeypatch: pytest.MonkeyPatch, recorded_result) -> None:
    """The Run button's wiring (progress, busy state, result shown) without a GPU: cl.run is replaced."""
    seen: dict = {}

    def fake_run(spec, *, progress=None, **options):
        seen.update(options, spec=spec, disabled=lab.run_button.disabled)
        for i in range(3):
            progress(i, 3, f"timing plan {i}")
        return recorded_result

    monkeypatch.setattr(cl, "run", fake_run, raising=False)
    lab.gpu = True
    lab.run_button.disabled = False
    lab.run_button.click()
    assert seen["disabled"] is True and not lab.run_button.disabled  # disabled while busy, re-enabled after
    assert seen["heuristics"] == ("A", "FALLBACK") and seen["plans"] == "heuristic"
    assert lab.result is not None and "eng4_k24=27" in lab.plans_html.value
    assert lab.progress.value == lab.progress.max == 3
    assert lab.state()["recorded"] is None and lab.messages == []


def test_a_failing_run_reenables_the_button(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_run(spec, **options):
        raise cl.UnsupportedGraphError("No engine supports this graph", device="H100")

    monkeypatch.setattr(cl, "run", broken_run, raising=False)
    lab.gpu = True
    lab.run_button.disabled = False
    lab.run_button.click()
    assert not lab.run_button.disabled and not lab.busy
    assert "UnsupportedGraphError" in lab.status.value


def test_results_of_another_operation_switch_the_controls(lab: Lab, recorded_result) -> None:
    """An SDPA result is shown with the attention controls: its spec becomes the Lab's."""
    import dataclasses

    spec = cl.SdpaSpec(batch=1, heads=2, seq_q=64, seq_kv=64, head_dim=64)
    other = dataclasses.replace(recorded_result, spec=spec)
    lab._guard(lab.show_result, other)
    assert lab.result is other and lab.spec == spec and lab.controls.op.value == "sdpa"
    assert lab.messages == [] and "cl-stale" not in lab.result_info.value
    assert ">Q<" in drawn(lab) and "eng9_k3=0" in lab.plans_html.value


def _foreign_spec():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class ForeignSpec(cl.Spec):  # op "" is not registered: a spec kind the Lab has no controls for
        size: int = 1

        def label(self) -> str:
            return "foreign"

    return ForeignSpec()


def test_results_of_an_operation_the_controls_do_not_edit(lab: Lab, recorded_result) -> None:
    """A result of a spec kind without controls is shown with a warning; the controls keep the last spec."""
    import dataclasses

    spec = lab.spec
    other = dataclasses.replace(recorded_result, spec=_foreign_spec())
    lab._guard(lab.show_result, other)
    assert lab.result is other and lab.spec == spec
    assert any("the controls edit conv, matmul, sdpa, norm, pool only" in m for m in lab.messages)
    assert "eng9_k3=0" in lab.plans_html.value and "cl-stale" in lab.result_info.value


def test_a_spec_the_controls_do_not_edit_is_refused() -> None:
    with pytest.raises(cl.SpecError, match="has no controls"):
        Lab(_foreign_spec(), gpu=False)


# ------------------------------------------------------------------------------------------------ every operation

OP_SPECS = {
    "conv": cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, layout="NCHW", epilogue=("relu",)),
    "matmul": cl.MatmulSpec(batch=2, m=64, n=32, k=16, transpose_b=True),
    "sdpa": cl.SdpaSpec(batch=1, heads=4, kv_heads=2, seq_q=64, seq_kv=128, head_dim=64, causal=True,
                        direction="fwd_training"),
    "norm": cl.NormSpec(kind="batchnorm", phase="training", n=2, c=16, h=4, w=4, layout="NCHW"),
    "pool": cl.PoolSpec(n=2, c=8, h=9, w=9, mode="avg", window=(3, 2), stride=2, padding=(1, 0)),
}
#: A tensor each operation's drawing shows.
OP_TENSORS = {"conv": ">W<", "matmul": ">B<", "sdpa": ">Stats<", "norm": ">running_mean<", "pool": ">X<"}


@pytest.mark.parametrize("op", list(OP_SPECS))
def test_each_operation_round_trips_and_redraws(op: str) -> None:
    from cudnn_lab.ui.controls import controls_from_spec, spec_from_controls

    spec = OP_SPECS[op]
    lab = Lab(spec, gpu=False)
    assert lab.spec == spec and lab.controls.op.value == op and lab.messages == []
    assert lab.controls.values() == controls_from_spec(spec)
    assert spec_from_controls(lab.controls.values()) == spec
    assert OP_TENSORS[op] in drawn(lab) and spec.label() in drawn(lab)
    # a change in the controls makes a new spec, drawn at once
    before = lab.graph_html.value
    lab.controls.widgets[op]["dtype"].value = "bf16"
    assert lab.spec == spec.replace(dtype="bf16") and lab.graph_html.value != before
    assert spec_from_controls(controls_from_spec(lab.spec)) == lab.spec
    assert "bf16" in drawn(lab) and lab.messages == []


@pytest.mark.parametrize("op", ["sdpa", "norm", "pool"])
def test_spec_setter_switches_the_operation(lab: Lab, op: str) -> None:
    lab.spec = OP_SPECS[op]
    assert lab.controls.op.value == op and lab.spec == OP_SPECS[op]
    assert lab.controls.boxes[op].layout.display != "none" and lab.controls.conv_box.layout.display == "none"
    assert OP_TENSORS[op] in drawn(lab) and lab.messages == []
    from cudnn_lab.ui.sweepview import sweep_fields

    assert tuple(lab.sweep_view.axis_fields[0].options) == sweep_fields(op)  # the Sweep view offers its fields


def test_norm_spec_setter(lab: Lab) -> None:
    lab.spec = cl.NormSpec(kind="rmsnorm", rows=32, features=64)
    assert lab.controls.norm["features"].value == 64 and lab.controls.norm["kind"].value == "rmsnorm"
    assert ">inv_var<" in drawn(lab) and "rmsnorm" in lab.code_html.value


def test_pooling_draws_the_classic_call_and_says_why_there_is_no_script(lab: Lab) -> None:
    from cudnn_lab.graph.pool import to_dot

    lab.spec = OP_SPECS["pool"]
    assert "cudnnPoolingForward" in drawn(lab) and "no graph API" in drawn(lab)
    assert lab.messages == []
    code = html.unescape(lab.code_html.value)
    assert "No script for pooling" in code and "not in the cuDNN frontend 1.32 graph API" in code
    assert "import cudnn" not in code and "cudnnPoolingForward" in code
    assert "cudnnPoolingForward" in to_dot(OP_SPECS["pool"]).source


def test_attention_controls_redraw_the_graph(lab: Lab) -> None:
    lab.spec = cl.SdpaSpec(batch=1, heads=4, seq_q=64, seq_kv=64, head_dim=64)
    lab.controls.sdpa["direction"].value = "bwd"
    assert lab.spec.direction == "bwd" and ">dQ<" in drawn(lab)
    lab.controls.sdpa["kv_heads"].value = 3  # does not divide 4: marked, the graph stays
    assert "kv_heads" in lab.controls.invalid and lab.spec.kv_heads is None


def test_views_include_the_sweep_tab(lab: Lab) -> None:
    assert "Sweep" in VIEWS and lab.tabs.children[VIEWS.index("Sweep")] is lab.sweep_view.box
    lab.view = "Sweep"
    assert lab.tabs.selected_index == VIEWS.index("Sweep")


# ------------------------------------------------------------------------------------------------ report

def test_save_report_is_disabled_until_a_result_is_shown(lab: Lab, recorded_path: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert lab.report_button.disabled and lab.report_path.value == "cudnn_lab_report.html"
    lab.report_button.click()  # no result: reported, not raised
    assert any("no result to report" in m for m in lab.messages)
    lab.load_recorded(recorded_path)
    assert not lab.report_button.disabled
    target = tmp_path / "out" / "r.html"
    target.parent.mkdir()
    lab.report_path.value = str(target)
    lab.report_button.click()
    assert target.is_file() and "<!DOCTYPE html>" in target.read_text()[:100]
    assert lab.report_written == target.resolve()
    assert str(target.resolve()) in html.unescape(lab.status.value) and "Report saved" in lab.status.value
    assert not lab.report_button.disabled and not lab.busy


def test_save_report_defaults_to_the_current_folder(lab: Lab, recorded_path: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    lab.load_recorded(recorded_path)
    written = lab.save_report()
    assert written == (tmp_path / "cudnn_lab_report.html").resolve() and written.is_file()
    assert "href='cudnn_lab_report.html'" in lab.status.value  # a link relative to the current folder
    assert "NVIDIA H100" in written.read_text()


def test_save_report_refuses_a_bad_path(lab: Lab, recorded_path: Path, tmp_path: Path) -> None:
    lab.load_recorded(recorded_path)
    with pytest.raises(cl.SpecError, match="html"):
        lab.save_report(tmp_path / "r.txt")
    with pytest.raises(cl.SpecError, match="does not exist"):
        lab.save_report(tmp_path / "missing" / "r.html")


def test_control_callbacks_run_inside_the_log_wrapper(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected error in a control's callback goes to the Log view, never to the notebook."""
    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(lab.controls, "validate", broken)
    lab.controls.conv["n"].value = 3  # must not raise
    assert any("boom" in m for m in lab.messages) and "RuntimeError" in lab.status.value
