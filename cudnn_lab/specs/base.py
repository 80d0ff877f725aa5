"""What every problem description shares: validation helpers, dict/JSON round-trip, the registry of spec kinds,
and the rules a form shows (each field's range, choices, hints), so the UI never restates a rule."""

from __future__ import annotations

import dataclasses
import json
import math
import operator
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ..errors import SpecError, shorten
from .tolerance import ToleranceBand

if TYPE_CHECKING:  # pragma: no cover
    from .fp8 import GpuRequirement

DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
LAYOUTS: tuple[str, ...] = ("NCHW", "NHWC")
MAX_DIM = 1 << 20
# cuDNN indexes tensors with 64-bit offsets, but PyTorch references and sane GPU memory stop far earlier.
MAX_ELEMENTS = 1 << 31

DTYPE_BYTES: dict[str, int] = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "fp8_e4m3": 1, "fp8_e5m2": 1,
                               "int32": 4, "int64": 8}

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


def check_float(spec: str, field: str, value: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    """``value`` as a finite float in (lo, hi] (``lo_open``) or [lo, hi]; SpecError naming the field otherwise
    (also for an integer too large for a float, such as 10**400)."""
    rng = f"{'greater than' if lo_open else 'from'} {lo:g} {'and at most' if lo_open else 'to'} {hi:g}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(field, value, f"must be a number {rng}", spec=spec)
    try:
        v = float(value)
    except OverflowError:
        raise SpecError(field, value, f"must be a number {rng} (this one does not fit in a float)",
                        spec=spec) from None
    if not math.isfinite(v) or v > hi or v < lo or (lo_open and v == lo):
        raise SpecError(field, value, f"must be a number {rng}", spec=spec)
    return v


def read_int(values: Mapping[str, Any], key: str, default: int) -> int:
    """A form's value as an int for range arithmetic; junk (text, None, inf, a 5000-digit string) reads as
    ``default``."""
    try:
        v = values.get(key, default)
        if isinstance(v, float) and not math.isfinite(v):
            return default
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return default


def read_sides(values: Mapping[str, Any], key: str, default: int) -> tuple[int, int]:
    """(height, width) sides of an int-or-pair value in a form; junk reads as the default."""
    v = values.get(key, default)
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            return default, default
        return read_int({"h": v[0]}, "h", default), read_int({"w": v[1]}, "w", default)
    side = read_int(values, key, default)
    return side, side


def blame_largest(spec: Any, fields: tuple[str, ...]) -> str:
    """The field among ``fields`` with the largest value (the first on a tie): what to name when a product of
    sizes is too large, so the message points at a field the user can shrink."""
    return max(fields, key=lambda f: (getattr(spec, f) or 0, -fields.index(f)))


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
    #: The family's name in menus and its one-line description (tooltips), and the order a form lists its fields.
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    field_order: ClassVar[tuple[str, ...]] = ()
    #: Where the family sits in the Lab's menu, lowest first (unique among families): spec_classes() sorts by it.
    menu_order: ClassVar[int] = 0
    #: The letters naming the logical dims of the main tensors (SDPA: 'BHSD') for the drawing's layout text; None:
    #: the layout's own letters.
    tensor_axes: ClassVar[str | None] = None
    #: The field a sweep panel proposes as its first axis and, optionally, its second; empty: the first field.
    sweep_axes: ClassVar[tuple[str, ...]] = ()
    #: Replacements of the dtype's tolerance bands where cuDNN's own tests of the op accept looser ones: band key
    #: (the op, or a variant :meth:`tolerance_args` names) -> dtype -> band name -> band (numerics applies them).
    tolerances: ClassVar[Mapping[str, Mapping[str, Mapping[str, ToleranceBand]]]] = {}
    #: The reduction axis a block-scaled format (MXFP8, NVFP4) scales where the family's product is GEMM-like: 'K'
    #: (a matmul's), 'C' (a forward convolution's); None: the block-format what-if does not take the family.
    block_scale_axis: ClassVar[str | None] = None
    if TYPE_CHECKING:
        @property
        def dtype(self) -> str:
            """Every family's element type (each family's dataclass declares the field with its default; named
            here, not as a field, so code over any Spec is checked and ``Spec()`` keeps no required argument)."""
            ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.op:
            _REGISTRY[cls.op] = cls

    def _set(self, name: str, value: Any) -> None:
        # Validation normalizes values (lists to tuples, pairs to ints) on a frozen instance.
        object.__setattr__(self, name, value)

    def _check_choices(self, *fields: str) -> None:
        """Check each of ``fields`` against its allowed values in :meth:`field_choices`, the list a form shows, so
        a family states each choice once."""
        choices, name = self.field_choices(), type(self).__name__
        for f in fields:
            self._set(f, check_choice(name, f, getattr(self, f), choices[f]))

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
        unknown = sorted((k for k in data if k not in names), key=shorten)
        if unknown:
            key = unknown[0] if isinstance(unknown[0], str) and len(unknown[0]) <= 40 else shorten(unknown[0], 40)
            raise SpecError(key, data[unknown[0]], f"is not a field; fields are {', '.join(sorted(names))}",
                            spec=cls.__name__)
        # JSON has lists where specs hold tuples (pairs such as padding, epilogue chains).
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**fields)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def replace(self: S, **changes: Any) -> S:
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    # --- rules a form shows (pure; values may be junk, partial or of the wrong type) ------------------------

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        """Allowed (low, high) of each integer field, the other fields held at ``values``.

        By default every integer field (not a choice) takes 1 to MAX_DIM; families with rules linking fields
        override this (conv padding up to dilation*(r-1), ...). A low above the high means no value fits now.
        """
        choices = cls.field_choices()
        out = {}
        for f in dataclasses.fields(cls):
            t = str(f.type).replace(" ", "")
            if f.name not in choices and t in ("int", "int|None", "int|tuple[int,int]"):
                out[f.name] = (1, MAX_DIM)
        return out

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        """The allowed values of each choice field (a dtype, a layout, a direction, ...)."""
        return {}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """Fields the problem ignores as set in ``values`` (a layer norm has no n, c, h, w); a form hides them."""
        return frozenset()

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        """Short rules to show beside fields beyond their ranges ('divides 16', '0: off', 'mult. of 8')."""
        return {}

    def check_elements(self, fields_of: Mapping[str, tuple[str, ...]]) -> None:
        """Refuse a tensor over MAX_ELEMENTS, naming the largest of the fields its size comes from
        (``fields_of[tensor]``), so the user is pointed at a size they set."""
        name = type(self).__name__
        for tname, dims in self.tensor_shapes().items():
            if math.prod(dims) > MAX_ELEMENTS:
                field = blame_largest(self, fields_of[tname])
                raise SpecError(field, getattr(self, field), f"makes tensor {tname} {list(dims)} larger than "
                                f"{MAX_ELEMENTS} elements; use smaller sizes", spec=name)

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        """Logical dims of every tensor the graph reads or writes, by name."""
        raise NotImplementedError

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Strides of every tensor of :meth:`tensor_shapes` as the graph declares them (its layout), by name."""
        raise NotImplementedError

    def tensor_dtypes(self) -> dict[str, str]:
        """Each tensor's dtype, by name: the spec's ``dtype`` unless the family says otherwise (statistics, FP8)."""
        return {n: self.dtype for n in self.tensor_shapes()}

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """(every input the graph reads, its main output): a family gives this, or input_names and output_names."""
        cls = type(self)
        if cls.input_names is Spec.input_names or cls.output_names is Spec.output_names:
            raise NotImplementedError(f"{cls.__name__} gives io_names(), or input_names() and output_names()")
        return self.input_names(), self.output_names()[0]

    def input_names(self) -> tuple[str, ...]:
        """Every tensor the graph reads, in the frontend call's order."""
        return self.io_names()[0]

    def output_names(self) -> tuple[str, ...]:
        """Every tensor the graph writes, the main output first."""
        return (self.io_names()[1],)

    def gpu_requirements(self) -> tuple[GpuRequirement, ...]:
        """What the problem needs from the GPU and cuDNN beyond the spec's own rules (checked before a run)."""
        return ()

    def support_hint(self) -> str:
        """What to try when cuDNN has no engine for this problem (added to the refusal's sentence); '' if unknown."""
        return ""

    def check_block_scale(self) -> None:
        """Refuse (SpecError naming the field) a problem of a :attr:`block_scale_axis` family that a block format
        cannot scale as it is set (a conv that is not a forward one); nothing by default."""

    def gemm_mn(self) -> tuple[int, int] | None:
        """(M, N) of the GEMM the problem computes (a matmul's batch*M by N, a forward conv's output pixels by
        output channels), for the output tiles and waves of a kernel; None where it computes none."""
        return None

    def classic_calls(self) -> tuple[str, ...]:
        """The classic cuDNN API calls the problem runs, in order, where its plans' names do not say them (the RNN
        API's); () otherwise."""
        return ()

    def tolerance_args(self) -> dict[str, Any]:
        """The keywords numerics.compare takes for the outputs: dtype, band key (``op``; a family may name a
        variant of its :attr:`tolerances`) and the output dtype that picks FP8 bands (None: not FP8)."""
        return {"dtype": self.dtype, "op": self.op, "out_dtype": None}

    def flops(self) -> int:
        """Floating-point operations of the main op (epilogues not counted)."""
        raise NotImplementedError

    def min_bytes(self) -> int:
        """Bytes that must cross GPU memory at the least: every input read once, every output written once."""
        raise NotImplementedError

    def label(self) -> str:
        """A short human-readable description for titles and legends."""
        raise NotImplementedError


