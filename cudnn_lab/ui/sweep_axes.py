"""The Sweep view's pure part: its axes checked as a whole (each axis parsed by the sweeps layer, every value tried
against the spec with the other axis, the panel's point budget) and the axes its figure draws (the spec fields of
a sweep frame)."""

from __future__ import annotations

import math
from typing import Any

from ..errors import SpecError, shorten
from ..plots.axes import NONE, default_axes, plot_fields  # the figure's axes, shared with the sweep report
from ..specs import Spec
from .fields import spec_class
from ..sweeps import sweep_fields as fields, parse_axis, grid

__all__ = ["MAX_POINTS", "NONE", "default_axes", "default_sweep_axes", "frame_of_op", "parse_values",
           "plain_text_columns", "plot_fields", "sweep_fields", "validate_axes"]

#: Most points the panel sweeps at once (a larger grid: ``cl.sweep`` from code, with a store that resumes).
MAX_POINTS = 64


# ------------------------------------------------------------------------------------------------ pure helpers

def default_sweep_axes(op: str) -> tuple[str, str]:
    """The first axis and the second (NONE: none) a sweep panel proposes for ``op``: the family's ``sweep_axes``
    where they are fields a sweep can vary, else its first such field alone."""
    fields = sweep_fields(op)
    proposed = (*spec_class(op).sweep_axes, NONE, NONE)
    first = proposed[0] if proposed[0] in fields else fields[0]
    return first, proposed[1] if proposed[1] in fields else NONE


def sweep_fields(op: str) -> tuple[str, ...]:
    """The fields of operation ``op`` a sweep can vary (the sweeps layer's :func:`cudnn_lab.sweeps.sweep_fields`)."""
    return tuple(fields(spec_class(op)))


def parse_values(op: str, field: str, text: str) -> list[Any]:
    """Typed values of a comma-separated text for ``field`` of ``op`` (:func:`cudnn_lab.sweeps.parse_axis`;
    SpecError naming the field)."""
    return list(parse_axis(spec_class(op), field, text))


def _combo_error(spec: Spec, field: str, value: Any, others: list[tuple[str, Any]]) -> SpecError | None:
    """None if ``spec`` with ``field=value`` is valid with some value of the other axis, else the first error."""
    first: SpecError | None = None
    unset: list[tuple[str | None, Any]] = [(None, None)]
    for other in others or unset:
        changes = {field: value}
        if other[0] is not None:
            changes[other[0]] = other[1]
        try:
            spec.replace(**changes)
            return None
        except SpecError as e:
            first = first or e
        except (TypeError, ValueError) as e:  # a value the spec's own checks do not expect
            first = first or SpecError(field, value, str(e))
    return first


def validate_axes(spec: Spec, axes: list[tuple[str, str]]) -> tuple[dict[str, list[Any]] | None, dict[int, str],
                                                                    int]:
    """Check the sweep's axes: ``[(field, text), ...]`` (an axis with field ``''`` or no values is unused).

    Returns ``(over, errors, invalid)``: ``over`` the ``cl.sweep`` argument (None when any axis is wrong), the
    message of each wrong axis by its index, and how many points of the grid the spec refuses (they are recorded
    as invalid, not run). A value is wrong when it does not parse or when the spec refuses it with every value of
    the other axis; then its axis is marked with the SpecError's message.
    """
    op = spec.op
    errors: dict[int, str] = {}
    parsed: dict[int, tuple[str, list[Any]]] = {}
    for i, (field, text) in enumerate(axes):
        if not field or (i > 0 and not str(text or "").strip()) or (
                not str(text or "").strip() and any(str(t or "").strip() for _, t in axes)):
            continue  # no field, or no values while another axis has some (or a later axis): unused
        if any(field == f and str(t or "").strip() for j, (f, t) in enumerate(axes) if j < i):
            errors[i] = f"{field}: is already swept by axis {[f for f, _ in axes].index(field) + 1}; choose another"
            continue
        try:
            parsed[i] = (field, parse_values(op, field, text))
        except SpecError as e:
            errors[i] = f"{e.field}={shorten(e.value)}: {e.allowed}"
    if not parsed and not errors:
        errors[0] = "choose a field to sweep"
    for i, (field, values) in parsed.items():
        if i in errors:
            continue
        others = [(f, v) for j, (f, vs) in parsed.items() if j != i for v in vs]
        for value in values:
            refused = _combo_error(spec, field, value, others)
            if refused is not None:
                why = (refused.allowed if refused.field == field
                       else f"{refused.field}={shorten(refused.value)}: {refused.allowed}")
                errors[i] = f"{field}={shorten(value)}: {why}"
                break
    total = math.prod(len(v) for _, v in parsed.values()) if parsed else 0
    if not errors and total > MAX_POINTS:
        last = max(parsed)
        errors[last] = (f"{total} points is more than the panel sweeps ({MAX_POINTS}); use fewer values, or "
                        "cl.sweep(spec, over, store=...) from code")
    if errors:
        return None, errors, 0
    over = {field: values for _, (field, values) in sorted(parsed.items())}
    invalid = sum(isinstance(p, SpecError) for p in grid(spec, over))
    return over, {}, invalid


def frame_of_op(frame: Any, op: str) -> Any:
    if not op or frame is None or "op" not in frame.columns:
        return frame
    return frame[frame["op"] == op]


def plain_text_columns(frame: Any) -> Any:
    """``frame`` with its text columns held as Python objects (a copy; the frame itself when it has none).

    pandas 3 reads Parquet text as its Arrow-backed ``str`` dtype, where every row access (the figures' iterrows
    and hover texts, a take per line group) pays a conversion: on the 1,952-row ``h100_standard`` sweep the latency
    figure took 2-4x as long (Load sweep 1.5-4.4 s in the browser on the busy 2-core machine, issue 39). Values and
    missing cells are the same; the figures drawn are identical."""
    text = [c for c in frame.columns if str(frame[c].dtype) in ("str", "string")]
    if not text:
        return frame
    return frame.astype({c: object for c in text}).copy()  # the copy joins the columns into one block per dtype
