"""Strip the outputs from notebooks, as the repository stores them (``make clean-notebooks``).

Clears every code cell's outputs and execution count and the saved widget state (which shows 'model not found'
when reopened); a notebook with none of these is left untouched (not rewritten). With ``--check`` nothing is
written: the notebooks that keep outputs are named and the exit code is 1.

    python scripts/strip_notebooks.py [--check] [NOTEBOOK ...]    # default: notebooks/*.ipynb
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent


def strip(nb: nbformat.NotebookNode) -> bool:
    """Clear ``nb``'s outputs, execution counts and widget state in place; whether there was anything to clear."""
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            changed = True
        cell.outputs, cell.execution_count = [], None
    if "widgets" in nb.metadata:
        del nb.metadata["widgets"]
        changed = True
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook keeps outputs")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    dirty = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if not strip(nb):
            continue
        dirty.append(path)
        if not args.check:
            nbformat.write(nb, path)
    verb = "keeps outputs" if args.check else "stripped"
    for path in dirty:
        print(f"{path}: {verb}")
    if not dirty:
        print(f"{len(paths)} notebook(s) already without outputs")
    return 1 if args.check and dirty else 0


if __name__ == "__main__":
    sys.exit(main())
