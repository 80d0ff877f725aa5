"""What the What-if view and the Lab state take about the view's targets: a bad choice is refused with the kit's
OptionError naming ``targets`` and the names allowed (nothing changes), a state keeps and restores the choice
(``whatif_targets``), and a NaN in a state code is refused naming the field that holds it."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from lab_samples import CONV_RECORDING

import cudnn_lab as cl
from cudnn_lab.ui import Lab
from cudnn_lab.ui.state import CODE_PREFIX, LabState
from cudnn_lab.whatif import devices as tg


@pytest.fixture
def lab() -> Lab:
    return Lab(gpu=False)


def _code(data: Any) -> str:
    raw = json.dumps(data, allow_nan=True).encode()
    return CODE_PREFIX + base64.urlsafe_b64encode(zlib.compress(raw)).decode()


def known() -> list[str]:
    return list(dict.fromkeys(t.name for t in tg.targets()))


@pytest.mark.parametrize("bad", [5, 2.5, None, {"h200": True}, [[1]], [5], [], ["h200", "b300"], b"h200"])
def test_a_bad_target_choice_is_refused_naming_targets_and_changes_nothing(lab: Lab, bad: Any) -> None:
    view = lab.whatif_view
    lab.load_recorded(CONV_RECORDING)
    lab.view = "What-if"
    before = view.targets
    with pytest.raises(cl.OptionError) as caught:
        view.targets = bad
    assert caught.value.option == "targets"
    assert "h200" in caught.value.allowed and "sm80" in caught.value.allowed  # says which names are allowed
    assert view.targets == before


def test_a_bad_choice_is_refused_before_the_view_is_built(lab: Lab) -> None:
    with pytest.raises(cl.OptionError, match="targets"):
        lab.whatif_view.targets = 5
    assert not lab.whatif_view.built


def test_a_target_name_alone_or_a_tuple_is_taken(lab: Lab) -> None:
    view = lab.whatif_view
    lab.load_recorded(CONV_RECORDING)
    view.targets = "sm80"
    assert view.targets == ["sm80"]
    view.targets = ("h200", "sm89")
    assert view.targets == [n for n in known() if n in ("h200", "sm89")]
    assert view.state_targets() == tuple(view.targets)


def test_restore_before_the_view_is_built_chooses_those_targets_when_shown(lab: Lab) -> None:
    view = lab.whatif_view
    assert view.state_targets() is None  # nothing chosen yet: a state keeps the defaults
    view.restore(["sm86", "h200"])
    assert not view.built and view.state_targets() == ("sm86", "h200")
    lab.load_recorded(CONV_RECORDING)
    lab.view = "What-if"
    assert view.built and view.targets == [n for n in known() if n in ("sm86", "h200")]
    assert {w.target for w in view.frame.attrs["answers"]} == {"sm86", "h200"}


def test_restore_on_a_built_view_answers_for_those_targets(lab: Lab) -> None:
    view = lab.whatif_view
    lab.load_recorded(CONV_RECORDING)
    lab.view = "What-if"
    view.restore(["sm120"])
    assert view.targets == ["sm120"] and {w.target for w in view.frame.attrs["answers"]} == {"sm120"}
    with pytest.raises(cl.OptionError, match="targets"):
        view.restore(["nope"])
    assert view.targets == ["sm120"]
    view.restore(None)  # a state without a choice leaves it
    assert view.targets == ["sm120"]


def test_a_state_keeps_the_whatif_targets_through_a_code_and_a_file(tmp_path: Path) -> None:
    state = LabState(spec=cl.ConvSpec(), view="What-if", whatif_targets=["sm80", "h200"])
    assert state.whatif_targets == ("sm80", "h200")
    assert state.to_dict()["whatif_targets"] == ["sm80", "h200"]
    assert LabState.from_code(state.to_code()) == state
    assert LabState.load(state.save(tmp_path / "lab.json")) == state
    plain = LabState(spec=cl.ConvSpec())
    assert "whatif_targets" not in plain.to_dict() and LabState.from_code(plain.to_code()) == plain


@pytest.mark.parametrize("bad, needle", [
    (5, "must be a list of What-if target names"),
    ("h200", "must be a list of What-if target names"),
    ([], "1 to 64 targets"),
    ([5], "item 0"),
    (["h200", "x" * 41], "item 1"),
    (["h200", "h200"], "twice"),
])
def test_a_bad_whatif_targets_field_is_named(tmp_path: Path, bad: Any, needle: str) -> None:
    data = {**LabState(spec=cl.ConvSpec()).to_dict(), "whatif_targets": bad}
    with pytest.raises(cl.OptionError, match=f"whatif_targets.*{needle}"):
        LabState.from_dict(data)
    with pytest.raises(cl.DataError, match=f"state code.*field whatif_targets: .*{needle}"):
        LabState.from_code(_code(data))
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data))
    with pytest.raises(cl.DataError, match=f"lab.json.*field whatif_targets: .*{needle}"):
        LabState.load(path)
    with pytest.raises(cl.OptionError, match="whatif_targets"):
        LabState(spec=cl.ConvSpec(), whatif_targets=bad)


@pytest.mark.parametrize("where, put", [
    ("spec.padding", lambda d, x: d["spec"].__setitem__("padding", x)),
    ("run.time_cap_s", lambda d, x: d["run"].__setitem__("time_cap_s", x)),
    ("whatif_targets[1]", lambda d, x: d.__setitem__("whatif_targets", ["h200", x])),
])
@pytest.mark.parametrize("value, shown", [(float("nan"), "NaN"), (float("inf"), "Infinity"),
                                          (float("-inf"), "-Infinity")])
def test_a_nonfinite_number_in_a_state_names_its_field(tmp_path: Path, where: str, put: Any, value: float,
                                                       shown: str) -> None:
    data = LabState(spec=cl.ConvSpec()).to_dict()
    put(data, value)
    with pytest.raises(cl.OptionError, match="state code") as caught:
        LabState.from_code(_code(data))
    text = str(caught.value)
    assert f"field {where}: " in text and shown in text and "number the kit cannot use" in text
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data, allow_nan=True))
    with pytest.raises(cl.DataError, match=f"field {where.replace('[', '.').replace(']', '.')}"):
        LabState.load(path)
