"""Ceilings kept on disk (gpu/ceilings.py): the record's round trip, bad and foreign files, refresh; and the run
options of the caches (plan_cache, remeasure_ceilings, resample). No GPU: the measurement is a plain function here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudnn_lab import cache_dir
from cudnn_lab.errors import OptionError
from cudnn_lab.gpu.ceilings import Ceilings, _path, load_or_measure, read_cached, write_cached
from cudnn_lab.options import RunOptions


@pytest.fixture(autouse=True)
def cache_root(temp_cache: Path) -> Path:
    return temp_cache


IDENT = {"gpu": "NVIDIA H100 80GB HBM3", "cc": "9.0", "uuid": "GPU-1234", "dtype": "fp16", "size": 8192,
         "copy_mib": 1024}
RECORD = Ceilings(dtype="fp16", tflops=712.5, gbps=2950.0, matmul_size=8192, copy_bytes=1 << 30, tflops_iqr=4.1,
                  gbps_iqr=12.0, samples=10, measured="2026-11-22T10:00:00+00:00").to_dict()


def counting(record: dict) -> tuple[list[int], object]:
    calls: list[int] = []

    def measure() -> dict:
        calls.append(1)
        return record

    return calls, measure


def test_a_record_round_trips_through_its_dict() -> None:
    c = Ceilings.from_dict(RECORD)
    assert c is not None and c.to_dict() == RECORD and c.source == "measured now"
    assert c.ridge_flop_per_byte == pytest.approx(712.5e12 / 2950e9)


@pytest.mark.parametrize("bad", [None, [], {"dtype": "fp16"}, {**RECORD, "tflops": "fast"}, {**RECORD, "gbps": -1.0},
                                 {**RECORD, "tflops": True}, {**RECORD, "bogus": 1, "copy_bytes": 0}])
def test_a_bad_record_is_not_a_ceilings(bad: object) -> None:
    assert Ceilings.from_dict(bad) is None


def test_measured_once_then_loaded_from_disk(cache_root: Path) -> None:
    calls, measure = counting(RECORD)
    assert load_or_measure(IDENT, measure) == (RECORD, False)
    assert load_or_measure(IDENT, measure) == (RECORD, True)
    assert len(calls) == 1 and _path(IDENT).parent == cache_root / "ceilings"
    assert json.loads(_path(IDENT).read_text())["record"] == RECORD


def test_refresh_measures_again_and_replaces_the_file() -> None:
    calls, measure = counting(RECORD)
    load_or_measure(IDENT, measure)
    newer = {**RECORD, "tflops": 700.0, "measured": "2026-11-23T10:00:00+00:00"}
    calls2, measure2 = counting(newer)
    assert load_or_measure(IDENT, measure2, refresh=True) == (newer, False)
    assert read_cached(IDENT) == newer and len(calls2) == 1


@pytest.mark.parametrize("text", ["", "{not json", "[]", '{"format": 1}',
                                  '{"format": 99, "identity": {}, "record": {}}', "\udcff"])
def test_a_bad_file_is_ignored_and_replaced(text: str) -> None:
    path = _path(IDENT)
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    calls, measure = counting(RECORD)
    assert load_or_measure(IDENT, measure, check=lambda r: Ceilings.from_dict(r) is not None) == (RECORD, False)
    assert len(calls) == 1 and read_cached(IDENT) == RECORD


def test_a_record_failing_its_check_is_measured_again() -> None:
    write_cached(IDENT, {**RECORD, "tflops": "n/a"})
    calls, measure = counting(RECORD)
    assert load_or_measure(IDENT, measure, check=lambda r: Ceilings.from_dict(r) is not None) == (RECORD, False)
    assert len(calls) == 1


def test_another_gpu_does_not_read_this_gpus_file() -> None:
    write_cached(IDENT, RECORD)
    other = {**IDENT, "uuid": "GPU-5678"}
    assert read_cached(other) is None
    # even when its file is copied over the other GPU's: the identity inside says whose it is
    _path(other).write_text(_path(IDENT).read_text())
    assert read_cached(other) is None


def test_with_the_cache_off_nothing_is_read_or_written(monkeypatch: pytest.MonkeyPatch, cache_root: Path) -> None:
    monkeypatch.setenv(cache_dir.ENV_OFF, "yes")
    calls, measure = counting(RECORD)
    load_or_measure(IDENT, measure)
    load_or_measure(IDENT, measure)
    assert len(calls) == 2 and not cache_root.exists()


def test_an_unwritable_cache_still_measures(cache_root: Path) -> None:
    cache_root.parent.mkdir(parents=True, exist_ok=True)
    cache_root.write_text("not a folder")
    calls, measure = counting(RECORD)
    with pytest.warns(RuntimeWarning, match="switched off"):
        assert load_or_measure(IDENT, measure) == (RECORD, False)
    assert len(calls) == 1


# ------------------------------------------------------------------------------------------------ run options

def test_cache_options_have_defaults_and_round_trip() -> None:
    o = RunOptions()
    assert (o.plan_cache, o.remeasure_ceilings, o.resample) == (True, False, False)
    o2 = RunOptions.coerce({"plan_cache": False}, resample=True, remeasure_ceilings=True)
    assert RunOptions.from_dict(o2.to_dict()) == o2 and not o2.plan_cache and o2.resample


@pytest.mark.parametrize("name", ["plan_cache", "remeasure_ceilings", "resample"])
@pytest.mark.parametrize("value", [1, "yes", None, 0.0])
def test_cache_options_must_be_bools(name: str, value: object) -> None:
    with pytest.raises(OptionError, match=name):
        RunOptions.coerce(None, **{name: value})


def test_cupti_timing_is_accepted_by_the_runner_checks() -> None:
    from cudnn_lab.runs import check_runnable

    assert check_runnable(RunOptions(timing="cupti")).timing == "cupti"
