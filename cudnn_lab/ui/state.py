"""The Lab's state as plain data: what a teacher hands out (a JSON file) to rebuild a panel as it was.

:class:`LabState` is frozen and validated: spec, view, selected plan, run options, source and recording. It reads
and writes a dict (``to_dict``/``from_dict``) and a file (``save``/``load``); the Lab makes one and applies one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, PathError
from ..options import RunOptions
from ..specs import Spec, spec_from_dict

__all__ = ["SOURCES", "STATE_VERSION", "LabState"]

STATE_VERSION = 1
#: Where the results shown come from.
SOURCES: tuple[str, ...] = ("live", "recorded")


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

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON."""
        path = Path(path).expanduser()
        if path.is_dir():
            raise PathError(path, "is a folder", hint="give a file name such as lab.json")
        if not path.parent.exists():
            raise PathError(path, "is in a folder that does not exist")
        path.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True))
        return path

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
