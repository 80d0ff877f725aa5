"""The status line and Log: callbacks' errors and warnings are caught, summarized and logged; the busy flag."""

from __future__ import annotations

import warnings

import ipywidgets as W

import cudnn_lab as cl
from cudnn_lab.ui.status import Busy, StatusLog


def test_an_error_in_a_callback_goes_to_the_status_and_the_log() -> None:
    log = StatusLog(W)

    def broken() -> None:
        raise RuntimeError("boom\nsecond line")

    assert log.guard(broken) is None  # not raised
    assert log.messages == ["RuntimeError: boom"]
    assert "cl-status-error" in log.status.value and "details in the Log tab" in log.status.value
    assert any("Traceback" in o.get("text", "") for o in log.log.outputs)


def test_the_kits_errors_are_logged_without_a_traceback() -> None:
    log = StatusLog(W)
    log.guard(lambda: (_ for _ in ()).throw(cl.OptionError("view", "Nope", "must be one of Graph, Plans")))
    texts = "".join(o.get("text", "") for o in log.log.outputs)
    assert "OptionError" in texts and "Traceback" not in texts and "view" in log.status.value


def test_warnings_and_prints_go_to_the_log() -> None:
    log = StatusLog(W)

    def noisy() -> int:
        print("hello from a callback")
        warnings.warn("careful", UserWarning)
        return 3

    assert log.guard(noisy) == 3
    assert any("careful" in m for m in log.messages)
    assert any("careful" in o.get("text", "") for o in log.log.outputs)
    log.say("a <b>plain</b> line")
    assert "&lt;b&gt;" in log.status.value


def test_busy_tells_its_listeners_and_clears_after_an_error() -> None:
    busy, seen = Busy(), []
    busy.subscribe(seen.append)
    try:
        with busy.working():
            assert busy.busy
            raise ValueError("x")
    except ValueError:
        pass
    assert seen == [False, True, False] and not busy.busy
