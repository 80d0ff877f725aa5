"""Targets and their files read by meaning (issue 37): a description's fields by what a GPU can hold (a warp is 32
threads ...), a target file's version and fields, plans_for's recorded flag a bool, and an SM count above a known
target's answered naming sm_count and the target's count (not "no recording")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab import whatif as wi
from cudnn_lab.errors import DataError, OptionError
from cudnn_lab.whatif import devices as tg

CONV = cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


def _file(tmp_path: Path, **changes: Any) -> Path:
    data = tg.target("h100").to_dict()
    data["origin"] = "file"
    description = {**data["description"], **changes.pop("description", {})}
    data = {**data, **changes, "description": description}
    path = tmp_path / "mygpu.json"
    path.write_text(json.dumps(data))
    return path


def test_a_profiled_file_reads() -> None:
    for t in tg.targets():
        assert tg.check_description(t.description, t.name) == t.description


@pytest.mark.parametrize(("field", "value"), [
    ("warpSize", 0), ("warpSize", 64), ("warpSize", 16), ("maxThreadsPerBlock", 0), ("maxThreadsPerBlock", 4096),
    ("maxBlockSize", [1024, 1024, 0]), ("maxBlockSize", [4096, 1, 1]), ("maxGridSize", [2**40, 1, 1]),
    ("isTccDriver", 2), ("supportCoopLaunch", 7), ("smClockRateKHz", 0), ("totalGlobalMem", 0),
    ("maxCtasPerSM", 0), ("regsPerBlock", 0), ("maxSharedMemoryPerBlock", 0), ("driverVer", 0),
    ("maxSharedMemoryPerBlockOptin", 1024), ("maxThreadsPerSM", 512), ("maxRegistersPerSM", 1024),
    ("cudaDeviceId", 10**6), ("multiProcessorCount", 0), ("multiProcessorCount", 5000)])
def test_a_description_field_out_of_meaning_is_refused_naming_it(tmp_path: Path, field: str, value: Any) -> None:
    path = _file(tmp_path, description={field: value})
    with pytest.raises(DataError) as e:
        tg.load_target(path)
    assert str(path) in str(e.value) and f"field {field}" in str(e.value)
    with pytest.raises(DataError, match=f"field {field}"):
        tg.check_description({**tg.target("h100").description, field: value}, "mine")


@pytest.mark.parametrize("version", [None, 2, 0, "1", True, 1.0, 1e400])
def test_a_target_files_version_is_checked(tmp_path: Path, version: Any) -> None:
    data = tg.target("h100").to_dict()
    if version is None:
        del data["version"]
    else:
        data["version"] = version
    path = tmp_path / "mygpu.json"
    path.write_text(json.dumps(data).replace("Infinity", "1e400"))
    with pytest.raises(DataError) as e:
        tg.load_target(path)
    assert "version" in str(e.value) and str(path) in str(e.value)


@pytest.mark.parametrize(("field", "value"), [("base", 5), ("created", ["2026"]), ("colour", "red")])
def test_a_target_files_other_fields_are_checked(tmp_path: Path, field: str, value: Any) -> None:
    with pytest.raises(DataError, match=f"field {field}"):
        tg.load_target(_file(tmp_path, **{field: value}))


@pytest.mark.parametrize("recorded", ["yes", "no", 1, 0, "True", [True]])
def test_recorded_must_be_a_bool_or_none(recorded: Any) -> None:
    with pytest.raises(OptionError) as e:
        wi.plans_for(CONV, "h100", recorded=recorded)
    assert e.value.option == "recorded"


@pytest.mark.parametrize("name", ["h100", "h200", "sm90", "sm100"])
def test_an_sm_count_above_the_targets_is_answered_naming_both(name: str) -> None:
    sms = tg.target(name).sm_count
    assert sms == 132  # the H100/H200 recordings and the synthetic targets made from them
    with pytest.raises(OptionError) as e:
        wi.plans_for(CONV, name, sm_count=sms + 1, recorded=True)
    assert e.value.option == "sm_count" and str(sms) in str(e.value)
    assert "record" not in str(e.value)


def test_an_sm_count_within_the_target_is_still_looked_up() -> None:
    with pytest.raises(cl.NoGPUError, match="no answer"):
        wi.plans_for(CONV, "h100", sm_count=131, recorded=True)  # allowed, just never recorded
