"""Widgets that edit a spec and the run options, and the pure helpers behind them.

Every operation the kit builds has its controls: convolution (:class:`~cudnn_lab.specs.ConvSpec`), matrix
multiplication (``MatmulSpec``), attention (``SdpaSpec``), normalization (``NormSpec``) and pooling (``PoolSpec``).
Each operation's controls are made from its spec's dataclass fields (:data:`FIELDS`): a choice field becomes toggle
buttons, an integer an ``IntText``, a flag a ``Checkbox``, a float a ``FloatText``, an optional float a ``Text``
(empty: the spec's default).

The pure part (no widgets): :func:`controls_from_spec` and :func:`spec_from_controls` convert between a spec and
the flat dict of control values; :func:`limits` gives each integer field's allowed range given the other values
(conv: padding's upper end is ``dilation * (r - 1)``, groups must divide ``c`` and ``k``; attention: kv_heads
divides heads; pooling: padding at most ``window // 2``, ...), so ranges follow each other; :func:`hidden_fields`
names the fields an operation ignores in its current setting (a layer norm has no ``n, c, h, w``).

:class:`SpecControls` holds the widgets. An invalid value never raises: the control that the
:class:`~cudnn_lab.errors.SpecError` names turns red (CSS class ``cl-invalid`` and a red ``layout.border``), a short
message appears under it, and :attr:`SpecControls.spec` keeps the last valid spec.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Callable
from typing import Any

from ..errors import SpecError
from ..specs import (DIRECTIONS, DTYPES, EPILOGUES, LAYOUTS, ConvSpec, MatmulSpec, NormSpec, PoolSpec, SdpaSpec,
                     Spec)
from ..specs.base import MAX_DIM
from ..specs.norm import IMAGE_KINDS, KINDS, PHASES, ROW_KINDS
from ..specs.pool import POOL_MODES
from ..specs.sdpa import SDPA_DIRECTIONS, SDPA_DTYPES, SDPA_HEAD_DIMS, SDPA_LAYOUTS

__all__ = ["CHOICES", "CONV_FIELDS", "FIELDS", "MATMUL_FIELDS", "NORM_FIELDS", "NOT_OFFERED", "OPS", "OP_LABELS",
           "PAIR_FIELDS", "POOL_FIELDS", "SDPA_FIELDS", "TIMING_CHOICES", "SpecControls", "controls_from_spec",
           "field_kind", "hidden_fields", "hints", "limits", "run_options_from_values", "spec_from_controls"]

#: The operations, in the order the operation choice shows them, and the spec each edits.
OPS: dict[str, type[Spec]] = {"conv": ConvSpec, "matmul": MatmulSpec, "sdpa": SdpaSpec, "norm": NormSpec,
                              "pool": PoolSpec}
#: The operation choice's button labels and tooltips.
OP_LABELS: dict[str, tuple[str, str]] = {
    "conv": ("conv", "convolution: ConvSpec (fprop, dgrad, wgrad, fused epilogue)"),
    "matmul": ("matmul", "matrix multiplication: MatmulSpec (batched, fused epilogue)"),
    "sdpa": ("attention", "scaled dot-product attention: SdpaSpec (forward, training, backward)"),
    "norm": ("norm", "normalization: NormSpec (layer, RMS, batch and instance norm)"),
    "pool": ("pooling", "pooling: PoolSpec (max, average; cuDNN's classic call, no graph API node)"),
}
#: What cuDNN's classic feature list has that the frontend 1.32 graph API does not offer from Python: shown under the
#: operation choice with what to use instead. The kit does not emulate them behind the user's back.
NOT_OFFERED: dict[str, str] = {
    "RNN": "recurrent networks (cudnnRNNForward: LSTM, GRU) are in cuDNN's classic API only; the frontend 1.32 "
           "graph API has no RNN node, so there is no graph to build, draw or time here.",
    "tensor transform": "a layout change (cudnnTransformTensor, NCHW <-> NHWC) is not a node of the frontend 1.32 "
                        "graph API. Here a layout is chosen by the tensors' strides: see the layout control of a "
                        "convolution (or a norm or pooling); the kit does not silently emulate a transform.",
}
_FIELD_ORDER: dict[str, tuple[str, ...]] = {
    "conv": ("direction", "n", "c", "h", "w", "k", "r", "s", "padding", "stride", "dilation", "groups", "layout",
             "dtype", "compute_dtype", "epilogue"),
    "matmul": ("batch", "m", "n", "k", "transpose_a", "transpose_b", "dtype", "epilogue"),
    "sdpa": ("direction", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal", "sliding_window",
             "attn_scale", "layout", "dtype"),
    "norm": ("kind", "phase", "rows", "features", "n", "c", "h", "w", "epsilon", "momentum", "residual", "layout",
             "dtype"),
    "pool": ("mode", "n", "c", "h", "w", "window", "stride", "padding", "layout", "dtype"),
}
#: Fields with a single allowed value: no control (the spec's default).
_FIXED: dict[str, frozenset[str]] = {"matmul": frozenset({"compute_dtype"})}


def _fields_of(op: str) -> tuple[str, ...]:
    """The controls of ``op``: its spec's dataclass fields (less the fixed ones), in the panel's order."""
    names = [f.name for f in dataclasses.fields(OPS[op]) if f.name not in _FIXED.get(op, ())]
    order = _FIELD_ORDER[op]
    missing = [n for n in names if n not in order]
    if missing:  # a field added to a spec gets a control at the end rather than none
        order = (*order, *missing)
    return tuple(n for n in order if n in names)


FIELDS: dict[str, tuple[str, ...]] = {op: _fields_of(op) for op in OPS}
CONV_FIELDS, MATMUL_FIELDS, SDPA_FIELDS, NORM_FIELDS, POOL_FIELDS = (FIELDS[op] for op in OPS)
#: Fields that take an int or an (h, w) pair, per operation.
PAIR_FIELDS: dict[str, tuple[str, ...]] = {"conv": ("padding", "stride", "dilation"),
                                           "pool": ("window", "stride", "padding")}
#: Choice fields: their allowed values (toggle buttons, or a dropdown where listed in _DROPDOWNS).
CHOICES: dict[tuple[str, str], tuple[Any, ...]] = {
    ("conv", "direction"): DIRECTIONS, ("conv", "layout"): LAYOUTS, ("conv", "dtype"): DTYPES,
    ("conv", "compute_dtype"): ("fp32", "fp16"),
    ("matmul", "dtype"): DTYPES,
    ("sdpa", "direction"): SDPA_DIRECTIONS, ("sdpa", "layout"): SDPA_LAYOUTS, ("sdpa", "dtype"): SDPA_DTYPES,
    ("sdpa", "head_dim"): SDPA_HEAD_DIMS,
    ("norm", "kind"): KINDS, ("norm", "phase"): PHASES, ("norm", "layout"): LAYOUTS, ("norm", "dtype"): DTYPES,
    ("pool", "mode"): POOL_MODES, ("pool", "layout"): LAYOUTS, ("pool", "dtype"): DTYPES,
}
_DROPDOWNS = frozenset({("conv", "compute_dtype"), ("norm", "kind"), ("pool", "mode")})
_DROPDOWN_WIDTH: dict[tuple[str, str], str] = {("norm", "kind"): "140px", ("pool", "mode"): "160px"}
_BUTTON_WIDTH: dict[tuple[str, str], str] = {
    ("conv", "layout"): "70px", ("conv", "dtype"): "58px", ("matmul", "dtype"): "58px",
    ("sdpa", "direction"): "100px", ("sdpa", "layout"): "70px", ("sdpa", "dtype"): "58px",
    ("sdpa", "head_dim"): "52px", ("norm", "phase"): "84px", ("norm", "layout"): "70px",
    ("norm", "dtype"): "58px", ("pool", "layout"): "70px", ("pool", "dtype"): "58px",
}
_LABELS: dict[str, str] = {"compute_dtype": "compute", "transpose_a": "transpose A", "transpose_b": "transpose B",
                           "kv_heads": "kv heads", "seq_q": "seq q", "seq_kv": "seq kv", "head_dim": "head dim",
                           "sliding_window": "window", "attn_scale": "scale", "epsilon": "epsilon",
                           "momentum": "moment."}
#: Fields whose hint is "divides N" rather than a range.
_DIVISOR_FIELDS = frozenset({"groups", "kv_heads"})
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

def field_kind(op: str, name: str) -> str:
    """How a field is edited: 'choice', 'pair', 'int', 'bool', 'float', 'optional_int', 'optional_float' or 'tags'.

    Read from the spec's dataclass field types (``int | tuple[int, int]`` is a pair, ``float | None`` an optional
    float, ...), so a control follows its field.
    """
    if (op, name) in CHOICES:
        return "choice"
    types = {f.name: str(f.type) for f in dataclasses.fields(OPS[op])}
    if name not in types:
        raise SpecError("field", name, f"is not a field of {OPS[op].__name__}")
    t = types[name].replace(" ", "")
    return {"int|tuple[int,int]": "pair", "int": "int", "bool": "bool", "float": "float", "int|None": "optional_int",
            "float|None": "optional_float", "tuple[str,...]": "tags", "str": "choice"}.get(t, "text")


def controls_from_spec(spec: Spec) -> dict[str, Any]:
    """The control values that show ``spec``: ``{"op": "conv", "n": 16, ..., "epilogue": ("bias", "relu")}``.

    An attention spec's ``kv_heads`` is shown as the number of K/V heads in use (``heads`` when the spec says None).
    """
    if not isinstance(spec, Spec) or spec.op not in FIELDS:
        raise SpecError("spec", type(spec).__name__, f"must be one of {', '.join(c.__name__ for c in OPS.values())}")
    values: dict[str, Any] = {"op": spec.op, **{f: getattr(spec, f) for f in FIELDS[spec.op]}}
    if spec.op == "sdpa":
        values["kv_heads"] = spec.h_kv
    return values


def _optional_float(value: Any) -> Any:
    """A Text control's value as a float, None for empty/'none'/'default', else the text (the spec refuses it)."""
    if value is None or isinstance(value, (int, float)):
        return value
    text = str(value).strip()
    if text.lower() in ("", "none", "default", "auto"):
        return None
    try:
        return float(text)
    except ValueError:
        return text


