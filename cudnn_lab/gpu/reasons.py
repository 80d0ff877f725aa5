"""Why cuDNN proposed no plan: its "No valid engine configs" messages read into one row per engine configuration.

cuDNN answers a graph no engine supports with one block per engine configuration it tried: a JSON line naming the
engine (``{"engineId": 0, "smVersion": 800, "knobChoices": {...}}``) followed by ``Warning: <status>; Reason: <check>``
lines, innermost check first, then the functions that passed the refusal up (``finalize_internal()`` ...). The first
reason that is not such a wrapper is the engine's reason; a plain category says what kind of limit it is.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from ..specs.records import AsDict

__all__ = ["EngineReason", "CATEGORIES", "read_reasons", "reasons_frame", "summarize", "category_of"]

#: Categories, in the order a summary lists them, each with what it tells the user.
CATEGORIES: dict[str, str] = {
    "carve-out": "the engine runs only on the whole GPU (no SM carve-out)",
    "architecture": "the engine is built for other GPU architectures",
    "version": "this cuDNN version does not have it",
    "data type": "the engine does not take these data types or this precision",
    "layout": "the engine needs another layout, stride or alignment",
    "pattern": "the engine does not run this graph pattern (these ops, this fusion)",
    "prerequisite": "something the engine needs is missing (a library, the driver)",
    "other": "another check of the engine failed",
}

# Checks that only pass a refusal up: the engine's own reason is the first line that is not one of these.
_WRAPPERS = re.compile(r"^(finalize_internal\(\)|engine\.finalize\(\)|ptr->isSupported\(\)|check_for_support\(\)|"
                       r"status|engine_iface->getStatus\(\)|process_knob_choices\(\)|initial_compatibility_check\(\)|"
                       r"\(CUDNN_STATUS_NOT_INITIALIZED == status\).*|finalize_int.*|engine\.f.*|ptr->isSu.*)$")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("carve-out", re.compile(r"target_sm_count|targetSMcount|sm_count", re.I)),
    ("version", re.compile(r"requires cuDNN|cuDNN v?\d+\.\d+|only available starting|since cuDNN", re.I)),
    ("prerequisite", re.compile(r"libcuda|cannot load|Unable to load|SUBLIBRARY|driver", re.I)),
    ("architecture", re.compile(r"ARCH_MISMATCH|deviceVer|only (Hopper|Blackwell|Ampere|sm\d+x?)|architecture|"
                                r"QMMA|sm_\d+ instructions|smVersion|is_xmma_sm|is_cutlass_sm|in SM\d+", re.I)),
    ("layout", re.compile(r"NHWC|NCHW|stride|layout|align|vectoriz|packed", re.I)),
    ("data type", re.compile(r"DATA_TYPE|TypeSupported|mathPrec|data ?type|dtype|kern_type|FP16|BF16|fp8|"
                             r"I/O|precision", re.I)),
    ("pattern", re.compile(r"GRAPH_PATTERN|pattern|global index -1 is not found|entrance node|support_fort|"
                           r"was not given to the engine|check_\w+_support", re.I)),
)


def category_of(status: str, reason: str) -> str:
    """The plain category of one engine's refusal, from its reason first, then its status."""
    for text in (reason, status):
        for name, rule in _RULES:
            if rule.search(text or ""):
                return name
    return "other"


@dataclasses.dataclass(frozen=True)
class EngineReason(AsDict):
    """One engine configuration cuDNN tried and refused: its engine id (-1 if unnamed), the SM architecture of that
    engine configuration, its knob choices, cuDNN's status, its reason (the innermost check) and a category."""

    engine_id: int
    sm_version: int | None
    knobs: str
    status: str
    reason: str
    category: str


#: Most brackets an engine header line may open (a real one opens 2: the header and its knob choices); beyond it,
#: and for any header that does not parse, the block is kept with its engine unknown.
MAX_HEADER_BRACKETS = 32
#: Longest integer literal read from a header (engine ids, SM versions and knob values are 32-bit).
_MAX_HEADER_DIGITS = 20
#: Largest engine id and SM version a header may name (cuDNN's are below 10,000 and 2,000).
_MAX_ENGINE_ID = 2**31 - 1
_MAX_SM_VERSION = 100_000


