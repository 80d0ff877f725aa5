"""What the notebook tests share: finding the course, shrinking parameters, executing a notebook, reading outputs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).parents[2]
NOTEBOOKS = ROOT / "notebooks"
COURSE = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
#: The lessons (with exercises): every course notebook but the quickstart and the Lab, the capstone.
LESSONS = [p for p in COURSE if p.stem not in ("00_quickstart", "09_lab")]

SMALL = re.compile(r"^(?P<lhs>[^#=\n]+=)\s*(?P<value>[^#\n]*?)\s*#\s*small:\s*(?P<small>.+?)\s*$", re.MULTILINE)
EXERCISE = re.compile(r"^\*\*Exercise (\d+)\.\*\*")
#: How ``cudnn_lab.course.check`` starts its verdicts.
RIGHT, WRONG, OPEN = "✔ right", "✘ not quite", "… not answered yet"


def shrink(source: str) -> str:
    """``X = big  # small: tiny`` -> ``X = tiny`` on every line that declares a small alternative."""
    return SMALL.sub(lambda m: f"{m['lhs'].rstrip()} {m['small']}", source)


def params_cell(nb: Any) -> Any:
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])), None)


def tags(cell: Any) -> list[str]:
    return list(cell.metadata.get("tags", []))


def execute(path: Path, *, small: bool = True, timeout: int = 300, append: str = "") -> Any:
    """The notebook executed in a fresh kernel (its parameters shrunk when ``small``; ``append``: a code cell run
    last), outputs kept, errors recorded in the outputs rather than raised (so a test can say which cell failed)."""
    nb = nbformat.read(path, as_version=4)
    if small and (cell := params_cell(nb)) is not None:
        cell.source = shrink(cell.source)
    if append:
        nb.cells.append(nbformat.v4.new_code_cell(append))
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def errors(nb: Any) -> list[str]:
    return [f"cell {i}: {o.get('ename')}: {o.get('evalue')}" for i, c in enumerate(nb.cells)
            if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]


def text_of(cell: Any) -> str:
    """Everything a code cell printed or displayed as text or Markdown."""
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        else:
            data = o.get("data", {})
            parts.append(data.get("text/markdown", "") or data.get("text/plain", ""))
    return "".join(parts)


def shown(nb: Any) -> str:
    return "".join(text_of(c) for c in nb.cells if c.cell_type == "code")


def exercises(nb: Any) -> list[tuple[int, list[Any]]]:
    """(number, cells) of each exercise: its question and every cell up to the next question."""
    out: list[tuple[int, list[Any]]] = []
    for cell in nb.cells:
        m = EXERCISE.match(cell.source) if cell.cell_type == "markdown" else None
        if m:
            out.append((int(m[1]), [cell]))
        elif out:
            out[-1][1].append(cell)
    return out
