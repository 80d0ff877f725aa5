"""The spec form: an operation choice and, per operation, one control per spec field (:mod:`.fields` says which).

A choice field becomes toggle buttons (a dropdown when its labels are long), a number (whole, pair, float,
optional) a ``Text`` that :func:`~.fields.parse_field` reads (so "3.5" in a whole-number field is refused with a
message, never truncated as ``IntText`` would), a flag a ``Checkbox``, the epilogue a ``TagsInput``. An invalid value
never raises: the control that the :class:`~cudnn_lab.errors.SpecError` names turns red with a short message under
it, and :attr:`SpecForm.spec` keeps the last valid spec.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..errors import SpecError, shorten
from ..specs import EPILOGUES, Spec
from ..specs.presets import preset_info
from .fields import (OPS, TEXT_KINDS, controls_from_spec, field_kind, field_text, fields_of, hidden_fields, hints,
                     label_of, limits, parse_field, spec_from_controls)
from .style import (cell, clear_invalid, hint_html, html_style, mark_invalid, row,
                    set_shown, share_layout, shared_style)
from .presets import PresetPicker

__all__ = ["OP_NOTE", "SpecControls", "SpecForm"]

#: The operation's own description (from its spec) shown under the choice: what it is and how cuDNN runs it.
OP_NOTE = "<div class='cl-hint cl-op-note-text' style='white-space: normal; line-height: 1.35'>{}</div>"
#: Kinds of field short enough to share a line with another.
_SHORT = frozenset({"int", "pair", "optional_int", "bool", "float", "optional_float"})


def _control_value(op: str, name: str, value: Any) -> Any:
    """A field's value as its control holds it (a list for tags, text for typed fields)."""
    kind = field_kind(op, name)
    if kind == "tags":
        return list(value)
    if kind in TEXT_KINDS or kind == "text":
        return field_text(kind, value)
    return value


def _hint_text(text: str) -> str:
    return f"<span class='cl-hint'>{html.escape(text)}</span>" if text else ""


def _range_tip(lo: Any, hi: Any, text: str) -> str:
    return f"allowed: from {lo} to {hi}" + (f" ({text})" if text else "")


def _make_widget(W: Any, op: str, name: str, value: Any = None, tooltip: str | None = None) -> Any:
    """The control of one spec field, by its kind, with the class ``cl-field-<name>`` (given when made: a class
    added after is one more comm message per control at start), holding ``value`` (a control value, see
    :func:`_control_value`; None: the kind's empty value) and ``tooltip``; sizes follow the choices' text."""
    from ipywidgets.widgets.widget_description import DescriptionStyle
    from ipywidgets.widgets.widget_selection import ToggleButtonsStyle
    from ipywidgets.widgets.widget_string import TextStyle

    # Layouts and styles are shared between the controls that look alike (one widget model each, not one per
    # control): a Lab at start makes few widget models.
    kind = field_kind(op, name)
    field_class = f"cl-field-{name}"
    if kind == "choice":
        options = list(OPS[op].field_choices()[name])
        longest = max(len(str(o)) for o in options)
        if longest > 12 or len(options) > 4:
            return share_layout(W, W.Dropdown, {"width": f"{longest * 8 + 40}px"}, options=options,
                                value=options[0] if value is None else value, tooltip=tooltip,
                                style=shared_style(W, "dropdown-style", DescriptionStyle), _dom_classes=(field_class,))
        width = f"{max(longest * 8 + 18, 52)}px"
        return share_layout(W, W.ToggleButtons, {}, options=options, value=options[0] if value is None else value,
                            tooltip=tooltip, style=shared_style(
            W, f"toggle-style-{width}", lambda: ToggleButtonsStyle(button_width=width)),
            _dom_classes=(field_class, "cl-compact"))
    text_style = shared_style(W, "text-style", TextStyle)
    if kind in TEXT_KINDS:  # typed as text and parsed (a whole number is never silently rounded)
        return share_layout(W, W.Text, {"width": "74px" if kind == "float" else "66px"}, value=value or "",
                            tooltip=tooltip,
                            placeholder="default" if kind.startswith("optional") else "", continuous_update=False,
                            style=text_style, _dom_classes=(field_class,))
    if kind == "bool":  # its box as wide as a checkbox, so that nothing after it is covered
        from ipywidgets.widgets.widget_bool import CheckboxStyle

        return share_layout(W, W.Checkbox, {"width": "40px"}, value=bool(value), indent=False, tooltip=tooltip,
                            style=shared_style(W, "checkbox-style", CheckboxStyle),
                            _dom_classes=(field_class, "cl-flag"))
    if kind == "tags":
        return share_layout(W, W.TagsInput, {"width": "250px"}, value=value or [], allowed_tags=list(EPILOGUES),
                            allow_duplicates=True, _dom_classes=(field_class,))
    return share_layout(W, W.Text, {"width": "120px"}, value=value or "", tooltip=tooltip, style=text_style,
                        _dom_classes=(field_class,))


