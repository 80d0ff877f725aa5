"""The Lab's recorded results: the recordings' list (read on a thread while the panel shows), the operation's
recordings offered, Load, and the switch to the recordings where there is no GPU. A part of :class:`~.lab.Lab`
(its base), apart from the panel's layout and runs."""

from __future__ import annotations

import asyncio
import html
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NoGPUError, OptionError, shorten
from ..results import load_results, recorded_datasets
from ..specs import Spec
from .fields import OPS
from .recordings import recording_options
from .state import MAX_RECORDING_TEXT
from .style import acting

if TYPE_CHECKING:
    from .results_view import ResultView
    from .status import Busy, StatusLog

__all__ = ["LIVE", "RECORDED", "RecordedResults"]

LIVE, RECORDED = "Live GPU", "Recorded"


class RecordedResults:
    """What the Lab does with recordings (its widgets are made by ``Lab.__init__``, named here for the checker)."""

    if TYPE_CHECKING:
        busy_flag: Busy
        status_log: StatusLog
        results: ResultView
        recorded: str | None
        datasets_frame: Any
        recordings_note: Any
        load_answer: Any
        log: Any
        source: Any
        _datasets: Any
        _reading: Any
        _offered_op: str | None

        @property
        def spec(self) -> Spec: ...

        @property
        def busy(self) -> bool: ...

        @property
        def datasets(self) -> Any: ...

        def show_result(self, result: Any, *, recorded: str | None = None, every_view: bool = True) -> None: ...

        def _set_buttons(self, busy: bool) -> None: ...

    def load_recorded(self, name_or_path: str | Path) -> Any:
        """Show a recording: a name from ``cl.recorded_datasets()`` or the path of a ``RunResult.save`` file.

        The recording's spec becomes ``lab.spec``; a recording of another operation than the one chosen switches
        the operation, and the status line says so (the panel's list offers only the chosen operation's). The
        recording is read and checked before anything changes: one that fails leaves the panel as it was.
        """
        result = self._load_shown(name_or_path)
        self.results.draw_stale()
        return result

    def _load_shown(self, name_or_path: str | Path) -> Any:
        """Read and check the recording, then show it in the view on screen (the other views are left stale)."""
        result = self._read_run(name_or_path)
        with self.busy_flag.working():
            self.show_result(result, recorded=str(name_or_path), every_view=False)
        return result

    def _load_clicked(self) -> None:
        """Load: the recording in the view on screen, the answer under the button and Load enabled again; then, in
        the same callback (so a click that came meanwhile waits, in the kernel's queue or for the guard's turn, and
        is never raced), the hidden views, which the browser draws while the user reads the first (issue 24: Load
        within 1 s)."""
        load = acting(self.load_answer, self._load_shown, lambda result: (
            f"Loaded {html.escape(str(self.recorded or '')[-80:])}: {len(result.plans)} plans in every view."))
        load(self._datasets.value)  # raises on failure: the guard reports it, and no view changed
        self.results.draw_stale()

    def _read_run(self, name_or_path: Any, option: str = "recording", where: str = "Lab") -> Any:
        """The recording ``name_or_path`` read and checked to be one run, without changing the panel."""
        if name_or_path is None or name_or_path == "":
            raise OptionError(option, name_or_path, "choose a recording first (none is selected)", where=where)
        if not isinstance(name_or_path, (str, Path)) or len(str(name_or_path)) > MAX_RECORDING_TEXT:
            raise OptionError(option, name_or_path, "must be a recording's name or the path of its file (at most "
                              f"{MAX_RECORDING_TEXT} characters)", where=where)
        text = str(name_or_path)
        with self.busy_flag.working():
            self.status_log.say(f"Loading {shorten(text)} …")
            result = load_results(str(Path(text).expanduser()) if Path(text).suffix else text)
        if not hasattr(result, "plans"):
            raise OptionError(option, text, "is a sweep, not a single run: load it in the Sweep tab", where=where)
        return result

    def refresh_datasets(self) -> Any:
        """Read ``cl.recorded_datasets(kind='run')`` again and offer those of the chosen operation (sweeps are in
        the Sweep view)."""
        self._datasets_read()  # a read under way ends first
        frame = None
        try:
            frame = recorded_datasets(kind="run")
        except Exception as e:  # noqa: BLE001 - a broken data folder must not break the panel
            self.status_log.report(e)
        self.datasets_frame = frame
        self.offer_recordings()
        return frame

    def _read_datasets(self) -> None:
        """Read the recordings' list: in a kernel, on a thread while the panel shows (reading every recording's
        head takes about a second), its answer put in the list by the kernel's loop (or by the first use of
        :attr:`datasets`, which waits for it); elsewhere (tests, scripts) at once."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            self.refresh_datasets()
            return
        answer: list[Any] = []

        def read() -> None:
            try:
                answer.append(recorded_datasets(kind="run"))
            except Exception as e:  # noqa: BLE001 - reported by _datasets_read
                answer.append(e)
            try:
                loop.call_soon_threadsafe(lambda: self.status_log.guard(self._datasets_read))
            except RuntimeError:  # the loop closed: the first use of the list finishes
                pass

        self._reading = (threading.Thread(target=read, name="cudnn_lab recordings", daemon=True), answer)
        self.offer_recordings()  # "reading…" beside an empty list
        self._reading[0].start()

    def _datasets_read(self) -> None:
        """Wait for the thread reading the recordings' list, if any, and offer its recordings."""
        if self._reading is None:
            return
        thread, answer = self._reading
        thread.join()
        self._reading = None
        if isinstance(answer[0], Exception):
            self.status_log.report(answer[0])
        else:
            self.datasets_frame = answer[0]
        self.offer_recordings()

    def offer_recordings(self) -> list[tuple[str, str]]:
        """Fill the recording list with the chosen operation's recordings only (the one of the problem shown
        first); with none, say so beside the list."""
        spec = self.spec
        self._offered_op = spec.op
        if self._reading is not None:  # being read: offered when it is
            self._datasets.options, self._datasets.disabled = [], True
            self.recordings_note.value = "<div class='cl-hint'>Reading the recordings shipped with cudnn_lab …</div>"
            self._set_buttons(self.busy)
            return []
        options, value = recording_options(self.datasets_frame, spec.op, spec.label())
        self._datasets.options = options
        if value is not None:
            self._datasets.value = value
        self._datasets.disabled = not options
        title = OPS[spec.op].title or spec.op
        if options:
            self.recordings_note.value = ""
        else:
            others = 0 if self.datasets_frame is None else len(self.datasets_frame)
            self.recordings_note.value = (
                f"<div class='cl-hint' style='white-space: normal'>No recording of {html.escape(title)} is shipped "
                f"with this cudnn_lab{f' ({others} of other operations are)' if others else ''}: choose another "
                "operation to load one, or Run on a GPU.</div>")
        self._datasets.tooltip = "" if options else f"no recording of {title} is shipped"
        self._set_buttons(self.busy)
        return options

    def _offer_recordings(self, error: NoGPUError) -> None:
        """No GPU: say so in one sentence, and switch to the recordings (the Log has the detail)."""
        self.status_log.messages.append(f"NoGPUError: {error}")
        self.log.append_stderr(f"NoGPUError: {error}\n")
        self.source.value = RECORDED
        offer = (f"{len(self.datasets.options)} recordings made on real GPUs are listed under results: choose one "
                 "and Load it" if self.datasets.options else "no recordings are shipped with this cudnn_lab")
        self.status_log.say(f"No GPU here ({error}); {offer}.")
