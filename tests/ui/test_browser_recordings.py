"""In Chromium, with JupyterLab: the Lab of notebooks/09_lab.ipynb shows every shipped recording (its status line
names it, Load comes back, no error), and a state file that cannot be loaded changes nothing on the panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jupyterlab_session import browser, server  # noqa: F401 - the browser tests' fixtures
from jupyterlab_session import open_lab, wait_shown

import cudnn_lab as cl

pytestmark = pytest.mark.browser


def _kernel(page: Any, code: str) -> None:
    """Run ``code`` in the notebook's kernel, as a cell would (the Lab object is ``lab``)."""
    page.evaluate("""(code) => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel
                        .requestExecute({code}).done""", code)


def _panel(page: Any) -> dict[str, str]:
    """What the panel shows of its problem and result: the result line, the plan table, the form's values."""
    return page.evaluate("""() => {
        const q = (s) => document.querySelector('.cl-lab ' + s);
        const values = [...document.querySelectorAll('.cl-lab .cl-controls input, .cl-lab .cl-controls select')]
            .map(e => e.value).join('|');
        return {info: q('.cl-result-info') ? q('.cl-result-info').textContent : '',
                plans: q('.cl-plans') ? q('.cl-plans').textContent.slice(0, 4000) : '', controls: values};
    }""")


def test_every_shipped_recording_is_shown(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    open_lab(page, server)
    names = list(cl.recorded_datasets("run")["name"])
    assert len(names) >= 60
    failed = []
    for name in names:
        _kernel(page, f"lab.load_recorded({name!r})")
        try:
            wait_shown(page, name)
        except Exception as e:  # noqa: BLE001 - collect every recording that did not show, then fail once
            failed.append(f"{name}: {type(e).__name__}")
            continue
        status = page.locator(".cl-lab .cl-status").inner_html()
        if "cl-status-error" in status:
            failed.append(f"{name}: {page.locator('.cl-lab .cl-status').inner_text()[:200]}")
    assert failed == []
    page.close()


def test_a_state_file_that_cannot_load_changes_nothing(server: str, browser: Any, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    open_lab(page, server)
    before = _panel(page)
    bad = tmp_path / "state.json"
    bad.write_text('{"version": 1, "spec": {"op": "conv", "n": -4}}')
    page.locator(".cl-lab .cl-state-path input").fill(str(bad))
    page.locator(".cl-lab .cl-state-path input").press("Enter")
    page.locator(".cl-lab button.cl-state-load").click()
    page.wait_for_function("() => document.querySelector('.cl-lab .cl-state-answer').textContent.trim() !== ''")
    answer = page.locator(".cl-lab .cl-state-answer").inner_text()
    assert "state.json" in answer and "n" in answer  # next to the button: which file, which field
    page.wait_for_timeout(300)
    assert _panel(page) == before
    page.close()
