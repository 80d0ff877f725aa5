"""Field checks shared by the what-if records (answers of cuDNN's heuristics, block-scale answers, version runs):
every field by meaning (type, range, known names), a DataError naming the source and the field otherwise, and one
plan identity (engine and knobs) for the verdicts that compare plans across answers.

Raw Python errors (OverflowError from ``int(inf)``, IndexError from an empty message ...) never leave these checks:
a value that is not what the field holds is refused before anything converts it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import DataError, OptionError, shorten
from ..results.labels import recorded_label
from ..results.loading import parse_json, read_text

__all__ = ["text", "whole", "flag", "cudnn_version", "known_fields", "proposal", "plan_identity", "version_number",
           "Answer", "answer_dict", "old_and_new", "record", "refusal", "answers_file", "REFUSALS", "MODES",
           "MAX_ENGINE_ID", "MAX_RANK"]

#: The kinds of a refusal an answer may carry ("" where cuDNN proposed plans).
REFUSALS = ("declined", "crashed", "timeout")
#: cuDNN's heuristic modes an answer ranks plans in.
MODES = ("A", "B", "FALLBACK")
#: Largest engine id a plan may name (cuDNN's engine ids are small numbers; the loading layer's bound).
MAX_ENGINE_ID = 99_999
#: Largest heuristic rank and knob value the kit reads.
MAX_RANK = 100_000
_KNOB_NAME = re.compile(r"k\d{1,4}|[A-Za-z_][A-Za-z0-9_]{0,63}")


def _kind(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {shorten(value, 40)}"


def fail(source: Any, field: str, problem: str) -> DataError:
    """The DataError of one field: ``<source>: field <field>: <problem>``."""
    return DataError(source, f"field {field}: {problem}")


def text(source: Any, field: str, value: Any, *, limit: int, empty: bool = True) -> str:
    """``value`` if it is text of at most ``limit`` characters (and not empty unless ``empty``)."""
    if not isinstance(value, str):
        raise fail(source, field, f"must be text, not {_kind(value)}")
    if len(value) > limit:
        raise fail(source, field, f"must be at most {limit} characters, not {len(value)}")
    if not empty and not value.strip():
        raise fail(source, field, "must not be empty")
    return value


def whole(source: Any, field: str, value: Any, low: int, high: int, *, null: bool = False) -> Any:
    """``value`` if it is a whole number (not bool, not a float) in [low, high], or null where allowed."""
    if value is None and null:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(source, field, f"must be a whole number{' or null' if null else ''}, not {_kind(value)}")
    if not low <= value <= high:
        raise fail(source, field, f"must be {low}-{high}, not {shorten(value, 40)}")
    return value


def flag(source: Any, field: str, value: Any) -> bool:
    """``value`` if it is true or false (not 0/1, not "yes")."""
    if not isinstance(value, bool):
        raise fail(source, field, f"must be true or false, not {_kind(value)}")
    return value


def cudnn_version(source: Any, field: str, value: Any, *, unknown: bool = False) -> int:
    """A cuDNN 9 version number (90000-99999, e.g. 91900); 0 too where ``unknown`` (no cuDNN answered)."""
    if unknown and value == 0 and not isinstance(value, bool):
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 90000 <= value <= 99999:
        raise fail(source, field, f"must be a cuDNN 9 version number such as 91900{' (or 0: unknown)' * unknown}, "
                                  f"not {_kind(value)}")
    return value


def version_number(source: Any, field: str, value: Any) -> int:
    """A cuDNN version as a run stores it: the number (91400), its digits as text ("91400") or the dotted text
    ("9.14.0"), read as the number; anything else refused naming the field."""
    if isinstance(value, str):
        t = value.strip()
        dotted = re.fullmatch(r"(\d{1,2})\.(\d{1,2})(?:\.(\d{1,2}))?", t)
        if dotted:
            major, minor, patch = (int(g or 0) for g in dotted.groups())
            value = major * 10000 + minor * 100 + patch
        elif re.fullmatch(r"\d{5}", t):
            value = int(t)
    return cudnn_version(source, field, value)


def answer_dict(answer: Any) -> dict[str, Any]:
    """JSON-ready: every field of an answer (a dataclass with a ``spec``) in field order, the spec as its dict, each
    tuple as a list (plan dicts copied); read back by the answer type's ``from_dict``."""
    d = dataclasses.asdict(answer)
    d["spec"] = answer.spec.to_dict()
    for key, value in d.items():
        if isinstance(value, tuple):
            d[key] = [dict(v) if isinstance(v, dict) else v for v in value]
    return d


class Answer:
    """What cuDNN's recorded answers share (:class:`~cudnn_lab.whatif.WhatIf`, the block-scale answer): one
    ``to_dict``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, the spec as its dict, tuples as lists (read back by the type's ``from_dict``)."""
        return answer_dict(self)


def old_and_new(pair: Any, kind: type, wanted: str) -> None:
    """Refuse a two-version record's ``old`` or ``new`` that is not a ``kind`` (OptionError naming the field and the
    record's class, ``wanted`` saying what it takes)."""
    for name in ("old", "new"):
        if not isinstance(getattr(pair, name), kind):
            raise OptionError(name, getattr(pair, name), wanted, where=type(pair).__name__)


