"""A Lab run's rows as they arrive (issue 27: "the Lab shows a run's rows arriving").

On a GPU machine, ``--record FILE``: the Lab (``cl.Lab``, in this Python process) runs a problem whose plans cuDNN
compiles at run time (all plans, empty plan cache), and each time its Plans table is refilled by a measured plan
(``LiveRows.row``) the rows so far, the progress message and the seconds since Run are written down. The GPU
machines have no browser, so:

here, ``--replay FILE --out DIR``: JupyterLab in headless Chromium makes a Lab and hands it the recorded rows in the
recorded order and at the recorded gaps, through the same ``LiveRows`` a run uses, and screenshots the Plans view
after the first row, half-way and at the end, at 1280x800 (file browser open) and 1600x1000. The screenshots are of
a replay of recorded rows (the kit's real widgets, the GPU's real rows and times); their captions say so.

With ``--defaults`` (issue 36) the Lab runs with no options set, as a user's does: it is made in this fresh process
(so on a GPU it warms torch, CUDA and the helper pool in the background), Run is pressed once that warm-up ends (at
most ``--wait-warm-s`` after the Lab was made; the trace keeps how long it took), and the times from Run to the first
and the last row are printed against the targets (2 s and, for rmsnorm, 5 s).

    python scripts/live_rows.py --record live_rows.json [--problem rmsnorm] [--defaults]
    python scripts/live_rows.py --replay live_rows.json --out shots/
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterator
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


#: How the cold plan cache's temporary folder is named (removed when the recording ends, also on error).
CACHE_PREFIX = "cudnn_lab_live_rows_"


@contextlib.contextmanager
def cold_cache() -> Iterator[None]:
    """A plan cache that starts empty: a temporary folder as the kit's cache folder for the block, removed after it
    (also on error), unless the caller set one (then it is used and kept)."""
    from cudnn_lab import cache_dir

    if os.environ.get(cache_dir.ENV_DIR):
        yield
        return
    with tempfile.TemporaryDirectory(prefix=CACHE_PREFIX, ignore_cleanup_errors=True) as folder:
        os.environ[cache_dir.ENV_DIR] = folder
        try:
            yield
        finally:
            os.environ.pop(cache_dir.ENV_DIR, None)


#: Targets with default options (issue 36): Run to the first row, and to rmsnorm's last row (s).
FIRST_ROW_TARGET_S = 2.0
LAST_ROW_TARGET_S = 5.0


def record(path: Path, problem: str, parallel_builds: int | None, defaults: bool = False,
           wait_warm_s: float = 120.0) -> None:
    """Run ``problem`` through a Lab on this GPU (cold plan cache) and write what its Plans table was handed, when;
    ``defaults``: no options set, Run pressed once the Lab's warm-up ended (at most ``wait_warm_s`` s)."""
    with cold_cache():
        _record(path, problem, parallel_builds, defaults, wait_warm_s)


