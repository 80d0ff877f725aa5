"""A number the kit refuses in a JSON file (NaN, Infinity, 1e400, an integer beyond 64 bits) is refused naming the
field it is in, not only the file (issue 37: a NaN in a sweep file was refused before the field was known)."""

from __future__ import annotations

import json
import re

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError
from cudnn_lab.results import RunResult, loading

SPEC = {"op": "matmul", "batch": 1, "m": 64, "n": 64, "k": 64, "dtype": "fp16"}


@pytest.mark.parametrize(("text", "field"), [
    ('{"spec": SPEC, "over": {"m": [64, NaN]}}', "over.m[1]"),
    ('{"spec": SPEC, "over": {"m": [64, -Infinity]}}', "over.m[1]"),
    ('{"spec": SPEC, "over": {"m": [1e400]}}', "over.m[0]"),
    ('{"spec": SPEC, "over": {"m": [64]}, "samples": NaN}', "samples"),
    ('{"specs": [SPEC, SPEC], "over": {"m": [64]}}', None),
])
def test_a_refused_number_in_a_sweep_json_names_its_field(tmp_path, text, field) -> None:
    path = tmp_path / "w.json"
    path.write_text(text.replace("SPEC", json.dumps(SPEC)), encoding="utf-8")
    if field is None:  # the sound file reads
        assert len(loading.read_sweep_file(path)["spec"]) == 2
        return
    with pytest.raises(DataError, match=rf"field {re.escape(field)}: .*number the kit cannot use") as err:
        loading.read_sweep_file(path)
    assert "w.json" in str(err.value)


def test_an_overflowing_number_in_a_result_names_its_plan_field(tmp_path) -> None:
    text = json.dumps(cl.load_results("h200_matmul_fp16_bias").to_dict())
    first = text.index('"median_ms": ') + len('"median_ms": ')
    end = min(text.index(",", first), text.index("}", first))
    path = tmp_path / "r.json"
    path.write_text(text[:first] + "1e400" + text[end:], encoding="utf-8")
    with pytest.raises(DataError, match=r"field plans\[0\]\.median_ms: .*1e400"):
        RunResult.load(path)


def test_a_401_digit_number_in_a_spec_file_names_the_field(tmp_path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**SPEC, "m": 7}).replace(": 7", ": 1" + "0" * 400), encoding="utf-8")
    with pytest.raises(DataError, match=r"field m: .*401 digits"):
        loading.read_spec_file(path)


@pytest.mark.parametrize(("spec", "field", "literal", "allowed"), [
    ({"op": "norm", "n": 4, "c": 64, "epsilon": 0.5}, "epsilon", "1" + "0" * 400, r"greater than 0 and at most 1"),
    ({**SPEC, "m": 7}, "m", "NaN", r"integer from 1 to \d+"),
    ({**SPEC, "m": 7}, "m", "1e400", r"integer from 1 to \d+"),
])
def test_a_refused_number_in_a_spec_file_names_the_field_and_its_range(tmp_path, spec, field, literal,
                                                                       allowed) -> None:
    path = tmp_path / "s.json"
    marker = 0.5 if field == "epsilon" else 7
    path.write_text(json.dumps(spec).replace(f": {marker}", f": {literal}"), encoding="utf-8")
    with pytest.raises(DataError, match=rf"field {field}: .*{allowed}") as err:
        loading.read_spec_file(path)
    assert "s.json" in str(err.value)