def _header_int(text: str) -> int | None:
    """A header's integer literal, or None where it is too long to be one cuDNN writes."""
    return int(text) if len(text.lstrip("-")) <= _MAX_HEADER_DIGITS else None


def _engine_header(line: str) -> dict[str, Any] | None:
    """The engine header on ``line`` (a dict; empty where it cannot be read), or None where the line is none."""
    line = line.strip()
    if not (line.startswith("{") and '"engineId"' in line):
        return None
    if line.count("{") + line.count("[") > MAX_HEADER_BRACKETS:
        return {}
    try:
        data = json.loads(line, parse_int=_header_int, parse_constant=lambda name: None)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _small_int(value: Any, high: int) -> int | None:
    """``value`` as an int in [0, high] (an int, or ASCII digits as cuDNN writes them), else None."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= _MAX_HEADER_DIGITS:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= high:
        return value
    return None


def _knobs_text(knobs: Any) -> str:
    """The knob choices as ``NAME=value, ...`` (cut short: a header can hold anything)."""
    if not isinstance(knobs, dict):
        return ""
    text = ", ".join(f"{str(k).replace('CUDNN_KNOB_TYPE_', '')}={v if isinstance(v, (int, str)) else '?'}"
                     for k, v in list(knobs.items())[:64])
    return text if len(text) <= 1000 else text[:997] + "..."


def read_reasons(message: str) -> list[EngineReason]:
    """Every engine configuration's refusal in a cuDNN message, in its order (empty if it holds none)."""
    rows: list[EngineReason] = []
    header: dict[str, Any] | None = None
    lines: list[tuple[str, str]] = []

    def close() -> None:
        if header is None and not lines:
            return
        status = lines[0][0] if lines else ""
        own = [r for _, r in lines if not _WRAPPERS.match(r)]
        reason = own[0] if own else (lines[0][1] if lines else "")
        h = header or {}
        engine_id = _small_int(h.get("engineId"), _MAX_ENGINE_ID)
        rows.append(EngineReason(
            engine_id=-1 if engine_id is None else engine_id,
            sm_version=_small_int(h.get("smVersion"), _MAX_SM_VERSION),
            knobs=_knobs_text(h.get("knobChoices", {})),
            status=status, reason=reason, category=category_of(status, reason)))

    for raw in str(message).splitlines():
        found = _engine_header(raw)
        if found is not None:
            close()
            header, lines = found, []
            continue
        m = re.match(r"\s*Warning:\s*(\w+);\s*Reason:\s*(.*)$", raw)
        if m:
            if header is None and rows == [] and not lines:
                header = {}
            lines.append((m.group(1), m.group(2).strip()))
    close()
    return rows


def reasons_frame(message: str) -> Any:
    """The reasons as a pandas DataFrame (engine_id, sm_version, knobs, status, reason, category), one row per engine
    configuration; rows that repeat exactly (the same engine refused with the same reason) are listed once with a
    ``configs`` count."""
    import pandas as pd

    rows = [r.to_dict() for r in read_reasons(message)]
    cols = ["engine_id", "sm_version", "status", "reason", "category"]
    if not rows:
        return pd.DataFrame(columns=[*cols, "configs"])
    frame = pd.DataFrame(rows)
    return (frame.groupby(cols, dropna=False, sort=False).size().rename("configs").reset_index())


def summarize(message: str) -> str:
    """One sentence: how many engine configurations were refused, by category (empty if the message holds none)."""
    rows = read_reasons(message)
    if not rows:
        return ""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.category] = counts.get(r.category, 0) + 1
    parts = [f"{counts[c]} by {c} ({CATEGORIES[c]})" for c in CATEGORIES if c in counts]
    engines = len({r.engine_id for r in rows})
    return (f"cuDNN refused {len(rows)} engine configuration{'s' * (len(rows) != 1)} of {engines} "
            f"engine{'s' * (engines != 1)}: " + "; ".join(parts) + ".")
