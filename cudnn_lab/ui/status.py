"""The Lab's status line, its Log view and its busy state: where every callback's errors and warnings go.

:meth:`StatusLog.guard` runs a widget callback inside the Log's ``Output`` widget, one callback at a time whichever
kernel thread delivers it: an exception or a warning never escapes into the notebook; it is written to the Log view
and summarized in the status line. :class:`Busy` is the one busy flag the Lab's parts share, so every button is
disabled while any of them works.
"""

from __future__ import annotations

import html
import os
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import CudnnLabError

__all__ = ["Busy", "StatusLog", "error_sentence"]


class StatusLog:
    """The status line (``status``, an HTML widget) and the Log view (``log``, an ``Output``); ``messages`` keeps
    every error and warning reported, newest last."""

    def __init__(self, W: Any) -> None:
        self.log = W.Output(layout=W.Layout(max_height="500px", overflow="auto"), _dom_classes=("cl-log",))
        self.status = W.HTML("", _dom_classes=("cl-status",))
        self.messages: list[str] = []
        #: Held while a callback runs (re-entrant: the callbacks a callback sets off run inside it).
        self._turn = threading.RLock()

    def guard(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn(*args)`` inside the Log's Output, after any callback under way on another thread; exceptions and
        warnings go to the Log and the status line.

        One at a time (issue 39): JupyterLab 4.4+ sends widget messages over a kernel subshell, which ipykernel 7
        handles on a thread beside the main shell, so a click can come while a Load runs. Two callbacks inside the
        Output at once left its ``msg_id`` on the later one's message after it ended (the Output clears it when the
        last one leaves); the browser then swallowed that message's idle status, and the widget that sent it (the
        operation picker) kept every later change to itself.
        """
        with self._turn, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with self.log:  # prints inside callbacks show in the Log view
                try:
                    return fn(*args)
                except Exception as e:  # noqa: BLE001 - the notebook must never see a callback's exception
                    self.report(e)
                    return None
                finally:
                    for w in caught:
                        self.warn(f"{w.category.__name__}: {w.message}")

    def at_once(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn(*args)`` now, beside a callback under way (Stop during a Run); its exception goes to the Log and
        the status line like :meth:`guard`'s, its prints are not captured."""
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - the notebook must never see a callback's exception
            self.report(e)
            return None

    def report(self, error: BaseException) -> None:
        """An error: one readable sentence in the status line and in the Log; the traceback (for an error that is
        not the kit's own) only inside a collapsed "details" under it."""
        sentence = error_sentence(error)
        self.messages.append(f"{type(error).__name__}: {sentence}")
        trace = "" if isinstance(error, CudnnLabError) else "".join(
            traceback.format_exception(type(error), error, error.__traceback__))
        details = (f"<details><summary>traceback</summary><pre class='cl-traceback'>{html.escape(trace)}</pre>"
                   "</details>") if trace else ""
        self.log.outputs += ({"output_type": "display_data", "metadata": {}, "data": {
            "text/html": f"<div class='cl-log-error'><b>{html.escape(type(error).__name__)}</b>: "
                         f"{html.escape(sentence)}{details}</div>",
            "text/plain": f"{type(error).__name__}: {sentence}\n{trace}"}},)
        self.status.value = (f"<span class='cl-status-error'>{html.escape(sentence)}"
                             f"{' (traceback in the Log tab)' if trace else ''}</span>")

    def warn(self, text: str) -> None:
        """A warning: kept in ``messages`` and written to the Log."""
        self.messages.append(text)
        self.log.append_stderr(f"warning: {text}\n")

    def note(self, text: str) -> None:
        """A note (not a warning) written to the Log only."""
        self.log.append_stdout(f"note: {text}\n")

    def say(self, text: str) -> None:
        """Plain text in the status line."""
        self.status.value = f"<span class='cl-status-text'>{html.escape(text)}</span>"

    def say_html(self, markup: str) -> None:
        """Markup made by the caller (a link) in the status line."""
        self.status.value = f"<span class='cl-status-text'>{markup}</span>"


def error_sentence(error: BaseException) -> str:
    """One readable sentence for an error: the kit's own message (it says what to do), else the exception's
    first line after its class name; always ends with a full stop."""
    text = " ".join(str(error).split()) if isinstance(error, CudnnLabError) else \
        (str(error).strip().splitlines() or [""])[0].strip()
    if not isinstance(error, CudnnLabError):
        text = f"{type(error).__name__}: {text}" if text else f"{type(error).__name__} (no message)"
    if len(text) > 400:
        text = text[:397] + "…"
    return text if text.endswith((".", "!", "?", "…")) else text + "."


class Busy:
    """One busy flag shared by the Lab's parts: ``with busy.working(): ...``; listeners re-enable their buttons."""

    def __init__(self) -> None:
        self.busy = False
        self._listeners: list[Callable[[bool], None]] = []

    def subscribe(self, listener: Callable[[bool], None]) -> None:
        """Call ``listener(busy)`` at every change (and once now)."""
        self._listeners.append(listener)
        listener(self.busy)

    def set(self, busy: bool) -> None:
        self.busy = bool(busy)
        for listener in self._listeners:
            listener(self.busy)

    @contextmanager
    def working(self) -> Iterator[None]:
        """Busy for the block's duration, whatever it raises."""
        self.set(True)
        try:
            yield
        finally:
            self.set(False)


def running_servers() -> Iterator[dict[str, Any]]:
    """The running Jupyter servers' info files (``jpserver-*.json`` in Jupyter's runtime folder, their process
    alive): what ``jupyter_server.serverapp.list_running_servers`` reads, without importing the server (its import
    took 3-8 s in a kernel on the busy 2-core machine, the most of a first Save report; issue 39)."""
    import json
    import re

    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return
    folder = Path(jupyter_runtime_dir())
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        if not re.fullmatch(r"jpserver-(.+)\.json", path.name):
            continue
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
            os.kill(int(info["pid"]), 0)  # alive (a stale file of a stopped server is left out)
        except PermissionError:
            pass  # alive, another user's
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(info, dict):
            yield info


def _server_files_href(written: Path) -> str | None:
    """The Jupyter server's /files/ URL of ``written`` (the server that started this kernel, else the one serving the
    deepest folder holding it); None where no running server serves it. A /files/ URL opens the HTML in a browser
    tab of its own with its scripts on, where a plain relative link opens JupyterLab's untrusted viewer (every plotly
    figure blank until "Trust HTML")."""
    from urllib.parse import quote

    best: tuple[bool, int, str, Path] | None = None
    try:
        for info in running_servers():
            root = Path(str(info.get("root_dir") or info.get("notebook_dir") or "")).resolve()
            try:
                relative = written.relative_to(root)
            except ValueError:
                continue
            rank = (info.get("pid") == os.getppid(), len(root.parts), str(info.get("base_url") or "/"), relative)
            if best is None or rank[:2] > best[:2]:
                best = rank
    except (OSError, ValueError):
        return None
    if best is None:
        return None
    return f"{best[2].rstrip('/')}/files/{quote(best[3].as_posix())}"


def file_link(written: Path) -> str:
    """A saved file as HTML: a link that opens it in a new browser tab (through the Jupyter server's /files/ URL, so
    its scripts run), else relative where it lies under the working folder, else its path."""
    href = _server_files_href(written)
    if href is None:
        try:
            href = written.relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            href = None
    shown = html.escape(str(written))
    return (f"<a href='{html.escape(href)}' target='_blank' class='cl-report-link'>{shown}</a>" if href
            else f"<code class='cl-report-link'>{shown}</code>")
