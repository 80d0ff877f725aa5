"""SM-scaling records read by meaning (issue 37): a row's kernel tile is parsed as a tile (not int() of whatever
the text holds), a negative or non-finite time refused, each naming the file and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from cudnn_lab.errors import DataError
from cudnn_lab.whatif import scaling

RECORD = next((Path(scaling.__file__).parents[1] / "data" / "whatif" / "sm_scaling").glob("*.json"))


def _record() -> dict[str, Any]:
    return json.loads(RECORD.read_text())


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "scaling.json"
    path.write_text(json.dumps(data))
    return path


def test_the_shipped_record_reads_and_its_tiles_make_waves() -> None:
    result = scaling.load_scaling(RECORD)
    per = result.per_count
    assert per["tile"].notna().all() and (per["tiles"] > 0).all() and (per["waves"] > 0).all()


@pytest.mark.parametrize("tile", ["1_28x128", "-128x128", "+128x128", "\u0661\u0662\u0668x128", "128 x128",
                                  "0x128", "128x0x64", "128", "x128", "128x", "128x128x64x2", "abc", 128, 128.5,
                                  ["128", "128"], True, "99999999999x1", " 128x128"])
def test_a_tile_that_is_no_tile_is_refused_naming_the_field(tmp_path: Path, tile: Any) -> None:
    data = _record()
    data["frame"][0]["tile"] = tile
    with pytest.raises(DataError) as e:
        scaling.load_scaling(_write(tmp_path, data))
    assert str(tmp_path / "scaling.json") in str(e.value) and "frame[0].tile" in str(e.value)


@pytest.mark.parametrize("column", ["median_ms", "min_ms", "iqr_ms", "kernel_ms", "tflops", "gbps"])
@pytest.mark.parametrize("value", [-0.5, -1e-9])
def test_a_negative_time_or_rate_is_refused_naming_the_field(tmp_path: Path, column: str, value: float) -> None:
    data = _record()
    data["frame"][1][column] = value
    with pytest.raises(DataError) as e:
        scaling.load_scaling(_write(tmp_path, data))
    assert "scaling.json" in str(e.value) and f"frame[1].{column}" in str(e.value)


@pytest.mark.parametrize("literal", ["1e400", "NaN", "-Infinity"])
def test_a_non_finite_median_is_refused_naming_the_field(tmp_path: Path, literal: str) -> None:
    text = json.dumps(_record()).replace('"median_ms": ', '"median_ms": ' + literal + ', "x": ', 1)
    path = tmp_path / "scaling.json"
    path.write_text(text)
    with pytest.raises(DataError) as e:
        scaling.load_scaling(path)
    assert "frame[0].median_ms" in str(e.value)
    data = _record()
    data["frame"][0]["median_ms"] = float("inf")  # a dict made in Python: the same refusal
    with pytest.raises(DataError, match=r"frame\[0\]\.median_ms"):
        scaling.ScalingResult.from_dict(data, source="mine")


@pytest.mark.parametrize(("field", "column", "value"), [("frame", "status", 3), ("frame", "plan", ["a"]),
                                                        ("refused", "reason", {"a": 1}), ("refused", "how", 1.5)])
def test_text_cells_are_text(tmp_path: Path, field: str, column: str, value: Any) -> None:
    data = copy.deepcopy(_record())
    data[field][0][column] = value
    with pytest.raises(DataError, match=rf"{field}\[0\]\.{column}"):
        scaling.load_scaling(_write(tmp_path, data))