def spec_classes() -> dict[str, type[Spec]]:
    """Every registered spec family, ``op`` -> class, in menu order (each family's ``menu_order``)."""
    return dict(sorted(_REGISTRY.items(), key=lambda item: item[1].menu_order))


def spec_from_dict(data: dict[str, Any]) -> Spec:
    """Rebuild any spec from :meth:`Spec.to_dict` output, dispatching on its ``op`` key."""
    if not isinstance(data, dict):
        raise SpecError("data", type(data).__name__, "must be a dict as made by Spec.to_dict()")
    op = data.get("op")
    if not isinstance(op, str) or op not in _REGISTRY:
        raise SpecError("op", op, f"must be one of {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[op].from_dict(data)


def spec_from_json(text: str | bytes) -> Spec:
    """Rebuild any spec from :meth:`Spec.to_json` output; anything else is a SpecError (never a raw exception)."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise SpecError("json", type(text).__name__, "must be a JSON text (str) as made by Spec.to_json()")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError("json", text, f"is not valid JSON ({e.msg} at line {e.lineno})") from None
    except RecursionError:
        raise SpecError("json", text, "is nested too deeply to be a spec") from None
    except (ValueError, TypeError) as e:  # e.g. an integer of more digits than Python converts, bad bytes
        raise SpecError("json", text, f"cannot be read: {shorten(str(e), 120)}") from None
    return spec_from_dict(data)
