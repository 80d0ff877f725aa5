"""Every course notebook run live on a GPU at its own sizes (its parameters as a student gets them): no errors, every
result it shows labelled MEASURED HERE, every exercise's solution right on the data measured there, the pinned plan
rebuilt from (engine, knobs) alone, and the hand-written graph of notebook 01 correct against float64.

Skipped without a GPU (tests/conftest.py); the CPU runs are in test_course.py and test_quickstart.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
pytest.importorskip("nbclient", reason="notebook tests need nbclient")

from notebook_runs import COURSE, LESSONS, OPEN, RIGHT, WRONG, errors, execute, exercises, shown, text_of

pytestmark = pytest.mark.gpu

_RUNS: dict[Path, Any] = {}


def live(path: Path) -> Any:
    """The notebook executed once on this GPU at full size (LIVE = None picks the GPU)."""
    if path not in _RUNS:
        _RUNS[path] = execute(path, small=False, timeout=900)
    return _RUNS[path]


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_notebook_runs_live(path: Path) -> None:
    assert errors(live(path)) == []


@pytest.mark.parametrize("path", [p for p in COURSE if p.name[:2] in {"00", "02", "03", "04", "05", "06", "07", "08"}],
                         ids=lambda p: p.name)
def test_live_results_are_labelled_measured_here(path: Path) -> None:
    text = shown(live(path))
    assert "MEASURED HERE on this machine's NVIDIA" in text, f"{path.name} ran on the GPU but did not say so"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_live_solutions_are_right(path: Path) -> None:
    nb = live(path)
    for n, cells in exercises(nb):
        assert OPEN in text_of(cells[2]), f"exercise {n}: {text_of(cells[2])[:200]!r}"
        said = text_of(cells[4])
        assert RIGHT in said and WRONG not in said, f"exercise {n}: {said[:300]!r}"


def test_pinned_plan_is_rebuilt_from_engine_and_knobs() -> None:
    path = next(p for p in COURSE if p.name.startswith("03_"))
    text = shown(live(path))
    line = next((ln for ln in text.splitlines() if ln.startswith("built exactly that plan:")), "")
    assert line, "the pin cell did not build the plan"
    built, _, wanted = line.removeprefix("built exactly that plan:").partition("==")
    assert built.strip() == wanted.strip()
    assert "engines** for this graph" in text


def test_graph_by_hand_runs_and_matches_float64() -> None:
    path = next(p for p in COURSE if p.stem == "01_graph_by_hand")
    text = shown(live(path))
    assert "Your graph and the kit's are the same" in text
    assert "within cuDNN's test tolerance" in text and "PASS" in text
