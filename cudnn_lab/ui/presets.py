"""The spec form's real-model preset picker: one dropdown over ``cl.presets()`` (labelled by operation family and
named by model and layer) and a line under it that says which preset the form shows, with its published
configuration and source, until a field is edited ("edited from <preset>"). Picking one is the form's business
(:meth:`~.forms.SpecForm.apply_preset`); this module only shows the choice and what it says.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from ..specs import Spec
from ..specs.presets import PRESETS, preset_info
from .style import row, share_layout

__all__ = ["CHOOSE_TEXT", "PICKER_HELP", "PresetPicker", "preset_label", "preset_status"]

#: The dropdown's first entry (value ``""``): no preset chosen, or the one chosen was edited since.
CHOOSE_TEXT = "choose a model's layer…"
#: The dropdown's tooltip before a preset is chosen.
PICKER_HELP = ("real-model presets (cl.presets()): pick one to fill the form with a layer a popular model runs, "
               "with its published configuration; the line below says which preset is shown and where its numbers "
               "come from")


def preset_label(name: str) -> str:
    """The dropdown's label of preset ``name``: its operation family, then its name ('attention · Phi-2 ...')."""
    spec = preset_info(name).spec
    return f"{type(spec).title or spec.op} · {name}"


def preset_status(applied: str | None, spec: Spec) -> str:
    """What the form shows: '' (no preset), 'preset: NAME' (``spec`` is the preset's) or 'edited from NAME'."""
    if applied is None:
        return ""
    return f"preset: {applied}" if preset_info(applied).spec == spec else f"edited from {applied}"


def _tip(name: str) -> str:
    info = preset_info(name)
    return f"{info.name}: {info.config}. Source: {info.source}"


class PresetPicker:
    """``dropdown`` (values: preset names, ``""`` for none) and ``note`` in ``box``; :attr:`applied` is the preset
    picked last (None: none). ``pick(name)`` is called when the user picks one; :meth:`show` says what the form
    shows now."""

    def __init__(self, W: Any, pick: Callable[[str], None]) -> None:
        self._pick = pick
        self._silent = False
        self.applied: str | None = None
        self._status = ""
        self.dropdown = share_layout(W, W.Dropdown, {"width": "300px"},
                                     options=[(CHOOSE_TEXT, ""), *((preset_label(n), n) for n in PRESETS)],
                                     value="", tooltip=PICKER_HELP, _dom_classes=("cl-preset",))
        self.note = W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 84px", width="316px"),
                           _dom_classes=("cl-preset-note",))
        self.box = W.VBox([row(W, "preset", self.dropdown), self.note], _dom_classes=("cl-presets",))
        self.dropdown.observe(self._picked, names="value")

    @property
    def status(self) -> str:
        """The note's words: '', 'preset: NAME' or 'edited from NAME'."""
        return self._status

    def _picked(self, change: dict[str, Any]) -> None:
        if not self._silent and change["new"]:
            self._pick(change["new"])

    def show(self, applied: str | None, spec: Spec) -> None:
        """Say that the form shows ``spec`` after preset ``applied`` was picked (None: none): the preset's name in
        the dropdown while ``spec`` is still its spec, else the first entry and 'edited from NAME' under it."""
        self.applied = None if applied is None else preset_info(applied).name
        self._status = status = preset_status(self.applied, spec)
        exact = status.startswith("preset:")
        self._silent = True
        try:
            self.dropdown.value = self.applied if exact and self.applied else ""
        finally:
            self._silent = False
        self.dropdown.tooltip = _tip(self.applied) if exact and self.applied else PICKER_HELP
        if self.applied is None:
            self.note.value, self.note.layout.display = "", "none"
            return
        info = preset_info(self.applied)
        words = (f"<b>{html.escape(status)}</b> · source: {html.escape(info.source)}" if exact else
                 f"<b>{html.escape(status)}</b> (pick it again to go back to its numbers)")
        self.note.value = (f"<div class='cl-hint cl-preset-status' title='{html.escape(_tip(info.name), True)}' "
                           f"style='white-space: normal; line-height: 1.3'>{words}</div>")
        self.note.layout.display = "block"
