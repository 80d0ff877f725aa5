"""In Chromium, with JupyterLab, at 1280x800 with the file browser open and at 1600x1000: the Sweep view loads the
attention sweep recorded with PyTorch's backends and its 'who wins' chart draws which backend wins each shape (issue
38); the figure and the controls stay inside the pane.

Screenshots: with CUDNN_LAB_SCREENSHOT=1 to docs/ (lab_backend_map_1280_sidebar.png, lab_backend_map_1600.png), else
to a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import ROOT, boxes_outside, open_lab, show_view

pytestmark = pytest.mark.browser

SHOTS = ROOT / "docs" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1" else Path(tempfile.gettempdir())


@pytest.mark.parametrize("width, height, sidebar", [(1280, 800, True), (1600, 1000, False)])
def test_who_wins_shows_the_recorded_backend_map(server, browser, width, height, sidebar) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_lab(page, server, sidebar=sidebar)
        show_view(page, "Sweep")
        select = page.locator(".cl-lab .cl-sweep-recorded select")
        page.wait_for_function("() => [...document.querySelectorAll('.cl-lab .cl-sweep-recorded select option')]"
                               ".some(o => o.textContent.includes('(h200_attention_backends)'))")
        label = next(o for o in select.locator("option").all_text_contents() if "(h200_attention_backends)" in o)
        select.select_option(label=label)
        page.locator(".cl-lab button.cl-sweep-load").click()
        page.wait_for_function("() => { const t = document.querySelector('.cl-lab .cl-figure-sweep .gtitle');"
                               " return t && t.textContent.includes('Latency along'); }")
        page.locator(".cl-lab .cl-sweep-options button", has_text="who wins").click()
        page.wait_for_function("() => { const t = document.querySelector('.cl-lab .cl-figure-sweep .gtitle');"
                               " return t && t.textContent.includes('Which backend wins where'); }")
        title = page.locator(".cl-lab .cl-figure-sweep .gtitle").first.text_content() or ""
        assert "H200" in title and "cudnn 72" in title.replace("\u00a0", " ")
        assert page.locator(".cl-lab .cl-figure-sweep .legendtext", has_text="cudnn wins").count() == 1
        assert boxes_outside(page) == []
        page.locator(".cl-lab .cl-figure-sweep").first.scroll_into_view_if_needed()
        page.mouse.move(2, 2)
        page.wait_for_timeout(300)
        name = f"lab_backend_map_{width}{'_sidebar' if sidebar else ''}.png"
        page.screenshot(path=str(SHOTS / name))
    finally:
        page.close()
