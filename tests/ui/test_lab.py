"""The Lab panel, headless: its parts wired together. Widgets drive the spec and the graph, recordings made on a real
GPU fill every view, Run without a GPU says so and offers them, buttons are disabled while busy, state saves."""

from __future__ import annotations

import dataclasses
import html
import json
import shutil
from pathlib import Path

import pytest
from lab_samples import CONV_RECORDING, MATMUL_RECORDING, plan_names

import cudnn_lab as cl
from cudnn_lab.options import RunOptions
from cudnn_lab.results import datasets
from cudnn_lab.ui import Lab
from cudnn_lab.ui.lab import NO_GPU_TEXT, VIEWS
from cudnn_lab.ui.recordings import recordings_of
from cudnn_lab.ui.run_form import COLD_L2


@pytest.fixture
def lab() -> Lab:
    return Lab(cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                           epilogue=("bias", "relu")), gpu=False)


def log_text(lab: Lab) -> str:
    """Everything the Log shows as text (streams, and each entry's plain-text form)."""
    return "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in lab.log.outputs)


def drawn(lab: Lab) -> str:
    """The Graph view's text: the SVG from dot, or the DOT source shown without it (unescaped)."""
    return html.unescape(lab.graph_view.graph_html.value)


def test_a_new_lab_shows_its_graph_and_script(lab: Lab) -> None:
    for name in ("X", "W", "Y", "bias"):
        assert f">{name}<" in drawn(lab)
    assert "import cudnn" in lab.graph_view.code_html.value and lab.messages == []
    assert [lab.tabs.get_title(i) for i in range(len(VIEWS))] == list(VIEWS)
    assert lab.tabs.children[VIEWS.index("Sweep")] is lab.sweep_view.box
    assert lab.tabs.children[VIEWS.index("Log")] is lab.log
    assert lab.run_options == RunOptions()
    bundle = lab._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.root.model_id


def test_widget_change_updates_spec_graph_and_sweep_axes(lab: Lab) -> None:
    before = drawn(lab)
    lab.controls.conv["k"].value = "32"
    assert lab.spec.k == 32 and drawn(lab) != before and "k32" in drawn(lab)
    lab.controls.op.value = "matmul"
    assert isinstance(lab.spec, cl.MatmulSpec) and ">B<" in drawn(lab)
    from cudnn_lab.ui.sweep_axes import sweep_fields

    assert tuple(lab.sweep_view.axis_fields[0].options) == sweep_fields("matmul")


def test_an_invalid_value_is_marked_not_raised(lab: Lab) -> None:
    spec, drawing = lab.spec, drawn(lab)
    lab.controls.conv["padding"].value = "5"  # r = 3 allows at most 2
    assert "padding" in lab.controls.invalid and lab.spec == spec and drawn(lab) == drawing
    assert lab.messages == []  # an invalid value is not an error of the panel


@pytest.mark.parametrize("spec", [cl.SdpaSpec(batch=1, heads=4, seq_q=64, seq_kv=64, head_dim=64),
                                  cl.NormSpec(kind="rmsnorm", rows=32, features=64),
                                  cl.PoolSpec(n=2, c=8, h=9, w=9, mode="avg")], ids=lambda s: s.op)
def test_spec_setter_switches_the_operation(lab: Lab, spec: cl.Spec) -> None:
    lab.spec = spec
    assert lab.spec == spec and lab.controls.op.value == spec.op and lab.messages == []
    assert lab.controls.boxes[spec.op].layout.display != "none" and lab.controls.conv_box.layout.display == "none"
    assert spec.label() in drawn(lab)
    with pytest.raises(cl.SpecError):
        lab.spec = {"op": "conv"}


def test_run_without_a_gpu_says_so_and_offers_the_recordings(lab: Lab) -> None:
    assert lab.run_button.disabled and lab.run_button.tooltip == NO_GPU_TEXT and NO_GPU_TEXT in lab.run_note.value
    assert lab.source.value == "Recorded" and lab.recorded_box.layout.display == "flex"
    lab.source.value = "Live GPU"
    lab.run_button.click()  # a disabled button's handler still runs headless: it must not raise
    assert any("NoGPUError" in m for m in lab.messages) and lab.result is None
    assert "No GPU here" in lab.status.value and "Load it" in lab.status.value
    assert lab.source.value == "Recorded" and lab.recorded_box.layout.display == "flex"
    assert not lab.busy and not lab.load_button.disabled


