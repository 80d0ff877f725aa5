"""The What-if view in a real browser: JupyterLab runs notebooks/09_lab.ipynb (it loads the fused conv's H100
recording), the What-if tab is shown at 1280x800 with the file browser open (the views wrap below the controls),
at 1600x1000 and at 1280x800 without it (the views beside the controls, the tab bar at its narrowest); its label,
tables and controls lie inside the right pane, and the tab titles are whole.

Screenshots: with CUDNN_LAB_SCREENSHOT=1 to docs/lab_whatif_1280_sidebar.png and docs/lab_whatif_1600.png, else to a
temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import ROOT, boxes_outside, cut_tab_titles, open_lab

pytestmark = pytest.mark.browser

#: (width, height, file browser open); the first two are the screenshots', the third the narrowest side by side.
LAYOUTS = [(1280, 800, True), (1600, 1000, False), (1280, 800, False)]
SHOTS = ROOT / "docs" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1" else Path(tempfile.gettempdir())
#: The view's parts measured against the pane, beside the harness's own selectors.
WHATIF_SELECTORS = (".cl-whatif-label", ".cl-whatif-targets", ".cl-whatif-refused", ".cl-whatif-version",
                    ".cl-whatif-why-target", ".cl-whatif-drift-target",
                    ".cl-whatif-wrap")  # tables scroll in their wrap




@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{w}x{h}" + ("-sidebar" if s else "") for w, h, s in LAYOUTS])
def test_the_what_if_view_fits_its_pane(server: str, browser: Any, layout: tuple[int, int, bool]) -> None:
    width, height, sidebar = layout
    page = browser.new_page(viewport={"width": width, "height": height})
    open_lab(page, server, sidebar=sidebar)
    page.locator(".cl-lab .lm-TabBar-tab", has_text="What-if").first.click()
    page.wait_for_function("() => { const t = document.querySelector('.cl-lab .cl-whatif-drift');"
                           " return t && t.innerHTML.includes('cl-drift-summary'); }")
    page.wait_for_timeout(400)
    page.mouse.move(2, 2)
    view = page.locator(".cl-lab .cl-whatif")
    # the heuristics' answer label (the forecast part below it has a label of its own)
    assert "not a measurement" in view.locator(".cl-whatif-label:not(.cl-forecast-label)").inner_text()
    assert "sm80 (A100-class, synthetic)" in view.locator(".cl-whatif-compare").inner_text()
    assert "sm100" in view.locator(".cl-whatif-refused:not(.cl-forecast-why)").inner_text()
    assert cut_tab_titles(page) == []
    assert boxes_outside(page) == []
    assert boxes_outside(page, WHATIF_SELECTORS) == []
    assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html()
    if (width, height, sidebar) not in LAYOUTS[:2]:
        page.close()
        return
    page.locator(".cl-lab .cl-right" if sidebar else ".cl-lab").first.evaluate(
        "el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(400)
    path = SHOTS / f"lab_whatif_{width}{'_sidebar' if sidebar else ''}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    page.close()
