"""Which recordings the Lab offers: those of the operation chosen (a recording's operation is its spec's), the one
of the problem shown first. Pure functions over ``cl.recorded_datasets()``'s frame; no widgets."""

from __future__ import annotations

from typing import Any

from ..provenance import cudnn_version_text

__all__ = ["recording_op", "recording_options", "recordings_of"]


def recording_op(row: Any) -> str | None:
    """The operation of one row of ``recorded_datasets(kind='run')`` (its ``op`` column: the spec's)."""
    op = row.get("op") if hasattr(row, "get") else None
    return op if isinstance(op, str) and op else None


def recordings_of(frame: Any, op: str) -> Any:
    """The rows of a datasets frame whose recording is of operation ``op`` (an empty frame for None)."""
    if frame is None or frame.empty:
        return frame
    mask = [recording_op(r) == op for _, r in frame.iterrows()]
    return frame[mask]


def recording_options(frame: Any, op: str, label: str) -> tuple[list[tuple[str, str]], str | None]:
    """Dropdown options ``(text, name)`` of the recordings of ``op``, and the one to preselect: the recording whose
    problem is ``label`` (the spec shown), else the first."""
    rows = recordings_of(frame, op)
    if rows is None or rows.empty:
        return [], None
    options: list[tuple[str, str]] = []
    value = None
    for _, r in rows.iterrows():
        text = (f"{r.get('label') or r['name']} — {r.get('gpu') or '?'}, cuDNN "
                f"{cudnn_version_text(r.get('cudnn'))}, {str(r.get('date') or '')[:10]}")
        options.append((text, str(r["name"])))
        if value is None and r.get("label") == label:
            value = str(r["name"])
    return options, value or options[0][1]
