"""A heuristics worker's answer is read by meaning: JSON reads 1e400 as infinity, and int() of it would let
OverflowError out of the asker (issue 37)."""

from __future__ import annotations

import json

import pytest

from cudnn_lab.errors import DataError
from cudnn_lab.gpu.deviceless import Answer

GOOD = {"proposals": [{"plan": "eng0", "engine_id": 0, "knobs": {"k2": 1}, "behavior_notes": [],
                       "ranks": {"A": 0}}], "declined": {}, "cudnn_version": 91900, "seconds": 0.01}


def _with(path: tuple[str, ...], value: object) -> dict:
    data = json.loads(json.dumps(GOOD))
    node = data
    for key in path[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[path[-1]] = value
    return data


def test_a_good_answer_reads_back():
    assert Answer.from_dict(GOOD).to_dict() == GOOD


@pytest.mark.parametrize(("path", "value", "field"), [
    (("proposals", "0", "engine_id"), json.loads("1e400"), "engine_id"),
    (("proposals", "0", "engine_id"), True, "engine_id"),
    (("proposals", "0", "knobs", "k2"), 2.5, "knobs.k2"),
    (("proposals", "0", "ranks", "A"), 2**70, "ranks.A"),
    (("cudnn_version",), "91900", "cudnn_version"),
    (("seconds",), float("inf"), "seconds"),
    (("seconds",), -1, "seconds"),
])
def test_a_damaged_answer_names_its_field(path, value, field):
    data = _with(path, value)
    with pytest.raises(DataError, match=rf"field {field}\b"):
        Answer.from_dict(data)