def spec_from_controls(values: dict[str, Any]) -> Spec:
    """Build (and so validate) the spec that control values describe; raises :class:`SpecError` naming the field."""
    if not isinstance(values, dict):
        raise SpecError("values", type(values).__name__, "must be a dict of control values")
    values = dict(values)
    op = values.pop("op", "conv")
    if op not in OPS:
        raise SpecError("op", op, f"must be one of {', '.join(OPS)}")
    for key in ("epilogue", *PAIR_FIELDS.get(op, ())):
        if isinstance(values.get(key), list):
            values[key] = tuple(values[key])
    if op == "sdpa" and "attn_scale" in values:
        values["attn_scale"] = _optional_float(values["attn_scale"])
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
    Attention: ``kv_heads`` up to ``heads`` (and it must divide it). Pooling: ``padding`` up to ``window // 2``;
    ``window`` from ``2 * padding`` to ``h + 2 * padding``; ``h``/``w`` at least the window less the padding.
    """
    op = values.get("op", "conv")
    if op == "matmul":
        return {f: (1, MAX_DIM) for f in ("batch", "m", "n", "k")}
    if op == "sdpa":
        heads = max(_int(values, "heads", 1), 1)
        return {"batch": (1, MAX_DIM), "heads": (1, MAX_DIM), "kv_heads": (1, heads), "seq_q": (1, MAX_DIM),
                "seq_kv": (1, MAX_DIM), "sliding_window": (0, MAX_DIM)}
    if op == "norm":
        return {f: (1, MAX_DIM) for f in ("rows", "features", "n", "c", "h", "w")}
    if op == "pool":
        return _pool_limits(values)
    return _conv_limits(values)


def _conv_limits(values: dict[str, Any]) -> dict[str, tuple[int, int]]:
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


def _pool_limits(values: dict[str, Any]) -> dict[str, tuple[int, int]]:
    h, w = max(_int(values, "h", 1), 1), max(_int(values, "w", 1), 1)
    kh, kw = (max(x, 1) for x in _sides(values, "window", 1))
    ph, pw = (max(x, 0) for x in _sides(values, "padding", 0))
    return {
        "n": (1, MAX_DIM), "c": (1, MAX_DIM),
        "h": (max(1, kh - 2 * ph), MAX_DIM), "w": (max(1, kw - 2 * pw), MAX_DIM),
        "window": (max(1, 2 * max(ph, pw)), min(h + 2 * ph, w + 2 * pw, MAX_DIM)),
        "stride": (1, MAX_DIM),
        "padding": (0, min(kh // 2, kw // 2)),
    }


def hidden_fields(values: dict[str, Any]) -> frozenset[str]:
    """Fields the operation ignores as set now, so their controls are hidden (their values stay in the spec).

    Normalization: layer and RMS norm take ``rows x features``, batch and instance norm ``n, c, h, w`` in a
    ``layout``; ``momentum`` is batchnorm training's only, ``epsilon`` the forward passes' (batchnorm inference
    reads saved statistics), ``residual`` the row norms'.
    """
    if values.get("op") != "norm":
        return frozenset()
    kind, phase = values.get("kind"), values.get("phase")
    hidden: set[str] = set()
    if kind in ROW_KINDS:
        hidden |= {"n", "c", "h", "w", "layout"}
    elif kind in IMAGE_KINDS:
        hidden |= {"rows", "features", "residual"}
    if not (kind == "batchnorm" and phase == "training"):
        hidden.add("momentum")
    if phase == "backward" or (kind == "batchnorm" and phase == "inference"):
        hidden.add("epsilon")
    return frozenset(hidden)


def hints(values: dict[str, Any]) -> dict[str, str]:
    """The short text shown next to each control: its range ('1–8'), 'divides 16', a rule; '' for none."""
    op = values.get("op", "conv")
    out: dict[str, str] = {}
    ranges = limits(values)
    for name, (lo, hi) in ranges.items():
        if lo > hi:
            text = f"none fits ({lo} > {hi})"
        elif name in _DIVISOR_FIELDS:
            text = f"divides {hi}" if name == "groups" else f"divides {_int(values, 'heads', hi)}"
        elif hi >= MAX_DIM:
            text = "" if lo <= 1 else f"≥ {lo}"
        else:
            text = f"{lo}–{hi}"
        out[name] = text
    if op == "sdpa":
        out["sliding_window"] = "0: off"
    if op == "norm" and values.get("kind") == "batchnorm" and values.get("phase") in ("training", "backward"):
        multiple = 16 // {"fp32": 4}.get(str(values.get("dtype")), 2)
        out["c"] = f"mult. of {multiple}"
    return out


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
    "sdpa": (("direction",), ("heads", "kv_heads"), ("seq_q", "seq_kv"), ("batch", "sliding_window"),
             ("causal", "attn_scale"), ("head_dim",), ("layout",), ("dtype",)),
    "norm": (("kind",), ("phase",), ("rows", "features"), ("n", "c"), ("h", "w"), ("epsilon", "momentum"),
             ("residual",), ("layout",), ("dtype",)),
    "pool": (("mode",), ("n", "c"), ("h", "w"), ("window", "stride"), ("padding",), ("layout",), ("dtype",)),
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


def _make_widget(W: Any, op: str, name: str) -> Any:
    """The control of one spec field, by its kind (:func:`field_kind`)."""
    kind = field_kind(op, name)
    if kind == "choice":
        options = list(CHOICES[(op, name)])
        if (op, name) in _DROPDOWNS:
            return W.Dropdown(options=options, value=options[0],
                              layout=W.Layout(width=_DROPDOWN_WIDTH.get((op, name), "66px")))
        return W.ToggleButtons(options=options, style={"button_width": _BUTTON_WIDTH.get((op, name), "64px")}
                               ).add_class("cl-compact")
    if kind in ("int", "pair", "optional_int"):
        return W.IntText(value=1, layout=W.Layout(width="66px"))
    if kind == "bool":
        return W.Checkbox(value=False, indent=False, layout=W.Layout(width="40px"))
    if kind == "float":
        return W.FloatText(value=0.0, layout=W.Layout(width="74px"))
    if kind == "optional_float":
        return W.Text(value="", placeholder="default", layout=W.Layout(width="74px"))
    if kind == "tags":
        return W.TagsInput(value=[], allowed_tags=list(EPILOGUES), allow_duplicates=True,
                           layout=W.Layout(width="250px"))
    return W.Text(value="", layout=W.Layout(width="120px"))


class SpecControls:
    """The spec and run-option widgets; ``box`` is the panel, ``spec`` the last valid spec.

    ``on_change(spec)`` is called after each change that gives a new valid spec. Values can be set headless
    (``controls.conv["r"].value = 5``, ``controls.widgets["sdpa"]["heads"].value = 8``); :meth:`values`,
    :meth:`validate` and :meth:`run_options` are plain methods. ``controls.conv``, ``.matmul``, ``.sdpa``, ``.norm``
    and ``.pool`` are each operation's widgets by field name; ``boxes[op]`` holds them.
    """

    def __init__(self, spec: Spec | None = None, on_change: Callable[[Spec], None] | None = None, *,
                 guard: Callable[..., Any] | None = None) -> None:
        import ipywidgets as W

        self._W = W
        self.on_change = on_change
        #: Runs every widget callback: ``guard(fn, change)`` (the Lab's, which logs errors); by default a plain call.
        self._guard: Callable[..., Any] = guard or (lambda fn, *args: fn(*args))
        self._silent = False
        self._pairs: dict[tuple[str, str], tuple[int, int]] = {}
        self.error: SpecError | None = None
        spec = spec if spec is not None else ConvSpec()
        self.spec: Spec = spec

        self.op = W.ToggleButtons(options=[(OP_LABELS[op][0], op) for op in OPS], value="conv",
                                  tooltips=[OP_LABELS[op][1] for op in OPS], style={"button_width": "75px"}
                                  ).add_class("cl-op")
        self.not_offered = W.HTML(
            "<div class='cl-hint cl-not-offered-text' style='white-space: normal; line-height: 1.35'>"
            "Not offered: <b>RNN</b> and <b>tensor transform</b> (layout change): neither is in the cuDNN frontend "
            "1.32 graph API from Python (RNNs are in cuDNN's classic API only). For a layout change, a convolution's "
            "NHWC/NCHW layout is chosen by its tensors' strides: see the <i>layout</i> control. The kit does not "
            "silently emulate either.</div>",
            layout=W.Layout(margin="0 0 6px 0", width="400px")).add_class("cl-not-offered")
        self.widgets: dict[str, dict[str, Any]] = {op: {name: _make_widget(W, op, name) for name in FIELDS[op]}
                                                   for op in OPS}
        self.conv, self.matmul = self.widgets["conv"], self.widgets["matmul"]
        self.sdpa, self.norm, self.pool = self.widgets["sdpa"], self.widgets["norm"], self.widgets["pool"]
        self.hints: dict[str, dict[str, Any]] = {op: {} for op in OPS}
        self.messages: dict[str, dict[str, Any]] = {op: {} for op in OPS}
        #: The cell (label, control, hint) of each field, and each line with the fields on it: hidden fields hide.
        self.cells: dict[str, dict[str, Any]] = {op: {} for op in OPS}
        self._lines: dict[str, list[tuple[tuple[str, ...], Any]]] = {op: [] for op in OPS}
        rows: dict[str, list[Any]] = {op: [] for op in OPS}
        for op, widgets in self.widgets.items():
            for name, widget in widgets.items():
                widget.add_class(f"cl-field-{name}")
                self.hints[op][name] = W.HTML("", layout=W.Layout(margin="0 0 0 6px")).add_class("cl-hint")
                self.messages[op][name] = W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 4px")
                                                 ).add_class("cl-message")
                widget.observe(lambda ch: self._guard(self._changed, ch), names="value")
            laid_out = [n for line in _LINES[op] for n in line]
            lines = [tuple(n for n in line if n in widgets) for line in _LINES[op]]
            lines += [(n,) for n in widgets if n not in laid_out]
            for line in (ln for ln in lines if ln):
                if len(line) == 2:  # two short fields side by side
                    cells = [_cell(W, _LABELS.get(n, n), widgets[n], self.hints[op][n], i == 0)
                             for i, n in enumerate(line)]
                    box = W.HBox(cells, layout=W.Layout(margin="1px 0"))
                    self.cells[op].update(zip(line, cells))
                else:
                    box = _row(W, _LABELS.get(line[0], line[0]), widgets[line[0]], self.hints[op][line[0]])
                    self.cells[op][line[0]] = box
                self._lines[op].append((line, box))
                rows[op].append(box)
                rows[op] += [self.messages[op][n] for n in line]
        self.general_message = W.HTML("", layout=W.Layout(display="none")).add_class("cl-message")
        self.boxes: dict[str, Any] = {op: W.VBox(rows[op]).add_class(f"cl-{op}-controls") for op in OPS}
        self.conv_box, self.matmul_box = self.boxes["conv"], self.boxes["matmul"]
        self.op.observe(lambda ch: self._guard(self._op_changed, ch), names="value")

        # Run options
        self.heuristics = {m: W.Checkbox(value=m in ("A", "FALLBACK"), description=m, indent=False,
                                         layout=W.Layout(width="auto", margin="0 12px 0 0"))
                           for m in HEURISTIC_MODES}
        self.policy = W.ToggleButtons(options=list(POLICY_CHOICES), value="heuristic choice",  # run options
                                      style={"button_width": "136px"},
                                      tooltips=["build only the heuristics' pick (what cuDNN would run)",
                                                "build and time every proposed plan"])
        self.timing = W.RadioButtons(options=list(TIMING_CHOICES), value="auto (CUDA graph)",
                                     layout=W.Layout(width="auto"))
        self.run_box = W.VBox([_row(W, "heuristics", W.HBox(list(self.heuristics.values()))),
                               _row(W, "plans", self.policy), _row(W, "timing", self.timing)]
                              ).add_class("cl-run-options")

        self.box = W.VBox([self.op, self.not_offered, *self.boxes.values(), self.general_message]
                          ).add_class("cl-controls")
        for cls in OPS.values():  # the hidden operations' controls start at their defaults
            self._fill(controls_from_spec(cls()))
        self.set_spec(spec)

    # -------------------------------------------------------------------------------------------- values

    @property
    def active(self) -> dict[str, Any]:
        """The widgets of the operation shown now."""
        return self.widgets[self.op.value]

    def values(self) -> dict[str, Any]:
        """The shown operation's control values, as :func:`spec_from_controls` takes them."""
        op = self.op.value
        out: dict[str, Any] = {"op": op}
        for name, widget in self.active.items():
            value = widget.value
            kind = field_kind(op, name)
            if kind == "tags":
                value = tuple(value)
            elif kind == "optional_float":
                value = _optional_float(value)
            if kind == "pair" and (op, name) in self._pairs and value == self._pairs[(op, name)][0]:
                value = self._pairs[(op, name)]  # an (h, w) pair set from a spec stays while its control is untouched
            out[name] = value
        return out

    def set_spec(self, spec: Spec) -> None:
        """Show ``spec`` in the controls (no change callback) and make it the current spec (any operation)."""
        values = controls_from_spec(spec)
        self._pairs = {k: v for k, v in self._pairs.items() if k[0] != spec.op}
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
        op = values["op"]
        self._silent = True
        try:
            for name, widget in self.widgets[op].items():
                value = values[name]
                kind = field_kind(op, name)
                if kind == "pair" and isinstance(value, tuple):
                    self._pairs[(op, name)] = value
                    value = value[0]
                if kind == "tags":
                    value = list(value)
                elif kind == "optional_float":
                    value = "" if value is None else repr(float(value))
                widget.value = value
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

    @property
    def hidden(self) -> frozenset[str]:
        """The shown operation's fields hidden now (:func:`hidden_fields`)."""
        return hidden_fields(self.values())

    def update_limits(self) -> dict[str, tuple[int, int]]:
        """Recompute every integer control's range from the others, show it next to the control, hide what the
        operation ignores as set now."""
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
                tip = {"groups": "a divisor of gcd(c, k)", "kv_heads": "a divisor of heads"}.get(
                    name, f"from {lo} to {hi}")
                self.widgets[op][name].tooltip = f"allowed: {tip}"
        self._show_fields(op, hidden_fields(values))
        return ranges

    def _show_fields(self, op: str, hidden: frozenset[str]) -> None:
        for name, cell in self.cells[op].items():
            cell.layout.display = "none" if name in hidden else None
        for line, box in self._lines[op]:
            if len(line) > 1:
                box.layout.display = "none" if all(n in hidden for n in line) else None

    # -------------------------------------------------------------------------------------------- callbacks

    def _show_op(self) -> None:
        for op, box in self.boxes.items():
            box.layout.display = "flex" if op == self.op.value else "none"

    def _op_changed(self, change: dict[str, Any]) -> None:
        self._show_op()
        self._changed(change)

    def _changed(self, change: dict[str, Any]) -> None:
        if self._silent:
            return
        owner = change.get("owner")
        if owner is self.sdpa["heads"] and self.sdpa["kv_heads"].value == change.get("old"):
            # kv_heads = heads (plain multi-head attention) follows heads, as the spec's None does
            self._silent = True
            try:
                self.sdpa["kv_heads"].value = change["new"]
            finally:
                self._silent = False
        before = self.spec
        spec = self.validate()
        if spec is not None and spec != before and self.on_change is not None:
            self.on_change(spec)
