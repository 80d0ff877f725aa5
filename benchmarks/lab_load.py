"""How long the Lab takes, in a real browser, to show a recording or a sweep after a click, and whether it leaks
widget comms: JupyterLab runs notebooks/09_lab.ipynb in headless Chromium (Playwright), then

- Load: a run recording (alternating two, so each click changes every view), until the status line names it, the
  plan table and banner show it, Load is enabled again and the shown view's figure is redrawn;
- Load sweep: a recorded sweep, until its figure's title is drawn;
- Compare GPUs: two recorded sweeps, until the comparison is drawn;

each ``--repeats`` times. Prints each time, the median per action, "met" or "missed" against ``--bound`` (seconds,
1.5 by default: "about a second"), the browser console's "No such comm" messages, and the widgets the kernel holds
before and after (equal: no widget is made per load). Exit status 0 when every median meets the bound.

    python benchmarks/lab_load.py [--repeats 5] [--bound 1.5] [--width 1280 --height 800]

Measured on the 2-core development machine (no GPU, shared), 2026-11-22: Load median 0.74 s, Load sweep 0.38 s,
Compare GPUs 0.39 s, no "No such comm", no widget made per click (before: one plotly FigureWidget per figure, each
sending plotly.js with it, 7.6 s per Load there and "No such comm" messages at each).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "ui"))

from jupyterlab_session import CHROMIUM_ARGS, chromium, jupyterlab, open_lab, show_view, wait_shown  # noqa: E402

#: Counts the kernel's live widgets (a widget made per load would raise it): run in the notebook's kernel.
_COUNT_WIDGETS = "import ipywidgets as _w; print('WIDGETS', len(_w.widgets.widget._instances))"


def _kernel_widgets(page: Any) -> int:
    """The number of widgets alive in the notebook's kernel (executed there through JupyterLab's kernel API)."""
    return page.evaluate("""async (code) => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        let out = '';
        const future = kernel.requestExecute({code, silent: false, store_history: false});
        future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') out += msg.content.text; };
        await future.done;
        return parseInt(out.split('WIDGETS')[1]);
    }""", _COUNT_WIDGETS)


def _timed(action: Any, done: Any) -> float:
    start = time.perf_counter()
    action()
    done()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bound", type=float, default=1.5, help="seconds a median may take (default 1.5)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    args = parser.parse_args(argv)
    if chromium() is None:
        print("no Chromium (/usr/bin/chromium or `chromium` on PATH): nothing measured")
        return 2
    import cudnn_lab as cl
    from playwright.sync_api import sync_playwright

    runs = [n for n in cl.recorded_datasets(kind="run")["name"] if "_conv_" in n]  # the Lab's list on conv
    sweeps = list(cl.recorded_datasets(kind="sweep")["name"])
    times: dict[str, list[float]] = {"Load": [], "Load sweep": [], "Compare GPUs": []}
    console: list[str] = []
    with tempfile.TemporaryDirectory() as folder, jupyterlab(Path(folder)) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height})
        page.on("console", lambda m: console.append(m.text))
        open_lab(page, base)
        show_view(page, "Latency")
        widgets_before = _kernel_widgets(page)
        select = page.locator(".cl-lab .cl-recorded select")
        for i in range(args.repeats):
            name = runs[i % 2] if len(runs) > 1 else runs[0]
            select.select_option(index=runs.index(name))

            def shown(name: str = name) -> None:
                wait_shown(page, name)
                page.wait_for_function("(n) => [...document.querySelectorAll('.cl-lab .cl-figure-latency .gtitle')]"
                                       ".some(t => t.textContent.includes('Latency per plan'))", arg=name)

            times["Load"].append(_timed(lambda: page.locator(".cl-lab button.cl-load").click(), shown))
        show_view(page, "Sweep")
        for i in range(args.repeats):
            name = sweeps[i % len(sweeps)]
            page.locator(".cl-lab .cl-sweep-recorded select").select_option(index=sweeps.index(name))
            page.evaluate("() => { const t = document.querySelector('.cl-lab .cl-figure-sweep .gtitle');"
                          " if (t) t.textContent = ''; }")  # so the wait sees the new figure, not the old one
            times["Load sweep"].append(_timed(
                lambda: page.locator(".cl-lab button.cl-sweep-load").click(),
                lambda: page.wait_for_function("() => { const t = document.querySelector("
                                               "'.cl-lab .cl-figure-sweep .gtitle'); return t &&"
                                               " t.textContent.includes('along'); }")))
            page.locator(".cl-lab .cl-compare-a select").select_option(value=sweeps[0])
            page.locator(".cl-lab .cl-compare-b select").select_option(value=sweeps[-1])
            times["Compare GPUs"].append(_timed(
                lambda: page.locator(".cl-lab button.cl-compare").click(),
                lambda: page.wait_for_function("() => { const t = document.querySelector("
                                               "'.cl-lab .cl-figure-sweep .gtitle'); return t &&"
                                               " t.textContent.includes('Speedup of b'); }")))
        widgets_after = _kernel_widgets(page)
        browser.close()

    ok = True
    print(f"Lab in JupyterLab, headless Chromium {args.width}x{args.height}, {args.repeats} clicks each; "
          f"bound {args.bound:.2f} s per median")
    for action, values in times.items():
        median = statistics.median(values)
        met = median <= args.bound
        ok &= met
        print(f"  {action:<13} median {median:.2f} s  ({', '.join(f'{v:.2f}' for v in values)})  "
              f"{'met' if met else 'MISSED'}")
    comms = [m for m in console if "No such comm" in m]
    print(f"  'No such comm' messages in the console: {len(comms)}")
    print(f"  widgets in the kernel before/after the clicks: {widgets_before}/{widgets_after}"
          f" ({'none made per click' if widgets_after == widgets_before else 'MADE PER CLICK'})")
    ok &= not comms and widgets_after == widgets_before
    print("met" if ok else "missed")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
