"""In a real browser: JupyterLab opens notebooks/01_lab.ipynb, runs it, draws the graph and a chart, Load fills
the plan table, and the Sweep tab compares two recorded GPUs. Drives Debian's Chromium through Playwright and saves
screenshots: to docs/lab.png and docs/sweep.png (the README's) when CUDNN_LAB_SCREENSHOT=1, else to a temporary
folder so a test run leaves the work tree clean.

The notebook is copied to a temporary folder first, so JupyterLab's autosave cannot write outputs into the repo.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).parents[2]
NOTEBOOK = ROOT / "notebooks" / "01_lab.ipynb"
SCREENSHOT = (ROOT / "docs" / "lab.png" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1"
              else Path(tempfile.gettempdir()) / "cudnn_lab_lab.png")
SWEEP_SCREENSHOT = (ROOT / "docs" / "sweep.png" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1"
                    else Path(tempfile.gettempdir()) / "cudnn_lab_sweep.png")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 90_000


def _chromium() -> str:
    path = "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")
    if path is None:
        pytest.skip("headless Chromium not found (/usr/bin/chromium or `chromium` on PATH): apt-get install chromium")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except Exception:  # noqa: BLE001 - not up yet
        return 0


@pytest.fixture
def lab_server(tmp_path: Path) -> Iterator[str]:
    """JupyterLab on a free port over a temporary copy of the notebook, with its own settings; stopped after."""
    (tmp_path / "notebooks").mkdir()
    shutil.copy(NOTEBOOK, tmp_path / "notebooks" / NOTEBOOK.name)
    settings = tmp_path / "lab-settings"
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    # No "receive Jupyter news?" toast over the screenshot.
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"}))
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONUNBUFFERED": "1"}
    port = _free_port()
    log = (tmp_path / "jupyter.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root",
         "--ServerApp.port_retries=0", "--LabApp.expose_app_in_browser=True", f"--notebook-dir={tmp_path}"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while _get(f"{base}/api/status") != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                pytest.fail(f"JupyterLab did not start:\n{(tmp_path / 'jupyter.log').read_text()[-3000:]}")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()  # SIGTERM: the server shuts its kernels down (they run in sessions of their own), then exits
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def _wait_loaded(page: Any, name: str, plan: str) -> None:
    """Wait until the panel has shown recording ``name`` everywhere: plan table, status line, Load enabled again."""
    page.wait_for_function("""([name, plan]) => {
        const q = (s) => document.querySelector('.cl-lab ' + s);
        const table = q('.cl-plans-table'), status = q('.cl-status'), load = q('button.cl-load');
        return table && table.innerHTML.includes(plan) && status && status.textContent.includes(name)
            && load && !load.disabled;
    }""", arg=[name, plan])


def test_lab_in_jupyterlab(lab_server: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
    import cudnn_lab as cl

    recordings = cl.recorded_datasets(kind="run")
    if not len(recordings):
        pytest.skip("no recorded datasets are shipped, so there is nothing to Load")
    chromium = _chromium()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1700, "height": 1200})
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(f"{lab_server}/lab/tree/notebooks/{NOTEBOOK.name}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                   " && window.jupyterapp.shell.currentWidget.sessionContext")
            page.wait_for_function("""() => {
                const ctx = window.jupyterapp.shell.currentWidget.sessionContext;
                return ctx.session && ctx.session.kernel && ctx.session.kernel.status === 'idle';
            }""")
            page.evaluate("""() => { if (!window.jupyterapp.shell.leftCollapsed)
                                       window.jupyterapp.commands.execute('application:toggle-left-area'); }""")
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

            lab = page.locator(".cl-lab")
            lab.wait_for()
            page.locator(".cl-lab .cl-graph svg").first.wait_for()  # dot's drawing, or the in-browser fallback
            assert "bias" in page.locator(".cl-lab .cl-graph").inner_text()

            # The recorded-results path: pick the matmul recording (another op than the notebook's conv), Load it.
            page.locator(".cl-lab .cl-left .widget-toggle-button", has_text="Recorded").click()
            names = list(recordings["name"])
            other = next((i for i, n in enumerate(names) if "matmul" in n), 0)
            page.locator(".cl-lab .cl-recorded select").select_option(index=other)
            page.locator(".cl-lab button.cl-load", has_text="Load").click()
            first_plan = cl.load_results(names[other]).plans.sort_values("heuristic_rank")["plan"].iloc[0]
            _wait_loaded(page, names[other], first_plan)
            table = page.locator(".cl-lab .cl-plans-table").inner_html()
            assert "eng" in table and "<table" in table
            assert ">A<" in page.locator(".cl-lab .cl-graph").inner_html()  # the graph follows the recording

            # Back to the notebook's conv recording; show its latency chart for the screenshot.
            conv = next((i for i, n in enumerate(names) if n.endswith("conv_nhwc_fp16_bias_relu")), 0)
            page.locator(".cl-lab .cl-recorded select").select_option(index=conv)
            page.locator(".cl-lab button.cl-load", has_text="Load").click()
            conv_plan = cl.load_results(names[conv]).plans.sort_values("heuristic_rank")["plan"].iloc[0]
            _wait_loaded(page, names[conv], conv_plan)
            page.locator(".cl-lab .lm-TabBar-tab", has_text="Latency").click()
            page.locator(".cl-lab .cl-figure-latency.js-plotly-plot").wait_for()
            page.locator(".cl-lab .cl-figure-latency.js-plotly-plot .bars path").first.wait_for()
            assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html()
            page.mouse.move(5, 5)  # no hover toolbar over the chart
            page.wait_for_timeout(500)  # let plotly finish its transition
            lab.evaluate("el => el.scrollIntoView({block: 'start'})")
            SCREENSHOT.parent.mkdir(exist_ok=True)
            lab.screenshot(path=str(SCREENSHOT))

            # The Sweep tab without a GPU: Run sweep says why it is disabled; Compare GPUs draws two recordings.
            sweeps = list(cl.recorded_datasets(kind="sweep")["name"])
            if len(sweeps) >= 2:
                page.locator(".cl-lab .lm-TabBar-tab", has_text="Sweep").click()
                assert page.locator(".cl-lab button.cl-sweep-run").is_disabled()
                page.locator(".cl-lab .cl-compare-a select").select_option(value=sweeps[0])
                page.locator(".cl-lab .cl-compare-b select").select_option(value=sweeps[1])
                page.locator(".cl-lab button.cl-compare", has_text="Compare GPUs").click()
                page.wait_for_function("""() => {
                    const t = document.querySelector('.cl-lab .cl-figure-sweep.js-plotly-plot .gtitle');
                    return t && t.textContent.includes('Best-plan latency');
                }""")
                page.locator(".cl-lab .cl-figure-sweep.js-plotly-plot .scatterlayer .point").first.wait_for()
                assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html()
                page.mouse.move(5, 5)
                page.wait_for_timeout(500)
                lab.evaluate("el => el.scrollIntoView({block: 'start'})")
                lab.screenshot(path=str(SWEEP_SCREENSHOT))
        finally:
            browser.close()
    assert SCREENSHOT.stat().st_size > 10_000
