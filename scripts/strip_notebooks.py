"""Strip the outputs from notebooks, as the repository stores them (``make clean-notebooks``).

Clears every code cell's outputs, execution count and run timing, the saved widget state (which shows 'model not
found' when reopened) and the kernel metadata that JupyterLab writes on save (the kernel's display name, Python's
version, lexer and mimetype), leaving the kernelspec and language that the repository stores; a notebook with none of
these is left untouched (not rewritten). With ``--check`` nothing is written: the notebooks that keep outputs are named
and the exit code is 1. With ``--stdin`` one notebook is read from stdin and written, stripped, to stdout: the git
filter that scripts/setup.sh installs (``filter.strip-notebooks.clean``; .gitattributes names the notebooks), so
autosaved outputs never show in ``git status``.

    python scripts/strip_notebooks.py [--check] [NOTEBOOK ...]    # default: notebooks/*.ipynb
    python scripts/strip_notebooks.py --stdin < NOTEBOOK > STRIPPED
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
# the kernel metadata the repository stores; JupyterLab rewrites both on save ("Python 3 (ipykernel)", version, ...)
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}


def strip(nb: nbformat.NotebookNode) -> bool:
    """Clear ``nb``'s outputs, execution counts and widget state in place; whether there was anything to clear."""
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.get("outputs") or cell.get("execution_count") is not None:
            changed = True
        cell.outputs, cell.execution_count = [], None
        if "execution" in cell.get("metadata", {}):  # JupyterLab's "record timing" setting
            del cell.metadata["execution"]
            changed = True
    if "widgets" in nb.metadata:
        del nb.metadata["widgets"]
        changed = True
    kernel = nb.metadata.get("kernelspec", {})
    if kernel and kernel.get("name") == "python3" and kernel != KERNELSPEC:
        nb.metadata["kernelspec"] = nbformat.from_dict(KERNELSPEC)
        changed = True
    language = nb.metadata.get("language_info", {})
    if language and language.get("name") == "python" and language != LANGUAGE_INFO:
        nb.metadata["language_info"] = nbformat.from_dict(LANGUAGE_INFO)
        changed = True
    return changed


def strip_stream(source: str) -> str:
    """The stored form of the notebook text ``source``, byte-equal to what ``make clean-notebooks`` writes."""
    nb = nbformat.reads(source, as_version=4)
    strip(nb)
    return nbformat.writes(nb) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook keeps outputs")
    parser.add_argument("--stdin", action="store_true", help="strip the notebook on stdin to stdout (the git filter)")
    args = parser.parse_args(argv)
    if args.stdin:
        text = sys.stdin.buffer.read().decode("utf-8")
        sys.stdout.buffer.write(strip_stream(text).encode("utf-8"))
        return 0
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
