"""In Chromium, with JupyterLab, at 1280x800 with the file browser open and at 1600x1000: the Lab's real-model
preset picker lies inside the controls column, picking DeepSeek-V3 MLA prefill, Phi-3's head size 96 and Wan2.1's
3-D convolution fills the form (switching family) and redraws the graph, the line under the picker names the
preset and its source, and an edit turns it into "edited from ...". Nothing in the form or the graph view reaches
outside its column or pane.

Screenshots: with CUDNN_LAB_SCREENSHOT=1 to docs/ (lab_presets_<size>.png with the list open, lab_mla_<size>.png,
lab_phi3_<size>.png, lab_conv3d_<size>.png; <size> is 1600 or 1280_sidebar), else to a temporary folder. At 1280
with the file browser open, attention's drawing fitted to the pane is about half size: its shots show it at 100%,
panned to its middle column. A native
<select>'s open list is drawn by the browser outside the page (a screenshot never shows it), so the "list open"
shot shows the same list unfolded in the page (the select's ``size`` set to its options' count).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import ROOT, boxes_outside, open_lab, show_view

import cudnn_lab as cl
from cudnn_lab.specs.presets import preset_info
from cudnn_lab.ui.presets import CHOOSE_TEXT, preset_label

pytestmark = pytest.mark.browser

#: (width, height, file browser open)
LAYOUTS = [(1280, 800, True), (1600, 1000, False)]
SHOTS = ROOT / "docs" if os.environ.get("CUDNN_LAB_SCREENSHOT") == "1" else Path(tempfile.gettempdir())
#: The presets shown, the graph text each must draw, and the screenshot's name.
SHOWN = [("DeepSeek-V3 MLA prefill", "192", "mla"), ("Phi-3-mini attention (d 96)", "96", "phi3"),
         ("Wan2.1 video VAE conv3d", "384", "conv3d")]


def _shot(page: Any, name: str) -> Path:
    page.locator(".cl-lab").first.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.mouse.move(2, 2)
    page.wait_for_timeout(400)
    path = SHOTS / name
    page.screenshot(path=str(path))
    return path


def _outside_left(page: Any) -> list[str]:
    """The preset row's parts and the form's fields that reach past the controls column's right edge."""
    return page.evaluate("""() => {
        const left = document.querySelector('.cl-lab .cl-left').getBoundingClientRect();
        const out = [];
        const parts = '.cl-lab .cl-preset, .cl-lab .cl-preset *, .cl-lab .cl-preset-note *, '
            + '.cl-lab .cl-controls .widget-hbox';
        for (const el of document.querySelectorAll(parts)) {
            if (el.offsetParent === null) continue;
            const b = el.getBoundingClientRect();
            if (b.width > 0 && b.right > left.right + 1) out.push(`${el.className}: right ${Math.round(b.right)}`
                                                                  + ` > ${Math.round(left.right)}`);
        }
        return out;
    }""")


def _readable(page: Any) -> None:
    """The drawing at dot's natural size (100%), dragged so that its middle column is in the box."""
    page.locator(".cl-lab .cl-zoom-100").click()
    box = page.locator(".cl-lab .cl-gw-box").bounding_box()
    svg = page.locator(".cl-lab .cl-gw-box svg").first.bounding_box()
    shift = max(0.0, (svg["width"] - box["width"]) / 2)
    x, y = box["x"] + box["width"] - 20, box["y"] + 40
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - shift, y, steps=8)
    page.mouse.up()


def _wait_note(page: Any, text: str) -> None:
    page.wait_for_function("(t) => { const n = document.querySelector('.cl-lab .cl-preset-note');"
                           " return n && n.textContent.includes(t); }", arg=text)


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{w}x{h}" + ("-sidebar" if s else "") for w, h, s in LAYOUTS])
def test_presets_fill_the_form_and_the_graph(server: str, browser: Any,  # noqa: F811 - the fixtures above
                                             layout: tuple[int, int, bool]) -> None:
    width, height, sidebar = layout
    size = f"{width}_sidebar" if sidebar else f"{width}"
    page = browser.new_page(viewport={"width": width, "height": height})
    open_lab(page, server, sidebar=sidebar)
    select = page.locator(".cl-lab .cl-preset select")
    labels = [t.replace("\xa0", " ") for t in select.locator("option").all_inner_texts()]
    assert labels[1:] == [preset_label(n) for n in cl.presets()]
    assert _outside_left(page) == []

    # The list unfolded in the page (see the module's note), then folded again.
    unfold = "(s) => { s.size = s.options.length; s.style.height = s.closest('.widget-dropdown').style.height = '{}'; }"
    select.evaluate(unfold.replace("{}", "auto"))
    _shot(page, f"lab_presets_{size}.png")
    select.evaluate("(s) => { s.size = 0; }")
    select.evaluate(unfold.replace("{}", "").replace("s.size = s.options.length;", ""))

    for name, drawn, short in SHOWN:
        select.select_option(label=preset_label(name))
        _wait_note(page, f"preset: {name}")
        spec = cl.preset(name)
        page.wait_for_function("(t) => { const a = document.querySelector('.cl-lab .cl-op .mod-active');"
                               " return a && a.textContent.trim() === t; }", arg=type(spec).title)
        page.wait_for_function("(t) => { const g = document.querySelector('.cl-lab .cl-graph');"
                               " return g && g.textContent.includes(t); }", arg=drawn)
        show_view(page, "Graph")
        assert preset_info(name).source.split()[0] in page.locator(".cl-lab .cl-preset-note").inner_text()
        values = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll(
            '.cl-lab .cl-controls [class*="cl-field-"]')].filter(e => e.offsetParent !== null).map(e => [
            [...e.classList].find(c => c.startsWith('cl-field-')).slice(9),
            (e.querySelector('input, select') || {}).value]))""")
        if spec.op == "sdpa":
            assert values["head_dim"] == str(spec.head_dim) and values["heads"] == str(spec.heads)
        else:
            assert values["c"] == str(spec.c) and values["d"] == str(spec.d)
        assert _outside_left(page) == [], name
        assert boxes_outside(page) == [], name
        assert "cl-status-error" not in page.locator(".cl-lab .cl-status").inner_html(), name
        if sidebar and spec.op == "sdpa":  # fitted to the narrow pane attention's drawing is about half size:
            _readable(page)                 # shown at dot's size, panned to its middle (K, the op, O)
        _shot(page, f"lab_{short}_{size}.png")

    # An edit, as typed: the line says what the form was picked from.
    field = page.locator(".cl-lab .cl-controls .cl-field-n input")
    field.fill("2")
    field.press("Enter")
    _wait_note(page, "edited from Wan2.1 video VAE conv3d")
    shown = select.evaluate("(s) => s.options[s.selectedIndex].textContent")
    assert shown.replace("\xa0", " ") == CHOOSE_TEXT
    page.close()
