"""In a real browser (JupyterLab, Chromium through Playwright): clicks that come while a Load is under way are never
lost. A recording is loaded and, before it shows, another operation and another tab are clicked: the load shows,
then the operation's form and graph, then the tab's view (the Sweep view built on its first visit, or a result
view drawn). Issue 24: a load that drew its hidden views in the kernel's idle time lost such clicks.
"""

from __future__ import annotations

from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import open_lab, show_view

import cudnn_lab as cl
from cudnn_lab.ui.recordings import recordings_of

pytestmark = pytest.mark.browser
#: How long a click may take to answer here (a busy 2-core machine; the timings are lab_load.py's).
ANSWER_MS = 30_000


def _answered(page: Any, recording: str, op: str, tab: str) -> None:
    """Wait until the load of ``recording`` shows (its answer under Load, the banner naming it, stale for the new
    operation), operation ``op``'s form and graph show, and ``tab`` is the current tab with its figures drawn (a tab
    clicked here holds at least one)."""
    page.wait_for_function("""([name, op, tab]) => {
        const q = (s) => document.querySelector('.cl-lab ' + s);
        const answer = q('.cl-load-answer'), info = q('.cl-result-info'), form = q(`.cl-${op}-controls`);
        const current = q('.lm-TabBar-tab.lm-mod-current');
        const panel = [...document.querySelectorAll('.cl-lab .widget-tab-contents > *')]
            .find(e => e.offsetParent !== null);
        return answer && answer.textContent.includes(name) && info && info.textContent.includes(name)
            && info.querySelector('.cl-stale') && form && form.offsetParent !== null
            && current && current.textContent.trim() === tab && panel
            && panel.querySelector('.cl-figure')  // each tab clicked here holds one (Sweep's once it is built)
            && [...panel.querySelectorAll('.cl-figure')].every(f => f.querySelector('.js-plotly-plot .main-svg'));
    }""", arg=[recording, op, tab], timeout=ANSWER_MS)


def _load_then_click(page: Any, recording: str, convs: list[str], op: str, tab: str) -> None:
    """Choose ``recording`` (a conv one), click Load and at once operation ``op`` and tab ``tab``."""
    page.locator(".cl-lab .cl-recorded select").select_option(index=convs.index(recording))
    page.locator(".cl-lab button.cl-load").click()
    page.locator(".cl-lab .cl-op .widget-toggle-button", has_text=op).first.click()
    page.locator(".cl-lab .lm-TabBar-tab", has_text=tab).first.click()
    _answered(page, recording, op, tab)


def _clicks_during_a_load(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    open_lab(page, server, sidebar=True)
    show_view(page, "Latency")
    convs = list(recordings_of(cl.recorded_datasets(kind="run"), "conv")["name"])
    shown = page.locator(".cl-lab .cl-result-info").inner_text()
    first, second = [n for n in convs if n not in shown][:2]

    _load_then_click(page, first, convs, "matmul", "Sweep")  # the Sweep view is built on this first visit
    assert page.locator(".cl-lab .cl-sweep").first.is_visible()
    assert ">A<" in page.locator(".cl-lab .cl-graph").inner_html()  # matmul's graph

    page.locator(".cl-lab .cl-op .widget-toggle-button", has_text="conv").first.click()  # back to conv's list
    page.wait_for_function("() => [...document.querySelectorAll('.cl-lab .cl-recorded option')]"
                           ".some(o => o.textContent.includes('conv'))")
    show_view(page, "Latency")
    _load_then_click(page, second, convs, "matmul", "Numerics")
    assert page.locator(".cl-lab .cl-numerics .cl-figure .main-svg").count() >= 2  # errors and histogram drawn
    assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html()
    page.close()


def test_clicks_during_a_load_are_answered(server: str, browser: Any) -> None:
    # Once more on a timeout: on the loaded 2-core CI machine one full-suite run of two (2026-11-29) timed out here
    # while the test passed alone (17 s); a click lost twice in a row still fails. Issue 39 tracks the cause.
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        _clicks_during_a_load(server, browser)
    except PlaywrightTimeout:
        _clicks_during_a_load(server, browser)

