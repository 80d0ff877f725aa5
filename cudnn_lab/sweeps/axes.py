"""A sweep's axes: which spec fields can vary, a typed axis from text (``parse_axis``), and ``over`` checked.

The rules come from the specs (a field's dataclass type and ``Spec.field_choices()``); the UI's sweep form and
``cl.sweep`` use these functions, so an axis means the same thing from code, the CLI and the Lab.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import OptionError, SpecError, shorten
from ..specs import Spec

__all__ = ["axis_kind", "sweep_fields", "parse_axis", "check_bases", "check_over", "plain"]

#: Field types -> how an axis of that field is written as text.
_KINDS = {"int|tuple[int,int]": "pair", "int|tuple[int,int,int]": "pair",  # (3-D conv: DxHxW)
          "int": "int", "bool": "bool", "float": "float", "int|None": "optional_int",
          "float|None": "optional_float", "tuple[str,...]": "tags", "str": "choice"}
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_NONE = {"none", "default"}


def _choices(spec_cls: type[Spec]) -> dict[str, tuple[Any, ...]]:
    return dict(spec_cls.field_choices())


def _spec_class(spec_cls: Any) -> type[Spec]:
    cls = type(spec_cls) if isinstance(spec_cls, Spec) else spec_cls
    if not (isinstance(cls, type) and issubclass(cls, Spec)) or cls is Spec:
        raise OptionError("spec_cls", spec_cls, "must be a spec class such as cl.ConvSpec (or a spec)")
    return cls


def axis_kind(spec_cls: type[Spec] | Spec, field: str) -> str:
    """How values of ``field`` are written: 'choice', 'pair', 'int', 'bool', 'float', 'optional_int',
    'optional_float', 'tags' (a chain such as an epilogue: not sweepable from text) or 'text'."""
    cls = _spec_class(spec_cls)
    if field in _choices(cls):
        return "choice"
    types = {f.name: str(f.type).replace(" ", "") for f in dataclasses.fields(cls)}
    if field not in types:
        raise SpecError("field", field, f"is not a field of {cls.__name__}; fields are {', '.join(types)}")
    return _KINDS.get(types[field], "text")


def sweep_fields(spec_cls: type[Spec] | Spec) -> tuple[str, ...]:
    """The fields of a spec class a sweep axis can vary from text: all but chains and one-value choices, in the
    spec's ``field_order`` first."""
    cls = _spec_class(spec_cls)
    choices = _choices(cls)
    names = [f.name for f in dataclasses.fields(cls)
             if len(choices.get(f.name, (0, 1))) > 1 and axis_kind(cls, f.name) != "tags"]
    order = [n for n in cls.field_order if n in names]
    return (*order, *(n for n in names if n not in order))


def _parse_one(cls: type[Spec], field: str, kind: str, item: str) -> Any:
    low = item.lower()
    if kind in ("optional_int", "optional_float") and low in _NONE:
        return None
    if kind in ("int", "optional_int"):
        try:
            return int(item)
        except ValueError:
            raise SpecError(field, item, "must be a whole number" + (" or none" if kind == "optional_int" else ""),
                            spec=cls.__name__) from None
    if kind == "pair":
        try:
            nums = [int(p) for p in item.replace("×", "x").split("x")]
        except ValueError:
            nums = []
        types = {f.name: str(f.type).replace(" ", "") for f in dataclasses.fields(cls)}
        if types.get(field) == "int|tuple[int,int,int]":  # 3-D convolutions: depth x height x width
            if len(nums) not in (1, 3):
                raise SpecError(field, item, "must be a whole number or a triple such as 1x3x3 (depth x height x "
                                "width)", spec=cls.__name__)
        elif len(nums) not in (1, 2):
            raise SpecError(field, item, "must be a whole number or a pair such as 3x1 (height x width)",
                            spec=cls.__name__)
        return nums[0] if len(nums) == 1 else tuple(nums)
    if kind in ("float", "optional_float"):
        try:
            number = float(item)
        except ValueError:
            raise SpecError(field, item, "must be a number" + (" or none" if kind == "optional_float" else ""),
                            spec=cls.__name__) from None
        if not math.isfinite(number):
            raise SpecError(field, item, "must be a finite number", spec=cls.__name__)
        return number
    if kind == "bool":
        if low in _TRUE | _FALSE:
            return low in _TRUE
        raise SpecError(field, item, "must be true or false", spec=cls.__name__)
    if kind == "choice":
        choices = _choices(cls).get(field, ())
        value: Any = item
        if choices and all(isinstance(c, int) and not isinstance(c, bool) for c in choices):
            try:
                value = int(item)
            except ValueError:
                pass
        if choices and value not in choices:
            raise SpecError(field, item, f"must be one of {', '.join(map(str, choices))}", spec=cls.__name__)
        return value
    if kind == "tags":
        raise SpecError(field, item, "is a chain of names; sweep it from code with a list of tuples",
                        spec=cls.__name__)
    return item


