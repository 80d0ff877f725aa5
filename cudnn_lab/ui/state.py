"""The Lab's state as plain data: what a teacher hands out (a JSON file, or a short code to paste) to rebuild a
panel as it was.

:class:`LabState` is frozen and validated: spec, view, selected plan, run options, source, recording, the What-if
tab's chosen targets and whether the Latency and Roofline views draw their model lines. It reads
and writes a dict (``to_dict``/``from_dict``), a file (``save``/``load``) and a code (``to_code``/``from_code``:
the compact JSON, compressed and base64url-encoded after :data:`CODE_PREFIX`, which fits in a chat message or a
link's ``#`` fragment); the Lab makes one and applies one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import zlib
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, shorten
from ..files import first_in_json
from ..options import RunOptions
from ..results.loading import (MAX_PLAN_NAME, MAX_RECORDING_TEXT, MAX_STATE_BYTES, check_state, inflate, parse_json,
                               read_text)
from ..specs import Spec, spec_from_dict
from ..specs.presets import preset_info
from ..results.paths import check_output_path, write_text

__all__ = ["CODE_PREFIX", "MAX_CODE_CHARS", "MAX_WHATIF_TARGETS", "SOURCES", "STATE_VERSION", "VIEWS", "LabState"]

STATE_VERSION = 1
#: The Lab's views (tab titles), in order.
VIEWS: tuple[str, ...] = ("Graph", "Plans", "Latency", "Heuristics", "Numerics", "Roofline", "Anatomy", "What-if",
                          "Sweep", "Code", "Log")
#: Where the results shown come from.
SOURCES: tuple[str, ...] = ("live", "recorded")
#: How a state code starts (a link may carry it after ``#``: ``...09_lab.ipynb#cudnn-lab-state=<code>``).
CODE_PREFIX = "cudnn-lab-state="
#: Longest text (a code, or a link ending in one) read as a state code: a real one is about a thousand characters;
#: longer text is refused before it is decoded.
MAX_CODE_CHARS = 64 * 2**10
#: Most What-if targets a state may choose, and the longest name of one (the kit knows about a dozen, named
#: ``h200``, ``sm120``, ...).
MAX_WHATIF_TARGETS = 64
MAX_TARGET_NAME = 40
#: The state key of the What-if tab's chosen targets (absent: the tab's defaults).
WHATIF_KEY = "whatif_targets"
#: The state key of the real-model preset the form's spec was picked from (absent: none).
PRESET_KEY = "preset"
#: The state key of the Latency and Roofline views' model lines toggle (absent: off).
MODELS_KEY = "model_lines"


def _models_problem(value: Any) -> str | None:
    """Why ``value`` is not the model lines toggle (true or false), or None when it is."""
    return None if isinstance(value, bool) else f"must be true or false, not {_kind(value)}"


def _preset_name(value: Any) -> str | None:
    """The preset's name as ``cl.presets()`` spells it (None stays None); OptionError naming ``preset`` and listing
    the names for anything else."""
    if value is None:
        return None
    try:
        return preset_info(value).name
    except OptionError as e:
        raise OptionError(PRESET_KEY, value, e.allowed, where="Lab state") from None


def _name(field: str, value: Any, limit: int) -> None:
    """OptionError unless ``value`` is None or non-empty text of at most ``limit`` characters."""
    if value is not None and (not isinstance(value, str) or not 0 < len(value) <= limit):
        raise OptionError(field, value, f"must be None or a name of 1 to {limit} characters", where="Lab state")


def _target_names_problem(value: Any) -> str | None:
    """Why ``value`` is not a What-if target choice (None, or a list of 1 to MAX_WHATIF_TARGETS distinct names),
    or None when it is one."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        return f"must be a list of What-if target names (such as ['h200', 'sm80']) or null, not {_kind(value)}"
    if not 0 < len(value) <= MAX_WHATIF_TARGETS:
        return f"must name 1 to {MAX_WHATIF_TARGETS} targets, not {len(value)}"
    for i, name in enumerate(value):
        if not isinstance(name, str) or not 0 < len(name) <= MAX_TARGET_NAME:
            return f"item {i} must be a target name of 1 to {MAX_TARGET_NAME} characters, not {_kind(name)}"
    if len(set(value)) < len(value):
        return "names a target twice"
    return None


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _parse_state_json(text: str, source: Any, what: str) -> Any:
    """State JSON -> value, a NaN or Infinity refused naming the field that holds it (the parser alone cannot)."""
    data = parse_json(text, source, what, allow_nonfinite=True)
    found = first_in_json(data, lambda v: isinstance(v, float) and not math.isfinite(v), whole="(the whole state)")
    if found is not None:
        field, value = found
        text = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        raise DataError(source, f"field {field}: holds a number the kit cannot use: {text} (JSON numbers must be "
                        "finite here)")
    return data