def test_run_on_a_machine_without_gpu_meets_the_real_no_gpu_error() -> None:
    """``gpu=True`` on a machine without one: Run calls the real ``cl.run``, which raises NoGPUError."""
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    lab = Lab(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), gpu=True)
    assert not lab.run_button.disabled and lab.source.value == "Live GPU"
    lab.run_button.click()
    assert lab.result is None and any("NoGPUError" in m for m in lab.messages)
    assert "No GPU here" in lab.status.value and lab.source.value == "Recorded"
    assert not lab.busy and not lab.run_button.disabled  # re-enabled after


def test_the_real_probe_without_gpu_disables_run() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    lab = Lab(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8))
    assert lab.run_button.disabled and lab.run_button.tooltip == NO_GPU_TEXT


def test_load_button_shows_the_chosen_recording_and_is_disabled_while_busy(lab: Lab, recorded_result) -> None:
    names = [v for _, v in lab.datasets.options]
    frame = cl.recorded_datasets(kind="run")
    assert names == list(recordings_of(frame, "conv")["name"])  # the chosen operation's recordings only
    assert not any("genstats" in n or "prologue" in n for n in names)  # fusion patterns are operations of their own
    assert Lab(recorded_result.spec, gpu=False).datasets.value == CONV_RECORDING  # the spec's own is preselected
    lab.datasets.value = CONV_RECORDING
    states: list[bool] = []
    lab.load_button.observe(lambda ch: states.append(ch["new"]), names="disabled")
    lab.sweep_view.load_button.observe(lambda ch: states.append(ch["new"]), names="disabled")
    lab.load_button.click()
    assert True in states and not lab.load_button.disabled and not lab.sweep_view.load_button.disabled
    assert lab.result is not None and lab.recorded == CONV_RECORDING and lab.messages == []
    assert lab.spec == recorded_result.spec  # the recording's spec becomes the Lab's
    for plan in recorded_result.plans["plan"]:
        assert plan in lab.results.plans_html.value
    ran = int((recorded_result.plans["status"] == "ok").sum())
    assert f"Showing {len(recorded_result.plans)} plans ({ran} ran)" in lab.status.value
    assert recorded_result.device["gpu"] in lab.results.info.value
    banner = lab.results.info.value  # where the numbers come from, over every view
    assert "RECORDED" in banner and "driver 580.159.04" in banner and "cuDNN 9.19.0" in banner
    assert recorded_result.created[:10] in banner and "MEASURED HERE" not in banner
    assert lab.selected == plan_names(recorded_result)[0] == lab.results.plan_select.value


def test_the_recordings_follow_the_operation(lab: Lab, monkeypatch, tmp_path: Path) -> None:
    conv = [v for _, v in lab.datasets.options]
    lab.controls.op.value = "matmul"
    matmuls = [v for _, v in lab.datasets.options]
    assert matmuls == list(recordings_of(cl.recorded_datasets(kind="run"), "matmul")["name"])
    assert MATMUL_RECORDING in matmuls
    assert lab.recordings_note.value == "" and not lab.load_button.disabled
    lab.load_button.click()
    assert lab.controls.op.value == "matmul" and lab.result.spec.op == "matmul"  # Load never switches operation
    assert "switched" not in lab.status.value
    lab.controls.op.value = "sdpa"  # attention's recordings only
    assert all("sdpa" in v for _, v in lab.datasets.options) and not lab.load_button.disabled
    lab.controls.op.value = "conv"
    assert [v for _, v in lab.datasets.options] == conv
    # Where nothing of an operation is recorded, it is said beside the list and Load is disabled.
    only = tmp_path / "recorded"
    only.mkdir()
    shutil.copy(cl.load_results(CONV_RECORDING).loaded_from, only / f"{CONV_RECORDING}.json")
    monkeypatch.setattr(datasets, "RECORDED_DIR", only)
    bare = Lab(gpu=False)
    bare.controls.op.value = "sdpa"
    assert bare.datasets.options == () and bare.load_button.disabled
    assert "No recording of attention" in bare.recordings_note.value


