"""The spec form: an operation choice and, per operation, one control per spec field (:mod:`.fields` says which).

A choice field becomes toggle buttons (a dropdown when its labels are long), a number (whole, pair, float,
optional) a ``Text`` that :func:`~.fields.parse_field` reads (so "3.5" in a whole-number field is refused with a
message, never truncated as ``IntText`` would), a flag a ``Checkbox``, the epilogue a ``TagsInput``. An invalid value
never raises: the control that the :class:`~cudnn_lab.errors.SpecError` names turns red with a short message under
it, and :attr:`SpecForm.spec` keeps the last valid spec.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from ..errors import SpecError, shorten
from ..specs import EPILOGUES, Spec
from .fields import (OPS, TEXT_KINDS, controls_from_spec, field_kind, field_text, fields_of, hidden_fields, hints,
                     label_of, limits, parse_field, spec_from_controls)
from .style import cell, clear_invalid, mark_invalid, row

__all__ = ["OP_NOTE", "SpecControls", "SpecForm"]

#: The operation's own description (from its spec) shown under the choice: what it is and how cuDNN runs it.
OP_NOTE = "<div class='cl-hint cl-op-note-text' style='white-space: normal; line-height: 1.35'>{}</div>"
#: Kinds of field short enough to share a line with another.
_SHORT = frozenset({"int", "pair", "optional_int", "bool", "float", "optional_float"})


def _make_widget(W: Any, op: str, name: str) -> Any:
    """The control of one spec field, by its kind; sizes follow the choices' text (presentation only)."""
    kind = field_kind(op, name)
    if kind == "choice":
        options = list(OPS[op].field_choices()[name])
        longest = max(len(str(o)) for o in options)
        if longest > 12 or len(options) > 4:
            return W.Dropdown(options=options, value=options[0], layout=W.Layout(width=f"{longest * 8 + 40}px"))
        return W.ToggleButtons(options=options, style={"button_width": f"{max(longest * 8 + 18, 52)}px"}
                               ).add_class("cl-compact")
    if kind in TEXT_KINDS:  # typed as text and parsed (a whole number is never silently rounded)
        return W.Text(value="", placeholder="default" if kind.startswith("optional") else "",
                      continuous_update=False, layout=W.Layout(width="74px" if kind == "float" else "66px"))
    if kind == "bool":
        return W.Checkbox(value=False, indent=False, layout=W.Layout(width="40px"))
    if kind == "tags":
        return W.TagsInput(value=[], allowed_tags=list(EPILOGUES), allow_duplicates=True,
                           layout=W.Layout(width="250px"))
    return W.Text(value="", layout=W.Layout(width="120px"))


def _lines(op: str) -> list[tuple[str, ...]]:
    """The form's lines: two short fields side by side where they follow each other, the rest alone."""
    out: list[tuple[str, ...]] = []
    pending: list[str] = []
    for name in fields_of(op):
        if field_kind(op, name) in _SHORT:
            pending.append(name)
            if len(pending) == 2:
                out.append(tuple(pending))
                pending = []
            continue
        if pending:
            out.append(tuple(pending))
            pending = []
        out.append((name,))
    if pending:
        out.append(tuple(pending))
    return out


