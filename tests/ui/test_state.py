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
    with pytest.raises(cl.SpecError):
        LabState.from_dict({"version": 1, "spec": {"op": "teleport"}})
    with pytest.raises(cl.OptionError, match="source"):
        LabState(spec=cl.ConvSpec(), source="cloud")
    with pytest.raises(cl.OptionError):
        LabState.from_dict({**STATE.to_dict(), "run": {"timing": "sundial"}})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(cl.DataError):
        LabState.load(bad)
    with pytest.raises(cl.PathError):
        LabState.load(tmp_path / "missing.json")
    with pytest.raises(cl.PathError):
        STATE.save(tmp_path / "no" / "such" / "lab.json")
