"""In a real browser, at 1280x800 and 1600x1000: JupyterLab opens notebooks/09_lab.ipynb and runs it; every view's
figures, tables and controls lie inside the right pane, tab titles are whole, the recordings follow the operation,
and the Sweep tab compares two recorded GPUs. Drives Debian's
Chromium through Playwright.

Screenshots: with CUDNN_LAB_SCREENSHOT=1 to docs/ (lab_1280.png, lab_1600.png, and lab_<view>.png per view at
1600x1000; docs/lab.png, the README's, is lab_1600.png), else to a temporary folder so a run leaves the tree clean.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import ROOT, boxes_outside, cut_tab_titles, open_lab, show_view, wait_shown

from cudnn_lab.ui.recordings import recordings_of

pytestmark = pytest.mark.browser

SIZES = [(1280, 800), (1600, 1000)]
#: (width, height, file browser open): with it open at 1280 the controls column is compact, the views beside it.
LAYOUTS = [(*SIZES[0], False), (*SIZES[1], False), (*SIZES[0], True)]
VIEWS = ("Graph", "Plans", "Latency", "Heuristics", "Numerics", "Roofline", "Anatomy", "Sweep", "Code", "Log")
SHOTS = ROOT / "docs" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1" else Path(tempfile.gettempdir())




def _shot(page: Any, name: str, top: str = ".cl-lab") -> Path:
    """A screenshot of the Lab with element ``top`` scrolled to the top of the notebook (by default the Lab: the
    views are in the viewport's first screen)."""
    page.locator(top).first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(400)
    path = SHOTS / name
    path.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(path))
    return path


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{w}x{h}" + ("-sidebar" if s else "") for w, h, s in LAYOUTS])
def test_every_view_fits_its_pane(server: str, browser: Any, layout: tuple[int, int, bool]) -> None:
    import cudnn_lab as cl

    width, height, sidebar = layout
    page = browser.new_page(viewport={"width": width, "height": height})
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    open_lab(page, server, sidebar=sidebar)
    assert "bias" in page.locator(".cl-lab .cl-graph").inner_text()
    assert "RECORDED" in page.locator(".cl-lab .cl-result-info").inner_text()
    assert cut_tab_titles(page) == []
    right = page.locator(".cl-lab .cl-right").bounding_box()
    left = page.locator(".cl-lab .cl-left").bounding_box()
    # The views beside the controls, never below them: at 1280 with the file browser open (JupyterLab's default)
    # the controls column is compact and the views take the rest.
    assert right["width"] >= (440 if sidebar else 560)
    assert abs(right["y"] - left["y"]) < 2 and right["x"] >= left["x"] + left["width"] - 1

    # The recordings follow the operation: the matmul recording is offered on matmul, and Load keeps matmul.
    page.locator(".cl-lab .cl-op .widget-toggle-button", has_text="matmul").click()
    page.wait_for_function("() => [...document.querySelectorAll('.cl-lab .cl-recorded option')]"
                           ".every(o => o.textContent.startsWith('matmul'))")
    runs = list(cl.recorded_datasets(kind="run")["name"])
    page.locator(".cl-lab button.cl-load").click()
    wait_shown(page, next(n for n in runs if "matmul" in n))  # the first matmul recording, preselected
    assert ">A<" in page.locator(".cl-lab .cl-graph").inner_html()
    assert "matmul" in page.locator(".cl-lab .cl-op .mod-active, .cl-lab .cl-op .active").first.inner_text()

    # Back to the notebook's conv recording for the screenshots.
    page.locator(".cl-lab .cl-op .widget-toggle-button", has_text="conv").first.click()
    convs = list(recordings_of(cl.recorded_datasets(kind="run"), "conv")["name"])  # the list's conv recordings
    conv = next(n for n in convs if n.endswith("conv_nhwc_fp16_bias_relu"))
    page.locator(".cl-lab .cl-recorded select").select_option(index=convs.index(conv))
    page.locator(".cl-lab button.cl-load").click()
    wait_shown(page, conv)

    sweeps = list(cl.recorded_datasets(kind="sweep")["name"])
    for view in VIEWS:
        show_view(page, view)
        if view == "Plans":
            assert "median (µs)" in page.locator(".cl-lab .cl-plans-table").inner_text()
        if view == "Anatomy":  # the fused conv's recording has kernels but no engine-space sample: it says so
            assert "explore=200" in page.locator(".cl-lab .cl-engines-note").inner_text()
            assert "sm90_xmma" in page.locator(".cl-lab .cl-kernels-view").inner_text()
        if view == "Sweep" and len(sweeps) >= 2:
            assert page.locator(".cl-lab button.cl-sweep-run").is_disabled()
            page.locator(".cl-lab .cl-compare-a select").select_option(value=sweeps[0])
            page.locator(".cl-lab .cl-compare-b select").select_option(value=sweeps[1])
            page.locator(".cl-lab button.cl-compare").click()
            page.wait_for_function("""() => {
                const t = document.querySelector('.cl-lab .cl-figure-sweep .gtitle');
                return t && t.textContent.includes('Speedup of b over a');
            }""")
            show_view(page, view)
        assert boxes_outside(page) == [], view
        assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html(), view
        if sidebar and view == "Latency":
            _shot(page, "lab_1280_sidebar.png", ".cl-lab .cl-right")
        if width == 1600:  # the Sweep view's figure is under its controls: shown from the figure options on
            _shot(page, f"lab_{view.lower()}.png", ".cl-lab .cl-sweep .cl-section >> nth=2" if view == "Sweep"
                  else ".cl-lab")
        if view == "Latency" and not sidebar:
            path = _shot(page, f"lab_{width}.png")
            assert path.stat().st_size > 10_000
            if width == 1600 and SHOTS == ROOT / "docs":
                shutil.copy(path, ROOT / "docs" / "lab.png")  # the README's screenshot
    # The plain conv's recording carries a sampled engine space: its figures fit the pane too.
    page.locator(".cl-lab .cl-recorded select").select_option(index=convs.index("h100_conv_nhwc_fp16"))
    page.locator(".cl-lab button.cl-load").click()
    wait_shown(page, "h100_conv_nhwc_fp16")
    show_view(page, "Anatomy")
    page.wait_for_function("() => document.querySelectorAll('.cl-lab .cl-anatomy .scatterlayer .point').length > 20")
    assert "heuristics' best" in page.locator(".cl-lab .cl-engines-note").inner_text()
    assert boxes_outside(page) == [], "Anatomy with an engine-space sample"
    _shot(page, f"lab_anatomy_space_{width}" + ("_sidebar" if sidebar else "") + ".png", ".cl-lab .cl-right")
    assert not [m for m in console if "No such comm" in m]  # no widget comm made and closed per redraw
    page.close()


# The large graph's wheel zoom, pan, fit and node details: tests/ui/test_browser_tables.py.