#: A field whose hint (at the family's defaults) is longer than this has a line of its own: beside another field
#: its hint would wrap into a narrow column.
_PAIRED_HINT_CHARS = 16


def _lines(op: str) -> list[tuple[str, ...]]:
    """The form's lines: two short fields side by side where they follow each other, the rest alone."""
    out: list[tuple[str, ...]] = []
    pending: list[str] = []
    texts = hints(controls_from_spec(OPS[op]()))
    for name in fields_of(op):
        if field_kind(op, name) in _SHORT and len(texts.get(name, "")) <= _PAIRED_HINT_CHARS:
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


class _OpForm:
    """One operation's form: its controls, hints, cells, lines and box (built by :meth:`SpecForm._build`)."""

    def __init__(self) -> None:
        self.widgets: dict[str, Any] = {}
        self.hints: dict[str, Any] = {}
        self.cells: dict[str, Any] = {}
        self.lines: list[tuple[tuple[str, ...], Any]] = []
        self.messages: dict[str, Any] = {}
        self.message: Any = None
        self.box: Any = None


class _ByOp(Mapping):
    """``op -> part`` of the operations' forms (``form.widgets['sdpa']``): reaching an operation builds its form."""

    def __init__(self, form: SpecForm, part: str) -> None:
        self._form, self._part = form, part

    def __getitem__(self, op: str) -> Any:
        if op not in OPS:
            raise KeyError(op)
        return getattr(self._form._build(op), self._part)

    def __contains__(self, op: object) -> bool:
        return op in OPS

    def __iter__(self) -> Iterator[str]:
        return iter(OPS)

    def __len__(self) -> int:
        return len(OPS)


