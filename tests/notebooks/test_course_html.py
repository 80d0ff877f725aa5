"""`make course-html` (scripts/build_course_html.py) writes an executed HTML copy of a notebook and an index, says
how it was executed, and refuses a notebook name that does not exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbconvert", reason="the HTML copies need nbconvert (with jupyterlab)")
pytest.importorskip("nbclient", reason="notebook tests need nbclient")

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "scripts" / "build_course_html.py"


def _build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


def test_an_executed_html_copy_and_an_index_are_written(tmp_path: Path) -> None:
    done = _build("--only", "00_quickstart", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    page = (tmp_path / "00_quickstart.html").read_text(encoding="utf-8")
    assert "Executed on a machine without a GPU" in page or "Executed at full size" in page
    assert "RECORDED on" in page or "MEASURED HERE" in page  # the outputs are there, labelled
    assert "Traceback" not in page
    assert "00_quickstart.html" in (tmp_path / "index.html").read_text(encoding="utf-8")
    assert not list((ROOT / "notebooks").glob("*.html"))  # nothing written beside the notebooks


def test_an_unknown_notebook_is_refused_by_name(tmp_path: Path) -> None:
    done = _build("--only", "99_nothing", "--out", str(tmp_path))
    assert done.returncode == 2 and "99_nothing" in done.stderr
