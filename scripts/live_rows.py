"""A Lab run's rows as they arrive (issue 27: "the Lab shows a run's rows arriving").

On a GPU machine, ``--record FILE``: the Lab (``cl.Lab``, in this Python process) runs a problem whose plans cuDNN
compiles at run time (all plans, empty plan cache), and each time its Plans table is refilled by a measured plan
(``LiveRows.row``) the rows so far, the progress message and the seconds since Run are written down. The GPU
machines have no browser, so:

here, ``--replay FILE --out DIR``: JupyterLab in headless Chromium makes a Lab and hands it the recorded rows in the
recorded order and at the recorded gaps, through the same ``LiveRows`` a run uses, and screenshots the Plans view
after the first row, half-way and at the end, at 1280x800 (file browser open) and 1600x1000. The screenshots are of
a replay of recorded rows (the kit's real widgets, the GPU's real rows and times); their captions say so.

    python scripts/live_rows.py --record live_rows.json [--problem rmsnorm]
    python scripts/live_rows.py --replay live_rows.json --out shots/
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Problems with runtime-compiled plans (issue 27's), by short name.
PROBLEMS = {
    "rmsnorm": {"op": "norm", "kind": "rmsnorm", "phase": "inference", "rows": 4096, "features": 4096,
                "dtype": "bf16"},
    "gemm_gelu": {"op": "matmul", "m": 4096, "n": 14336, "k": 4096, "dtype": "bf16", "epilogue": ["bias", "gelu"]},
}


def record(path: Path, problem: str, parallel_builds: int | None) -> None:
    """Run ``problem`` through a Lab on this GPU and write what its Plans table was handed, when."""
    import os

    import cudnn_lab as cl
    from cudnn_lab import cache_dir

    os.environ.setdefault(cache_dir.ENV_DIR, tempfile.mkdtemp(prefix="cudnn_lab_live_rows_"))  # cold plan cache

    spec = cl.spec_from_dict(PROBLEMS[problem])
    lab = cl.Lab(spec, gpu=True)
    lab.run_options = cl.RunOptions(plans="all", baselines=False, roofline=False, kernels=False, notes=False,
                                    parallel_builds=parallel_builds)
    events: list[dict[str, Any]] = []
    table, t0 = lab.results.plans_table, [0.0]
    shown, said = table.show_rows, lab._progress

    def show_rows(spec: Any, rows: list[dict[str, Any]]) -> None:
        shown(spec, rows)
        events.append({"t": time.perf_counter() - t0[0], "row": dict(rows[-1]), "rows_in_table": len(table.rows)})

    def progress(done: int, total: int, message: str) -> None:
        said(done, total, message)
        events.append({"t": time.perf_counter() - t0[0], "progress": [done, total, message]})

    table.show_rows, lab._progress = show_rows, progress
    t0[0] = time.perf_counter()
    result = lab.run()
    if result is None:
        raise SystemExit(f"the Lab did not run: {lab.status_log.status.value}")
    rows = [e for e in events if "row" in e]
    out = {"spec": spec.to_dict(), "problem": problem, "device": dict(result.device),
           "options": lab.run_options.to_dict(), "events": events, "run_s": time.perf_counter() - t0[0],
           "plans": len(result.plans), "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    path.write_text(json.dumps(out, default=str, indent=1))
    print(f"{problem} on {result.device.get('gpu')}: {len(rows)} rows handed to the Plans table; first at "
          f"{rows[0]['t']:.2f} s, last at {rows[-1]['t']:.2f} s after Run (run {out['run_s']:.2f} s)")


# ------------------------------------------------------------------------------------------------ the replay

#: Seconds the replay pauses after a row that is screenshot (the browser takes the picture meanwhile).
SHOT_PAUSE_S = 3.0


def _replay_notebook(trace: Path, folder: Path, marks: list[int], name: str) -> Path:
    """A notebook that makes a Lab on the Plans view and, once the file ``<name>.go`` appears (the browser shows the
    Lab), hands it the recorded rows at the recorded gaps (at most 1 s each) on a thread, pausing after each row in
    ``marks`` for its screenshot."""
    import nbformat

    go = folder / "notebooks" / f"{name}.go"
    code = f"""import json, os, threading, time
import cudnn_lab as cl
from cudnn_lab.ui.lab import LiveRows
trace = json.loads(open({str(trace)!r}).read())
spec = cl.spec_from_dict(trace["spec"])
lab = cl.Lab(spec, gpu=False)
lab.view = "Plans"

def replay():
    while not os.path.exists({str(go)!r}):
        time.sleep(0.05)
    live, last = LiveRows(lab, spec), 0.0
    for e in trace["events"]:
        time.sleep(min(max(e["t"] - last, 0.0), 1.0))
        last = e["t"]
        if "row" in e:
            live.row(e["row"])
            if len(live.rows) in {marks!r}:
                time.sleep({SHOT_PAUSE_S})
        else:
            live(*e["progress"])

