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
from .style import html_style, share_layout, shared_layout, shared_style

__all__ = ["CHOOSE_TEXT", "PICKER_HELP", "PresetPicker", "preset_label", "preset_status"]

#: The dropdown's first entry (value ``""``): no preset chosen, or the one chosen was edited since.
CHOOSE_TEXT = "real-model presets: choose a model's layer…"
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
    """``dropdown`` (values: preset names, ``""`` for none; also ``row``) and ``note``: :attr:`parts`, the first
    children of ``host``, the form's box. :attr:`applied` is the preset picked last (None: none). ``pick(name)``
    is called when the user picks one; :meth:`show` says what the form shows now."""

    def __init__(self, W: Any, pick: Callable[[str], None]) -> None:
        self._pick = pick
        self._silent = False
        self.applied: str | None = None
        self._status = ""
        from ipywidgets.widgets.widget_description import DescriptionStyle

        # Few widget models (a Lab at start makes few): shared layouts and styles, no box of its own (the row and
        # the note are the first children of ``host``, the form's box), and the note is put there when it has
        # something to say rather than hidden by a layout of its own.
        # As wide as the controls column (the labels name model and layer, up to about 55 characters): no label
        # before it, its first entry says what it is.
        self.dropdown = share_layout(W, W.Dropdown, {"width": "calc(100% - 4px)", "max_width": "404px"},
                                     options=[(CHOOSE_TEXT, ""), *((preset_label(n), n) for n in PRESETS)],
                                     value="", tooltip=PICKER_HELP, _dom_classes=("cl-preset",),
                                     style=shared_style(W, "dropdown-style", DescriptionStyle))
        self.note = W.HTML("", layout=shared_layout(W), style=html_style(W), _dom_classes=("cl-preset-note",))
        self.row = self.dropdown
        #: The box the picker's row (and note) head; set by the form that shows the picker.
        self.host: Any = None
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
            self.note.value = ""
            self._place()
            return
        info = preset_info(self.applied)
        words = (f"<b>{html.escape(status)}</b> · source: {html.escape(info.source)}" if exact else
                 f"<b>{html.escape(status)}</b> (pick it again to go back to its numbers)")
        self.note.value = (f"<div class='cl-hint cl-preset-status' title='{html.escape(_tip(info.name), True)}' "
                           "style='white-space: normal; line-height: 1.3; margin: 0 0 4px 4px'>"
                           f"{words}</div>")
        self._place()

    @property
    def parts(self) -> tuple[Any, ...]:
        """The picker's widgets as the form shows them: the row, and the note while a preset was picked."""
        return (self.row, self.note) if self.applied is not None else (self.row,)

    @property
    def note_shown(self) -> bool:
        """Whether the line under the dropdown is on the form (it is while a preset was picked)."""
        return self.host is not None and self.note in self.host.children

    def _place(self) -> None:
        if self.host is None:
            return
        rest = tuple(c for c in self.host.children if c is not self.row and c is not self.note)
        if tuple(self.host.children) != (*self.parts, *rest):
            self.host.children = (*self.parts, *rest)
