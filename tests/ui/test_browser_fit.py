"""Tables that fit (issue 39), in a real browser (JupyterLab, Chromium through Playwright): at 1280x800 with the file
browser open the Lab's right column is about 468 px; there, and at 1600x1000, every table of the Plans and What-if
views shows its key columns without sideways scrolling (its scroll box as wide as its content); the Plans table
shows every column on demand ("all columns", then it scrolls sideways), and it starts at its top-left corner again
when another recording loads.

Screenshots: with CUDNN_LAB_SCREENSHOT=1 to docs/lab_plans_1280_sidebar.png, docs/lab_plans_1600.png,
docs/lab_whatif_1280_sidebar.png and docs/lab_whatif_1600.png, else to a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import ROOT, open_lab, show_view, wait_shown

import cudnn_lab as cl
from cudnn_lab.plots.tables import KEY_COLUMNS
from cudnn_lab.ui.recordings import recordings_of

pytestmark = pytest.mark.browser

#: (width, height, file browser open): the narrow column users have, and a wide screen.
LAYOUTS = [(1280, 800, True), (1600, 1000, False)]
SHOTS = ROOT / "docs" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1" else Path(tempfile.gettempdir())

#: Each table's scroll box in the view shown: its class, content width and box width (px).
_WIDTHS = """() => {
    const panel = [...document.querySelectorAll('.cl-lab .widget-tab-contents > *')].find(e => e.offsetParent);
    return [...panel.querySelectorAll('.cl-table-wrap')]
        .filter(w => w.offsetParent !== null && !w.closest('details:not([open])') && w.querySelector('table'))
        .map(w => ({cls: w.querySelector('table').className, content: w.scrollWidth, box: w.clientWidth}));
}"""
#: The header cells of a table shown whole inside its scroll box (not hidden, not past its right edge).
_HEADERS_SHOWN = """(selector) => {
    const table = document.querySelector(selector), wrap = table.closest('.cl-table-wrap').getBoundingClientRect();
    return [...table.querySelectorAll('thead th')].filter(th => {
        const b = th.getBoundingClientRect();
        return th.offsetParent !== null && b.width > 0 && b.right <= wrap.right + 1 && b.left >= wrap.left - 1;
    }).map(th => (th.dataset.key || th.textContent).trim());
}"""


def _overflowing(page: Any) -> list[str]:
    return [f"{w['cls']}: {w['content']} px in {w['box']} px" for w in page.evaluate(_WIDTHS)
            if w["content"] > w["box"] + 1]


def _shot(page: Any, name: str, selector: str) -> None:
    page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.mouse.move(2, 2)
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / name))
    assert (SHOTS / name).stat().st_size > 10_000


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{w}x{h}" + ("-sidebar" if s else "") for w, h, s in LAYOUTS])
def test_every_table_shows_its_key_columns_without_scrolling_sideways(server: str, browser: Any,
                                                                       layout: tuple[int, int, bool]) -> None:
    width, height, sidebar = layout
    tag = f"{width}_sidebar" if sidebar else f"{width}"
    page = browser.new_page(viewport={"width": width, "height": height})
    open_lab(page, server, sidebar=sidebar)
    if sidebar:
        pane = page.evaluate("() => document.querySelector('.cl-lab .cl-right').getBoundingClientRect().width")
        assert pane < 520  # the narrow column this test is about

    show_view(page, "Plans")
    assert _overflowing(page) == []
    shown = page.evaluate(_HEADERS_SHOWN, ".cl-lab .cl-pt-table")
    assert [c for c in KEY_COLUMNS if c not in shown] == []
    _shot(page, f"lab_plans_{tag}.png", ".cl-lab .cl-plans-widget")
    wide = page.locator(".cl-lab .cl-pt-wide")
    wide.click()  # every column on demand
    page.wait_for_function("() => document.querySelector(\".cl-lab .cl-pt-table th[data-key='knobs']\")"
                           ".offsetParent !== null")
    wide.click()
    page.wait_for_function("() => document.querySelector(\".cl-lab .cl-pt-table th[data-key='knobs']\")"
                           ".offsetParent === null")

    show_view(page, "What-if")
    page.wait_for_function("() => { const t = document.querySelector('.cl-lab .cl-whatif-drift');"
                           " return t && t.innerHTML.includes('cl-drift-summary'); }")
    page.wait_for_timeout(400)
    assert _overflowing(page) == []
    targets = page.evaluate(_HEADERS_SHOWN, ".cl-lab .cl-whatif-compare table")
    for target in ("h200", "sm80", "sm89", "sm120"):  # the notebook's targets that got plans, each visible
        assert any(t.startswith(target) for t in targets), (target, targets)
    _shot(page, f"lab_whatif_{tag}.png", ".cl-lab .cl-right" if sidebar else ".cl-lab")
    page.close()


def test_the_plans_table_starts_at_its_top_for_another_recording(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    open_lab(page, server, sidebar=True)
    show_view(page, "Plans")
    page.locator(".cl-lab .cl-pt-wide").click()  # every column: the table scrolls sideways too
    wrap = page.locator(".cl-lab .cl-pt-wrap")
    wrap.evaluate("w => { w.scrollTop = 200; w.scrollLeft = 150; }")
    assert wrap.evaluate("w => [w.scrollTop, w.scrollLeft]") == [200, 150]
    convs = list(recordings_of(cl.recorded_datasets(kind="run"), "conv")["name"])
    shown = page.locator(".cl-lab .cl-result-info").inner_text()
    other = next(n for n in convs if n not in shown)
    page.locator(".cl-lab .cl-recorded select").select_option(index=convs.index(other))
    page.locator(".cl-lab button.cl-load").click()
    wait_shown(page, other)
    page.wait_for_function("() => { const w = document.querySelector('.cl-lab .cl-pt-wrap');"
                           " return w.scrollTop === 0 && w.scrollLeft === 0; }", timeout=10_000)
    page.close()
