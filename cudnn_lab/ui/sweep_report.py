"""The Sweep view's "Save sweep report" row: a path field and a button beside the sweep figure that write the sweep
shown as one self-contained HTML report (:func:`cudnn_lab.report.sweep_report_html`).

Given callables for the sweep shown and whether it was measured here, the status log and the busy flag; it does not
know the Sweep view. The path is checked (:func:`~cudnn_lab.results.paths.check_output_path`) before the report is
made; every error reaches the status line as one sentence through the log's ``guard``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import OptionError
from .status import Busy, StatusLog, file_link
from ..results.paths import check_output_path, write_text
from ..report import sweep_report_html

__all__ = ["DEFAULT_SWEEP_REPORT", "SweepReport"]

#: Where Save sweep report writes when its path field is left as it is (the current folder).
DEFAULT_SWEEP_REPORT = "cudnn_lab_sweep_report.html"


class SweepReport:
    """``box`` holds the path field (``path``) and the button (``button``); :meth:`save` writes the report;
    ``written`` is the last file written (absolute), or None."""

    def __init__(self, W: Any, *, frame: Callable[[], Any], measured: Callable[[], bool], log: StatusLog,
                 busy: Busy) -> None:
        self._frame, self._measured, self._log, self._busy = frame, measured, log, busy
        self.written: Path | None = None
        self.path = W.Text(value=DEFAULT_SWEEP_REPORT, placeholder=DEFAULT_SWEEP_REPORT,
                           tooltip="an .html file; a relative path is in the current folder",
                           layout=W.Layout(width="260px", max_width="100%")).add_class("cl-sweep-report-path")
        self.button = W.Button(description="Save sweep report", icon="file-text",
                               tooltip="write the sweep shown as one HTML file that opens offline",
                               layout=W.Layout(width="160px")).add_class("cl-sweep-report")
        self.box = W.HBox([self.path, self.button], layout=W.Layout(align_items="center", margin="2px 0",
                                                                    flex_flow="row wrap", max_width="100%"))
        self.button.on_click(lambda _: log.guard(self.save))
        self.set_busy(busy.busy)

    def set_busy(self, busy: bool) -> None:
        """Disabled while the Lab is busy or before a sweep is shown."""
        self.button.disabled = busy or self._frame() is None

    def save(self, path: str | Path | None = None) -> Path:
        """Write the sweep shown to ``path`` (default: the path field's value) and link it in the status line."""
        frame = self._frame()
        if frame is None:
            raise OptionError("sweep report", None, "there is no sweep to report yet: Load a recorded sweep or Run "
                              "sweep first", where="Save sweep report")
        text = str(path if path is not None else self.path.value).strip() or DEFAULT_SWEEP_REPORT
        target = check_output_path(text, what="sweep report", suffixes=(".html", ".htm"), make_parents=False)
        with self._busy.working():
            page = sweep_report_html(frame, recorded=not self._measured())
            written = write_text(target, page, what="sweep report").resolve()
        self.written = written
        link = file_link(written)
        self._log.say_html(f"Sweep report saved: {link} (one HTML file that opens offline)")
        return written
