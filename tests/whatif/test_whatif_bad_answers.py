"""Recorded what-if answers (cuDNN's heuristics' answers and the block-scale answers) read with the kit's guards:
every field checked by meaning, a DataError naming the file and the field for a damaged one, never a raw
OverflowError, TypeError or IndexError, and a refusal with no message still summarised (issue 37)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from cudnn_lab.errors import DataError
from cudnn_lab.whatif import block_formats as bf
from cudnn_lab.whatif import heuristics as hw


def _answer(refused: bool = False) -> dict[str, Any]:
    found = next(w for w in hw.recorded_whatifs() if (not w.ok) == refused and (refused or w.proposals))
    return found.to_dict()


def _block_answer(refused: bool = False) -> dict[str, Any]:
    return next(a for a in bf.recorded_block_scale_answers() if (not a.ok) == refused).to_dict()


def test_every_recorded_answer_round_trips() -> None:
    answers = hw.recorded_whatifs()
    assert len(answers) > 100
    for w in answers[::25]:
        assert hw.WhatIf.from_dict(json.loads(json.dumps(w.to_dict())), "x") == w
    for a in bf.recorded_block_scale_answers():
        assert bf.BlockScaleAnswer.from_dict(json.loads(json.dumps(a.to_dict())), "x") == a


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    *keys, last = path.split(".")
    at: Any = out
    for k in keys:
        at = at[int(k)] if isinstance(at, list) else at[k]
    if value is KeyError:
        del at[last]
    else:
        at[last] = value
    return out


INF = float("inf")  # what json.loads makes of 1e400

WHATIF_DAMAGE = [
    ("cudnn_version", INF, "cudnn_version"), ("cudnn_version", 1e400, "cudnn_version"),
    ("cudnn_version", "9.19", "cudnn_version"), ("cudnn_version", 7, "cudnn_version"),
    ("cudnn_version", True, "cudnn_version"), ("sm_count", INF, "sm_count"), ("sm_count", -3, "sm_count"),
    ("sm_count", 2.5, "sm_count"), ("synthetic", "no", "synthetic"), ("synthetic", 1, "synthetic"),
    ("refused", "maybe", "refused"), ("target", 5, "target"), ("target", "", "target"),
    ("target_label", None, "target_label"), ("source", ["x"], "source"), ("message", 3, "message"),
    ("detail", {"a": 1}, "detail"), ("spec", "conv", "spec"), ("spec", {"op": "conv", "n": -1}, "spec"),
    ("proposals", "many", "proposals"), ("proposals.0.engine_id", INF, "proposals[0].engine_id"),
    ("proposals.0.engine_id", -1, "proposals[0].engine_id"), ("proposals.0.plan", "", "proposals[0].plan"),
    ("proposals.0.ranks", {"A": INF}, "proposals[0].ranks.A"), ("proposals.0.ranks", {"Z": 0}, "proposals[0].ranks"),
    ("proposals.0.ranks", {"A": -1}, "proposals[0].ranks.A"), ("proposals.0.knobs", {"k2": 1e300},
                                                                "proposals[0].knobs.k2"),
    ("proposals.0.knobs", [1, 2], "proposals[0].knobs"), ("proposals.0.behavior_notes", "x",
                                                          "proposals[0].behavior_notes"),
    ("proposals.0.behavior_notes", [None], "proposals[0].behavior_notes[0]"),
    ("proposals.0.extra", 1, "extra"), ("colour", "red", "colour"), ("target", KeyError, "target"),
]


@pytest.mark.parametrize(("path", "value", "field"), WHATIF_DAMAGE)
def test_a_damaged_whatif_answer_names_the_field(path: str, value: Any, field: str) -> None:
    with pytest.raises(DataError) as e:
        hw.WhatIf.from_dict(_set(_answer(), path, value), "answers.json")
    assert "answers.json" in str(e.value) and field in str(e.value)


def test_a_refusal_holding_plans_is_refused() -> None:
    data = _answer()
    data["refused"] = "declined"
    with pytest.raises(DataError, match="proposals"):
        hw.WhatIf.from_dict(data, "answers.json")


def _whatif_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "answers.json"
    path.write_text('{"format": "cudnn-lab what-if", "version": 1, "answers": [' + text + "]}")
    return path


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "NaN", "Infinity", "123456789012345678901234567890"])
def test_a_recorded_file_with_an_unusable_number_names_file_and_field(tmp_path: Path, literal: str) -> None:
    good = json.dumps(_answer())
    bad = json.dumps(_answer()).replace('"cudnn_version": 91', '"cudnn_version": ' + literal + ', "x": 91', 1)
    assert bad != good
    path = _whatif_file(tmp_path, good + ", " + bad)
    with pytest.raises(DataError) as e:
        hw.load_whatifs(path)
    assert str(path) in str(e.value) and "answers[1].cudnn_version" in str(e.value)


def test_a_recorded_file_with_a_damaged_answer_gives_nothing(tmp_path: Path) -> None:
    good = json.dumps(_answer())
    bad = json.dumps(_set(_answer(), "sm_count", "all"))
    path = _whatif_file(tmp_path, good + ", " + bad)
    with pytest.raises(DataError, match="sm_count"):
        hw.load_whatifs(path)
    assert len(hw.load_whatifs(_whatif_file(tmp_path, good))) == 1


@pytest.mark.parametrize("message", ["", "\n", "   \n\n"])
def test_a_refusal_without_a_message_is_still_summarised(message: str) -> None:
    refusal = hw.WhatIf.from_dict({**_answer(refused=True), "message": message}, "x")
    text = refusal.summary()
    assert text.startswith("No plan on") and refusal.refused in text
    block = bf.BlockScaleAnswer.from_dict({**_block_answer(refused=True), "message": message}, "x")
    assert "no plan" in block.summary() and block.refused in block.row()["answer"]


BLOCK_DAMAGE = [
    ("cudnn_version", INF, "cudnn_version"), ("cudnn_version", "91900", "cudnn_version"),
    ("fmt", "mxfp7", "fmt"), ("fmt", None, "fmt"), ("plan_count", INF, "plan_count"),
    ("plan_count", -1, "plan_count"), ("plan_count", True, "plan_count"), ("engine_ids", [INF], "engine_ids[0]"),
    ("engine_ids", [1.5], "engine_ids[0]"), ("engine_ids", "9", "engine_ids"), ("notes", [7], "notes[0]"),
    ("refused", "no", "refused"), ("target", None, "target"), ("source", 5, "source"),
    ("spec", None, "spec"), ("proposals.0.ranks", {"A": INF}, "proposals[0].ranks.A"),
    ("plan_count", 3, "plan_count"), ("weather", 1, "weather"),
]


@pytest.mark.parametrize(("path", "value", "field"), BLOCK_DAMAGE)
def test_a_damaged_block_scale_answer_names_the_field(path: str, value: Any, field: str) -> None:
    base = _block_answer()
    if path.startswith("proposals") or path == "plan_count" and value == 3:
        base = {**base, "proposals": [_answer()["proposals"][0]], "plan_count": 1}  # as asked live: plans kept
        assert bf.BlockScaleAnswer.from_dict(base, "x").plan_count == 1
    with pytest.raises(DataError) as e:
        bf.BlockScaleAnswer.from_dict(_set(base, path, value), "block.json")
    assert "block.json" in str(e.value) and field in str(e.value)


def test_a_crashed_block_scale_answer_may_have_no_cudnn_version() -> None:
    base = dataclasses.replace(bf.BlockScaleAnswer.from_dict(_block_answer(refused=True), "x"), refused="crashed",
                               cudnn_version=0, detail="")
    assert bf.BlockScaleAnswer.from_dict(base.to_dict(), "x") == base
    with pytest.raises(DataError, match="cudnn_version"):
        bf.BlockScaleAnswer.from_dict({**base.to_dict(), "refused": "declined"}, "x")
