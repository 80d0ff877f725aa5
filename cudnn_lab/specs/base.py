"""What every problem description shares: validation helpers, dict/JSON round-trip, the registry of spec kinds."""

from __future__ import annotations

import dataclasses
import json
import operator
from typing import Any, ClassVar, TypeVar

from ..errors import SpecError

DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
COMPUTE_DTYPES: tuple[str, ...] = ("fp32",)
LAYOUTS: tuple[str, ...] = ("NCHW", "NHWC")
MAX_DIM = 1 << 20
# cuDNN indexes tensors with 64-bit offsets, but PyTorch references and sane GPU memory stop far earlier.
MAX_ELEMENTS = 1 << 31

DTYPE_BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8}

_REGISTRY: dict[str, type[Spec]] = {}

S = TypeVar("S", bound="Spec")


def check_int(spec: str, field: str, value: Any, lo: int = 1, hi: int = MAX_DIM) -> int:
    """Return ``value`` as an int in [lo, hi] or raise SpecError naming the field."""
    if isinstance(value, bool):
        raise SpecError(field, value, f"must be an integer from {lo} to {hi}, not a bool", spec=spec)
    try:
        v = operator.index(value)
    except TypeError:
        raise SpecError(field, value, f"must be an integer from {lo} to {hi}", spec=spec) from None
    if not lo <= v <= hi:
        raise SpecError(field, value, f"must be from {lo} to {hi}", spec=spec)
    return v


def check_pair(spec: str, field: str, value: Any, lo: int, hi: int = MAX_DIM) -> int | tuple[int, int]:
    """An int or an (h, w) pair; returned as an int when both sides agree, so ``padding=1`` stays readable."""
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise SpecError(field, value, "must be an integer or a pair (height, width)", spec=spec)
        a, b = (check_int(spec, field, x, lo, hi) for x in value)
        return a if a == b else (a, b)
    return check_int(spec, field, value, lo, hi)


def pair(value: int | tuple[int, int]) -> tuple[int, int]:
    """Both sides of a canonical int-or-pair value."""
    return (value, value) if isinstance(value, int) else (value[0], value[1])


def check_choice(spec: str, field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise SpecError(field, value, f"must be one of {', '.join(allowed)}", spec=spec)
    return value


def check_bool(spec: str, field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SpecError(field, value, "must be True or False", spec=spec)
    return value


@dataclasses.dataclass(frozen=True)
class Spec:
    """Base of all problem descriptions: frozen, validated on creation, round-trips through dicts and JSON."""

    op: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.op:
            _REGISTRY[cls.op] = cls

    def _set(self, name: str, value: Any) -> None:
        # Validation normalizes values (lists to tuples, pairs to ints) on a frozen instance.
        object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict with an ``op`` key naming the spec kind."""
        out: dict[str, Any] = {"op": self.op}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_dict(cls: type[S], data: dict[str, Any]) -> S:
        """Inverse of :meth:`to_dict`; unknown keys are an error, missing ones take defaults."""
        if not isinstance(data, dict):
            raise SpecError("data", type(data).__name__, "must be a dict as made by to_dict()", spec=cls.__name__)
        data = dict(data)
        op = data.pop("op", cls.op)
        if op != cls.op:
            raise SpecError("op", op, f"{cls.__name__} takes op={cls.op!r}", spec=cls.__name__)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names, key=str)
        if unknown:
            raise SpecError(unknown[0], data[unknown[0]], f"is not a field; fields are {', '.join(sorted(names))}",
                            spec=cls.__name__)
        # JSON has lists where specs hold tuples (pairs such as padding, epilogue chains).
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def replace(self: S, **changes: Any) -> S:
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Logical dims of every tensor the graph reads or writes, by name."""
        raise NotImplementedError

    def flops(self) -> int:
        """Floating-point operations of the main op (epilogues not counted)."""
        raise NotImplementedError

    def min_bytes(self) -> int:
        """Bytes that must cross GPU memory at the least: every input read once, every output written once."""
        raise NotImplementedError

    def label(self) -> str:
        """A short human-readable description for titles and legends."""
        raise NotImplementedError


def spec_from_dict(data: dict[str, Any]) -> Spec:
    """Rebuild any spec from :meth:`Spec.to_dict` output, dispatching on its ``op`` key."""
    if not isinstance(data, dict):
        raise SpecError("data", type(data).__name__, "must be a dict as made by Spec.to_dict()")
    op = data.get("op")
    if not isinstance(op, str) or op not in _REGISTRY:
        raise SpecError("op", op, f"must be one of {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[op].from_dict(data)


def spec_from_json(text: str) -> Spec:
    """Rebuild any spec from :meth:`Spec.to_json` output."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError("json", text[:60], f"is not valid JSON ({e.msg} at line {e.lineno})") from None
    return spec_from_dict(data)