def _record(path: Path, problem: str, parallel_builds: int | None, defaults: bool = False,
            wait_warm_s: float = 120.0) -> None:
    import cudnn_lab as cl

    spec = cl.spec_from_dict(PROBLEMS[problem])
    t_lab = time.perf_counter()
    lab = cl.Lab(spec, gpu=True)
    shown_s = time.perf_counter() - t_lab
    warm_s = None
    if defaults:
        lab.run_options = cl.RunOptions()  # what a user's Lab has: nothing set
        if lab.warming is not None:
            lab.warming.join(wait_warm_s)
            warm_s = time.perf_counter() - t_lab
    else:
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
        said = lab.messages[-1] if lab.messages else "no reason given"
        raise SystemExit(f"live_rows.py: the Lab did not run: {said}")
    rows = [e for e in events if "row" in e]
    out = {"spec": spec.to_dict(), "problem": problem, "device": dict(result.device),
           "options": lab.run_options.to_dict(), "events": events, "run_s": time.perf_counter() - t0[0],
           "plans": len(result.plans), "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "lab_s": shown_s, "warm_s": warm_s, "decisions": result.settings.get("decisions")}
    path.write_text(json.dumps(out, default=str, indent=1))
    print(f"{problem} on {result.device.get('gpu')}: {len(rows)} rows handed to the Plans table; first at "
          f"{rows[0]['t']:.2f} s, last at {rows[-1]['t']:.2f} s after Run (run {out['run_s']:.2f} s)")
    if defaults:
        print(summary_lines(out))


def summary_lines(trace: dict[str, Any]) -> str:
    """The default-options rows of a trace: Lab made, warm-up, Run to first and last row, against the targets."""
    rows = [e["t"] for e in trace["events"] if "row" in e]
    first = next((e["t"] for e in trace["events"] if "row" in e and e["row"].get("median_ms") is not None),
                 rows[0] if rows else None)
    pb = ((trace.get("decisions") or {}).get("parallel_builds") or {})
    warm = trace.get("warm_s")
    lines = [f"  Lab made in {trace.get('lab_s') or 0:.2f} s; its warm-up ended "
             f"{'at ' + format(warm, '.2f') + ' s' if warm is not None else '(none: no GPU seen)'}; helpers used: "
             f"{pb.get('used', '?')} ({pb.get('why', '?')})"]
    if first is not None:
        ok = first <= FIRST_ROW_TARGET_S
        lines.append(f"  Run -> first row (default options)   <= {FIRST_ROW_TARGET_S:g} s  {first:.2f} s  "
                     f"{'met' if ok else 'MISSED'}")
    if rows:
        target = trace.get("problem") == "rmsnorm"
        ok = rows[-1] <= LAST_ROW_TARGET_S
        lines.append(f"  Run -> last row (default options)    "
                     f"{'<= ' + format(LAST_ROW_TARGET_S, 'g') + ' s' if target else '(info)'}  {rows[-1]:.2f} s  "
                     f"{('met' if ok else 'MISSED') if target else ''}".rstrip())
    return "\n".join(lines)


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


#: What a file --record wrote holds, and what the replay reads (required); what it may hold besides.
TRACE_KEYS = ("spec", "problem", "device", "events", "created")
OPTIONAL_KEYS = ("options", "run_s", "plans", "lab_s", "warm_s", "decisions")
#: Keys of one event: its time, then a row handed to the Plans table (and the table's length) or a progress line.
EVENT_KEYS = ("t", "row", "rows_in_table", "progress")
#: Longest a recorded run may last (s), most events and rows a trace may hold, longest text in one.
MAX_RUN_S = 7 * 24 * 3600.0
MAX_EVENTS = 100_000
MAX_TEXT = 4096
#: A trace is one small JSON file (the H100's are about 60 kB).
MAX_TRACE_BYTES = 16 * 2**20


class _Check:
    """Field checks that raise the kit's DataError naming the trace file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, problem: str) -> Exception:
        from cudnn_lab.errors import DataError

        return DataError(self.path, f"field {field}: {problem}", hint="Pass a file scripts/live_rows.py --record wrote")

    def typed(self, field: str, value: Any, kinds: tuple[type, ...], want: str, *, null: bool = False) -> Any:
        if value is None and null:
            return value
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            from cudnn_lab.errors import shorten

            shown = "null" if value is None else f"{type(value).__name__} {shorten(value, 40)}"
            raise self.fail(field, f"must be {want}{' or null' if null else ''}, not {shown}")
        return value

    def number(self, field: str, value: Any, low: float | None, high: float | None, *, null: bool = False,
               integer: bool = False) -> Any:
        kinds: tuple[type, ...] = (int,) if integer else (int, float)
        self.typed(field, value, kinds, "an integer" if integer else "a number", null=null)
        if value is None:
            return value
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(field, f"must be a finite number, not {value}")
        if (low is not None and value < low) or (high is not None and value > high):
            where = (f"from {low:g} to {high:g}" if low is not None and high is not None
                     else f"at least {low:g}" if low is not None else f"at most {high:g}")
            raise self.fail(field, f"must be {where}, not {value:.6g}")
        return value

    def text(self, field: str, value: Any, *, null: bool = False, empty: bool = True) -> Any:
        self.typed(field, value, (str,), "text", null=null)
        if value is not None and (len(value) > MAX_TEXT or (not empty and not value)):
            raise self.fail(field, f"must be text of {0 if empty else 1} to {MAX_TEXT} characters, not "
                            f"{len(value)} characters")
        return value


def _check_row(check: _Check, field: str, row: Any) -> None:
    """One plan row as the Plans table is handed it: known columns, each of its schema type, by meaning."""
    from cudnn_lab.results.loading import JSON_COLUMNS, VALUE_RANGES, check_cell
    from cudnn_lab.results.schema import PLAN_SCHEMA

    check.typed(field, row, (dict,), "an object (one plan row)")
    columns = {c.name: c.dtype for c in PLAN_SCHEMA}
    for key in row:
        if key not in columns:
            raise check.fail(f"{field}.{str(key)[:60]}", "is not a plan column (see cudnn_lab.results.schema)")
    for key in ("plan", "status"):
        if key not in row:
            raise check.fail(f"{field}.{key}", "is missing")
    check.text(f"{field}.plan", row["plan"], empty=False)
    for key, value in row.items():
        where, dtype = f"{field}.{key}", columns[key]
        if dtype == "int":
            check.number(where, value, None, None, null=True, integer=True)
        elif dtype == "float":
            check.number(where, value, None, None, null=True)
        elif dtype == "bool":
            check.typed(where, value, (bool,), "true or false", null=True)
        elif key not in JSON_COLUMNS:
            check.text(where, value, null=key != "status")
        if key in VALUE_RANGES and value is not None:
            low, high = VALUE_RANGES[key]
            check.number(where, value, low, high)
        if key in JSON_COLUMNS:  # embedded JSON (knobs, kernels): the kit's cell check names the field itself
            check_cell(check.path, where, key, value)


def _check_event(check: _Check, i: int, event: Any) -> bool:
    """One event (by meaning: its time, then a plan row or a progress line); whether it hands a row."""
    field = f"events[{i}]"
    check.typed(field, event, (dict,), "an object")
    for key in event:
        if key not in EVENT_KEYS:
            raise check.fail(f"{field}.{str(key)[:60]}", f"is not an event key (keys are {', '.join(EVENT_KEYS)})")
    if "t" not in event:
        raise check.fail(f"{field}.t", "is missing (seconds since Run)")
    check.number(f"{field}.t", event["t"], 0.0, MAX_RUN_S)
    if ("row" in event) == ("progress" in event):
        raise check.fail(field, "must hold a plan row ('row') or a progress line ('progress'), exactly one")
    if "progress" in event:
        if "rows_in_table" in event:
            raise check.fail(f"{field}.rows_in_table", "belongs to a row event, not a progress line")
        progress = check.typed(f"{field}.progress", event["progress"], (list,), "a list [done, total, message]")
        if len(progress) != 3:
            raise check.fail(f"{field}.progress", f"must be [done, total, message], not {len(progress)} items")
        done = check.number(f"{field}.progress[0]", progress[0], 0, MAX_EVENTS, integer=True)
        check.number(f"{field}.progress[1]", progress[1], done, MAX_EVENTS, integer=True)
        check.text(f"{field}.progress[2]", progress[2])
        return False
    _check_row(check, f"{field}.row", event["row"])
    if "rows_in_table" in event:
        check.number(f"{field}.rows_in_table", event["rows_in_table"], 1, MAX_EVENTS, integer=True)
    return True


def read_trace(path: Path) -> dict[str, Any]:
    """A file ``--record`` wrote, read and checked field by field (the kit's PathError or DataError naming the file
    and the field otherwise): its spec, device, dates and every event's time, plan row or progress line."""
    from cudnn_lab.errors import DataError
    from cudnn_lab.results.loading import parse_json, read_text, spec_from_data

    path, text = read_text(path, "live-rows trace", limit=MAX_TRACE_BYTES)
    trace = parse_json(text, path, "live-rows trace", allow_nonfinite=True)  # a NaN is refused below, by field
    check = _Check(path)
    missing = [k for k in TRACE_KEYS if not isinstance(trace, dict) or k not in trace]
    if missing:
        raise DataError(path, f"lacks {', '.join(missing)}", hint="Pass a file scripts/live_rows.py --record wrote")
    for key in trace:
        if key not in TRACE_KEYS + OPTIONAL_KEYS:
            raise check.fail(str(key)[:60], f"is not a trace key (keys are {', '.join(TRACE_KEYS + OPTIONAL_KEYS)})")
    spec_from_data(trace["spec"], path, "spec")
    check.text("problem", trace["problem"], empty=False)
    device = check.typed("device", trace["device"], (dict,), "an object (the GPU's description)")
    check.text("device.gpu", device.get("gpu"), null=True)
    check.text("created", trace["created"], empty=False)
    check.typed("options", trace.get("options"), (dict,), "an object (the run options)", null=True)
    check.number("run_s", trace.get("run_s"), 0.0, MAX_RUN_S, null=True)
    check.number("plans", trace.get("plans"), 0, MAX_EVENTS, null=True, integer=True)
    check.number("lab_s", trace.get("lab_s"), 0.0, MAX_RUN_S, null=True)
    check.number("warm_s", trace.get("warm_s"), 0.0, MAX_RUN_S, null=True)
    if trace.get("decisions") is not None:  # the run's settings['decisions']: the kit's own check
        from cudnn_lab.results.result_checks import check_settings

        check_settings({"decisions": trace["decisions"]}, path)
    events = check.typed("events", trace["events"], (list,), "a list of events")
    if len(events) > MAX_EVENTS:
        raise check.fail("events", f"holds {len(events)} events, more than the {MAX_EVENTS} a trace may")
    rows = sum(_check_event(check, i, e) for i, e in enumerate(events))
    if not rows:
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
    parser.add_argument("--defaults", action="store_true",
                        help="--record with no options set, Run once the Lab's warm-up ends (issue 36)")
    parser.add_argument("--wait-warm-s", type=float, default=120.0,
                        help="--defaults: longest wait for the Lab's warm-up before Run (s)")
    parser.add_argument("--out", type=Path, default=Path("lab_output/live_rows"), help="screenshots' folder")
    args = parser.parse_args(argv)
    from cudnn_lab.errors import CudnnLabError

    try:
        if args.record:
            record(args.record, args.problem, args.parallel_builds, args.defaults, args.wait_warm_s)
        else:
            replay(args.replay, args.out)
    except CudnnLabError as e:  # the kit's own sentence, once, not a traceback
        print(f"live_rows.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from cudnn_lab.gpu.device import end_program

    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
