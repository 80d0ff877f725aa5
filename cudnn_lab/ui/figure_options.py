"""The toggles of a Lab view's figure options (plots/registry.py's FIGURE_OPTIONS: the model lines of Latency and
Roofline): one checkbox per option the view's figures draw with, and a note beside them saying what the toggle drew,
or that the result shown has nothing for it. Built when the view is first drawn (a new Lab stays light)."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from ..plots.registry import FIGURE_OPTIONS
from .status import error_sentence
from .style import shared_layout

__all__ = ["ViewToggles", "option_note"]


def option_note(name: str, on: bool, about: tuple[bool, str] | None) -> str:
    """The note beside option ``name``'s toggle (HTML): what it draws when ``on``, that the result has nothing for
    it (on or off, so that switching it on is not met by silence), '' before a result (``about`` None) or when off."""
    if about is None:
        return ""
    has, text = about
    label = html.escape(FIGURE_OPTIONS[name].label)
    if not has:
        return f"<span class='cl-option-none'>No {label} for this run: {html.escape(text.rstrip('.'))}.</span>"
    if not on:
        return ""
    return (f"<span class='cl-option-on'>{label.capitalize()} drawn: {html.escape(text)}; each one's validation "
            "error is in the legend.</span>")


class ViewToggles:
    """``box``: a checkbox per option of one view (``checks`` by name) and ``note`` beside them. A click calls
    ``on_toggle(name, value)`` inside ``guard`` (the Log's Output); its error is said in the note too, and the
    checkbox goes back."""

    def __init__(self, W: Any, options: tuple[str, ...], values: dict[str, bool],
                 on_toggle: Callable[[str, bool], None], guard: Callable[..., Any]) -> None:
        self._on_toggle = on_toggle
        self._silent = False
        self.checks = {name: W.Checkbox(value=bool(values.get(name)), description=FIGURE_OPTIONS[name].label,
                                        tooltip=FIGURE_OPTIONS[name].tooltip, indent=False,
                                        layout=shared_layout(W, width="auto", flex="0 0 auto", margin="0 8px 0 0"),
                                        _dom_classes=("cl-figure-option", f"cl-option-{name}"))
                       for name in options}
        self.note = W.HTML("", layout=shared_layout(W, flex="1 1 240px", min_width="0"),
                           _dom_classes=("cl-option-note",))
        self.box = W.HBox([*self.checks.values(), self.note], _dom_classes=("cl-figure-options",))
        for name, check in self.checks.items():
            check.observe(lambda ch, name=name: guard(self._changed, name, ch), names="value")

    def show(self, values: dict[str, bool], note: str) -> None:
        """Show ``values`` in the checkboxes (without calling back) and ``note`` beside them."""
        for name in self.checks:
            self._set_silently(name, bool(values.get(name)))
        self.note.value = note

    def _set_silently(self, name: str, value: bool) -> None:
        """Tick or clear ``name``'s checkbox without calling back."""
        self._silent = True
        try:
            self.checks[name].value = value
        finally:
            self._silent = False

    def _changed(self, name: str, change: dict[str, Any]) -> None:
        if self._silent:
            return
        try:
            self._on_toggle(name, bool(change["new"]))
        except Exception as e:
            self.note.value = f"<span class='cl-option-error'>✗ {html.escape(error_sentence(e))}</span>"
            self._set_silently(name, bool(change["old"]))
            raise