def test_a_matmul_recording_loaded_from_code_switches_the_operation_and_says_so(lab: Lab) -> None:
    lab.load_recorded(MATMUL_RECORDING)
    assert lab.controls.op.value == "matmul" and isinstance(lab.spec, cl.MatmulSpec)
    assert lab.spec == lab.result.spec and ">B<" in drawn(lab) and lab.messages == []
    assert "switched from conv to matmul" in lab.status.value
    assert MATMUL_RECORDING in [v for _, v in lab.datasets.options]  # the list follows
    assert "cl-stale" not in lab.results.info.value
    lab.controls.matmul["m"].value = "64"
    assert "cl-stale" in lab.results.info.value


def test_a_recording_saved_as_a_file_loads(lab: Lab, recorded_path: Path) -> None:
    lab.load_recorded(recorded_path)
    assert lab.result is not None and lab.recorded == str(recorded_path) and lab.messages == []


def test_a_result_shown_from_code_says_where_it_came_from(lab: Lab) -> None:
    loaded = cl.load_results(MATMUL_RECORDING)
    lab.show_result(loaded)  # loaded from its file: RECORDED under its name, and the state can load it again
    assert lab.recorded == str(loaded.loaded_from) and f"recording {MATMUL_RECORDING}" in lab.status.value
    assert "RECORDED" in lab.results.info.value and "MEASURED HERE" not in lab.results.info.value
    lab.show_result(dataclasses.replace(loaded, loaded_from=None))  # as cl.run hands it over
    assert lab.recorded is None and "run on this machine's GPU" in html.unescape(lab.status.value)
    assert "MEASURED HERE" in lab.results.info.value


def test_a_missing_recording_goes_to_the_log(lab: Lab, tmp_path: Path) -> None:
    lab.datasets.options = [("gone", str(tmp_path / "gone.json"))]
    lab.load_button.click()  # must not raise
    assert lab.result is None and lab.messages and "cl-status-error" in lab.status.value
    assert "gone.json" in log_text(lab) and "Traceback" not in log_text(lab) and not lab.busy


def test_loading_a_sweep_as_a_run_is_refused(lab: Lab) -> None:
    lab.status_log.guard(lab.load_recorded, "h200_standard")
    assert lab.result is None and any("Sweep tab" in m for m in lab.messages)


def test_results_of_a_family_the_form_does_not_edit(lab: Lab, recorded_result, unregistered_spec) -> None:
    spec = lab.spec
    other = dataclasses.replace(recorded_result, spec=unregistered_spec)
    lab.status_log.guard(lab.show_result, other)
    assert lab.result is other and lab.spec == spec
    assert any("the controls edit" in m for m in lab.messages) and "cl-stale" in lab.results.info.value
    with pytest.raises(cl.SpecError, match="has no controls"):
        Lab(unregistered_spec, gpu=False)


def test_state_round_trip(lab: Lab, tmp_path: Path) -> None:
    lab.load_recorded(CONV_RECORDING)
    lab.controls.conv["k"].value = "32"  # spec edited after loading: the edit is what the state keeps
    other = plan_names(lab.result)[3]
    lab.selected = other
    lab.view = "Numerics"
    lab.run_form.heuristics["B"].value = True
    lab.run_form.policy.value = "heuristic"
    lab.run_form.timing.value = COLD_L2
    state = lab.state()
    assert state["spec"]["k"] == 32 and state["view"] == "Numerics" and state["selected"] == other
    assert RunOptions.from_dict(state["run"]) == RunOptions(heuristics=("A", "B", "FALLBACK"), plans="heuristic",
                                                            timing="events", cold_l2=True)
    assert state["recorded"] == CONV_RECORDING and state["source"] == "recorded"
    json.dumps(state)  # plain JSON
    again = Lab.load(lab.save(tmp_path / "lab.json"), gpu=False)
    assert again.state() == state and again.spec == lab.spec and again.result is not None
    assert again.tabs.selected_index == VIEWS.index("Numerics") and again.selected == other
    assert Lab.from_state(state, gpu=False).state() == state