def parse_axis(spec_cls: type[Spec] | Spec, field: str, text: Any) -> tuple[Any, ...]:
    """The values of one sweep axis written as text, typed as ``field`` is: ``'1, 8, 32'`` -> ``(1, 8, 32)``.

    A pair field also takes ``3x1``; a flag ``true``/``false``; an optional field ``none``; a choice one of the
    spec's choices. Raises SpecError naming the field for a field that cannot be swept, an empty list, an empty value
    between commas, a value of the wrong type, a choice that does not exist or a value listed twice.
    """
    cls = _spec_class(spec_cls)
    if not isinstance(field, str) or field not in sweep_fields(cls):
        raise SpecError("field", field, f"is not a field {cls.__name__} can sweep; choose one of "
                        f"{', '.join(sweep_fields(cls))}")
    if text is not None and not isinstance(text, str):
        raise SpecError(field, text, "give the values as text separated by commas, e.g. '1, 8, 32'",
                        spec=cls.__name__)
    items = [t.strip() for t in (text or "").split(",")]
    if not any(items):
        raise SpecError(field, text, "give one or more values separated by commas, e.g. '1, 8, 32'",
                        spec=cls.__name__)
    if not all(items):
        raise SpecError(field, text, "has an empty value between commas", spec=cls.__name__)
    kind = axis_kind(cls, field)
    values: list[Any] = []
    for item in items:
        value = _parse_one(cls, field, kind, item)
        if value in values:
            raise SpecError(field, item, "is listed twice", spec=cls.__name__)
        values.append(value)
    return tuple(values)


# ------------------------------------------------------------------------------------------------ cl.sweep's arguments

def plain(value: Any) -> Any:
    """A value of ``over`` as plain Python: numpy scalars and arrays become ints, floats, bools, str and tuples;
    lists become tuples (what a spec holds)."""
    if type(value).__module__ == "numpy":
        value = value.tolist() if hasattr(value, "tolist") else value.item()
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    return value


def check_bases(spec: Any) -> list[Spec]:
    """``cl.sweep``'s first argument: one spec or a non-empty list (any iterable) of specs."""
    if isinstance(spec, Spec):
        return [spec]
    if isinstance(spec, Iterable) and not isinstance(spec, (str, bytes, Mapping)):
        specs = list(spec)
        if specs and all(isinstance(s, Spec) for s in specs):
            return specs
    raise OptionError("spec", spec, "must be a spec (e.g. cl.ConvSpec(...)) or a non-empty list of specs",
                      where="sweep")


def check_over(bases: list[Spec], over: Any) -> dict[str, tuple[Any, ...]]:
    """``over`` as ``{field: (value, ...)}``: a dict of field names of every base spec to non-empty lists of
    distinct values (numpy values made plain). OptionError naming ``over`` and the axis otherwise."""
    if over is None:
        return {}
    if not isinstance(over, Mapping):
        raise OptionError("over", over, "must be a dict of spec field -> list of values, e.g. "
                          "{'n': [1, 8, 32], 'layout': ['NCHW', 'NHWC']}", where="sweep")
    axes: dict[str, tuple[Any, ...]] = {}
    for name, values in over.items():
        if not isinstance(name, str):
            raise OptionError("over", shorten(name, 40), "keys must be spec field names (text)", where="sweep")
        for base in bases:
            known = [f.name for f in dataclasses.fields(base)]
            if name not in known:
                raise OptionError(f"over[{shorten(name, 40)}]", name, f"is not a field of {type(base).__name__}; "
                                  f"fields are {', '.join(known)}", where="sweep")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable) or (
                type(values).__module__ == "numpy" and getattr(values, "ndim", 1) == 0):
            raise OptionError(f"over[{name!r}]", values, "must be a list of values, e.g. [1, 8, 32]", where="sweep")
        try:
            axis = tuple(plain(v) for v in values)
        except TypeError as e:
            raise OptionError(f"over[{name!r}]", values, f"must be a list of values ({e})", where="sweep") from None
        if not axis:
            raise OptionError(f"over[{name!r}]", values, "must list at least one value", where="sweep")
        seen: set[Any] = set()
        for v in axis:
            try:
                key: Any = (type(v), v)
                hash(key)
            except TypeError:  # an unhashable value (the spec refuses it later, as an invalid point)
                key = (type(v), shorten(v, 200))
            if key in seen:
                raise OptionError(f"over[{name!r}]", values, f"lists {shorten(v, 40)} twice", where="sweep")
            seen.add(key)
        axes[name] = axis
    return axes
