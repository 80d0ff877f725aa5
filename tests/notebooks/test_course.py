"""Every course notebook (notebooks/NN_*.ipynb) runs top to bottom on this machine, has the course's shape, and its
exercises are active: a prediction cell, a folded check that says right or wrong, a folded hint and a folded solution
whose own check says right.

Notebooks are found with a glob, so one added later is picked up; each must say in REQUIREMENTS what it needs, and
one whose need this machine does not meet is skipped with the reason. Before running, each line of the
`parameters` cell that declares a small alternative (``N, C = 16, 64  # small: 2, 8``) gets that value, so the
notebooks run small on CPU. No test here times anything: ``python benchmarks/notebooks.py`` does.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
pytest.importorskip("nbclient", reason="notebook tests need nbclient")

from notebook_runs import (COURSE, LESSONS, NOTEBOOKS, OPEN, PROBE, REVIEWED, RIGHT, ROOT, WRONG, errors,  # noqa: E402
                           execute, exercises, expected_values, leaks, shown, shown_blocks, shrink, tags, text_of)

#: What each notebook needs: a GPU, a minimum compute capability (major, minor), a minimum cuDNN backend version
#: (e.g. 90500 for 9.5.0). ``covered_by`` names the test that already executes the notebook on CPU, so this file
#: does not run it a second time.
REQUIREMENTS: dict[str, dict[str, Any]] = {
    "00_quickstart.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None,
                            "covered_by": "tests/notebooks/test_quickstart.py"},
    "01_graph_by_hand.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "02_layouts_and_strides.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "03_heuristics_and_plans.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "04_numerics.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "05_fp8.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "06_attention.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "07_fusion.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "08_new_gpu_whatif.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "09_lab.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None,
                     "covered_by": "tests/ui/test_notebook_09_lab.py"},
}

#: The kit's provenance line (cudnn_lab.provenance): kind, GPU, driver, CUDA, cuDNN, date.
PROVENANCE = re.compile(r"(RECORDED on|MEASURED HERE on this machine's) (NVIDIA [^·]+|unknown GPU) · driver [^·]+ · "
                        r"CUDA [^·]+ · cuDNN (\d+\.\d+\.\d+|unknown) · (\d{4}-\d\d-\d\d|undated)")

#: The course's referees (cudnn_lab.course): one answer, or a prediction of several values checked part by part.
CHECKS = re.compile(r"\bcheck(?:_parts)?\(")

#: Cells a lesson may have before its exercises (one idea per lesson).
MAX_LESSON_CELLS = 17


def unmet(req: dict[str, Any]) -> str | None:
    """Why this machine cannot run a notebook with these requirements, or None when it can."""
    if not (req.get("gpu") or req.get("min_cc") or req.get("min_cudnn")):
        return None
    from cudnn_lab.capabilities import probe

    caps = probe()
    if not caps.gpu:
        return "needs an NVIDIA GPU; none is visible to PyTorch"
    if req.get("min_cc") and (caps.compute_capability or (0, 0)) < tuple(req["min_cc"]):
        have = ".".join(map(str, caps.compute_capability or ("?",)))
        return f"needs compute capability >= {'.'.join(map(str, req['min_cc']))}; {caps.gpu_name} has {have}"
    if req.get("min_cudnn") and (caps.cudnn_backend_version or 0) < req["min_cudnn"]:
        return f"needs cuDNN >= {req['min_cudnn']}; this machine has {caps.cudnn_backend_version or 'none'}"
    return None


@functools.cache
def executed(path: Path) -> Any:
    """Each notebook is executed once per test session (with :data:`notebook_runs.PROBE` appended); the tests read
    its outputs."""
    return execute(path, append=PROBE)


def runnable(path: Path) -> None:
    req = REQUIREMENTS.get(path.name)
    if req is None:
        pytest.fail(f"add {path.name!r} to REQUIREMENTS")
    if req.get("covered_by"):
        pytest.skip(f"executed by {req['covered_by']}")
    if (reason := unmet(req)) is not None:
        pytest.skip(f"{path.name} {reason}")


# ------------------------------------------------------------------------------------------------ static checks

def test_notebooks_are_found() -> None:
    names = {p.name for p in COURSE}
    assert {"00_quickstart.ipynb", "02_layouts_and_strides.ipynb", "08_new_gpu_whatif.ipynb",
            "01_graph_by_hand.ipynb"} <= names


def test_solutions_live_inside_the_lessons() -> None:
    """Hints and solutions are folded cells of each lesson; no duplicate `_solutions` notebooks to drift apart."""
    assert sorted(p.name for p in NOTEBOOKS.glob("*_solutions.ipynb")) == []


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_notebook_declares_what_it_needs(path: Path) -> None:
    req = REQUIREMENTS.get(path.name)
    assert req is not None, f"add {path.name!r} to REQUIREMENTS in {Path(__file__).relative_to(ROOT)}"
    assert {"gpu", "min_cc", "min_cudnn"} <= set(req)


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    stored = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert stored == [], f"cells {stored} keep outputs: clear them before committing"
    assert "widgets" not in nb.metadata, "saved widget state shows 'model not found' when reopened"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_has_the_course_shape(path: Path) -> None:
    """Title and intro, a parameters cell first among code cells (LIVE = None), a short lesson, then exercises."""
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in tags(first_code), "the first code cell must be tagged `parameters`"
    assert re.search(r"^LIVE = None\b", first_code.source, re.MULTILINE)
    heading = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                    and re.search(r"^## Exercises\b", c.source, re.MULTILINE)), None)
    assert heading is not None, "the lesson must end with a '## Exercises' section"
    assert heading + 1 <= MAX_LESSON_CELLS, f"{heading + 1} cells before the exercises: keep a lesson to one idea"
    found = exercises(nb)
    assert len(found) >= 2 and [n for n, _ in found] == list(range(1, len(found) + 1))
    assert sum(len(cells) for _, cells in found) == len(nb.cells) - heading - 1, \
        "after '## Exercises' every cell belongs to an exercise"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_exercise_is_active(path: Path) -> None:
    """Each exercise: the student's answer cell (``answer_n = None``), a folded check of it, a folded hint and a
    folded solution that checks itself."""
    nb = nbformat.read(path, as_version=4)
    for n, cells in exercises(nb):
        kinds = [(c.cell_type, tuple(tags(c))) for c in cells]
        assert kinds == [("markdown", ("exercise",)), ("code", ("exercise",)), ("code", ("check",)),
                         ("markdown", ("hint",)), ("code", ("solution",))], f"exercise {n}: {kinds}"
        question, answer, checker, hint, solution = cells
        assert re.search(rf"^answer_{n} = None\b", answer.source, re.MULTILINE), f"exercise {n}: answer cell"
        assert f"answer_{n}" in checker.source and CHECKS.search(checker.source)
        assert checker.metadata.get("jupyter", {}).get("source_hidden") is True, f"exercise {n}: fold the check"
        assert "<details><summary>Hint</summary>" in hint.source and "</details>" in hint.source
        folded = solution.metadata.get("jupyter", {})
        assert folded.get("source_hidden") is True and folded.get("outputs_hidden") is True, \
            f"exercise {n}: fold the solution's code and output"
        assert CHECKS.search(solution.source), f"exercise {n}: the solution must check its own answer"


#: Numbers in Markdown that are measurements (times, rates, ratios, percentages) go stale when a recording changes:
#: they belong in f-strings computed from the data. These patterns find them; definitions (thresholds such as
#: "within 10%", dtype constants such as "2⁻⁸ ≈ 0.4%", "100%") are allowed.
MEASURED = re.compile(r"(?<![\w.⁻])\d[\d,]*(?:\.\d+)?\s*(?:us|µs|ms|TFLOP/s|GFLOP/s|GB/s|TB/s)(?![\w/])"
                      r"|(?<![\w.])\d+\.\d+x(?!\w)(?<!1\.00x)"
                      r"|(?<!within\s)(?<!≈\s)(?<![\w.])(?!100%)\d+(?:\.\d+)?\s?%")


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_prose_quotes_no_measurement(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    found = [(i, m.group(0)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
             for m in MEASURED.finditer(c.source)]
    assert found == [], f"measured numbers typed into Markdown (compute them in a cell instead): {found}"


def test_measurement_lint_catches_typed_in_numbers() -> None:
    assert MEASURED.findall("took 19.2 us, 2.61x as fast, 81% of the ceiling, 4.2 TB/s")
    assert MEASURED.findall("within 10% and 2⁻⁸ ≈ 0.4%, 100% and 1.00x") == []


def test_small_alternatives_are_applied() -> None:
    src = "# parameters\nN, C = 16, 64  # small: 2, 8\nLIVE = None  # None: auto\n"
    assert shrink(src) == "# parameters\nN, C = 2, 8\nLIVE = None  # None: auto\n"


# ------------------------------------------------------------------------------------------------ executed

@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_notebook_runs_on_this_machine(path: Path) -> None:
    runnable(path)
    assert errors(executed(path)) == []


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_checks_wait_for_an_answer_and_solutions_are_right(path: Path) -> None:
    """As stored (no answers), every check says 'not answered yet'; every solution's own check says right."""
    runnable(path)
    nb = executed(path)
    for n, cells in exercises(nb):
        checker, solution = cells[2], cells[4]
        assert OPEN in text_of(checker), f"exercise {n}: the check printed {text_of(checker)[:200]!r}"
        said = text_of(solution)
        assert RIGHT in said and WRONG not in said, f"exercise {n}: the solution printed {said[:300]!r}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_nothing_shown_before_an_exercise_gives_its_answer(path: Path) -> None:
    """An exercise is a prediction: nothing shown above its question in its own lesson, at the shrunk sizes, gives
    its answer (issue 29). The same detector runs over the whole course at full size in test_course_leaks.py."""
    runnable(path)
    nb = executed(path)
    expected = expected_values(nb)
    found = []
    for n, cells in exercises(nb):
        stop = nb.cells.index(cells[0])
        lesson = [b for c in nb.cells[:stop] if "solution" not in tags(c) for b in shown_blocks(c)]
        found += [f"exercise {n}: {where}" for where in leaks(expected.get(n), [], lesson)
                  if (path.stem, n, where) not in REVIEWED]
    assert found == []


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_results_shown_say_where_they_come_from(path: Path) -> None:
    """Every lesson that shows a result from a GPU labels it RECORDED (GPU, driver, cuDNN, date) or MEASURED HERE."""
    runnable(path)
    nb = executed(path)
    printed = shown(nb)
    source = "".join(c.source for c in nb.cells if c.cell_type == "code")
    if "load_results(" not in source and "cl.run(" not in source:
        pytest.skip(f"{path.name} shows no GPU result")
    assert PROVENANCE.search(printed), f"{path.name} shows a result without saying where it comes from"
