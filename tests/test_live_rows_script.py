"""scripts/live_rows.py without a GPU: the recorded traces shipped with the kit read back, and a missing, corrupt or
empty trace gets the kit's own error naming the file (one line, exit status 2)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cudnn_lab.errors import DataError, PathError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import live_rows  # noqa: E402


@pytest.mark.parametrize("helpers", [0, 8])
def test_the_shipped_h100_traces_read_back_with_their_rows_in_order(helpers: int) -> None:
    trace = live_rows.read_trace(ROOT / f"benchmarks/results/h100_2026-11-26_live_rows_helpers{helpers}.json")
    times = [e["t"] for e in trace["events"] if "row" in e]
    assert len(times) == 26 and times == sorted(times) and "H100" in trace["device"]["gpu"]


def test_bad_traces_get_the_kits_errors(tmp_path: Path) -> None:
    with pytest.raises(PathError, match="does not exist"):
        live_rows.read_trace(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        live_rows.read_trace(bad)
    bad.write_text(json.dumps({"spec": {}, "events": []}))
    with pytest.raises(DataError, match="lacks problem, device, created"):
        live_rows.read_trace(bad)
    bad.write_text(json.dumps({"spec": {"op": "conv"}, "problem": "x", "device": {}, "created": "2026-11-26",
                               "events": [{"t": 1, "progress": [0, 1, "building"]}]}))
    with pytest.raises(DataError, match="no plan rows"):
        live_rows.read_trace(bad)
    out = subprocess.run([sys.executable, str(ROOT / "scripts/live_rows.py"), "--replay", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "no plan rows" in out.stderr


H100_TRACE = ROOT / "benchmarks/results/h100_2026-11-26_live_rows_helpers0.json"


def _first(trace: dict, kind: str) -> dict:
    return next(e for e in trace["events"] if kind in e)


def _row(trace: dict) -> dict:
    return _first(trace, "row")["row"]


# (what is changed in the shipped H100 trace, the field the error must name, what it must say)
DAMAGE = [
    (lambda d: _row(d).__setitem__("median_ms", -1.0), r"events\[\d+\]\.row\.median_ms", "at least 0"),
    (lambda d: _row(d).__setitem__("median_ms", float("nan")), r"events\[\d+\]\.row\.median_ms", "finite"),
    (lambda d: _row(d).__setitem__("build_ms", float("inf")), r"events\[\d+\]\.row\.build_ms", "finite"),
    (lambda d: _row(d).__setitem__("median_ms", "fast"), r"events\[\d+\]\.row\.median_ms", "a number"),
    (lambda d: _row(d).__setitem__("engine_id", 1.5), r"events\[\d+\]\.row\.engine_id", "an integer"),
    (lambda d: _row(d).__setitem__("engine_id", 10**9), r"events\[\d+\]\.row\.engine_id", "from -1"),
    (lambda d: _row(d).__setitem__("pass_torch", "yes"), r"events\[\d+\]\.row\.pass_torch", "true or false"),
    (lambda d: _row(d).__setitem__("within_torch", 2.0), r"events\[\d+\]\.row\.within_torch", "from 0 to 1"),
    (lambda d: _row(d).__setitem__("samples", True), r"events\[\d+\]\.row\.samples", "an integer"),
    (lambda d: _row(d).__setitem__("status", None), r"events\[\d+\]\.row\.status", "text"),
    (lambda d: _row(d).__setitem__("plan", ""), r"events\[\d+\]\.row\.plan", "1 to"),
    (lambda d: _row(d).pop("plan"), r"events\[\d+\]\.row\.plan", "missing"),
    (lambda d: _row(d).__setitem__("teleport", 1), r"events\[\d+\]\.row\.teleport", "not a plan column"),
    (lambda d: _row(d).__setitem__("knobs", "{not json"), r"events\[\d+\]\.row\.knobs", "not valid JSON"),
    (lambda d: _row(d).__setitem__("knobs", '{"k24": 1e3}'), r"events\[\d+\]\.row\.knobs\.k24", "integer"),
    (lambda d: _first(d, "row").__setitem__("row", [1, 2]), r"events\[\d+\]\.row", "an object"),
    (lambda d: _first(d, "row").__setitem__("rows_in_table", 0), r"events\[\d+\]\.rows_in_table", "from 1"),
    (lambda d: _first(d, "row").__setitem__("t", -0.5), r"events\[\d+\]\.t", "from 0"),
    (lambda d: _first(d, "row").__setitem__("t", "soon"), r"events\[\d+\]\.t", "a number"),
    (lambda d: _first(d, "row").pop("t"), r"events\[\d+\]\.t", "missing"),
    (lambda d: _first(d, "row").__setitem__("progress", [0, 1, "x"]), r"events\[\d+\]", "exactly one"),
    (lambda d: _first(d, "row").__setitem__("colour", "red"), r"events\[\d+\]\.colour", "not an event key"),
    (lambda d: _first(d, "progress").__setitem__("progress", [1]), r"events\[\d+\]\.progress", "done, total"),
    (lambda d: _first(d, "progress").__setitem__("progress", [5, 2, "x"]), r"events\[\d+\]\.progress\[1\]",
     "from 5"),
    (lambda d: _first(d, "progress").__setitem__("progress", [0, 2, 7]), r"events\[\d+\]\.progress\[2\]", "text"),
    (lambda d: d["events"].insert(3, "row"), r"events\[3\]", "an object"),
    (lambda d: d.__setitem__("events", {"0": {}}), r"events", "a list"),
    (lambda d: d.__setitem__("device", "H100"), r"device", "an object"),
    (lambda d: d["device"].__setitem__("gpu", 5), r"device\.gpu", "text"),
    (lambda d: d.__setitem__("created", 20261126), r"created", "text"),
    (lambda d: d.__setitem__("run_s", -3), r"run_s", "from 0"),
    (lambda d: d.__setitem__("plans", 2.5), r"plans", "an integer"),
    (lambda d: d.__setitem__("extra", 1), r"extra", "not a trace key"),
    (lambda d: d["spec"].__setitem__("rows", 0), r"spec", "rows"),
]


@pytest.mark.parametrize("damage, field, says", DAMAGE, ids=[f"{f}-{s}" for _, f, s in DAMAGE])
def test_every_field_of_every_event_is_checked_naming_file_and_field(tmp_path: Path, damage, field: str,
                                                                     says: str) -> None:
    data = json.loads(H100_TRACE.read_text())
    damage(data)
    path = tmp_path / "damaged_trace.json"
    path.write_text(json.dumps(data, allow_nan=True))
    with pytest.raises(DataError) as caught:
        live_rows.read_trace(path)
    text = str(caught.value)
    assert "damaged_trace.json" in text and says in text and len(text) < 600
    assert re.search(rf"field {field}:", text), text


def test_a_trace_is_read_whole_by_the_same_checks_as_the_shipped_one() -> None:
    trace = live_rows.read_trace(H100_TRACE)
    rows = [e for e in trace["events"] if "row" in e]
    assert all(e["row"]["median_ms"] >= 0 for e in rows) and trace["plans"] == len(rows)


def _leftovers(folder: Path) -> list[Path]:
    return sorted(folder.glob(live_rows.CACHE_PREFIX + "*"))


def test_the_cold_cache_folder_is_removed_after_the_block_and_on_error(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from cudnn_lab import cache_dir

    monkeypatch.delenv(cache_dir.ENV_DIR, raising=False)
    monkeypatch.setattr(live_rows.tempfile, "tempdir", str(tmp_path))
    with live_rows.cold_cache():
        folder = Path(os.environ[cache_dir.ENV_DIR])
        assert folder.parent == tmp_path and folder.is_dir()
        (folder / "plan.bin").write_bytes(b"x")  # what a run leaves in it
    assert _leftovers(tmp_path) == [] and cache_dir.ENV_DIR not in os.environ
    with pytest.raises(RuntimeError), live_rows.cold_cache():
        raise RuntimeError("the run failed")
    assert _leftovers(tmp_path) == [] and cache_dir.ENV_DIR not in os.environ
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setenv(cache_dir.ENV_DIR, str(mine))  # a folder the caller chose is used and kept
    with live_rows.cold_cache():
        assert os.environ[cache_dir.ENV_DIR] == str(mine)
    assert mine.is_dir() and os.environ[cache_dir.ENV_DIR] == str(mine)


def test_record_leaves_no_temporary_folder_when_it_cannot_run(tmp_path: Path) -> None:
    """Without a GPU the Lab does not run: the script says so in one line and leaves no folder behind."""
    from cudnn_lab import cache_dir

    env = {k: v for k, v in os.environ.items() if k != cache_dir.ENV_DIR}
    env.update(TMPDIR=str(tmp_path), CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, str(ROOT / "scripts/live_rows.py"), "--record", str(tmp_path / "t.json")],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode != 0 and "Traceback" not in out.stderr and "did not run" in out.stderr
    assert "<span" not in out.stderr  # the Lab's sentence, not its HTML
    assert _leftovers(tmp_path) == [] and not (tmp_path / "t.json").exists()


#: Kineto's words when the profiler's first session runs on another thread than the one that loaded torch: every
#: exit crash of a Lab process seen came after them (docs/FINDINGS.md, issue 37).
KINETO_THREAD_ERROR = "External init callback must run in same thread as registerClient"


@pytest.mark.gpu
def test_record_on_a_gpu_writes_a_trace_that_reads_back_and_leaves_no_folder(tmp_path: Path) -> None:
    from cudnn_lab import cache_dir

    env = {k: v for k, v in os.environ.items() if k != cache_dir.ENV_DIR}
    env.update(TMPDIR=str(tmp_path), PYTHONFAULTHANDLER="1")  # a crash prints every thread's Python stack
    trace = tmp_path / "trace.json"
    out = subprocess.run([sys.executable, str(ROOT / "scripts/live_rows.py"), "--record", str(trace)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert KINETO_THREAD_ERROR not in out.stderr
    read = live_rows.read_trace(trace)
    assert sum("row" in e for e in read["events"]) >= 1
    assert _leftovers(tmp_path) == []


def test_a_default_options_trace_reads_back_and_prints_its_rows_against_the_targets(tmp_path: Path) -> None:
    """Issue 36: --record --defaults keeps the Lab's make and warm-up times and the run's decisions; they are checked
    like the rest, and the summary says met or MISSED for Run -> first row and rmsnorm's last row."""
    data = json.loads(H100_TRACE.read_text())
    data.update(lab_s=0.4, warm_s=5.2, decisions={
        "parallel_builds": {"asked": "auto", "used": 8, "why": "auto: 8 helpers"},
        "kernel_cache": {"asked": "auto", "used": False, "why": "auto: off for a single run"}})
    path = tmp_path / "defaults.json"
    path.write_text(json.dumps(data))
    trace = live_rows.read_trace(path)
    text = live_rows.summary_lines(trace)
    rows = [e["t"] for e in trace["events"] if "row" in e]
    assert "helpers used: 8 (auto: 8 helpers)" in text and "warm-up ended at 5.20 s" in text
    assert f"{rows[-1]:.2f} s" in text and ("MISSED" in text) == (rows[-1] > 5.0 or rows[0] > 2.0)
    for key, value, says in (("warm_s", -1, "from 0"), ("lab_s", "soon", "a number"),
                             ("decisions", {"parallel_builds": {"used": "eight", "why": "x"}}, "used")):
        path.write_text(json.dumps({**data, key: value}))
        with pytest.raises(DataError, match=says):
            live_rows.read_trace(path)


@pytest.mark.gpu
def test_record_with_default_options_keeps_the_warm_up_and_the_decisions(tmp_path: Path) -> None:
    from cudnn_lab import cache_dir

    env = {k: v for k, v in os.environ.items() if k != cache_dir.ENV_DIR}
    env.update(TMPDIR=str(tmp_path), CUDNN_LAB_AUTO_HELPERS="2", PYTHONFAULTHANDLER="1")  # a test process: few helpers
    trace = tmp_path / "trace.json"
    out = subprocess.run([sys.executable, str(ROOT / "scripts/live_rows.py"), "--record", str(trace), "--defaults"],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert KINETO_THREAD_ERROR not in out.stderr  # the profiler's first session ran on the thread that loaded torch
    read = live_rows.read_trace(trace)
    assert read["options"]["parallel_builds"] == "auto" and read["warm_s"] is not None
    assert read["decisions"]["parallel_builds"]["asked"] == "auto"
    assert "Run -> first row (default options)" in out.stdout and "Run -> last row" in out.stdout
