"""The model lines toggle of the Latency and Roofline views (issue 35), with shipped recordings: shown only in the
views whose figures draw models (the registry says which), switching it adds and removes the model traces, a run
without a validated model says so beside it, its callback runs in the Log's Output, and it survives the Lab's state
(dict, code, file) while a bad value is refused naming the field."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import ipywidgets as W
import pytest
from lab_samples import CONV_RECORDING

import cudnn_lab as cl
from cudnn_lab.errors import OptionError
from cudnn_lab.plots.registry import FIGURE_OPTIONS, VIEWS, ViewEntry, options_of_view
from cudnn_lab.provenance import provenance
from cudnn_lab.ui import Lab
from cudnn_lab.ui.figure_options import ViewToggles
from cudnn_lab.ui.figures import FigureHost, pane_height
from cudnn_lab.ui.results_view import ResultView
from cudnn_lab.ui.state import CODE_PREFIX, LabState
from cudnn_lab.ui.status import StatusLog
from cudnn_lab.whatif.speed_lines import model_lines

#: A conv3d recording: no validated model for its family (the H100<->H200 validation has no conv3d row).
NO_MODEL = "h200_conv3d_wan_vae_bf16"


def _names(fig: Any) -> list[str]:
    return [t.name for t in fig.data]


def _notes(fig: Any) -> list[str]:
    """The model lines' note under the figure's title (plots/run.py), one item per line."""
    return [part for part in (fig.layout.title.text or "").split("<br>") if "model lines" in part]


@pytest.fixture
def view() -> ResultView:
    log = StatusLog(W)
    return ResultView(W, FigureHost(W, log), log)


def _show(view: ResultView, name: str) -> Any:
    result = cl.load_results(name)
    view.show(result, provenance(result, recorded=True, name=name), result.spec)
    return result


def test_only_the_views_whose_figures_draw_models_get_the_toggle(view: ResultView) -> None:
    assert options_of_view("Latency") == options_of_view("Roofline") == ("models",)
    assert [v for v in VIEWS if options_of_view(v)] == ["Latency", "Roofline"]
    _show(view, CONV_RECORDING)
    assert set(view.toggles) == {"Latency", "Roofline"}
    for name, toggles in view.toggles.items():
        assert view.views[name].children[0] is toggles.box  # above the figures
        check = toggles.checks["models"]
        assert check.description == "model lines" and not check.value  # off by default
        assert "validation error" in check.tooltip and "Forecasts, not measurements" in check.tooltip
    with pytest.raises(OptionError, match="options"):
        ViewEntry("x", "x", "Latency", lambda r, s: None, options=("nonesuch",))


def test_the_toggle_adds_and_removes_the_model_traces(view: ResultView) -> None:
    result = _show(view, CONV_RECORDING)
    lines = model_lines(result)
    labels = [line.label for line in lines.lines]
    assert labels and all("%" in label for label in labels)  # each named with its validation error
    host = view._figures
    plain = {name: _names(host.figures[name]) for name in ("latency", "roofline")}
    assert not set(labels) & set(plain["latency"]) and not _notes(host.figures["latency"])

    view.toggles["Latency"].checks["models"].value = True  # a click
    assert view.options["models"] and view.toggles["Roofline"].checks["models"].value  # one setting, both views
    latency, roofline = host.figures["latency"], host.figures["roofline"]
    assert _names(latency) == plain["latency"] + labels and _notes(latency)
    assert [n for n in _names(roofline) if n not in plain["roofline"]] == [
        next(n for n in _names(roofline) if n.startswith("datasheet roofline")), *labels]
    assert roofline.layout.height > pane_height("roofline")  # taller for its longer legend, not squeezed
    note = view.toggles["Latency"].note.value
    assert "Model lines drawn" in note and lines.source in note and "validation error" in note

    view.toggles["Roofline"].checks["models"].value = False
    assert {name: _names(host.figures[name]) for name in plain} == plain
    assert host.figures["roofline"].layout.height == pane_height("roofline")
    assert view.toggles["Latency"].note.value == "" and not view.toggles["Latency"].checks["models"].value
    assert view._log.messages == []


def test_a_run_without_a_validated_model_says_so_beside_the_toggle(view: ResultView) -> None:
    result = _show(view, NO_MODEL)
    lines = model_lines(result)
    assert not lines.lines and lines.note
    said = view.toggles["Latency"].note.value
    assert "No model lines for this run" in said and "conv3d" in said  # said before it is switched on
    plain = _names(view._figures.figures["latency"])
    view.set_option("models", True)
    fig = view._figures.figures["latency"]
    assert _names(fig) == plain and any("none" in text for text in _notes(fig))
    assert "No model lines for this run" in view.toggles["Roofline"].note.value


def test_a_failing_toggle_answers_beside_it_and_in_the_log() -> None:
    log = StatusLog(W)

    def refuse(name: str, on: bool) -> None:
        raise OptionError(name, on, "cannot be drawn here", where="test")

    toggles = ViewToggles(W, ("models",), {"models": False}, refuse, log.guard)
    toggles.checks["models"].value = True
    assert "cannot be drawn here" in toggles.note.value and "cl-option-error" in toggles.note.value
    assert not toggles.checks["models"].value  # back as it was
    assert any("cannot be drawn here" in m for m in log.messages)


def test_bad_option_values_are_refused_naming_them(view: ResultView) -> None:
    with pytest.raises(OptionError, match="models.*True or False"):
        view.set_option("models", "yes")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="figure option.*models"):
        view.set_option("nonesuch", True)
    assert view.options == dict.fromkeys(FIGURE_OPTIONS, False)


def test_the_lab_draws_the_view_on_screen_and_leaves_the_other_for_later() -> None:
    lab = Lab(gpu=False)
    lab.load_recorded(CONV_RECORDING)
    lab.view = "Latency"
    before = lab.figure_host.shown("roofline")
    lab.results.toggles["Latency"].checks["models"].value = True
    assert lab.model_lines and "Roofline" in lab.results.stale
    assert lab.figure_host.shown("roofline") == before
    labels = [line.label for line in model_lines(lab.result).lines]
    assert set(labels) <= set(_names(lab.figure_host.figures["latency"]))
    lab.view = "Roofline"
    assert set(labels) <= set(_names(lab.figure_host.figures["roofline"])) and not lab.messages


def test_the_toggle_survives_the_state_link_and_file(tmp_path: Path) -> None:
    lab = Lab(gpu=False)
    lab.load_recorded(CONV_RECORDING)
    assert "model_lines" not in lab.state()  # off: the link stays as it was
    lab.model_lines = True
    lab.view = "Roofline"
    state = lab.state()
    assert state["model_lines"] is True
    labels = [line.label for line in model_lines(lab.result).lines]
    for again in (Lab.from_state(LabState.from_code(LabState.from_dict(state).to_code()), gpu=False),
                  Lab.load(lab.save(tmp_path / "lab.json"), gpu=False)):
        assert again.model_lines and again.results.toggles["Roofline"].checks["models"].value
        assert set(labels) <= set(_names(again.figures["roofline"])) and again.state() == state
    lab.apply_state(LabState.from_dict({**state, "model_lines": False}))
    assert not lab.model_lines and not set(labels) & set(_names(lab.figures["latency"]))


@pytest.mark.parametrize("bad", ["yes", 1, None, [True]])
def test_a_bad_model_lines_field_is_refused_naming_it(tmp_path: Path, bad: Any) -> None:
    data = {**LabState(spec=cl.ConvSpec()).to_dict(), "model_lines": bad}
    with pytest.raises(cl.OptionError, match="model_lines.*true or false"):
        LabState.from_dict(data)
    code = CODE_PREFIX + base64.urlsafe_b64encode(zlib.compress(json.dumps(data).encode())).decode()
    with pytest.raises(cl.DataError, match="state code.*field model_lines: must be true or false"):
        LabState.from_code(code)
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data))
    with pytest.raises(cl.DataError, match="lab.json.*field model_lines: must be true or false"):
        LabState.load(path)
    with pytest.raises(cl.OptionError, match="model_lines"):
        LabState(spec=cl.ConvSpec(), model_lines=bad)
