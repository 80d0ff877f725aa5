"""Ask cuDNN's heuristics what they would propose, without building or running a plan: for the card in use, for a
target GPU described by a device-properties JSON (cuDNN's deviceless, ahead-of-time API, cuDNN 9.8 and newer), or
under an SM carve-out. An answer is cuDNN's heuristics' answer, never a measurement.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

from ..errors import DataError, OptionError, UnsupportedGraphError
from ..provenance import cudnn_version_text
from ..graph import build_graph
from ..specs import Spec
from .frontend import add_ranked
from .session import cudnn_handle

__all__ = ["Proposal", "Answer", "ask", "device_description", "HEURISTIC_MODES"]

#: The heuristic modes a what-if asks, in the order their ranks are shown.
HEURISTIC_MODES = ("A", "B", "FALLBACK")


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One plan the heuristics proposed: its name, engine and knobs, behaviour notes and rank in each mode."""

    plan: str
    engine_id: int
    knobs: dict[str, int]
    behavior_notes: tuple[str, ...]
    ranks: dict[str, int]

    @property
    def runtime_compiled(self) -> bool:
        """True for engines cuDNN compiles at run time (NVRTC): slow to build the first time."""
        return "RUNTIME_COMPILATION" in self.behavior_notes

    def to_dict(self) -> dict[str, Any]:
        return {"plan": self.plan, "engine_id": self.engine_id, "knobs": dict(self.knobs),
                "behavior_notes": list(self.behavior_notes), "ranks": dict(self.ranks)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        return cls(plan=str(data["plan"]), engine_id=_whole(data["engine_id"], "engine_id"),
                   knobs={str(k): _whole(v, f"knobs.{k}") for k, v in dict(data["knobs"]).items()},
                   behavior_notes=tuple(str(n) for n in data["behavior_notes"]),
                   ranks={str(k): _whole(v, f"ranks.{k}") for k, v in dict(data["ranks"]).items()})


ANSWER_SOURCE = "the heuristics worker's answer"


def _whole(value: Any, field: str) -> int:
    """A whole number of a worker's answer (JSON reads 1e400 as infinity: int() of it would raise OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**63:
        raise DataError(ANSWER_SOURCE, f"field {field}: must be a whole number, not {str(value)[:40]}")
    return value


@dataclasses.dataclass(frozen=True)
class Answer:
    """What cuDNN's heuristics answered for one spec and one target: the proposals (in mode A's order, then the
    others'), and per mode the message of a mode that proposed nothing (cuDNN's own words, reasons included)."""

    proposals: tuple[Proposal, ...]
    declined: dict[str, str]
    cudnn_version: int
    seconds: float

    @property
    def engines(self) -> list[int]:
        """Engine ids proposed, each once, in order of first appearance."""
        return list(dict.fromkeys(p.engine_id for p in self.proposals))

    def to_dict(self) -> dict[str, Any]:
        return {"proposals": [p.to_dict() for p in self.proposals], "declined": dict(self.declined),
                "cudnn_version": self.cudnn_version, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Answer:
        return cls(proposals=tuple(Proposal.from_dict(p) for p in data["proposals"]),
                   declined={str(k): str(v) for k, v in dict(data["declined"]).items()},
                   cudnn_version=_whole(data["cudnn_version"], "cudnn_version"), seconds=_seconds(data["seconds"]))


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise DataError(ANSWER_SOURCE, f"field seconds: must be a finite number of seconds, not {str(value)[:40]}")
    return float(value)


def device_description(device: int = 0) -> dict[str, Any]:
    """The card's description as cuDNN itself serializes it (``create_device_properties(device).serialize()``)."""
    import cudnn

    return json.loads(cudnn.create_device_properties(device).serialize())


def _graph_options(description: dict[str, Any] | None, sm_count: int | None) -> dict[str, Any]:
    import cudnn

    options: dict[str, Any] = {}
    if description is not None:
        try:
            options["device_property"] = cudnn.create_device_properties(json.dumps(description))
        except Exception as e:  # noqa: BLE001 - cuDNN's refusal of a description is the user's error to fix
            raise OptionError("target", description.get("deviceName", "device description"),
                              f"a device description this cuDNN ({cudnn.backend_version()}) accepts; it said: "
                              f"{str(e).splitlines()[0][:200]}") from None
    if sm_count is not None:
        options["sm_count"] = int(sm_count)
    return options


def propose_mode(g: Any, mode: str, found: dict[str, Proposal], declined: dict[str, str]) -> None:
    """Ask heuristic ``mode`` for frontend graph ``g``'s plans (nothing is built): its proposals merged into
    ``found`` by plan name with this mode's rank, or why it proposed none into ``declined``, in cuDNN's words."""
    import cudnn

    try:
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([getattr(cudnn.heur_mode, mode)])
        count = g.get_execution_plan_count()
    except Exception as e:  # noqa: BLE001 - a mode proposing nothing is an answer, kept in cuDNN's words
        declined[mode] = str(e)
        return
    if count == 0:
        declined[mode] = "the heuristics returned no plans"
    add_ranked(g, count, mode, found, lambda name, engine_id, knobs, notes, i: Proposal(
        plan=name, engine_id=engine_id, knobs=knobs, behavior_notes=notes, ranks={mode: i}))


def ask(spec: Spec, *, description: dict[str, Any] | None = None, sm_count: int | None = None,
        modes: tuple[str, ...] = HEURISTIC_MODES, handle: Any = None) -> Answer:
    """The plans cuDNN's heuristics propose for ``spec`` on the target ``description`` (None: the card in use),
    mode by mode; nothing is built or run. UnsupportedGraphError (with cuDNN's reasons) if no mode proposes any."""
    import cudnn

    t0 = time.perf_counter()
    found: dict[str, Proposal] = {}
    declined: dict[str, str] = {}
    for mode in modes:
        options = _graph_options(description, sm_count)
        if description is None and handle is None:
            handle = cudnn_handle(0)  # cuDNN needs a handle (a CUDA context) to ask about the card in use
        lab = build_graph(spec, handle=handle if description is None else None, graph_options=options)
        propose_mode(lab.pygraph, mode, found, declined)
    answer = Answer(proposals=tuple(found.values()), declined=declined, cudnn_version=int(cudnn.backend_version()),
                    seconds=time.perf_counter() - t0)
    if not found:
        detail = "\n".join(f"heur_mode {m}: {msg}" for m, msg in declined.items())
        raise UnsupportedGraphError("cuDNN's heuristics proposed no plan for this graph on this target",
                                    detail=detail, cudnn_version=cudnn_version_text(answer.cudnn_version),
                                    hint="")
    return answer
