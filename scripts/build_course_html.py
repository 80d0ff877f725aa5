"""Build an executed HTML copy of every course notebook into build/course/ (``make course-html``).

Each notebook runs top to bottom in a fresh kernel: at full size on a machine with a GPU, with its parameters'
``# small:`` values on one without (the recordings are shown then, each labelled RECORDED); the HTML says which.
An index.html lists the lessons in order. Nothing is written into notebooks/ (the stored notebooks keep no outputs).

    python scripts/build_course_html.py [--out build/course] [--only 03_heuristics_and_plans ...] [--full]
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(ROOT / "tests" / "notebooks"))  # notebook_runs, as benchmarks/notebooks.py uses it


def build(path: Path, out: Path, *, small: bool, timeout: int) -> tuple[Path, float, int]:
    """Execute ``path`` and write its HTML into ``out``; returns the file, the seconds taken and the errors."""
    import nbformat
    from nbconvert import HTMLExporter

    from notebook_runs import errors as cell_errors  # the tests' runner: the same shrink, kernel and folder
    from notebook_runs import execute

    t0 = time.perf_counter()
    nb = execute(path, small=small, timeout=timeout)
    seconds = time.perf_counter() - t0
    errors = len(cell_errors(nb))
    note = ("Executed on a machine without a GPU, at the small sizes of its parameters cell: results shown are "
            "recordings, each labelled RECORDED." if small else "Executed at full size on a machine with a GPU.")
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(f"> {note} Built {time.strftime('%Y-%m-%d')}."))
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    target = out / f"{path.stem}.html"
    target.write_text(body, encoding="utf-8")
    return target, seconds, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "build" / "course"))
    ap.add_argument("--only", nargs="*", help="notebook stems to build (default: all)")
    ap.add_argument("--full", action="store_true", help="run at full size even without a GPU (slow on CPU)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from cudnn_lab.capabilities import probe

    small = not (args.full or probe().gpu)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if args.only:
        unknown = set(args.only) - {p.stem for p in paths}
        if unknown:
            print(f"build_course_html.py: no such notebook: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        paths = [p for p in paths if p.stem in args.only]
    rows, failed = [], 0
    for path in paths:
        target, seconds, errors = build(path, out, small=small, timeout=args.timeout)
        failed += bool(errors)
        print(f"{path.name}: {target} ({seconds:.0f} s{f', {errors} cell errors' if errors else ''})", flush=True)
        rows.append(f"<li><a href='{html.escape(target.name)}'>{html.escape(path.stem)}</a>"
                    f"{' (cells failed)' if errors else ''}</li>")
    (out / "index.html").write_text("<!doctype html><meta charset='utf-8'><title>cudnn_lab course</title>"
                                    "<h1>cudnn_lab: the course</h1><ol start='0'>" + "".join(rows) + "</ol>",
                                    encoding="utf-8")
    print(f"index: {out / 'index.html'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
