"""The model lines toggle in a real browser (JupyterLab, Chromium through Playwright; issue 35): the notebook loads
the fused conv's H100 recording, a click on "model lines" in the Latency view adds the model traces to the figure
drawn there and says what they are beside the toggle, the Roofline view shows them too, the Latency figure keeps its
height when its tab is shown again, and a second click takes them away; the toggle row lies inside the right pane
at 1280x800 with the file browser open and at 1600x1000.

Screenshots: with CUDNN_LAB_SCREENSHOT=1 to docs/lab_model_lines_1280.png (Roofline, file browser open) and
docs/lab_model_lines_1600.png (Latency), else to a temporary folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import ROOT, boxes_outside, open_lab, show_view

pytestmark = pytest.mark.browser

#: (width, height, file browser open, the view of the screenshot)
LAYOUTS = [(1280, 800, True, "Roofline"), (1600, 1000, False, "Latency")]
SHOTS = ROOT / "docs" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1" else Path(tempfile.gettempdir())
#: The legend entries of the plotly figure in the view shown.
_LEGEND = """() => {
    const panel = [...document.querySelectorAll('.cl-lab .widget-tab-contents > *')].find(e => e.offsetParent);
    return [...panel.querySelectorAll('.js-plotly-plot .legendtext')].map(t => t.textContent);
}"""


def _click_toggle(page: Any) -> None:
    page.locator(".cl-lab .widget-tab-contents > *:visible .cl-option-models input").first.click()


def _wait_legend(page: Any, present: bool) -> list[str]:
    page.wait_for_function(f"""() => {{
        const panel = [...document.querySelectorAll('.cl-lab .widget-tab-contents > *')].find(e => e.offsetParent);
        const names = [...panel.querySelectorAll('.js-plotly-plot .legendtext')].map(t => t.textContent);
        return names.length > 0 && names.some(n => n.startsWith('transfer model')) === {str(present).lower()};
    }}""")
    return page.evaluate(_LEGEND)


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{w}x{h}" + ("-sidebar" if s else "") for w, h, s, _ in LAYOUTS])
def test_the_toggle_draws_and_removes_the_model_lines(server: str, browser: Any,
                                                      layout: tuple[int, int, bool, str]) -> None:
    width, height, sidebar, shot_view = layout
    page = browser.new_page(viewport={"width": width, "height": height})
    open_lab(page, server, sidebar=sidebar)
    show_view(page, "Latency")
    toggle = page.locator(".cl-lab .cl-latency .cl-option-models")
    assert toggle.inner_text().strip() == "model lines"
    plain = _wait_legend(page, present=False)

    _click_toggle(page)
    drawn = _wait_legend(page, present=True)
    added = [n for n in drawn if n not in plain]
    assert added and all("%" in n for n in added)  # each line named with its validation error
    note = page.locator(".cl-lab .cl-latency .cl-option-note")
    note.get_by_text("Model lines drawn").wait_for()
    assert "validation error" in note.inner_text()
    assert boxes_outside(page, (".cl-figure-options", ".cl-option-note", ".js-plotly-plot")) == []

    show_view(page, "Roofline")
    roof = _wait_legend(page, present=True)
    assert any(n.startswith("datasheet roofline") for n in roof)
    assert page.locator(".cl-lab .cl-roofline .cl-option-models input").is_checked()
    assert boxes_outside(page, (".cl-figure-options", ".cl-option-note", ".js-plotly-plot")) == []
    assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html()

    show_view(page, "Latency")  # drawn while shown, then hidden: still its full height when shown again
    page.wait_for_timeout(300)
    assert page.evaluate("() => document.querySelector('.cl-lab .cl-figure-latency').getBoundingClientRect()"
                         ".height") > 300
    show_view(page, shot_view)
    page.locator(".cl-lab .cl-right").first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.mouse.move(2, 2)
    page.wait_for_timeout(400)
    path = SHOTS / f"lab_model_lines_{width}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000

    _click_toggle(page)  # off again: the figure shown loses them
    assert not [n for n in _wait_legend(page, present=False) if n.startswith(("transfer model", "datasheet"))]
    page.close()
