"""The Lab's state as data: dict and file round trips, defaults for what an older file leaves out, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.options import RunOptions
from cudnn_lab.ui.state import STATE_VERSION, LabState

STATE = LabState(spec=cl.SdpaSpec(heads=8, kv_heads=2), view="Numerics", selected="eng3",
                 run=RunOptions(plans="heuristic", timing="events", cold_l2=True), source="recorded",
                 recorded="h200_conv_nhwc_fp16")


def test_dict_round_trip_is_plain_json() -> None:
    data = STATE.to_dict()
    assert data["version"] == STATE_VERSION and data["spec"]["op"] == "sdpa"
    assert data["run"]["cold_l2"] is True and data["run"]["heuristics"] == ["A", "FALLBACK"]
    assert LabState.from_dict(json.loads(json.dumps(data))) == STATE


def test_file_round_trip(tmp_path: Path) -> None:
    path = STATE.save(tmp_path / "lab.json")
    assert LabState.load(path) == STATE


def test_missing_keys_take_defaults() -> None:
    old = {"version": 1, "spec": cl.ConvSpec().to_dict(), "run": {"plans": "all", "timing": "events"}}
    state = LabState.from_dict(old)
    assert state.run == RunOptions(plans="all", timing="events") and state.view == "Graph"
    assert state.source == "live" and state.recorded is None and state.selected is None


def test_bad_states_are_refused(tmp_path: Path) -> None:
    with pytest.raises(cl.OptionError, match="version"):
        LabState.from_dict({"version": 99})
    with pytest.raises(cl.OptionError):
        LabState.from_dict([1, 2])
    with pytest.raises(cl.OptionError, match="field spec"):
        LabState.from_dict({"version": 1, "spec": {"op": "teleport"}})
    with pytest.raises(cl.OptionError, match="source"):
        LabState(spec=cl.ConvSpec(), source="cloud")
    with pytest.raises(cl.OptionError, match="view"):
        LabState(spec=cl.ConvSpec(), view="Nope")
    with pytest.raises(cl.OptionError, match="run.timing"):
        LabState.from_dict({**STATE.to_dict(), "run": {"timing": "sundial"}})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(cl.DataError):
        LabState.load(bad)
    with pytest.raises(cl.PathError):
        LabState.load(tmp_path / "missing.json")
    with pytest.raises(cl.PathError):
        STATE.save(tmp_path / "no" / "such" / "lab.json")


def test_code_round_trip_alone_or_at_the_end_of_a_link() -> None:
    code = STATE.to_code()
    assert code.startswith("cudnn-lab-state=") and "\n" not in code and len(code) < 1200
    assert LabState.from_code(code) == STATE
    assert LabState.from_code(f"http://localhost:8888/lab/tree/notebooks/09_lab.ipynb#{code}") == STATE
    with pytest.raises(cl.OptionError, match="damaged"):
        LabState.from_code(code[:-20])
    with pytest.raises(cl.OptionError, match="cudnn-lab-state="):
        LabState.from_code("lab.json")


def test_the_panel_saves_loads_and_links_the_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a teacher does: set a problem, Save state to a file; a student Loads it (or pastes the Link's code)."""
    monkeypatch.chdir(tmp_path)
    teacher = cl.Lab(cl.NormSpec(kind="rmsnorm", rows=64, features=96), gpu=False)
    teacher.view = "Code"
    panel = teacher.state_panel
    assert panel.path.value == "lab_output/lab_state.json"  # ignored by git, made on first use
    panel.save_button.click()
    assert (tmp_path / "lab_output" / "lab_state.json").is_file() and "State saved" in teacher.status.value
    student = cl.Lab(gpu=False)
    student.state_panel.load_button.click()  # the same file name in the field
    assert student.spec == teacher.spec and student.view == "Code" and student.messages == []
    teacher.state_panel.link_button.click()
    code = teacher.state_panel.code.value
    assert code.startswith("cudnn-lab-state=") and teacher.state_panel.code.layout.display == "flex"
    other = cl.Lab(gpu=False)
    other.state_panel.path.value = code
    other.state_panel.load_button.click()
    assert other.spec == teacher.spec and other.messages == []
    other.state_panel.path.value = str(tmp_path / "missing.json")
    other.state_panel.load_button.click()  # readable, not raised
    assert "missing.json" in other.status.value and "cl-status-error" in other.status.value
    other.state_panel.path.value = "notes.txt"
    other.state_panel.save_button.click()
    assert ".json" in other.status.value and not (tmp_path / "notes.txt").exists()
