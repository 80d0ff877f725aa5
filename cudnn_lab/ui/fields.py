"""What a form shows for each operation, read from the specs (pure: no widgets).

The operations are the spec families registered in :mod:`cudnn_lab.specs` (a new family appears in the Lab by
registering its spec). Each family's form is made from its spec's dataclass fields, in its ``field_order``; ranges,
choices, hidden fields and hints come from the spec's ``field_limits``, ``field_choices``, ``hidden_fields`` and
``field_hints``. This module only turns them into what a form needs: a kind per field, the text of a hint, and
control values <-> spec.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

from ..errors import SpecError
from ..specs import Spec
from ..specs.activation import IgnoredFieldWarning
from ..specs.base import MAX_DIM, spec_classes
from ..sweeps import axis_kind, parse_axis

__all__ = ["OPS", "TEXT_KINDS", "controls_from_spec", "field_kind", "field_text", "fields_of", "hidden_fields",
           "hints", "label_of", "limits", "parse_field", "spec_class", "spec_from_controls"]

#: Kinds of field typed as text in the form and parsed here (never silently rounded or truncated).
TEXT_KINDS = frozenset({"int", "pair", "float", "optional_int", "optional_float"})

#: Shorter labels where a field's name does not fit its place on the form (presentation only).
_LABELS: dict[str, str] = {"compute_dtype": "compute", "sliding_window": "window", "attn_scale": "scale",
                           "momentum": "moment."}

#: The operations, in the order the operation choice shows them, and the spec each edits.
OPS: dict[str, type[Spec]] = spec_classes()


def spec_class(op: str) -> type[Spec]:
    """The spec class of operation ``op`` (SpecError naming the operations otherwise)."""
    if op not in OPS:
        raise SpecError("op", op, f"must be one of {', '.join(OPS)}")
    return OPS[op]


def label_of(name: str) -> str:
    """A field's label on the form."""
    return _LABELS.get(name, name.replace("_", " "))


@functools.lru_cache(maxsize=512)
def field_kind(op: str, name: str) -> str:
    """How a field is edited: 'choice', 'pair', 'int', 'bool', 'float', 'optional_int', 'optional_float' or 'tags'
    (the same kinds a sweep axis is written in: :func:`cudnn_lab.sweeps.axis_kind`)."""
    return axis_kind(spec_class(op), name)


@functools.lru_cache(maxsize=64)
def fields_of(op: str) -> tuple[str, ...]:
    """The fields a form shows for ``op``: the spec's fields in its ``field_order`` (the rest after), less any
    choice with one allowed value (nothing to choose)."""
    cls = spec_class(op)
    choices = cls.field_choices()
    names = [f.name for f in dataclasses.fields(cls) if len(choices.get(f.name, (0, 1))) > 1]
    order = [n for n in cls.field_order if n in names]
    return (*order, *(n for n in names if n not in order))


def controls_from_spec(spec: Spec) -> dict[str, Any]:
    """The control values that show ``spec``: ``{"op": "conv", "n": 16, ..., "epilogue": ("bias", "relu")}``."""
    if not isinstance(spec, Spec) or spec.op not in OPS:
        raise SpecError("spec", type(spec).__name__, f"must be one of {', '.join(c.__name__ for c in OPS.values())}")
    return {"op": spec.op, **{f: getattr(spec, f) for f in fields_of(spec.op)}}


def field_text(kind: str, value: Any) -> str:
    """A field's value as its text control shows it: 16, '3x1' (a pair that differs), 1e-05, '' (None)."""
    if value is None:
        return ""
    if kind == "pair" and isinstance(value, (tuple, list)):
        return str(value[0]) if len(set(value)) == 1 else "x".join(str(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def parse_field(op: str, name: str, text: Any) -> Any:
    """The value a text control holds, typed as the field is: '16' -> 16, '3x1' -> (3, 1), '1e-5' -> 1e-05, ''
    -> None (optional fields). A value that is not exactly one of the field's kind ('3.5' or '1e3' for a whole
    number, two values) raises SpecError naming the field; parsing is the sweeps layer's (one set of rules)."""
    kind = field_kind(op, name)
    if kind not in TEXT_KINDS or not isinstance(text, str):
        return text
    stripped = text.strip()
    if kind.startswith("optional") and stripped.lower() in ("", "none", "default", "auto"):
        return None
    if not stripped:
        raise SpecError(name, text, "needs a value", spec=spec_class(op).__name__)
    values = parse_axis(spec_class(op), name, stripped)
    if len(values) != 1:
        raise SpecError(name, text, "takes one value (no commas)", spec=spec_class(op).__name__)
    return values[0]


def spec_from_controls(values: dict[str, Any]) -> Spec:
    """Build (and so validate) the spec that control values describe; raises :class:`SpecError` naming the field."""
    if not isinstance(values, dict):
        raise SpecError("values", type(values).__name__, "must be a dict of control values")
    values = dict(values)
    op = values.pop("op", next(iter(OPS)))
    cls = spec_class(op)
    for name, value in values.items():
        if name in fields_of(op) and isinstance(value, str) and field_kind(op, name) in TEXT_KINDS:
            values[name] = parse_field(op, name, value)
    with warnings.catch_warnings():  # a hidden control keeps its last value; the form shows it is not used
        warnings.simplefilter("ignore", IgnoredFieldWarning)
        return cls.from_dict(values)


def limits(values: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Allowed (low, high) of each integer control, the others held as they are (the spec's ``field_limits``)."""
    return dict(spec_class(values.get("op", next(iter(OPS)))).field_limits(values))


def hidden_fields(values: dict[str, Any]) -> frozenset[str]:
    """The fields the operation ignores as set now (the spec's ``hidden_fields``)."""
    return frozenset(spec_class(values.get("op", next(iter(OPS)))).hidden_fields(values))


def range_text(lo: int, hi: int) -> str:
    """A range as the hint beside a control shows it: '1–8', '≥ 3', '' (anything), or that nothing fits."""
    if lo > hi:
        return f"none fits ({lo} > {hi})"
    if hi >= MAX_DIM:
        return "" if lo <= 1 else f"≥ {lo}"
    return f"{lo}–{hi}"


def hints(values: dict[str, Any]) -> dict[str, str]:
    """The short text beside each control: its range, or the spec's own hint ('divides 16', '0: off')."""
    cls = spec_class(values.get("op", next(iter(OPS))))
    out = {name: range_text(lo, hi) for name, (lo, hi) in cls.field_limits(values).items()}
    out.update(cls.field_hints(values))
    return out
