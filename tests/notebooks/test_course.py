"""Every course notebook (notebooks/NN_*.ipynb and its _solutions twin) runs top to bottom within a minute.

Notebooks are found with a glob, so one added later is picked up; each must say in REQUIREMENTS what it needs, and
one whose need this machine does not meet is skipped with the reason. Before running, each line of the
`parameters` cell that declares a small alternative (``N, C = 16, 64  # small: 2, 8``) gets that value, so the
notebooks run small on CPU (and on a GPU, live, at small sizes).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (the test extra)")
NotebookClient = pytest.importorskip("nbclient", reason="notebook tests need nbclient").NotebookClient

ROOT = Path(__file__).parents[2]
NOTEBOOKS = ROOT / "notebooks"
COURSE = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = "_solutions"

#: What each notebook needs (its _solutions twin needs the same): a GPU, a minimum compute capability (major,
#: minor), a minimum cuDNN backend version (e.g. 90500 for 9.5.0). ``covered_by`` names the test that already
#: executes the notebook, so this file does not run it a second time.
REQUIREMENTS: dict[str, dict[str, Any]] = {
    "00_quickstart.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None,
                            "covered_by": "tests/notebooks/test_quickstart.py"},
    "01_lab.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None, "covered_by": "tests/ui/test_notebook_01.py"},
    "02_layouts_and_strides.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "03_heuristics_and_plans.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "04_numerics.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "05_attention.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "06_fusion.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
    "07_new_gpu_whatif.ipynb": {"gpu": False, "min_cc": None, "min_cudnn": None},
}

TIME_LIMIT_S = 60
MAX_CELLS = 15
SMALL = re.compile(r"^(?P<lhs>[^#=\n]+=)\s*(?P<value>[^#\n]*?)\s*#\s*small:\s*(?P<small>.+?)\s*$", re.MULTILINE)


def base_name(path: Path) -> str:
    """The notebook whose REQUIREMENTS entry applies: a _solutions twin answers to its exercise notebook."""
    return path.name.replace(f"{SOLUTIONS}.ipynb", ".ipynb")


def is_twin(path: Path) -> bool:
    return path.stem.endswith(SOLUTIONS)


def shrink(source: str) -> str:
    """``X = big  # small: tiny`` -> ``X = tiny`` on every line that declares a small alternative."""
    return SMALL.sub(lambda m: f"{m['lhs'].rstrip()} {m['small']}", source)


def params_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)


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


def test_notebooks_are_found() -> None:
    names = {p.name for p in COURSE}
    assert {"00_quickstart.ipynb", "02_layouts_and_strides.ipynb", "07_new_gpu_whatif.ipynb"} <= names


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_notebook_declares_what_it_needs(path: Path) -> None:
    req = REQUIREMENTS.get(base_name(path))
    assert req is not None, f"add {base_name(path)!r} to REQUIREMENTS in {Path(__file__).relative_to(ROOT)}"
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


def _numbered(path: Path) -> int:
    return int(path.name[:2])


LESSONS = [p for p in COURSE if _numbered(p) >= 2 and not is_twin(p)]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_has_the_course_shape(path: Path) -> None:
    """Title and intro, a parameters cell first among code cells (LIVE = None), short, ending with exercises."""
    nb = nbformat.read(path, as_version=4)
    assert len(nb.cells) <= MAX_CELLS, f"{len(nb.cells)} cells: keep a lesson to one idea"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in first_code.metadata.get("tags", []), "the first code cell must be tagged `parameters`"
    assert re.search(r"^LIVE = None\b", first_code.source, re.MULTILINE)
    assert nb.cells[-1].cell_type == "markdown" and "Exercise" in nb.cells[-1].source


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_solutions_twin_has_the_same_cells_plus_solutions(path: Path) -> None:
    twin_path = path.with_name(f"{path.stem}{SOLUTIONS}.ipynb")
    assert twin_path.exists(), f"{twin_path.name} (the exercises' solutions) is missing"
    lesson, twin = nbformat.read(path, as_version=4), nbformat.read(twin_path, as_version=4)
    remaining = iter(twin.cells)
    extra = []
    for cell in lesson.cells:
        for candidate in remaining:
            if (candidate.cell_type, candidate.source) == (cell.cell_type, cell.source):
                break
            extra.append(candidate)
        else:
            pytest.fail(f"{twin_path.name} lacks (or reorders) the cell {cell.source[:60]!r}")
    extra += list(remaining)
    assert extra and all("solution" in c.metadata.get("tags", []) for c in extra), \
        "every cell the twin adds must be tagged `solution`"
    assert any(c.cell_type == "code" for c in extra), "the twin must solve the exercises in code"


def test_small_alternatives_are_applied() -> None:
    src = "# parameters\nN, C = 16, 64  # small: 2, 8\nLIVE = None  # None: auto\n"
    assert shrink(src) == "# parameters\nN, C = 2, 8\nLIVE = None  # None: auto\n"


@pytest.mark.parametrize("path", COURSE, ids=lambda p: p.name)
def test_notebook_runs_on_this_machine_within_a_minute(path: Path) -> None:
    
    req = REQUIREMENTS.get(base_name(path))
    if req is None:
        pytest.fail(f"add {base_name(path)!r} to REQUIREMENTS")
    if req.get("covered_by") and not is_twin(path):
        pytest.skip(f"executed by {req['covered_by']}")
    if (reason := unmet(req)) is not None:
        pytest.skip(f"{path.name} {reason}")
    nb = nbformat.read(path, as_version=4)
    if (cell := params_cell(nb)) is not None:
        cell.source = shrink(cell.source)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    seconds = time.perf_counter() - t0
    errors = [f"cell {i}: {o.get('ename')}: {o.get('evalue')}" for i, c in enumerate(nb.cells)
              if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert errors == []
    assert seconds < TIME_LIMIT_S, f"{path.name} took {seconds:.1f} s"