@dataclasses.dataclass(frozen=True)
class LabState:
    """Everything needed to rebuild a Lab panel (every field checked when made)."""

    spec: Spec
    view: str = "Graph"
    selected: str | None = None
    run: RunOptions = dataclasses.field(default_factory=RunOptions)
    source: str = "live"
    recorded: str | None = None
    #: The What-if tab's chosen targets (names, in the tab's order), or None for its defaults.
    whatif_targets: tuple[str, ...] | None = None
    #: The real-model preset the spec was picked from (a name in ``cl.presets()``; the spec may be edited since).
    preset: str | None = None
    #: Whether the Latency and Roofline views draw the speed models' lines beside the measured points.
    model_lines: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.spec, Spec):
            raise OptionError("spec", self.spec, "must be a cudnn_lab spec", where="Lab state")
        if not isinstance(self.view, str) or self.view not in VIEWS:
            raise OptionError("view", self.view, f"must be one of {', '.join(VIEWS)}", where="Lab state")
        if not isinstance(self.source, str) or self.source not in SOURCES:
            raise OptionError("source", self.source, f"must be one of {', '.join(SOURCES)}", where="Lab state")
        _name("selected", self.selected, MAX_PLAN_NAME)
        _name("recorded", self.recorded, MAX_RECORDING_TEXT)
        problem = _target_names_problem(self.whatif_targets)
        if problem:
            raise OptionError(WHATIF_KEY, self.whatif_targets, problem, where="Lab state")
        if self.whatif_targets is not None:
            object.__setattr__(self, "whatif_targets", tuple(self.whatif_targets))
        problem = _models_problem(self.model_lines)
        if problem:
            raise OptionError(MODELS_KEY, self.model_lines, problem, where="Lab state")
        object.__setattr__(self, "run", RunOptions.coerce(self.run))
        object.__setattr__(self, "preset", _preset_name(self.preset))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict with a ``version`` key (``whatif_targets`` only where targets were chosen,
        ``model_lines`` only where they are drawn)."""
        data = {"version": STATE_VERSION, "spec": self.spec.to_dict(), "view": self.view, "selected": self.selected,
                "run": self.run.to_dict(), "source": self.source, "recorded": self.recorded}
        if self.whatif_targets is not None:
            data[WHATIF_KEY] = list(self.whatif_targets)
        if self.preset is not None:
            data[PRESET_KEY] = self.preset
        if self.model_lines:
            data[MODELS_KEY] = True
        return data

    @classmethod
    def from_dict(cls, data: Any, source: Any = None) -> LabState:
        """Inverse of :meth:`to_dict`, the whole dict checked first: OptionError naming the field for a dict given
        in code, DataError naming ``source`` too for one read from a file or a code. A ``run`` dict may name only
        some options, and the keys left out take defaults."""
        try:
            return cls._from_checked(data, source or "Lab state")
        except DataError as e:
            if source is not None:
                raise
            raise OptionError("state", data, e.problem, where="Lab state") from None

    @classmethod
    def _from_checked(cls, data: Any, source: Any) -> LabState:
        """The state in ``data`` checked whole (DataError naming ``source`` and the field), then made."""
        chosen = preset = None
        models: Any = False
        own = (WHATIF_KEY, PRESET_KEY, MODELS_KEY)  # this module's keys; check_state checks the others
        if isinstance(data, dict) and any(key in data for key in own):
            chosen, preset, models = data.get(WHATIF_KEY), data.get(PRESET_KEY), data.get(MODELS_KEY, False)
            data = {k: v for k, v in data.items() if k not in own}
        data = check_state(data, source, version=STATE_VERSION, views=VIEWS)
        problem = _target_names_problem(chosen)
        if problem:
            raise DataError(source, f"field {WHATIF_KEY}: {problem}")
        problem = _models_problem(models)
        if problem:
            raise DataError(source, f"field {MODELS_KEY}: {problem}")
        try:
            preset = _preset_name(preset)
        except OptionError as e:
            raise DataError(source, f"field {PRESET_KEY}: {shorten(e.value)} {e.allowed}") from None
        return cls(spec=spec_from_dict(data["spec"]), view=data.get("view") or "Graph",
                   selected=data.get("selected"), run=RunOptions.coerce(data.get("run") or None),
                   source=data.get("source") or "live", recorded=data.get("recorded"),
                   whatif_targets=None if chosen is None else tuple(chosen), preset=preset, model_lines=models)

    def to_code(self) -> str:
        """The state as one line of text to copy: ``cudnn-lab-state=`` then compressed JSON in base64url."""
        raw = json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True).encode()
        return CODE_PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")

    @staticmethod
    def is_code(text: Any) -> bool:
        """Whether ``text`` holds a state code (alone, or after a link's ``#``)."""
        return isinstance(text, str) and CODE_PREFIX in text

    @classmethod
    def from_code(cls, text: str) -> LabState:
        """Inverse of :meth:`to_code`; also takes a whole link whose ``#`` fragment holds the code. The text's
        length is bounded before decoding and the JSON inflates to at most :data:`MAX_STATE_BYTES`."""
        if isinstance(text, str) and len(text) > MAX_CODE_CHARS:
            raise OptionError("state code", text, f"is {len(text)} characters long, more than the {MAX_CODE_CHARS} "
                              "a state code can be; copy it again from Link", where="Lab state")
        if not cls.is_code(text):
            raise OptionError("state code", text, f"must start with {CODE_PREFIX!r} (copy it from Link)",
                              where="Lab state")
        body = text.split(CODE_PREFIX, 1)[1].strip().split("&")[0]
        try:
            packed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            raw = inflate(packed, "Lab state code", "state code", limit=MAX_STATE_BYTES)
            data = _parse_state_json(raw.decode("utf-8"), "Lab state code", "state code")
        except (binascii.Error, ValueError) as e:  # DataError is a ValueError: say what it found
            why = f": {e.problem}" if isinstance(e, DataError) else " (copied only in part?)"
            raise OptionError("state code", text, f"is damaged{why}; copy it again from Link", where="Lab state") \
                from None
        return cls.from_dict(data, "Lab state code")

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON (the path is checked first: PathError / OptionError say what is wrong)."""
        path = check_output_path(path, what="Lab state", suffixes=(".json",), make_parents=False)
        return write_text(path, json.dumps(self.to_dict(), indent=1, sort_keys=True), what="Lab state")

    @classmethod
    def load(cls, path: str | Path) -> LabState:
        """Read a state written by :meth:`save` (a regular file of at most :data:`MAX_STATE_BYTES`, checked whole:
        PathError for the path, DataError naming the file and the field)."""
        checked, text = read_text(path, "Lab state JSON", limit=MAX_STATE_BYTES)
        return cls._from_checked(_parse_state_json(text, checked, "Lab state JSON"), checked)
