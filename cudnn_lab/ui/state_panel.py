"""The Lab's state controls: a file name field with Save state and Load state (a teacher hands out the file), and
Link, which shows the state as one line of code to copy (Load state takes that code, or a link ending in it, in the
same field). The state itself is :class:`~.state.LabState`; the Lab says how to make one and how to apply one."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import OptionError, shorten
from .state import LabState
from .status import StatusLog
from .style import acting, answer, button, row
from ..results.paths import check_output_path

__all__ = ["DEFAULT_STATE", "StatePanel"]

#: Where Save state writes when its field is left as it is: lab_output/ in the current folder (the notebook's), made
#: on first use and ignored by git, so that the Lab leaves the repository clean.
DEFAULT_STATE = "lab_output/lab_state.json"


class StatePanel:
    """``box`` holds the controls; :meth:`save`, :meth:`load` and :meth:`link` are what the buttons do."""

    def __init__(self, W: Any, *, state: Callable[[], LabState], apply: Callable[[LabState], None],
                 log: StatusLog) -> None:
        self._state, self._apply, self._log = state, apply, log
        self.path = W.Text(value=DEFAULT_STATE, placeholder="a .json file, or a state code to load",
                           tooltip="Save state writes this .json file; Load state reads it, or a state code "
                                   "pasted here", layout=W.Layout(width="290px"), _dom_classes=("cl-state-path",))
        self.save_button = button(W, "Save state", icon="save",
                                  tooltip="write the problem, run options, recording, plan, view and model lines "
                                  "to the file"
                                  ).add_class("cl-state-save")
        self.load_button = button(W, "Load state", icon="upload",
                                  tooltip="show the state in the file (or the code) named above"
                                  ).add_class("cl-state-load")
        self.link_button = button(W, "Link", "70px", icon="link",
                                  tooltip="the state as one line of text to copy: paste it in the field above "
                                  "and Load state").add_class("cl-state-link")
        self.code = W.Textarea(value="", layout=W.Layout(width="400px", height="64px", display="none"),
                               _dom_classes=("cl-state-code",))
        #: What the last of Save state, Load state and Link did (or why not), under their buttons.
        self.answer = answer(W).add_class("cl-state-answer")
        self.box = W.VBox([row(W, "state", self.path), row(W, "", self.save_button, self.load_button,
                                                            self.link_button), self.answer, self.code],
                          _dom_classes=("cl-state",))
        guard = log.guard
        self.save_button.on_click(lambda _: guard(acting(self.answer, self.save, lambda path: (
            f"Saved to <code>{html.escape(str(path))}</code>."))))
        self.load_button.on_click(lambda _: guard(acting(self.answer, self.load, lambda st: (
            f"Loaded: {html.escape(st.spec.label())}, view {html.escape(st.view)}."))))
        self.link_button.on_click(lambda _: guard(acting(self.answer, self.link, lambda code: (
            "The state code is in the box below: copy it (select all, Ctrl+C), then paste it in the state field "
            "and Load state."))))

    def save(self, path: str | Path | None = None) -> Path:
        """Write the Lab's state as JSON to ``path`` (default: the field's file name)."""
        text = str(path if path is not None else self.path.value).strip() or DEFAULT_STATE
        if LabState.is_code(text):
            raise OptionError("state file", text[:40] + "…", "is a state code; give a file name such as "
                              f"{DEFAULT_STATE} to save to", where="Save state")
        if text == DEFAULT_STATE:  # the default folder is made on first use (another missing folder is an error)
            check_output_path(text, what="Lab state", suffixes=(".json",))
        written = self._state().save(text).resolve()
        self._log.say_html(f"State saved: <code>{html.escape(str(written))}</code> (Load state reads it back; "
                           "hand the file to others)")
        return written

    def load(self, source: str | Path | None = None) -> LabState:
        """Show the state in a file or a state code (default: the field's text)."""
        text = str(source if source is not None else self.path.value).strip()
        if not text:
            raise OptionError("state", text, f"give a file name (such as {DEFAULT_STATE}) or a state code",
                              where="Load state")
        code = LabState.is_code(text)
        state = LabState.from_code(text) if code else LabState.load(text)
        self._apply(state)  # checks the whole state first: one that fails changes nothing
        self._log.say(f"State loaded from {'the code' if code else shorten(text)}: {state.spec.label()}, "
                      f"view {state.view}.")
        return state

    def link(self) -> str:
        """Show the state as a code to copy (and return it)."""
        code = self._state().to_code()
        self.code.value = code
        self.code.layout.display = "flex"
        self._log.say("State code below: copy it; paste it in the state field (or after '#' in a link) and Load "
                      "state to see this panel again.")
        return code