class SpecForm:
    """The spec widgets; ``box`` is the form, ``spec`` the last valid spec, ``op`` the operation choice.

    ``on_change(spec)`` is called after each change that gives a new valid spec. ``presets`` is the real-model
    preset picker above the operation choice (:meth:`apply_preset` is what picking one does; :attr:`preset` names
    the preset picked last, :attr:`preset_status` says whether the form still shows it). ``widgets[op][field]`` are the
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
        #: Each operation's form, built when first shown (or first reached through the views below), then kept:
        #: a Lab shows one operation at a time, so the others cost nothing until chosen.
        self._built: dict[str, _OpForm] = {}
        self.widgets: Mapping[str, dict[str, Any]] = _ByOp(self, "widgets")
        self.hints: Mapping[str, dict[str, Any]] = _ByOp(self, "hints")
        #: The message under a field (one per operation, moved under the field it speaks of).
        self.messages: Mapping[str, dict[str, Any]] = _ByOp(self, "messages")
        #: The cell (label, control, hint) of each field, and each line with its fields: hidden fields hide.
        self.cells: Mapping[str, dict[str, Any]] = _ByOp(self, "cells")
        self.boxes: Mapping[str, Any] = _ByOp(self, "box")
        self.general_message = W.HTML("", layout=W.Layout(display="none")).add_class("cl-message")
        self.presets = PresetPicker(W, pick=lambda name: self._guard(self.apply_preset, name))
        self.op.observe(lambda ch: self._guard(self._op_changed, ch), names="value")
        # A choice made in the browser takes effect in the guard's turn: delivered on another kernel thread (the
        # widgets' subshell) during a Load, it comes after the Load's own switch of operation instead of under it.
        sync = self.op.set_state
        self.op.set_state = lambda state: self._guard(sync, state)
        self.box = W.VBox([*self.presets.parts, self.op, self.op_note, self.general_message]
                          ).add_class("cl-controls")
        self.presets.host = self.box
        self.set_spec(spec)

    def _build(self, op: str, values: dict[str, Any] | None = None) -> _OpForm:
        """``op``'s form, built on first use and kept; its controls made holding ``values`` (control values of
        ``op``; default: the defaults) with their hints and ranges, so that showing it sends no update."""
        part = self._built.get(op)
        if part is not None:
            return part
        import ipywidgets as W

        part = self._built[op] = _OpForm()
        values = values if values is not None and values.get("op") == op else controls_from_spec(OPS[op]())
        texts, ranges = hints(values), limits(values)
        for name in fields_of(op):
            tip = _range_tip(*ranges[name], texts.get(name, "")) if name in ranges else None
            widget = part.widgets[name] = _make_widget(W, op, name, _control_value(op, name, values[name]), tip)
            part.hints[name] = hint_html(W, value=_hint_text(texts.get(name, "")))
            widget.observe(lambda ch: self._guard(self._changed, ch), names="value")
        # One message per operation (at most one error is shown): marking a field moves it under that field's line.
        part.message = W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 4px"),
                              style=html_style(W)).add_class("cl-message")
        part.messages = {name: part.message for name in part.widgets}
        for line in _lines(op):
            if len(line) == 2:
                cells = [cell(W, label_of(n), part.widgets[n], part.hints[n], i == 0) for i, n in enumerate(line)]
                box = share_layout(W, W.HBox, {"margin": "1px 0"}, cells, _dom_classes=("cl-pair",))
                part.cells.update(zip(line, cells))
            else:
                box = row(W, label_of(line[0]), part.widgets[line[0]], part.hints[line[0]])
                part.cells[line[0]] = box
            part.lines.append((line, box))
        part.box = W.VBox([box for _, box in part.lines] + [part.message],
                          layout=W.Layout(display="flex" if op == self.op.value else "none")
                          ).add_class(f"cl-{op}-controls")
        return part

    def __getattr__(self, name: str) -> Any:
        """``form.conv``, ``form.sdpa``, ...: an operation's widgets by field name; ``form.conv_box``: its box."""
        widgets = self.__dict__.get("widgets", {})
        if name in widgets:
            return widgets[name]
        if name.endswith("_box") and name[:-4] in widgets:
            return self.__dict__["boxes"][name[:-4]]
        raise AttributeError(name)

    # -------------------------------------------------------------------------------------------- values

    @property
    def active(self) -> dict[str, Any]:
        """The widgets of the operation shown now."""
        return self.widgets[self.op.value]

    def values(self, *, strict: bool = False) -> dict[str, Any]:
        """The shown operation's control values, typed (:func:`~.fields.parse_field`). A text that does not parse
        raises its SpecError with ``strict``; otherwise the current spec's value stands in (for the ranges shown)."""
        values, error = self._read()
        if strict and error is not None:
            raise error
        return values

    def _read(self) -> tuple[dict[str, Any], SpecError | None]:
        """One reading of the controls: :meth:`values` (the current spec's value standing in for a text that does
        not parse) and the first such text's SpecError (None: every text parsed)."""
        op = self.op.value
        out: dict[str, Any] = {"op": op}
        error: SpecError | None = None
        for name, widget in self.active.items():
            value, kind = widget.value, field_kind(op, name)
            if kind == "tags":
                value = tuple(value)
            elif kind == "text":  # a field of a type the form has no control for: its text, empty for None
                value = value.strip() or None
            elif kind in TEXT_KINDS:
                try:
                    value = parse_field(op, name, value)
                except SpecError as e:
                    error = error or e
                    value = getattr(self.spec, name) if self.spec.op == op else None
            out[name] = value
        return out, error

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
        self.presets.show(self.presets.applied, spec)

    # -------------------------------------------------------------------------------------------- presets

    @property
    def preset(self) -> str | None:
        """The real-model preset picked last (its name in ``cl.presets()``), None before one is picked; the form
        may have been edited since (:attr:`preset_status`)."""
        return self.presets.applied

    @property
    def preset_status(self) -> str:
        """'preset: NAME' while the form shows the preset's spec, 'edited from NAME' after an edit, '' for none."""
        return self.presets.status

    def apply_preset(self, name: str) -> Spec:
        """Show the real-model preset ``name`` (the operation choice follows) and call ``on_change`` with its spec
        when that is a change; OptionError naming ``preset`` and listing the names for an unknown one."""
        info = preset_info(name)
        before = self.spec
        self.presets.applied = info.name
        self.set_spec(info.spec)
        if info.spec != before and self.on_change is not None:
            self.on_change(info.spec)
        return info.spec

    def restore_preset(self, name: str | None) -> None:
        """Say that the spec shown came from preset ``name`` (a Lab state's; None: none), without changing it."""
        self.presets.show(name, self.spec)

    def _fill(self, values: dict[str, Any]) -> None:
        op = values["op"]
        widgets = self._build(op, values).widgets  # built first (holding these values when built now)
        silent, self._silent = self._silent, True
        try:
            for name, widget in widgets.items():
                widget.value = _control_value(op, name, values[name])
        finally:
            self._silent = silent

    # -------------------------------------------------------------------------------------------- validation

    def validate(self) -> Spec | None:
        """Build the spec from the controls: on success it becomes :attr:`spec`; on a SpecError mark the field."""
        values, error = self._read()  # the form is read once per change
        self.update_limits(values)
        try:
            if error is not None:
                raise error
            spec = spec_from_controls(values)
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
        part = self._build(op)
        widget = part.widgets.get(error.field)
        message = part.message if widget is not None else self.general_message
        if widget is not None:  # the message goes under the line of the field it speaks of
            rows = [box for line, box in part.lines]
            at = next(i for i, (line, _) in enumerate(part.lines) if error.field in line) + 1
            part.box.children = (*rows[:at], message, *rows[at:])
        mark_invalid(widget, message, f"{error.field}={shorten(error.value)}: {error.allowed}")

    def _clear_marks(self) -> None:
        self.error = None
        for part in self._built.values():
            for widget in part.widgets.values():
                clear_invalid(widget, None)
            clear_invalid(None, part.message)
        clear_invalid(None, self.general_message)

    @property
    def invalid(self) -> dict[str, str]:
        """Field -> message of the controls marked invalid now (at most one: the first error found)."""
        return {name: part.message.value for part in self._built.values() for name, w in part.widgets.items()
                if "cl-invalid" in w._dom_classes}

    @property
    def hidden(self) -> frozenset[str]:
        """The shown operation's fields hidden now."""
        return hidden_fields(self.values())

    def update_limits(self, values: dict[str, Any] | None = None) -> dict[str, tuple[int, int]]:
        """Show each control's range or rule beside it (from the spec) and hide what the operation ignores now;
        ``values``: the form as just read by :meth:`values` (default: read it now)."""
        op = self.op.value
        part = self._build(op)
        values = self.values() if values is None else values
        ranges = limits(values)
        for name, text in hints(values).items():
            hint = part.hints.get(name)
            if hint is None:
                continue
            hint.value = _hint_text(text)
            if name in ranges:
                part.widgets[name].tooltip = _range_tip(*ranges[name], text)
        hidden = hidden_fields(values)
        for name, box in part.cells.items():
            set_shown(box, name not in hidden)
        for line, box in part.lines:
            if len(line) > 1:
                set_shown(box, not all(n in hidden for n in line))
        return ranges

    # -------------------------------------------------------------------------------------------- callbacks

    def _show_op(self) -> None:
        shown = self._build(self.op.value).box
        for part in self._built.values():
            part.box.layout.display = "flex" if part.box is shown else "none"
        if shown not in self.box.children:  # only the operation shown is on the page (the others are kept)
            self.box.children = (*self.presets.parts, self.op, self.op_note, shown, self.general_message)
        self.op_note.value = OP_NOTE.format(html.escape(OPS[self.op.value].description or ""))

    def _op_changed(self, change: dict[str, Any]) -> None:
        self._show_op()
        self._changed(change)

    def _changed(self, change: dict[str, Any]) -> None:
        if self._silent:
            return
        before = self.spec
        spec = self.validate()
        if spec is not None and spec != before:
            self.presets.show(self.presets.applied, spec)  # 'edited from NAME' once it differs from the preset
            if self.on_change is not None:
                self.on_change(spec)


#: The name this form had before the Lab was split into parts.
SpecControls = SpecForm
