"""In a real browser (JupyterLab, Chromium through Playwright): the Plans table sorts by a click on a header and
filters, a row click selects its plan; the Graph view zooms with the wheel (its SVG transform changes), pans, shows
a node's details and fits the attention-backward graph inside its box.

Screenshots to a temporary folder: lab_plans_sorted.png, lab_graph_fit_bwd.png, lab_graph_details.png.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import boxes_outside, open_lab, show_view, wait_shown

import cudnn_lab as cl
from cudnn_lab.ui.recordings import recordings_of

pytestmark = pytest.mark.browser
SHOTS = Path(tempfile.gettempdir())


def _numbers(page: Any, column: str) -> list[float | None]:
    return page.evaluate("""(col) => {
        const t = document.querySelector('.cl-lab .cl-pt-table');
        const i = [...t.querySelectorAll('thead th')].findIndex(th => th.dataset.key === col);
        return [...t.querySelectorAll('tbody tr')].map(tr => {
            const v = parseFloat(tr.children[i].textContent); return isNaN(v) ? null : v; });
    }""", column)


def test_the_plans_table_sorts_filters_and_selects(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    open_lab(page, server)
    convs = list(recordings_of(cl.recorded_datasets(kind="run"), "conv")["name"])
    page.locator(".cl-lab .cl-recorded select").select_option(index=convs.index("h100_conv_nhwc_fp16"))
    page.locator(".cl-lab button.cl-load").click()
    wait_shown(page, "h100_conv_nhwc_fp16")
    show_view(page, "Plans")
    rows = page.locator(".cl-lab .cl-pt-table tbody tr")
    page.wait_for_function("() => document.querySelectorAll('.cl-lab .cl-pt-table tbody tr').length === 244")
    assert page.locator(".cl-lab .cl-pt-table .cl-pt-badge.cl-pt-pick").count() == 1
    assert page.locator(".cl-lab .cl-pt-table .cl-pt-badge.cl-pt-best").count() == 1
    header = page.locator(".cl-lab .cl-pt-table th[data-key='median (µs)']")
    header.click()
    page.wait_for_function("() => document.querySelector(\".cl-lab .cl-pt-table th[data-key='median (µs)']\")"
                           ".textContent.includes('▲')")
    times = [t for t in _numbers(page, "median (µs)") if t is not None]
    assert len(times) > 20 and times == sorted(times)
    assert "cl-pt-row-best" in (rows.first.get_attribute("class") or "")  # the fastest passing plan on top
    header.click()  # again: reversed
    page.wait_for_function("() => document.querySelector(\".cl-lab .cl-pt-table th[data-key='median (µs)']\")"
                           ".textContent.includes('▼')")
    times = [t for t in _numbers(page, "median (µs)") if t is not None]
    assert times == sorted(times, reverse=True)
    page.locator(".cl-lab .cl-pt-filter").fill("RUNTIME_COMPILATION")
    page.wait_for_function("() => document.querySelectorAll('.cl-lab .cl-pt-table tbody tr').length === 3")
    assert "3 of 244" in page.locator(".cl-lab .cl-pt-count").inner_text()
    plan = rows.nth(1).get_attribute("data-plan")
    rows.nth(1).click()  # the Lab selects it: the dropdown follows
    page.wait_for_function("(p) => document.querySelector('.cl-lab .cl-plans select').value === p", arg=plan)
    assert "cl-selected" in (rows.nth(1).get_attribute("class") or "")
    with page.expect_download() as download:
        page.locator(".cl-lab .cl-pt-csv").click()
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    assert text.count("\n") == 4 and plan in text  # header and the 3 rows shown
    assert boxes_outside(page, (".cl-pt-wrap",)) == []
    page.locator(".cl-lab .cl-pt-filter").fill("")
    page.locator(".cl-lab .cl-pt-table").evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(SHOTS / "lab_plans_sorted.png"))
    page.close()


def _transform(page: Any) -> str:
    return page.locator(".cl-lab .cl-gw-viewport").get_attribute("transform") or ""


def _scale(transform: str) -> float:
    return float(re.search(r"scale\(([0-9.e-]+)\)", transform).group(1))


def test_the_graph_zooms_with_the_wheel_pans_and_fits_attention_backward(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    open_lab(page, server)
    page.locator(".cl-lab .cl-op .widget-toggle-button", has_text="attention").click()
    direction = page.locator(".cl-lab .cl-sdpa-controls .cl-field-direction")
    direction.first.wait_for()
    if direction.locator("select").count():
        direction.locator("select").select_option(value="bwd")
    else:
        direction.locator(".widget-toggle-button", has_text="bwd").click()
    page.wait_for_function("() => document.querySelector('.cl-lab .cl-graph').textContent.includes('sdpa bwd')")
    show_view(page, "Graph")
    page.locator(".cl-lab .cl-gw-viewport").wait_for()
    page.wait_for_timeout(300)
    box = page.locator(".cl-lab .cl-gw-box").bounding_box()
    drawing = page.locator(".cl-lab .cl-gw-viewport").bounding_box()
    # fit: the whole graph inside its box (the scale goes below the old 75% floor where needed)
    assert drawing["width"] <= box["width"] + 1 and drawing["height"] <= box["height"] + 1
    assert drawing["x"] >= box["x"] - 1 and drawing["y"] >= box["y"] - 1
    assert boxes_outside(page) == []
    fit = _transform(page)
    label = page.locator(".cl-lab .cl-gw-bar .cl-zoom-label").inner_text()
    assert int(label.rstrip("%")) < 75
    page.screenshot(path=str(SHOTS / "lab_graph_fit_bwd.png"))
    page.locator(".cl-lab .cl-gw-box").evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    box = page.locator(".cl-lab .cl-gw-box").bounding_box()  # in the viewport: the wheel reaches it
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 300))
    page.mouse.wheel(0, -400)
    page.wait_for_function("(t) => document.querySelector('.cl-lab .cl-gw-viewport').getAttribute('transform') !== t",
                           arg=fit)
    zoomed = _transform(page)
    assert _scale(zoomed) > _scale(fit) * 1.5
    # drag to pan: the translation moves with the pointer, the scale stays
    page.mouse.move(box["x"] + 100, box["y"] + 100)
    page.mouse.down()
    page.mouse.move(box["x"] + 250, box["y"] + 180, steps=5)
    page.mouse.up()
    panned = _transform(page)
    assert panned != zoomed and _scale(panned) == _scale(zoomed)
    # fit again, then a click on a node shows its details (from inspect())
    page.locator(".cl-lab .cl-gw-bar .cl-zoom-fit").click()
    page.wait_for_function("(t) => document.querySelector('.cl-lab .cl-gw-viewport').getAttribute('transform') === t",
                           arg=fit)
    page.locator(".cl-lab .cl-gw-box g.node").first.click()
    details = page.locator(".cl-lab .cl-gw-details")
    details.wait_for()
    text = details.inner_text()
    assert "dims" in text and "strides" in text and "dtype" in text and "virtual" in text
    page.screenshot(path=str(SHOTS / "lab_graph_details.png"))
    with page.expect_download() as download:
        page.locator(".cl-lab .cl-svg-export").click()
    assert Path(download.value.path()).read_text().lstrip().startswith("<svg")
    page.close()