def record(source: Any, data: Any, what: str, allowed: Any, required: Any) -> dict[str, Any]:
    """``data`` as one record's object: an object (DataError otherwise), no field outside ``allowed``, every field
    of ``required`` present (the first one missing named). ``what`` names the record: "what-if answer" ("a what-if
    answer must be an object", "is missing from the what-if answer")."""
    if not isinstance(data, dict):
        raise DataError(source, f"a {what} must be an object, not {shorten(data, 40)}")
    known_fields(source, data, allowed, f"a {what}")
    missing = [k for k in required if k not in data]
    if missing:
        raise fail(source, missing[0], f"is missing from the {what}")
    return data


def refusal(source: Any, data: dict[str, Any]) -> str:
    """An answer's ``refused`` field: "" (cuDNN proposed plans, the default) or one of :data:`REFUSALS`."""
    refused = data.get("refused", "")
    if refused != "" and refused not in REFUSALS:
        raise fail(source, "refused", f"must be empty or one of {', '.join(REFUSALS)}, not {shorten(refused, 40)}")
    return str(refused)


def known_fields(source: Any, data: dict[str, Any], allowed: Any, what: str) -> None:
    """Refuse a key ``data`` should not hold (a misspelt or foreign field), naming it."""
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise fail(source, str(unknown[0])[:60], f"is no field of {what} (known: {', '.join(allowed)})")


def _int_map(source: Any, field: str, value: Any, keys: Any, low: int, high: int) -> dict[str, int]:
    if not isinstance(value, dict):
        raise fail(source, field, f"must be an object, not {_kind(value)}")
    if len(value) > 64:
        raise fail(source, field, f"holds {len(value)} entries; at most 64 are read")
    out = {}
    for k, v in value.items():
        if (k not in keys) if isinstance(keys, tuple) else not keys.fullmatch(k):
            allowed = ", ".join(keys) if isinstance(keys, tuple) else "knob names such as k2"
            raise fail(source, f"{field}.{shorten(k, 40)}", f"is not one of {allowed}")
        out[k] = whole(source, f"{field}.{k}", v, low, high)
    return out


#: The fields of a plan in an answer.
PROPOSAL_FIELDS = ("plan", "engine_id", "knobs", "behavior_notes", "ranks")


def proposal(p: Any, source: Any, field: str = "proposals[0]") -> dict[str, Any]:
    """One proposed plan (plan, engine_id, knobs, behavior_notes, ranks), each field checked by meaning."""
    if not isinstance(p, dict):
        raise fail(source, field, f"a plan must be an object, not {_kind(p)}")
    known_fields(source, p, PROPOSAL_FIELDS, "a proposed plan")
    plan = text(source, f"{field}.plan", p.get("plan"), limit=200, empty=False)
    engine = whole(source, f"{field}.engine_id", p.get("engine_id"), 0, MAX_ENGINE_ID)
    knobs = _int_map(source, f"{field}.knobs", p.get("knobs", {}), _KNOB_NAME, -MAX_RANK, MAX_RANK)
    notes = p.get("behavior_notes", [])
    if not isinstance(notes, list) or len(notes) > 32:
        raise fail(source, f"{field}.behavior_notes", f"must be a list of at most 32 note names, not {_kind(notes)}")
    for i, n in enumerate(notes):
        text(source, f"{field}.behavior_notes[{i}]", n, limit=80, empty=False)
    ranks = _int_map(source, f"{field}.ranks", p.get("ranks", {}), MODES, 0, MAX_RANK)
    return {"plan": plan, "engine_id": engine, "knobs": knobs, "behavior_notes": list(notes), "ranks": ranks}


def plan_identity(plan: Any, engine_id: Any = None, knobs: Any = None) -> Any:
    """What makes two plans the same plan: the engine and its knobs (a dict, or the JSON text a run's table holds),
    however the name is spelt; the name itself where engine or knobs are not known."""
    if isinstance(knobs, str):
        try:
            knobs = json.loads(knobs)
        except ValueError:
            knobs = None
    if engine_id is None or not isinstance(knobs, dict) or (isinstance(engine_id, float) and math.isnan(engine_id)):
        return ("plan", str(plan))
    try:
        return ("engine", int(engine_id), tuple(sorted((str(k), int(v)) for k, v in knobs.items())))
    except (TypeError, ValueError, OverflowError):
        return ("plan", str(plan))


A = TypeVar("A")


def answers_file(path: Path, answer: Callable[[Any, Path], A], *, what: str, fmt: str, limit: int) -> tuple[A, ...]:
    """The answers of one recorded answers file (``{"format": fmt, "answers": [...]}``, at most ``limit`` bytes), each
    read and checked by ``answer(item, path)`` (a ``from_dict``; DataError naming the file and field), the card in use
    when they were recorded named, not called "this GPU" (:func:`..results.labels.recorded_label`). ``what`` names the
    files ("recorded what-if": "recorded what-if JSON"). The ``load`` of a recordings kind (results/recordings.py
    reads and caches the files)."""
    _, body = read_text(path, f"{what} JSON", limit=limit)
    data = parse_json(body, path, f"{what} JSON")
    if not isinstance(data, dict) or data.get("format") != fmt or not isinstance(data.get("answers"), list):
        raise DataError(path, f"not a {what} file (format {fmt!r} with a list of answers)")
    answers: list[Any] = [answer(a, path) for a in data["answers"]]  # dataclasses with a target_label
    return tuple(dataclasses.replace(a, target_label=recorded_label(a.target_label)) for a in answers)