class SpecForm:
    """The spec widgets; ``box`` is the form, ``spec`` the last valid spec, ``op`` the operation choice.

    ``on_change(spec)`` is called after each change that gives a new valid spec. ``widgets[op][field]`` are the
    controls (``form.conv``, ``.matmul``, ... the same by operation); ``boxes[op]`` holds them. ``guard(fn, *args)``
    runs every callback (the Lab's, which logs errors); by default a plain call.
    """

    def __init__(self, spec: Spec | None = None, on_change: Callable[[Spec], None] | None = None, *,
                 guard: Callable[..., Any] | None = None) -> None:
        import ipywidgets as W

        self.on_change = on_change
        self._guard: Callable[..., Any] = guard or (lambda fn, *args: fn(*args))
        self._silent = False
        self.error: SpecError | None = None
        first = next(iter(OPS.values()))
        spec = spec if spec is not None else first()
        self.spec: Spec = spec

        # Buttons as wide as their titles (11 operations and more: they wrap over lines, none is cut short).
        self.op = W.ToggleButtons(options=[(cls.title or op, op) for op, cls in OPS.items()], value=first.op,
                                  tooltips=[cls.description for cls in OPS.values()],
                                  style={"button_width": "auto"}).add_class("cl-op")
        self.op_note = W.HTML("", layout=W.Layout(margin="0 0 6px 0", width="400px")).add_class("cl-op-note")
        self.widgets: dict[str, dict[str, Any]] = {op: {n: _make_widget(W, op, n) for n in fields_of(op)}
                                                   for op in OPS}
        self.hints: dict[str, dict[str, Any]] = {op: {} for op in OPS}
        self.messages: dict[str, dict[str, Any]] = {op: {} for op in OPS}
        #: The cell (label, control, hint) of each field, and each line with its fields: hidden fields hide.
        self.cells: dict[str, dict[str, Any]] = {op: {} for op in OPS}
        self._lines: dict[str, list[tuple[tuple[str, ...], Any]]] = {op: [] for op in OPS}
        self.boxes: dict[str, Any] = {}
        for op, widgets in self.widgets.items():
            rows: list[Any] = []
            for name, widget in widgets.items():
                widget.add_class(f"cl-field-{name}")
                self.hints[op][name] = W.HTML("", layout=W.Layout(margin="0 0 0 6px")).add_class("cl-hint")
                self.messages[op][name] = W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 4px")
                                                 ).add_class("cl-message")
                widget.observe(lambda ch: self._guard(self._changed, ch), names="value")
            for line in _lines(op):
                if len(line) == 2:
                    cells = [cell(W, label_of(n), widgets[n], self.hints[op][n], i == 0) for i, n in enumerate(line)]
                    box = W.HBox(cells, layout=W.Layout(margin="1px 0"))
                    self.cells[op].update(zip(line, cells))
                else:
                    box = row(W, label_of(line[0]), widgets[line[0]], self.hints[op][line[0]])
                    self.cells[op][line[0]] = box
                self._lines[op].append((line, box))
                rows += [box, *(self.messages[op][n] for n in line)]
            self.boxes[op] = W.VBox(rows).add_class(f"cl-{op}-controls")
        self.general_message = W.HTML("", layout=W.Layout(display="none")).add_class("cl-message")
        self.op.observe(lambda ch: self._guard(self._op_changed, ch), names="value")
        self.box = W.VBox([self.op, self.op_note, *self.boxes.values(), self.general_message]
                          ).add_class("cl-controls")
        for cls in OPS.values():  # the hidden operations' controls start at their defaults
            self._fill(controls_from_spec(cls()))
        self.set_spec(spec)

    def __getattr__(self, name: str) -> Any:
        """``form.conv``, ``form.sdpa``, ...: an operation's widgets by field name; ``form.conv_box``: its box."""
        widgets = self.__dict__.get("widgets", {})
        if name in widgets:
            return widgets[name]
        if name.endswith("_box") and name[:-4] in widgets:
            return self.boxes[name[:-4]]
        raise AttributeError(name)

    # -------------------------------------------------------------------------------------------- values

    @property
    def active(self) -> dict[str, Any]:
        """The widgets of the operation shown now."""
        return self.widgets[self.op.value]

    def values(self, *, strict: bool = False) -> dict[str, Any]:
        """The shown operation's control values, typed (:func:`~.fields.parse_field`). A text that does not parse
        raises its SpecError with ``strict``; otherwise the current spec's value stands in (for the ranges shown)."""
        op = self.op.value
        out: dict[str, Any] = {"op": op}
        for name, widget in self.active.items():
            value, kind = widget.value, field_kind(op, name)
            if kind == "tags":
                value = tuple(value)
            elif kind == "text":  # a field of a type the form has no control for: its text, empty for None
                value = value.strip() or None
            elif kind in TEXT_KINDS:
                try:
                    value = parse_field(op, name, value)
                except SpecError:
                    if strict:
                        raise
                    value = getattr(self.spec, name) if self.spec.op == op else None
            out[name] = value
        return out

    def set_spec(self, spec: Spec) -> None:
        """Show ``spec`` (any operation; the choice follows) without a change callback, and make it current."""
        values = controls_from_spec(spec)
        self._fill(values)
        self._silent = True
        try:
            self.op.value = values["op"]
        finally:
            self._silent = False
        self._show_op()
        self.spec = spec
        self._clear_marks()
        self.update_limits()

    def _fill(self, values: dict[str, Any]) -> None:
        op = values["op"]
        self._silent = True
        try:
            for name, widget in self.widgets[op].items():
                value, kind = values[name], field_kind(op, name)
                if kind == "tags":
                    value = list(value)
                elif kind in TEXT_KINDS or kind == "text":
                    value = field_text(kind, value)
                widget.value = value
        finally:
            self._silent = False

    # -------------------------------------------------------------------------------------------- validation

    def validate(self) -> Spec | None:
        """Build the spec from the controls: on success it becomes :attr:`spec`; on a SpecError mark the field."""
        self.update_limits()
        try:
            spec = spec_from_controls(self.values(strict=True))
        except SpecError as e:
            self.mark(e)
            return None
        self._clear_marks()
        self.spec = spec
        return spec

    def mark(self, error: SpecError) -> None:
        """Mark the control that ``error`` names and show its message (a field without a control: under the form)."""
        self._clear_marks()
        self.error = error
        op = self.op.value
        widget = self.widgets[op].get(error.field)
        message = self.messages[op][error.field] if widget is not None else self.general_message
        mark_invalid(widget, message, f"{error.field}={shorten(error.value)}: {error.allowed}")

    def _clear_marks(self) -> None:
        self.error = None
        for op, widgets in self.widgets.items():
            for name, widget in widgets.items():
                clear_invalid(widget, self.messages[op][name])
        clear_invalid(None, self.general_message)

    @property
    def invalid(self) -> dict[str, str]:
        """Field -> message of the controls marked invalid now (at most one: the first error found)."""
        return {name: self.messages[op][name].value for op in self.widgets for name, w in self.widgets[op].items()
                if "cl-invalid" in w._dom_classes}

    @property
    def hidden(self) -> frozenset[str]:
        """The shown operation's fields hidden now."""
        return hidden_fields(self.values())

    def update_limits(self) -> dict[str, tuple[int, int]]:
        """Show each control's range or rule beside it (from the spec) and hide what the operation ignores now."""
        op = self.op.value
        values = self.values()
        ranges = limits(values)
        for name, text in hints(values).items():
            hint = self.hints[op].get(name)
            if hint is None:
                continue
            hint.value = f"<span class='cl-hint'>{html.escape(text)}</span>" if text else ""
            if name in ranges:
                lo, hi = ranges[name]
                self.widgets[op][name].tooltip = f"allowed: from {lo} to {hi}" + (f" ({text})" if text else "")
        hidden = hidden_fields(values)
        for name, box in self.cells[op].items():
            box.layout.display = "none" if name in hidden else None
        for line, box in self._lines[op]:
            if len(line) > 1:
                box.layout.display = "none" if all(n in hidden for n in line) else None
        return ranges

    # -------------------------------------------------------------------------------------------- callbacks

    def _show_op(self) -> None:
        for op, box in self.boxes.items():
            box.layout.display = "flex" if op == self.op.value else "none"
        self.op_note.value = OP_NOTE.format(html.escape(OPS[self.op.value].description or ""))

    def _op_changed(self, change: dict[str, Any]) -> None:
        self._show_op()
        self._changed(change)

    def _changed(self, change: dict[str, Any]) -> None:
        if self._silent:
            return
        before = self.spec
        spec = self.validate()
        if spec is not None and spec != before and self.on_change is not None:
            self.on_change(spec)


#: The name this form had before the Lab was split into parts.
SpecControls = SpecForm
