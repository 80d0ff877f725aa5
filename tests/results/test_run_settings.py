"""A saved run's newer settings are checked on load (issue 37): a damaged ``parallel_build`` or ``kernel_cache_run``
record, or a ``partial`` that is not true or false, is refused naming the file and the field, instead of breaking
``summary()``, the figures, the report or the Lab later."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError
from cudnn_lab.gpu.parallel_build import BuildReport, PlanBuild
from cudnn_lab.results import RunResult

RECORDING = "h200_matmul_fp16_bias"


def _saved(tmp_path: Path, **settings: Any) -> Path:
    """A shipped recording with ``settings`` merged into its settings, written to a file of its own."""
    data = cl.load_results(RECORDING).to_dict()
    data["settings"].update(settings)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _report() -> dict[str, Any]:
    report = BuildReport(workers=4, helpers=2, wall_s=0.5,
                         plans=(PlanBuild("a", 0, "stored", 700.0), PlanBuild("b", -1, "missed")))
    return json.loads(json.dumps(report.to_dict()))


def test_sound_new_settings_load_and_summarize(tmp_path) -> None:
    kc = {"used": True, "source": "disk", "entries": 3, "kept_on_disk": True, "pick_without": "eng0",
          "order_without": ["eng0", "eng1"]}
    result = RunResult.load(_saved(tmp_path, parallel_build=_report(), kernel_cache_run=kc, partial=True,
                                   stopped="time cap"))
    assert result.partial is True
    assert "parallel builds: 2 helpers built 1 plans" in result.summary()
    assert RunResult.load(_saved(tmp_path, parallel_build={"workers": 4, "helpers": 0, "built": 0,
                                                           "skipped": "plan_cache=False"})).summary()


@pytest.mark.parametrize(("change", "field"), [
    ({"wall_s": "fast"}, "settings.parallel_build.wall_s"),
    ({"helpers": -2}, "settings.parallel_build.helpers"),
    ({"saved_s": float("inf")}, "settings.parallel_build.saved_s"),
    ({"skipped": 5}, "settings.parallel_build.skipped"),
    ({"plans": "all"}, "settings.parallel_build.plans"),
    ({"plans": [{"plan": "a", "helper": 0, "status": "stored", "build_ms": "x"}]},
     "settings.parallel_build.plans[0].build_ms"),
    ({"problems": [3]}, "settings.parallel_build.problems[0]"),
])
def test_a_damaged_parallel_build_record_is_refused_naming_the_field(tmp_path, change, field) -> None:
    report = {**_report(), **change}
    if change.get("saved_s") == float("inf"):
        text = json.dumps({**cl.load_results(RECORDING).to_dict()}).replace('"settings": {',
                                                                             '"settings": {"parallel_build": '
                                                                             + json.dumps(report) + ", ", 1)
        path = tmp_path / "run.json"
        path.write_text(text.replace("Infinity", "1e400"), encoding="utf-8")
    else:
        path = _saved(tmp_path, parallel_build=report)
    with pytest.raises(DataError, match=field.replace("[", r"\[").replace("]", r"\]")) as err:
        cl.load_results(path)
    assert "run.json" in str(err.value)


@pytest.mark.parametrize("missing", ["helpers", "built", "wall_s", "serial_s", "saved_s"])
def test_a_parallel_build_record_missing_what_summary_shows_is_refused(tmp_path, missing) -> None:
    report = {k: v for k, v in _report().items() if k != missing}
    with pytest.raises(DataError, match=f"settings.parallel_build.{missing}"):
        RunResult.load(_saved(tmp_path, parallel_build=report))


def test_a_parallel_build_record_that_is_not_an_object_is_refused(tmp_path) -> None:
    with pytest.raises(DataError, match="settings.parallel_build"):
        RunResult.load(_saved(tmp_path, parallel_build="yes"))


@pytest.mark.parametrize(("record", "field"), [
    ("on", "settings.kernel_cache_run"),
    ({"used": "yes"}, "settings.kernel_cache_run.used"),
    ({"used": True, "pick_without": 5}, "settings.kernel_cache_run.pick_without"),
    ({"used": True, "order_without": "eng0"}, "settings.kernel_cache_run.order_without"),
    ({"used": True, "order_without": ["eng0", 1]}, "settings.kernel_cache_run.order_without[1]"),
    ({"used": True, "entries": -1}, "settings.kernel_cache_run.entries"),
    ({"used": True, "kept_on_disk": "no"}, "settings.kernel_cache_run.kept_on_disk"),
])
def test_a_damaged_kernel_cache_record_is_refused_naming_the_field(tmp_path, record, field) -> None:
    with pytest.raises(DataError, match=field.replace("[", r"\[").replace("]", r"\]")) as err:
        RunResult.load(_saved(tmp_path, kernel_cache_run=record))
    assert "run.json" in str(err.value)


@pytest.mark.parametrize("value", ["no", "false", 0, 1, [], {}])
def test_partial_must_be_true_or_false(tmp_path, value) -> None:
    with pytest.raises(DataError, match="settings.partial"):
        RunResult.load(_saved(tmp_path, partial=value))


def test_stopped_and_proposed_are_checked(tmp_path) -> None:
    with pytest.raises(DataError, match="settings.stopped"):
        RunResult.load(_saved(tmp_path, partial=True, stopped=["time"]))
    with pytest.raises(DataError, match="settings.proposed"):
        RunResult.load(_saved(tmp_path, proposed=-3))
