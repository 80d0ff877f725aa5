"""The Sweep view's Save sweep report: a real report of a recorded sweep, written where the path field says;
paths that cannot be written are refused with one sentence in the status line, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudnn_lab.ui import Lab
from cudnn_lab.ui.sweep_report import DEFAULT_SWEEP_REPORT

SWEEP = "h200_standard"


@pytest.fixture
def lab() -> Lab:
    return Lab(gpu=False)


def test_the_button_waits_for_a_sweep(lab: Lab) -> None:
    report = lab.sweep_view.report
    assert report.button.disabled
    assert report.path.value == DEFAULT_SWEEP_REPORT
    assert report.box in lab.sweep_view.box.children
    lab.sweep_view.load(SWEEP)
    assert not report.button.disabled


def test_save_sweep_report_writes_a_real_report(lab: Lab, tmp_path: Path) -> None:
    lab.sweep_view.load(SWEEP)
    target = tmp_path / "sweep.html"
    lab.sweep_view.report.path.value = str(target)
    lab.sweep_view.report.button.click()
    assert lab.sweep_view.report.written == target.resolve()
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and "cudnn_lab sweep report" in page
    assert "RECORDED" in page and "<h2>Points</h2>" in page
    assert "Sweep report saved" in lab.status.value and str(target) in lab.status.value


@pytest.mark.parametrize("where", ["dir", "under_a_file", "missing_folder"])
def test_a_path_that_cannot_be_written_is_refused_in_one_sentence(lab: Lab, tmp_path: Path, where: str) -> None:
    lab.sweep_view.load(SWEEP)
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "d.html").mkdir()
    path = {"dir": tmp_path / "d.html", "under_a_file": tmp_path / "file.txt" / "r.html",
            "missing_folder": tmp_path / "nope" / "r.html"}[where]
    lab.sweep_view.report.path.value = str(path)
    lab.sweep_view.report.button.click()
    assert lab.sweep_view.report.written is None
    assert lab.status_log.messages[-1].startswith("PathError")
    assert "cl-status-error" in lab.status.value and "Traceback" not in lab.status.value
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.html", "file.txt"]
    assert not any((tmp_path / "d.html").iterdir())


def test_a_wrong_suffix_and_no_sweep_are_refused(lab: Lab, tmp_path: Path) -> None:
    from cudnn_lab.errors import OptionError

    with pytest.raises(OptionError, match="no sweep to report"):
        lab.sweep_view.report.save(tmp_path / "r.html")
    lab.sweep_view.load(SWEEP)
    with pytest.raises(OptionError, match=r"\.html"):
        lab.sweep_view.report.save(tmp_path / "r.txt")
    assert list(tmp_path.iterdir()) == []