threading.Thread(target=replay, daemon=True).start()
lab"""
    cell = nbformat.v4.new_code_cell(code, metadata={"jupyter": {"source_hidden": True}})  # the Lab on screen
    nb = nbformat.v4.new_notebook(cells=[cell],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    path = folder / name
    nbformat.write(nb, path)
    return path


#: What a file --record wrote holds, and what the replay reads.
TRACE_KEYS = ("spec", "problem", "device", "events", "created")


def read_trace(path: Path) -> dict[str, Any]:
    """A file ``--record`` wrote, read and checked (the kit's PathError or DataError naming the file otherwise)."""
    from cudnn_lab.errors import DataError
    from cudnn_lab.results.loading import read_json

    trace = read_json(path, "live-rows trace")
    missing = [k for k in TRACE_KEYS if not isinstance(trace, dict) or k not in trace]
    if missing:
        raise DataError(path, f"lacks {', '.join(missing)}", hint="Pass a file scripts/live_rows.py --record wrote")
    events = trace["events"]
    if not isinstance(events, list) or not any(isinstance(e, dict) and isinstance(e.get("row"), dict)
                                               for e in events):
        raise DataError(path, "has no plan rows in 'events'", hint="Record a run that measured at least one plan")
    return trace


#: The notebook's kernel is idle (a page function).
_IDLE = """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return k && k.status === 'idle'; }"""


def replay(trace_path: Path, out: Path) -> None:
    """Screenshots of the Plans view as the recorded rows arrive (first, half-way, last), at two sizes."""
    sys.path.insert(0, str(ROOT / "tests" / "ui"))
    from jupyterlab_session import CHROMIUM_ARGS, chromium, jupyterlab
    from playwright.sync_api import sync_playwright

    trace = read_trace(trace_path)
    n = sum("row" in e for e in trace["events"])
    marks = sorted({1, max(1, n // 2), n})
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sizes = ((1280, 800, True), (1600, 1000, False))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
            for width, height, sidebar in sizes:  # a server each: no notebook left open from the other size
                home = folder / f"lab_{width}"
                home.mkdir()
                notebook = _replay_notebook(trace_path.resolve(), home, marks, f"live_rows_{width}.ipynb")
                with jupyterlab(home, notebook=notebook) as base:
                    page = browser.new_page(viewport={"width": width, "height": height})
                    _shoot(page, base, notebook, home, sidebar, marks, n, trace, out, f"{width}x{height}")
            browser.close()


def _shoot(page: Any, base: str, notebook: Path, home: Path, sidebar: bool, marks: list[int], n: int,
           trace: dict[str, Any], out: Path, size: str) -> None:
    """Open the replay notebook, start the replay once the Lab shows, screenshot at each mark."""
    from jupyterlab_session import TIMEOUT_MS

    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/lab/tree/notebooks/{notebook.name}")
    page.wait_for_function(_IDLE)
    page.evaluate("""(open) => { if (window.jupyterapp.shell.leftCollapsed === open)
                   window.jupyterapp.commands.execute('application:toggle-left-area'); }""", sidebar)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".cl-lab .cl-plans-table").wait_for()
    page.wait_for_function(_IDLE)
    (home / "notebooks" / f"{notebook.name}.go").touch()  # the replay starts
    for k in marks:
        page.wait_for_function("(k) => document.querySelectorAll('.cl-lab .cl-plans-table tbody tr')"
                               ".length === k", arg=k, polling=50)
        page.evaluate("() => document.querySelector('.cl-lab').scrollIntoView()")
        shot = out / f"live_rows_{trace['problem']}_{size}_{k:02d}_of_{n}.png"
        page.screenshot(path=str(shot))
        print(f"{shot}: {k} of {n} rows shown (recorded at "
              f"{[e['t'] for e in trace['events'] if 'row' in e][k - 1]:.2f} s after Run on "
              f"{trace['device'].get('gpu')}, {trace['created'][:16]} UTC; replayed here)")
    page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--record", type=Path, help="run on this GPU through a Lab and write the rows' arrival here")
    how.add_argument("--replay", type=Path, help="a file --record wrote: screenshot its rows arriving in Chromium")
    parser.add_argument("--problem", choices=sorted(PROBLEMS), default="rmsnorm")
    parser.add_argument("--parallel-builds", type=int, default=None, help="helpers building the plans (--record)")
    parser.add_argument("--out", type=Path, default=Path("lab_output/live_rows"), help="screenshots' folder")
    args = parser.parse_args(argv)
    from cudnn_lab.errors import CudnnLabError

    try:
        if args.record:
            record(args.record, args.problem, args.parallel_builds)
        else:
            replay(args.replay, args.out)
    except CudnnLabError as e:  # the kit's own sentence, once, not a traceback
        print(f"live_rows.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
