"""The Lab's state as plain data: what a teacher hands out (a JSON file, or a short code to paste) to rebuild a
panel as it was.

:class:`LabState` is frozen and validated: spec, view, selected plan, run options, source and recording. It reads
and writes a dict (``to_dict``/``from_dict``), a file (``save``/``load``) and a code (``to_code``/``from_code``:
the compact JSON, compressed and base64url-encoded after :data:`CODE_PREFIX`, which fits in a chat message or a
link's ``#`` fragment); the Lab makes one and applies one.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import zlib
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, PathError
from ..options import RunOptions
from ..specs import Spec, spec_from_dict

__all__ = ["CODE_PREFIX", "SOURCES", "STATE_VERSION", "LabState"]

STATE_VERSION = 1
#: Where the results shown come from.
SOURCES: tuple[str, ...] = ("live", "recorded")
#: How a state code starts (a link may carry it after ``#``: ``...01_lab.ipynb#cudnn-lab-state=<code>``).
CODE_PREFIX = "cudnn-lab-state="


@dataclasses.dataclass(frozen=True)
class LabState:
    """Everything needed to rebuild a Lab panel."""

    spec: Spec
    view: str = "Graph"
    selected: str | None = None
    run: RunOptions = dataclasses.field(default_factory=RunOptions)
    source: str = "live"
    recorded: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.spec, Spec):
            raise OptionError("spec", self.spec, "must be a cudnn_lab spec", where="Lab state")
        if self.source not in SOURCES:
            raise OptionError("source", self.source, f"must be one of {', '.join(SOURCES)}", where="Lab state")
        object.__setattr__(self, "run", RunOptions.coerce(self.run))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict with a ``version`` key."""
        return {"version": STATE_VERSION, "spec": self.spec.to_dict(), "view": self.view, "selected": self.selected,
                "run": self.run.to_dict(), "source": self.source, "recorded": self.recorded}

    @classmethod
    def from_dict(cls, data: Any) -> LabState:
        """Inverse of :meth:`to_dict` (a ``run`` dict may name only some options; the rest take defaults)."""
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            got = data.get("version") if isinstance(data, dict) else type(data).__name__
            raise OptionError("version", got, f"must be {STATE_VERSION} (a dict made by Lab.state())",
                              where="Lab state")
        return cls(spec=spec_from_dict(data.get("spec")), view=data.get("view") or "Graph",
                   selected=data.get("selected"), run=RunOptions.coerce(data.get("run") or None),
                   source=data.get("source") or "live", recorded=data.get("recorded"))

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
        """Inverse of :meth:`to_code`; also takes a whole link whose ``#`` fragment holds the code."""
        if not cls.is_code(text):
            raise OptionError("state code", text, f"must start with {CODE_PREFIX!r} (copy it from Link)",
                              where="Lab state")
        body = text.split(CODE_PREFIX, 1)[1].strip().split("&")[0]
        try:
            raw = zlib.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            data = json.loads(raw)
        except (binascii.Error, ValueError, zlib.error):
            raise OptionError("state code", text, "is damaged (copied only in part?); copy it again",
                              where="Lab state") from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON (the path is checked first: PathError / OptionError say what is wrong)."""
        from ..results.paths import check_output_path, write_text

        path = check_output_path(path, what="Lab state", suffixes=(".json",), make_parents=False)
        return write_text(path, json.dumps(self.to_dict(), indent=1, sort_keys=True), what="Lab state")

    @classmethod
    def load(cls, path: str | Path) -> LabState:
        """Read a state written by :meth:`save`."""
        path = Path(path).expanduser()
        if not path.is_file():
            raise PathError(path, "does not exist" if not path.exists() else "is not a file")
        try:
            data = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DataError(path, f"is not a JSON Lab state ({e})", hint="write one with lab.save(path)") from None
        return cls.from_dict(data)
