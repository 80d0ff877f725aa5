"""The status line and Log: callbacks' errors and warnings are caught, summarized and logged; the busy flag."""

from __future__ import annotations

import warnings
from pathlib import Path

import ipywidgets as W
import pytest

import cudnn_lab as cl
from cudnn_lab.ui.status import Busy, StatusLog, error_sentence


def _entries(log: StatusLog) -> list[str]:
    return [o["data"]["text/html"] for o in log.log.outputs if "data" in o]


def test_an_error_in_a_callback_goes_to_the_status_and_the_log() -> None:
    log = StatusLog(W)

    def broken() -> None:
        raise RuntimeError("boom\nsecond line")

    assert log.guard(broken) is None  # not raised
    assert log.messages == ["RuntimeError: RuntimeError: boom."]
    # one readable sentence in the status line; the traceback only inside a collapsed details in the Log
    assert "cl-status-error" in log.status.value and "RuntimeError: boom." in log.status.value
    assert "traceback in the Log tab" in log.status.value and "Traceback" not in log.status.value
    (entry,) = _entries(log)
    head, details = entry.split("<details>")
    assert "boom." in head and "Traceback" not in head and "Traceback" in details and "</summary>" in details


def test_the_kits_errors_are_one_sentence_without_a_traceback() -> None:
    log = StatusLog(W)
    log.guard(lambda: (_ for _ in ()).throw(cl.OptionError("view", "Nope", "must be one of Graph, Plans")))
    (entry,) = _entries(log)
    assert "OptionError" in entry and "<details>" not in entry and "Traceback" not in entry
    assert "view" in log.status.value and "traceback" not in log.status.value
    assert log.status.value.count(".</span>") == 1  # ends as a sentence


def test_error_sentences_are_one_line_and_end_with_a_full_stop() -> None:
    assert error_sentence(cl.PathError("/x/r.html", "cannot write the report here: folder /x is not writable",
                                       hint="choose a folder you can write to")).endswith(".")
    assert error_sentence(ValueError("")) == "ValueError (no message)."
    long = error_sentence(RuntimeError("x" * 1000))
    assert len(long) <= 400 and long.endswith("…") and "\n" not in error_sentence(KeyError("a\nb"))


def test_warnings_and_prints_go_to_the_log() -> None:
    log = StatusLog(W)

    def noisy() -> int:
        print("hello from a callback")
        warnings.warn("careful", UserWarning, stacklevel=2)
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


def test_the_report_link_opens_the_servers_files_url_in_a_new_tab(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Save report's link goes through the Jupyter server's /files/ URL with target=_blank (the report's scripts run
    there), not a relative path that JupyterLab opens in its untrusted HTML viewer with every figure blank."""
    import json
    import os

    from cudnn_lab.ui.status import file_link

    runtime = tmp_path / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    report = tmp_path / "served" / "lab_output" / "my report.html"
    report.parent.mkdir(parents=True)
    report.write_text("<html></html>")
    monkeypatch.chdir(report.parent.parent)
    assert "href='lab_output/my report.html'" in file_link(report)  # no server running: the relative link
    info = {"pid": os.getpid(), "root_dir": str(tmp_path / "served"), "base_url": "/user/ada/", "url": "http://x/"}
    (runtime / f"jpserver-{os.getpid()}.json").write_text(json.dumps(info))
    link = file_link(report)
    assert "href='/user/ada/files/lab_output/my%20report.html'" in link and "target='_blank'" in link


def test_the_report_link_does_not_import_the_jupyter_server(tmp_path: Path) -> None:
    """Issue 39: importing jupyter_server.serverapp for its list of servers took 3-8 s of a first Save report in a
    busy kernel; the link reads the servers' info files itself."""
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from cudnn_lab.ui.status import file_link; "
            f"file_link(Path({str(tmp_path / 'r.html')!r})); print('jupyter_server.serverapp' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
