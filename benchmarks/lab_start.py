"""Start-up of the Lab: seconds from a fresh Python process to ``cl.Lab()`` built, and what it imported.

Target (issue 13): ``cl.Lab()`` on screen in a fresh kernel in at most 2 s on CI's kind of machine (2 cores).
torch and cudnn must not be imported to show the Lab (whether a GPU is there is asked of the driver, not of torch).
Each run is a new process (the OS file cache warm after the first, as in a notebook that starts a kernel).

Run anywhere:  python benchmarks/lab_start.py [--runs 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from _shared import write_json

TARGET_S = 2.0
HEAVY = ("torch", "cudnn", "plotly", "pandas", "ipywidgets", "graphviz", "numpy")

PROBE = f"""
import json, sys, time
t0 = time.perf_counter()
import cudnn_lab as cl
t1 = time.perf_counter()
lab = cl.Lab()
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "lab_s": t2 - t1, "total_s": t2 - t0, "gpu": lab._gpu,
                  "imported": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def once() -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-1500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the runs here")
    args = parser.parse_args()
    once()  # warm-up: the first start reads every file from disk
    runs = [once() for _ in range(args.runs)]
    for r in runs:
        print(f"import {r['import_s']:.2f} s, Lab() {r['lab_s']:.2f} s, total {r['total_s']:.2f} s; "
              f"gpu {r['gpu']}; imported {', '.join(r['imported'])}")
    med = statistics.median(r["total_s"] for r in runs)
    no_torch = all("torch" not in r["imported"] for r in runs)
    print(f"median {med:.2f} s over {len(runs)} fresh processes: {'met' if med <= TARGET_S else 'MISSED'} "
          f"(target <= {TARGET_S} s); torch imported: {'no' if no_torch else 'YES'}")
    write_json(args.json, runs)


if __name__ == "__main__":
    main()
