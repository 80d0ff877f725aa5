"""Widgets that edit a spec and the run options, and the pure helpers behind them.

The pure part (no widgets): :func:`controls_from_spec` and :func:`spec_from_controls` convert between a spec and
the flat dict of control values; :func:`limits` gives each integer field's allowed range given the other values
(padding's upper end is ``dilation * (r - 1)``, groups must divide ``c`` and ``k``, ...), so ranges follow each other.

:class:`SpecControls` holds the widgets. An invalid value never raises: the control that the
:class:`~cudnn_lab.errors.SpecError` names turns red (CSS class ``cl-invalid`` and a red ``layout.border``), a short
message appears under it, and :attr:`SpecControls.spec` keeps the last valid spec.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

from ..errors import SpecError
from ..specs import DIRECTIONS, DTYPES, EPILOGUES, LAYOUTS, ConvSpec, MatmulSpec, Spec
from ..specs.base import MAX_DIM

__all__ = ["CONV_FIELDS", "MATMUL_FIELDS", "OPS", "TIMING_CHOICES", "SpecControls", "controls_from_spec", "limits",
           "run_options_from_values", "spec_from_controls"]

OPS: dict[str, type[Spec]] = {"conv": ConvSpec, "matmul": MatmulSpec}
CONV_FIELDS: tuple[str, ...] = ("direction", "n", "c", "h", "w", "k", "r", "s", "padding", "stride", "dilation",
                                "groups", "layout", "dtype", "compute_dtype", "epilogue")
MATMUL_FIELDS: tuple[str, ...] = ("batch", "m", "n", "k", "transpose_a", "transpose_b", "dtype", "epilogue")
FIELDS: dict[str, tuple[str, ...]] = {"conv": CONV_FIELDS, "matmul": MATMUL_FIELDS}
PAIR_FIELDS = ("padding", "stride", "dilation")
#: Timing choices shown to the user -> ``cl.run`` keyword arguments.
TIMING_CHOICES: dict[str, dict[str, Any]] = {
    "auto (CUDA graph)": {"timing": "auto", "cold_l2": False},
    "events": {"timing": "events", "cold_l2": False},
    "cold L2": {"timing": "events", "cold_l2": True},
}
POLICY_CHOICES: dict[str, str] = {"heuristic choice": "heuristic", "all plans": "all"}
HEURISTIC_MODES = ("A", "B", "FALLBACK")
INVALID_BORDER = "2px solid #dc2626"


# ------------------------------------------------------------------------------------------------ pure helpers

def controls_from_spec(spec: Spec) -> dict[str, Any]:
    """The control values that show ``spec``: ``{"op": "conv", "n": 16, ..., "epilogue": ("bias", "relu")}``."""
    if not isinstance(spec, Spec) or spec.op not in FIELDS:
        raise SpecError("spec", type(spec).__name__, f"must be one of {', '.join(c.__name__ for c in OPS.values())}")
    return {"op": spec.op, **{f: getattr(spec, f) for f in FIELDS[spec.op]}}


def spec_from_controls(values: dict[str, Any]) -> Spec:
    """Build (and so validate) the spec that control values describe; raises :class:`SpecError` naming the field."""
    if not isinstance(values, dict):
        raise SpecError("values", type(values).__name__, "must be a dict of control values")
    values = dict(values)
    op = values.pop("op", "conv")
    if op not in OPS:
        raise SpecError("op", op, f"must be one of {', '.join(OPS)}")
    for key in ("epilogue", *PAIR_FIELDS):
        if isinstance(values.get(key), list):
            values[key] = tuple(values[key])
    return OPS[op].from_dict(values)


def _int(values: dict[str, Any], key: str, default: int) -> int:
    try:
        return int(values.get(key, default))
    except (TypeError, ValueError):
        return default


def _sides(values: dict[str, Any], key: str, default: int) -> tuple[int, int]:
    """(height, width) sides of an int-or-pair control value; junk reads as the default."""
    v = values.get(key, default)
    if isinstance(v, (list, tuple)) and len(v) == 2:
        try:
            return int(v[0]), int(v[1])
        except (TypeError, ValueError):
            return default, default
    side = _int(values, key, default)
    return side, side


def limits(values: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Allowed (low, high) of each integer control, the others held as they are.

    Conv: ``padding`` up to ``dilation*(r-1)``; ``r`` from what padding needs to what ``h + 2*padding`` allows
    (``s`` with ``w`` alike); ``dilation`` up to what the input's padded extent allows; ``h``/``w`` at least the
    dilated filter's extent less the padding; ``groups`` up to ``gcd(c, k)`` (and it must divide both).
    """
    op = values.get("op", "conv")
    if op == "matmul":
        return {f: (1, MAX_DIM) for f in ("batch", "m", "n", "k")}
    c, k = _int(values, "c", 1), _int(values, "k", 1)
    r, s = max(_int(values, "r", 1), 1), max(_int(values, "s", 1), 1)
    h, w = max(_int(values, "h", 1), 1), max(_int(values, "w", 1), 1)
    ph, pw = _sides(values, "padding", 0)
    dh, dw = _sides(values, "dilation", 1)
    ph, pw, dh, dw = max(ph, 0), max(pw, 0), max(dh, 1), max(dw, 1)

    def filter_range(size: int, p: int, d: int) -> tuple[int, int]:
        lo = math.ceil(p / d) + 1  # padding <= d*(f-1)
        hi = (size + 2 * p - 1) // d + 1  # size + 2p >= d*(f-1) + 1
        return lo, min(hi, MAX_DIM)

    def dilation_range(size: int, p: int, f: int) -> tuple[int, int]:
        if f == 1:
            return 1, 64
        return max(1, math.ceil(p / (f - 1))), min(64, (size + 2 * p - 1) // (f - 1))

    d_lo = max(dilation_range(h, ph, r)[0], dilation_range(w, pw, s)[0])
    d_hi = min(dilation_range(h, ph, r)[1], dilation_range(w, pw, s)[1])
    r_lo, r_hi = filter_range(h, ph, dh)
    s_lo, s_hi = filter_range(w, pw, dw)
    return {
        "n": (1, MAX_DIM), "c": (1, MAX_DIM), "k": (1, MAX_DIM),
        "h": (max(1, dh * (r - 1) + 1 - 2 * ph), MAX_DIM), "w": (max(1, dw * (s - 1) + 1 - 2 * pw), MAX_DIM),
        "r": (r_lo, r_hi), "s": (s_lo, s_hi),
        "padding": (0, min(dh * (r - 1), dw * (s - 1))),
        "stride": (1, 64),
        "dilation": (d_lo, d_hi),
        "groups": (1, max(1, math.gcd(max(c, 1), max(k, 1)))),
    }


def run_options_from_values(heuristics: Any, policy: str, timing: str) -> dict[str, Any]:
    """Run-option widgets' values (mode list, policy label, timing label) -> ``cl.run`` keyword arguments."""
    if policy not in POLICY_CHOICES:
        raise SpecError("plans", policy, f"must be one of {', '.join(POLICY_CHOICES)}")
    if timing not in TIMING_CHOICES:
        raise SpecError("timing", timing, f"must be one of {', '.join(TIMING_CHOICES)}")
    modes = [m for m in HEURISTIC_MODES if m in tuple(heuristics)]
    if not modes:
        raise SpecError("heuristics", tuple(heuristics), f"tick at least one of {', '.join(HEURISTIC_MODES)}")
    return {"heuristics": tuple(modes), "plans": POLICY_CHOICES[policy], **TIMING_CHOICES[timing]}


def _timing_label(timing: str, cold_l2: bool) -> str:
    if cold_l2:
        return "cold L2"
    return "events" if timing == "events" else "auto (CUDA graph)"


# ------------------------------------------------------------------------------------------------ widgets

#: How the controls are laid out: a pair of names shares a line.
_LINES: dict[str, tuple[tuple[str, ...], ...]] = {
    "conv": (("direction",), ("n", "c"), ("h", "w"), ("k", "groups"), ("r", "s"), ("padding", "stride"),
             ("dilation", "compute_dtype"), ("layout",), ("dtype",), ("epilogue",)),
    "matmul": (("batch", "m"), ("n", "k"), ("transpose_a", "transpose_b"), ("dtype",), ("epilogue",)),
}


def _cell(W: Any, label: str, widget: Any, hint: Any, first: bool) -> Any:
    """Half a line: label, control and hint, for the short integer fields."""
    width = "80px" if first else "60px"
    head = W.HTML(f"<span class='cl-label'>{html.escape(label)}</span>", layout=W.Layout(width=width, min_width=width))
    return W.HBox([head, widget, hint], layout=W.Layout(width="204px" if first else "auto", align_items="center"))


def _row(W: Any, label: str, widget: Any, *rest: Any) -> Any:
    """One labelled line: a fixed-width label, the control, then anything after it (a hint)."""
    head = W.HTML(f"<span class='cl-label'>{html.escape(label)}</span>",
                  layout=W.Layout(width="80px", min_width="80px"))
    return W.HBox([head, widget, *rest], layout=W.Layout(align_items="center", margin="1px 0"))


class SpecControls:
    """The spec and run-option widgets; ``box`` is the panel, ``spec`` the last valid spec.

    ``on_change(spec)`` is called after each change that gives a new valid spec. Values can be set headless
    (``controls.conv["r"].value = 5``); :meth:`values`, :meth:`validate` and :meth:`run_options` are plain methods.
    """

    def __init__(self, spec: Spec | None = None, on_change: Callable[[Spec], None] | None = None) -> None:
        import ipywidgets as W

        self._W = W
        self.on_change = on_change
        self._silent = False
        self._pairs: dict[str, tuple[int, int]] = {}
        self.error: SpecError | None = None
        spec = spec if spec is not None else ConvSpec()
        self.spec: Spec = spec

        def int_text() -> Any:
            return W.IntText(value=1, layout=W.Layout(width="66px"))

        def toggle(options: Any, width: str = "64px") -> Any:
            return W.ToggleButtons(options=options, style={"button_width": width})

        def tags() -> Any:
            return W.TagsInput(value=[], allowed_tags=list(EPILOGUES), allow_duplicates=True,
                               layout=W.Layout(width="250px"))

        self.op = toggle(["conv", "matmul"], "76px")
        self.conv: dict[str, Any] = {
            "direction": toggle(list(DIRECTIONS)),
            **{f: int_text() for f in ("n", "c", "h", "w", "k", "r", "s", "padding", "stride", "dilation",
                                       "groups")},
            "layout": toggle(list(LAYOUTS), "70px"),
            "dtype": toggle(list(DTYPES), "58px"),
            "compute_dtype": W.Dropdown(options=["fp32", "fp16"], value="fp32", layout=W.Layout(width="66px")),
            "epilogue": tags(),
        }
        self.matmul: dict[str, Any] = {
            **{f: int_text() for f in ("batch", "m", "n", "k")},
            "transpose_a": W.Checkbox(value=False, indent=False, layout=W.Layout(width="40px")),
            "transpose_b": W.Checkbox(value=False, indent=False, layout=W.Layout(width="40px")),
            "dtype": toggle(list(DTYPES), "58px"),
            "epilogue": tags(),
        }
        labels = {"compute_dtype": "compute", "transpose_a": "transpose A", "transpose_b": "transpose B"}
        self.widgets: dict[str, dict[str, Any]] = {"conv": self.conv, "matmul": self.matmul}
        self.hints: dict[str, dict[str, Any]] = {op: {} for op in FIELDS}
        self.messages: dict[str, dict[str, Any]] = {op: {} for op in FIELDS}
        rows: dict[str, list[Any]] = {op: [] for op in FIELDS}
        for op, widgets in self.widgets.items():
            for name, widget in widgets.items():
                widget.add_class(f"cl-field-{name}")
                self.hints[op][name] = W.HTML("", layout=W.Layout(margin="0 0 0 6px")).add_class("cl-hint")
                self.messages[op][name] = W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 4px")
                                                 ).add_class("cl-message")
                widget.observe(self._changed, names="value")
            for line in _LINES[op]:
                if len(line) == 2:  # two short fields side by side
                    cells = [_cell(W, labels.get(n, n), widgets[n], self.hints[op][n], i == 0)
                             for i, n in enumerate(line)]
                    rows[op].append(W.HBox(cells, layout=W.Layout(margin="1px 0")))
                else:
                    rows[op].append(_row(W, labels.get(line[0], line[0]), widgets[line[0]],
                                         self.hints[op][line[0]]))
                rows[op] += [self.messages[op][n] for n in line]
        self.general_message = W.HTML("", layout=W.Layout(display="none")).add_class("cl-message")
        self.conv_box = W.VBox(rows["conv"]).add_class("cl-conv-controls")
        self.matmul_box = W.VBox(rows["matmul"]).add_class("cl-matmul-controls")
        self.op.observe(self._op_changed, names="value")

        # Run options
        self.heuristics = {m: W.Checkbox(value=m in ("A", "FALLBACK"), description=m, indent=False,
                                         layout=W.Layout(width="auto", margin="0 12px 0 0"))
                           for m in HEURISTIC_MODES}
        self.policy = W.ToggleButtons(options=list(POLICY_CHOICES), value="heuristic choice",
                                      style={"button_width": "136px"},
                                      tooltips=["build only the heuristics' pick (what cuDNN would run)",
                                                "build and time every proposed plan"])
        self.timing = W.RadioButtons(options=list(TIMING_CHOICES), value="auto (CUDA graph)",
                                     layout=W.Layout(width="auto"))
        self.run_box = W.VBox([_row(W, "heuristics", W.HBox(list(self.heuristics.values()))),
                               _row(W, "plans", self.policy), _row(W, "timing", self.timing)]
                              ).add_class("cl-run-options")

        self.box = W.VBox([_row(W, "operation", self.op), self.conv_box, self.matmul_box, self.general_message]
                          ).add_class("cl-controls")
        for other in (ConvSpec(), MatmulSpec()):  # the hidden operation's controls start at its defaults
            self._fill(controls_from_spec(other))
        self.set_spec(spec)

    # -------------------------------------------------------------------------------------------- values

    @property
    def active(self) -> dict[str, Any]:
        """The widgets of the operation shown now."""
        return self.widgets[self.op.value]

    def values(self) -> dict[str, Any]:
        """The shown operation's control values, as :func:`spec_from_controls` takes them."""
        out: dict[str, Any] = {"op": self.op.value}
        for name, widget in self.active.items():
            value = widget.value
            if name == "epilogue":
                value = tuple(value)
            if name in PAIR_FIELDS and name in self._pairs and value == self._pairs[name][0]:
                value = self._pairs[name]  # an (h, w) pair set from a spec stays while its control is untouched
            out[name] = value
        return out

    def set_spec(self, spec: Spec) -> None:
        """Show ``spec`` in the controls (no change callback) and make it the current spec."""
        values = controls_from_spec(spec)
        self._pairs = {}
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
        """Set one operation's widgets from control values without firing the change callback."""
        self._silent = True
        try:
            for name, widget in self.widgets[values["op"]].items():
                value = values[name]
                if name in PAIR_FIELDS and isinstance(value, tuple):
                    self._pairs[name] = value
                    value = value[0]
                widget.value = list(value) if name == "epilogue" else value
        finally:
            self._silent = False

    def run_options(self) -> dict[str, Any]:
        """``cl.run`` keyword arguments: heuristics, plans, timing, cold_l2 (SpecError if no mode is ticked)."""
        return run_options_from_values([m for m, cb in self.heuristics.items() if cb.value], self.policy.value,
                                       self.timing.value)

    def set_run_options(self, options: dict[str, Any]) -> None:
        """Inverse of :meth:`run_options` (missing keys keep their value)."""
        if "heuristics" in options:
            modes = {str(m).upper() for m in options["heuristics"]}
            unknown = modes - set(HEURISTIC_MODES)
            if unknown:
                raise SpecError("heuristics", sorted(unknown), f"must be among {', '.join(HEURISTIC_MODES)}")
            for m, cb in self.heuristics.items():
                cb.value = m in modes
        if "plans" in options:
            by_value = {v: k for k, v in POLICY_CHOICES.items()}
            if options["plans"] not in by_value:
                raise SpecError("plans", options["plans"], f"must be one of {', '.join(by_value)}")
            self.policy.value = by_value[options["plans"]]
        if "timing" in options or "cold_l2" in options:
            timing = options.get("timing", "auto")
            if timing not in ("auto", "cuda_graph", "events"):
                raise SpecError("timing", timing, "must be one of auto, cuda_graph, events")
            self.timing.value = _timing_label(timing, bool(options.get("cold_l2", False)))

    # -------------------------------------------------------------------------------------------- validation

    def validate(self) -> Spec | None:
        """Build the spec from the controls: on success it becomes :attr:`spec`; on a SpecError mark the field."""
        self.update_limits()
        try:
            spec = spec_from_controls(self.values())
        except SpecError as e:
            self.mark(e)
            return None
        self._clear_marks()
        self.spec = spec
        return spec

    def mark(self, error: SpecError) -> None:
        """Mark the control that ``error`` names (red border, class ``cl-invalid``) and show its message."""
        self._clear_marks()
        self.error = error
        op = self.op.value
        field = error.field
        if field == "compute_dtype" and field not in self.widgets[op]:
            field = "dtype"
        text = f"{error.field}={error.value!r}: {error.allowed}"
        widget = self.widgets[op].get(field)
        if widget is None:
            msg = self.general_message
        else:
            widget.add_class("cl-invalid")
            widget.layout.border = INVALID_BORDER
            msg = self.messages[op][field]
        msg.value = f"<span class='cl-error'>{html.escape(text)}</span>"
        msg.layout.display = "flex"

    def _clear_marks(self) -> None:
        self.error = None
        for op, widgets in self.widgets.items():
            for name, widget in widgets.items():
                if "cl-invalid" in widget._dom_classes:
                    widget.remove_class("cl-invalid")
                widget.layout.border = None
                msg = self.messages[op][name]
                msg.value, msg.layout.display = "", "none"
        self.general_message.value, self.general_message.layout.display = "", "none"

    @property
    def invalid(self) -> dict[str, str]:
        """Field -> message of the controls marked invalid now (at most one: the first error found)."""
        return {name: self.messages[op][name].value for op in self.widgets for name, w in self.widgets[op].items()
                if "cl-invalid" in w._dom_classes}

    def update_limits(self) -> dict[str, tuple[int, int]]:
        """Recompute every integer control's range from the others and show it next to the control."""
        op = self.op.value
        ranges = limits(self.values())
        for name, (lo, hi) in ranges.items():
            hint = self.hints[op].get(name)
            if hint is None:
                continue
            if lo > hi:
                text = f"none fits ({lo} > {hi})"
            elif name == "groups":
                text = f"divides {hi}"
            elif hi >= MAX_DIM:
                text = "" if lo <= 1 else f"≥ {lo}"
            else:
                text = f"{lo}–{hi}"
            hint.value = f"<span class='cl-hint'>{html.escape(text)}</span>" if text else ""
            tip = "a divisor of gcd(c, k)" if name == "groups" else f"from {lo} to {hi}"
            self.widgets[op][name].tooltip = f"allowed: {tip}"
        return ranges

    # -------------------------------------------------------------------------------------------- callbacks

    def _show_op(self) -> None:
        conv = self.op.value == "conv"
        self.conv_box.layout.display = "flex" if conv else "none"
        self.matmul_box.layout.display = "none" if conv else "flex"

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
