"""The Lab's real-model preset picker (issue 38 item 5): picking a preset fills the form with ``cl.preset(name)``
(switching the operation family), the form says which preset it shows until a field is edited ("edited from ..."),
and the preset survives a state's dict, file and link; an unknown preset in a state is refused naming the field and
listing the names, and the Lab stays as it was."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.ui.forms import SpecForm
from cudnn_lab.ui.presets import CHOOSE_TEXT, preset_label
from cudnn_lab.ui.state import CODE_PREFIX, LabState

MLA = "DeepSeek-V3 MLA prefill"
PHI3 = "Phi-3-mini attention (d 96)"
WAN = "Wan2.1 video VAE conv3d"


def _pick(lab: cl.Lab, name: str) -> None:
    """Pick a preset as the user does: the dropdown's value."""
    lab.controls.presets.dropdown.value = name


def _code(data: dict[str, Any]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return CODE_PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


@pytest.fixture
def lab() -> cl.Lab:
    return cl.Lab(gpu=False)


def test_the_picker_lists_every_preset_by_family_and_name() -> None:
    form = SpecForm()
    options = form.presets.dropdown.options
    assert options[0] == (CHOOSE_TEXT, "")
    assert [value for _, value in options[1:]] == list(cl.presets())
    assert preset_label(MLA) == f"attention · {MLA}" and preset_label(WAN) == f"conv 3-D · {WAN}"
    assert form.preset is None and form.preset_status == "" and not form.presets.note_shown


@pytest.mark.parametrize("name", cl.presets())
def test_picking_a_preset_shows_its_spec(lab: cl.Lab, name: str) -> None:
    _pick(lab, name)
    spec = cl.preset(name)
    assert lab.spec == spec and lab.controls.spec == spec
    assert lab.controls.op.value == spec.op  # the operation choice followed
    assert lab.controls.values(strict=True) == {"op": spec.op, **{k: getattr(spec, k) for k in
                                                                   lab.controls.active}}
    assert lab.controls.preset == name and lab.controls.preset_status == f"preset: {name}"
    assert lab.controls.invalid == {}


def test_the_drawing_and_code_follow_the_mla_preset(lab: cl.Lab) -> None:
    _pick(lab, MLA)
    assert lab.spec.head_dim == 192 and lab.spec.head_dim_v == 128
    assert lab.controls.sdpa["head_dim"].value == "192" and lab.controls.sdpa["head_dim_v"].value == "128"
    code = lab.graph_view.code_html.value
    assert "d192/128" in code and "&quot;head_dim_v&quot;: 128" in code


def test_the_note_names_the_preset_its_source_and_then_the_edit(lab: cl.Lab) -> None:
    _pick(lab, PHI3)
    note = lab.controls.presets.note
    assert lab.controls.presets.note_shown and f"preset: {PHI3}" in note.value
    assert "Phi-3-mini-4k-instruct" in note.value  # the published configuration's source
    assert "Phi-3-mini-4k-instruct" in lab.controls.presets.dropdown.tooltip
    lab.controls.sdpa["seq_q"].value = "1024"  # an edit, as typed
    assert lab.spec.seq_q == 1024 and lab.spec.head_dim == 96
    assert lab.controls.preset_status == f"edited from {PHI3}" and f"edited from {PHI3}" in note.value
    assert lab.controls.presets.dropdown.value == ""  # the same preset can be picked again
    _pick(lab, PHI3)
    assert lab.spec == cl.preset(PHI3) and lab.controls.preset_status == f"preset: {PHI3}"


def test_switching_family_by_hand_is_an_edit(lab: cl.Lab) -> None:
    _pick(lab, WAN)
    assert lab.controls.op.value == "conv3d"
    lab.controls.op.value = "sdpa"
    assert lab.spec.op == "sdpa" and lab.controls.preset_status == f"edited from {WAN}"


def test_an_invalid_edit_keeps_the_preset_and_marks_the_field(lab: cl.Lab) -> None:
    _pick(lab, MLA)
    lab.controls.sdpa["heads"].value = "3.5"
    assert "heads" in lab.controls.invalid and lab.spec == cl.preset(MLA)


def test_apply_preset_refuses_an_unknown_name_listing_the_names(lab: cl.Lab) -> None:
    before = lab.spec
    with pytest.raises(cl.OptionError, match="preset") as e:
        lab.controls.apply_preset("GPT-7 attention")
    assert MLA in str(e.value) and WAN in str(e.value)
    assert lab.spec == before and lab.controls.preset is None


@pytest.mark.parametrize("edited", [False, True])
def test_the_preset_survives_dict_file_and_link(lab: cl.Lab, tmp_path: Path, edited: bool) -> None:
    _pick(lab, WAN)
    if edited:
        lab.controls.conv3d["n"].value = "2"
    status = lab.controls.preset_status
    assert status == (f"edited from {WAN}" if edited else f"preset: {WAN}")
    state = lab.state()
    assert state["preset"] == WAN
    for again in (cl.Lab.from_state(state, gpu=False), cl.Lab.load(lab.save(tmp_path / "s.json"), gpu=False)):
        assert again.spec == lab.spec and again.controls.preset == WAN and again.controls.preset_status == status
    other = cl.Lab(gpu=False)
    code = lab.state_panel.link()
    other.state_panel.load(code)
    assert other.spec == lab.spec and other.controls.preset_status == status
    _pick(other, MLA)  # the picker keeps working after a load
    assert other.spec == cl.preset(MLA) and other.state()["preset"] == MLA


def test_a_state_without_a_preset_has_no_key_and_clears_the_note(lab: cl.Lab) -> None:
    assert "preset" not in lab.state()
    _pick(lab, PHI3)
    lab.apply_state(LabState(spec=cl.SdpaSpec()))
    assert lab.controls.preset is None and lab.controls.preset_status == ""
    assert not lab.controls.presets.note_shown


def test_a_preset_name_in_other_case_is_read_as_the_kits_name() -> None:
    state = LabState(spec=cl.preset(MLA), preset=MLA.upper())
    assert state.preset == MLA and LabState.from_dict(state.to_dict()) == state


def test_an_unknown_preset_in_a_state_is_refused_naming_the_field(lab: cl.Lab, tmp_path: Path) -> None:
    _pick(lab, PHI3)
    before = (lab.state(), lab.spec, lab.controls.preset_status)
    bad = {**lab.state(), "preset": "GPT-7 attention"}
    with pytest.raises(cl.OptionError) as e:
        LabState(spec=cl.SdpaSpec(), preset="GPT-7 attention")
    assert e.value.option == "preset" and MLA in e.value.allowed and WAN in e.value.allowed
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(cl.DataError, match=r"field preset: 'GPT-7 attention' must be one of the real-model"):
        LabState.load(path)
    with pytest.raises(cl.DataError, match="field preset") as e2:
        LabState.from_code(_code(bad))
    assert MLA in str(e2.value)
    with pytest.raises(cl.DataError, match="field preset"):
        LabState.from_code(_code({**bad, "preset": ["not", "a", "name"]}))
    # through the Lab's own state field (file and link): the answer says why; the Lab stays as it was
    for text in (str(path), "https://example.org/09_lab.ipynb#" + _code(bad)):
        lab.state_panel.path.value = text
        lab.state_panel.load_button.click()
        answer = lab.state_panel.answer.value
        assert "preset" in answer and "GPT-7 attention" in answer and "DeepSeek-V3 MLA prefill" in answer
        assert (lab.state(), lab.spec, lab.controls.preset_status) == before
    _pick(lab, MLA)  # and it keeps working
    assert lab.spec == cl.preset(MLA)
