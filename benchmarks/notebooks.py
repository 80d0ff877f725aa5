"""How long each course notebook takes to run top to bottom: the speed check the notebook tests leave out.

Each notebook runs in a fresh kernel, with its parameters shrunk to their ``# small:`` values (as CI runs them) or,
with ``--full``, as a student gets them (live on a GPU machine). The course's budget is a minute per notebook on
CI's machine; notebooks over it are marked.

Run:  python benchmarks/notebooks.py [--full] [NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "notebooks"))
from notebook_runs import COURSE, errors, execute

BUDGET_S = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="notebooks to time (a prefix such as 04); default: all")
    parser.add_argument("--full", action="store_true", help="the notebooks' own sizes instead of the small ones")
    args = parser.parse_args()
    chosen = [p for p in COURSE if not args.names or any(p.name.startswith(n) for n in args.names)]
    for path in chosen:
        t0 = time.perf_counter()
        nb = execute(path, small=not args.full, timeout=900)
        seconds = time.perf_counter() - t0
        failed = errors(nb)
        mark = "OVER BUDGET" if seconds > BUDGET_S else "ok"
        print(f"{path.name:<34} {seconds:6.1f} s  {mark}{'  errors: ' + '; '.join(failed) if failed else ''}",
              flush=True)


if __name__ == "__main__":
    main()
