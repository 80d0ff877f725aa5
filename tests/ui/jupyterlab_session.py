"""JupyterLab in a real browser for the Lab's browser test and benchmarks/lab_load.py: a server over a temporary copy
of a notebook (JupyterLab's autosave never writes into the repo), Chromium through Playwright, and the page helpers
both use (run the notebook, wait for a recording to show, measure a view's boxes)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
NOTEBOOK = ROOT / "notebooks" / "09_lab.ipynb"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 120_000


def chromium() -> str | None:
    """Debian's Chromium, or ``chromium`` on PATH (None where there is none)."""
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")


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


@contextmanager
def jupyterlab(folder: Path, notebook: Path = NOTEBOOK) -> Iterator[str]:
    """JupyterLab on a free port over ``folder`` (the notebook copied into ``folder/notebooks``), with settings of
    its own (no news toast over a screenshot); yields its base URL and stops it (and its kernels) after."""
    (folder / "notebooks").mkdir(parents=True, exist_ok=True)
    shutil.copy(notebook, folder / "notebooks" / notebook.name)
    settings = folder / "lab-settings"
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True, exist_ok=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false"}))
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(folder / "lab-workspaces"),
           "JUPYTER_RUNTIME_DIR": str(folder / "runtime"), "PYTHONUNBUFFERED": "1"}
    port = _free_port()
    log_path = folder / "jupyter.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         "--IdentityProvider.token=", "--ServerApp.password=", "--allow-root", "--ServerApp.port_retries=0",
         "--LabApp.expose_app_in_browser=True", f"--notebook-dir={folder}"],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while _get(f"{base}/api/status") != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError(f"JupyterLab did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()  # SIGTERM: the server shuts its kernels down (sessions of their own), then exits
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def open_lab(page: Any, base: str, notebook: Path = NOTEBOOK, *, sidebar: bool = False) -> None:
    """Open the notebook, collapse the file browser (unless ``sidebar``), run every cell and wait until the Lab
    shows its graph and the recording the notebook loads without a GPU (its plan table)."""
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/lab/tree/notebooks/{notebook.name}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext")
    page.wait_for_function("""() => {
        const ctx = window.jupyterapp.shell.currentWidget.sessionContext;
        return ctx.session && ctx.session.kernel && ctx.session.kernel.status === 'idle';
    }""")
    page.evaluate("""(open) => { if (window.jupyterapp.shell.leftCollapsed === open)
                               window.jupyterapp.commands.execute('application:toggle-left-area'); }""", sidebar)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".cl-lab").wait_for()
    page.locator(".cl-lab .cl-graph svg").first.wait_for()
    page.wait_for_function("() => { const t = document.querySelector('.cl-lab .cl-plans-table');"
                           " return t && t.querySelector('tbody tr'); }")
    page.wait_for_function("""() => {
        const ctx = window.jupyterapp.shell.currentWidget.sessionContext;
        return ctx.session.kernel.status === 'idle';
    }""")


def wait_shown(page: Any, name: str) -> None:
    """Wait until the panel shows recording ``name``: the status line names it, Load is enabled again."""
    page.wait_for_function("""(name) => {
        const q = (s) => document.querySelector('.cl-lab ' + s);
        const status = q('.cl-status'), load = q('button.cl-load'), info = q('.cl-result-info');
        return status && status.textContent.includes('Showing') && status.textContent.includes(name)
            && info && info.textContent.includes(name) && load && !load.disabled;
    }""", arg=name)


def show_view(page: Any, title: str) -> None:
    """Click a tab of the Lab and wait for the figures in it to be drawn."""
    page.locator(".cl-lab .lm-TabBar-tab", has_text=title).first.click()
    page.wait_for_timeout(300)
    page.wait_for_function("""() => {
        const panel = [...document.querySelectorAll('.cl-lab .widget-tab-contents > *')]
            .find(e => e.offsetParent !== null);
        if (!panel) return false;
        const figs = panel.querySelectorAll('.cl-figure');
        return [...figs].every(f => f.querySelector('.js-plotly-plot .main-svg'));
    }""")
    page.mouse.move(2, 2)  # no hover label or mode bar over a screenshot


#: What a view's boxes are measured from: figures, tables, the graph's scroll box, the code, the sweep controls,
#: the Anatomy view's sentences.
BOX_SELECTORS = (".js-plotly-plot", ".cl-table-wrap", "table.cl-plan-table:not(.cl-plan-table-full)",
                 ".cl-graph-scroll", ".cl-code-text", ".cl-sweep .widget-hbox", ".cl-zoom-bar", ".cl-anatomy-note")


def boxes_outside(page: Any, selectors: tuple[str, ...] | None = None) -> list[str]:
    """The visible figures, tables and controls (``selectors``, default :data:`BOX_SELECTORS`) of the view shown
    that reach outside the right pane (empty: all fit), each as 'selector: left..right outside pane left..right'."""
    return page.evaluate("""(selectors) => {
        const pane = document.querySelector('.cl-lab .cl-right').getBoundingClientRect();
        const panel = [...document.querySelectorAll('.cl-lab .widget-tab-contents > *')]
            .find(e => e.offsetParent !== null);
        const out = [];
        for (const sel of selectors) {
            for (const el of panel.querySelectorAll(sel)) {
                if (el.offsetParent === null || el.closest('details:not([open])')) continue;
                const b = el.getBoundingClientRect();
                if (b.width === 0) continue;
                if (b.left < pane.left - 1 || b.right > pane.right + 1)
                    out.push(`${sel}: ${Math.round(b.left)}..${Math.round(b.right)} outside pane `
                             + `${Math.round(pane.left)}..${Math.round(pane.right)}`);
            }
        }
        return out;
    }""", list(selectors or BOX_SELECTORS))


def cut_tab_titles(page: Any) -> list[str]:
    """Tab titles shown cut short (their text wider than their label)."""
    return page.evaluate("""() => [...document.querySelectorAll('.cl-lab .lm-TabBar-tabLabel')]
        .filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent)""")


# ------------------------------------------------------------------------------------------------ fixtures
# A JupyterLab server per test module and a fresh Chromium per test; browser test modules import them by name.

@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
    if chromium() is None:
        pytest.skip("headless Chromium not found (/usr/bin/chromium or `chromium` on PATH): apt-get install chromium")
    with jupyterlab(tmp_path_factory.mktemp("lab")) as base:
        yield base


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