def test_state_of_a_fresh_lab_round_trips(lab: Lab) -> None:
    state = lab.state()
    assert state["recorded"] is None and state["selected"] is None
    assert Lab.from_state(state, gpu=False).state() == state
    with pytest.raises(cl.OptionError):
        Lab.from_state({"version": 99})
    with pytest.raises(cl.OptionError):
        lab.view = "Nope"


def test_save_report_is_disabled_until_a_result_is_shown(lab: Lab, tmp_path: Path) -> None:
    assert lab.report_button.disabled and lab.report_path.value == "lab_output/cudnn_lab_report.html"
    lab.report_button.click()  # no result: reported, not raised
    assert any("no result to report" in m for m in lab.messages)
    lab.load_recorded(CONV_RECORDING)
    assert not lab.report_button.disabled
    target = tmp_path / "out" / "r.html"
    target.parent.mkdir()
    lab.report_path.value = str(target)
    lab.report_button.click()
    assert target.is_file() and "<!DOCTYPE html>" in target.read_text()[:100]
    assert lab.report_written == target.resolve()
    assert str(target.resolve()) in html.unescape(lab.status.value) and "Report saved" in lab.status.value
    assert not lab.report_button.disabled and not lab.busy


def test_save_report_defaults_to_lab_output_in_the_current_folder(lab: Lab, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    lab.load_recorded(CONV_RECORDING)
    written = lab.save_report()
    # lab_output/ (ignored by git, made on first use): the Lab leaves the repository clean
    assert written == (tmp_path / "lab_output" / "cudnn_lab_report.html").resolve() and written.is_file()
    assert "href='lab_output/cudnn_lab_report.html'" in lab.status.value  # a link relative to the current folder
    assert cl.load_results(CONV_RECORDING).device["gpu"] in written.read_text()


def test_save_report_refuses_a_bad_path(lab: Lab, tmp_path: Path) -> None:
    lab.load_recorded(CONV_RECORDING)
    with pytest.raises(cl.OptionError, match="html"):
        lab.save_report(tmp_path / "r.txt")
    with pytest.raises(cl.PathError, match="does not exist"):
        lab.save_report(tmp_path / "missing" / "r.html")


def test_save_report_to_an_unwritable_place_says_so_in_one_sentence(lab: Lab, tmp_path: Path) -> None:
    import os

    lab.load_recorded(CONV_RECORDING)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        lab.report_path.value = str(locked / "r.html")
        lab.report_button.click()
    finally:
        locked.chmod(0o700)
    status = html.unescape(lab.status.value)
    assert "cl-status-error" in status and "not writable" in status and "Traceback" not in log_text(lab)


def test_save_report_to_a_file_in_place_of_a_folder_says_so_in_one_sentence(lab: Lab, tmp_path: Path) -> None:
    lab.load_recorded(CONV_RECORDING)
    (tmp_path / "a_file").write_text("x")
    lab.report_path.value = str(tmp_path / "a_file" / "r.html")
    lab.report_button.click()
    status = html.unescape(lab.status.value)
    assert "cl-status-error" in status and "a_file" in status and "is a file, not a folder" in status
    assert "Traceback" not in log_text(lab) and "traceback" not in status and not lab.busy


def test_control_callbacks_run_inside_the_log(lab: Lab) -> None:
    """A bad value typed into a control is marked; anything a callback raises goes to the Log, never out."""
    lab.controls.sdpa["attn_scale"].value = "abc"  # a hidden operation's control: no error escapes
    lab.controls.op.value = "sdpa"
    assert "attn_scale" in lab.controls.invalid and lab.messages == []
    assert lab.controls._guard == lab.status_log.guard  # every form callback runs in the Log's Output
    lab.sweep_view.recorded.options = [("gone", "no_such_sweep")]
    lab.sweep_view.load_button.click()  # a callback that fails: logged, summarized, not raised
    assert any("no_such_sweep" in m for m in lab.messages) and "cl-status-error" in lab.status.value


def test_a_new_lab_starts_light_and_builds_the_rest_when_first_shown() -> None:
    """Issue 24: a new Lab makes at most 300 widget models (counted in a fresh Python); the other operations' forms
    and the Sweep view are built when first chosen or shown, then kept."""
    import subprocess
    import sys

    code = ("import warnings; warnings.simplefilter('ignore'); import ipywidgets, cudnn_lab as cl; "
            "n = len(ipywidgets.Widget._active_widgets); cl.Lab(gpu=False); "
            "print(len(ipywidgets.Widget._active_widgets) - n)")
    made = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 50 < made <= 300
    lab = Lab(gpu=False)
    assert set(lab.controls._built) == {"conv"} and lab._sweep_view is None
    lab.controls.op.value = "matmul"
    matmul_box = lab.controls.boxes["matmul"]
    assert set(lab.controls._built) == {"conv", "matmul"} and matmul_box in lab.controls.box.children
    lab.controls.op.value = "conv"
    assert lab.controls.boxes["matmul"] is matmul_box and matmul_box not in lab.controls.box.children  # kept
    lab.view = "Sweep"
    assert lab._sweep_view is not None and lab.tabs.children[VIEWS.index("Sweep")] is lab.sweep_view.box


def test_each_button_answers_beside_itself(lab: Lab, tmp_path: Path) -> None:
    """Load, Save report, Save state, Load state and Link say what they did (or why not) under their buttons."""
    assert lab.load_answer.layout.display == "none" and lab.report_answer.layout.display == "none"
    lab.datasets.value = CONV_RECORDING
    lab.load_button.click()
    assert "cl-answer-ok" in lab.load_answer.value and CONV_RECORDING in lab.load_answer.value
    assert lab.load_answer.layout.display != "none"
    lab.report_path.value = str(tmp_path / "missing" / "r.html")
    lab.report_button.click()
    assert "cl-answer-error" in lab.report_answer.value and "does not exist" in lab.report_answer.value
    lab.report_path.value = str(tmp_path / "r.html")
    lab.report_button.click()
    assert "cl-answer-ok" in lab.report_answer.value and "r.html" in lab.report_answer.value
    panel = lab.state_panel
    panel.path.value = str(tmp_path / "state.json")
    panel.save_button.click()
    assert "Saved to" in panel.answer.value and "state.json" in panel.answer.value
    panel.load_button.click()
    assert "Loaded:" in panel.answer.value and "cl-answer-ok" in panel.answer.value
    panel.path.value = str(tmp_path / "nothing.json")
    panel.load_button.click()  # fails: said beside the button in one sentence, the panel as it was
    assert "cl-answer-error" in panel.answer.value and lab.recorded == CONV_RECORDING
    panel.link_button.click()
    assert "code" in panel.answer.value and panel.code.value


def test_a_plan_pick_draws_only_the_view_on_screen(lab: Lab) -> None:
    """Issue 24: picking a plan redraws the figures of the view shown; the others when they are next shown."""
    lab.load_recorded(CONV_RECORDING)
    lab.view = "Plans"
    before = lab.figure_host.shown("latency")
    other = plan_names(lab.result)[-1]
    lab.select(other)
    assert lab.figure_host.shown("latency") == before and "Latency" in lab.results.stale
    lab.view = "Latency"
    assert lab.figure_host.shown("latency") != before and "Latency" not in lab.results.stale


def test_a_load_draws_every_view_and_a_pick_only_the_one_on_screen(lab: Lab) -> None:
    """Issue 24: a load draws every view (no view shows the last result or "No results yet" when its tab is
    clicked); a plan pick then redraws the view on screen and leaves the others for when they are shown, and code
    that reads ``lab.figures`` gets them drawn."""
    lab.view = "Graph"
    lab.load_recorded(CONV_RECORDING)
    assert not lab.results.stale and lab.figure_host.shown("latency")["data"]
    before = lab.figure_host.shown("errors")
    lab.select(plan_names(lab.result)[-1])
    assert "Numerics" in lab.results.stale and lab.figure_host.shown("errors") == before
    assert lab.figures["errors"].data and not lab.results.stale and lab.figure_host.shown("errors") != before


def test_load_answers_before_it_draws_the_hidden_views(lab: Lab) -> None:
    """Issue 24: Load shows the recording in the view on screen, answers under its button and enables Load again,
    then (in the same callback, so that no click is raced) draws the hidden views."""
    lab.view = "Latency"
    seen: list[tuple[str, bool, set[str]]] = []
    draw_stale = lab.results.draw_stale

    def spy() -> None:
        seen.append((lab.load_answer.value, lab.load_button.disabled, set(lab.results.stale)))
        draw_stale()

    lab.results.draw_stale = spy  # type: ignore[method-assign]
    name = lab.datasets.value = lab.datasets.options[-1][1]
    lab.load_button.click()
    [(answer, disabled, stale)] = seen
    assert name in answer and not disabled and "Latency" not in stale and {"Numerics", "Roofline"} <= stale
    assert not lab.results.stale and lab.figure_host.shown("roofline")["data"] and lab.recorded == name


def test_a_recording_loaded_again_reuses_its_drawings(lab: Lab, tmp_path: Path) -> None:
    """Alternating loads of two recordings draw each figure once per recording and plan; a file written again is
    drawn again."""
    path = cl.load_results(CONV_RECORDING).save(tmp_path / "conv.json")
    lab.load_recorded(path)
    first = lab.figures["latency"]
    lab.load_recorded(MATMUL_RECORDING)
    assert lab.figures["latency"] is not first
    lab.load_recorded(path)
    assert lab.figures["latency"] is first and lab.figure_host.shown("latency")["data"]
    pick = lab.selected
    lab.select(plan_names(lab.result)[-1])
    assert pick != lab.selected and lab.figures["latency"] is not first
    lab.select(pick)  # back to the pick: its drawing again
    assert lab.figures["latency"] is first
    lab.load_recorded(MATMUL_RECORDING)
    path.write_text(path.read_text() + "\n")  # written again: another size and time
    lab.load_recorded(path)
    assert lab.figures["latency"] is not first


def test_before_a_result_only_the_view_shown_holds_a_figure(lab: Lab) -> None:
    """Issue 24: a new Lab sends no plotly figure for its hidden views (the browser's first plotly draw was half of
    a cold Run to panel); a view says "No results yet" when it is shown."""
    assert lab.view == "Graph" and not any(lab.figure_host.pane(name).outputs for name in ("latency", "errors"))
    lab.view = "Numerics"
    for name in ("errors", "histogram"):
        assert "No results yet" in lab.figure_host.shown(name)["layout"]["annotations"][0]["text"]
    assert not lab.figure_host.pane("latency").outputs


def test_save_report_shows_progress_at_once_and_reuses_the_answers(lab: Lab, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: while Save report works, the line under it says what it is doing (the last "Saved" goes at once);
    a second Save of the same recording gathers cuDNN's answers once."""
    import cudnn_lab.ui.lab as lab_module

    calls = []
    gather = lab_module.report_answers
    monkeypatch.setattr(lab_module, "report_answers", lambda result: calls.append(result) or gather(result))
    lab.datasets.value = CONV_RECORDING
    lab.load_button.click()
    lab.report_path.value = str(tmp_path / "r.html")
    lab.report_button.click()
    assert "cl-answer-ok" in lab.report_answer.value
    seen: list[str] = []
    lab.report_answer.observe(lambda change: seen.append(change["new"]), "value")
    lab.report_button.click()
    assert seen and "cl-answer-working" in seen[0] and "Saved" not in seen[0]
    assert "cl-answer-ok" in seen[-1] and "Saved" in seen[-1]
    assert len(calls) == 1 and (tmp_path / "r.html").stat().st_size > 0
