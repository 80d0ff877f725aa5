"""Engine configurations: ask the heuristics (mode by mode), list every plan, build them one at a time.

One graph is built per heuristic mode so that each plan's rank in each mode is known; plans that several modes
propose (same engine and knobs) are listed once.
"""

from __future__ import annotations

import dataclasses
import re
import time
from typing import Any

from ..errors import SpecError, UnsupportedGraphError
from ..graph import LabGraph, build_graph
from ..specs import Spec
from .explain import explain, first_line

HEUR_MODES: tuple[str, ...] = ("A", "B", "FALLBACK")


@dataclasses.dataclass
class PlanEntry:
    """One engine configuration and what happened to it (mutable while a run fills it in)."""

    name: str
    engine_id: int
    knobs: dict[str, int]
    graph: LabGraph
    index: int
    ranks: dict[str, int] = dataclasses.field(default_factory=dict)
    behavior_notes: tuple[str, ...] = ()
    workspace_bytes: int | None = None
    build_ms: float | None = None
    status: str = "proposed"
    error: str = ""

    def build(self) -> bool:
        """Build (and time the build of) this plan; failures are recorded, never raised."""
        g = self.graph.pygraph
        t0 = time.perf_counter()
        try:
            g.build_plan_at_index(self.index)
        except Exception as e:  # noqa: BLE001 - one plan failing must not stop the others
            self.status, self.error = "build_failed", first_line(str(e))
            return False
        self.build_ms = (time.perf_counter() - t0) * 1e3
        try:
            self.workspace_bytes = int(g.get_workspace_size_plan_at_index(self.index))
        except Exception as e:  # noqa: BLE001
            self.status, self.error = "build_failed", first_line(f"workspace query failed: {e}")
            return False
        self.status = "built"
        return True


def check_modes(modes: Any) -> tuple[str, ...]:
    if isinstance(modes, str):
        modes = (modes,)
    modes = tuple(m.upper() for m in modes) if isinstance(modes, (list, tuple)) else modes
    if not isinstance(modes, tuple) or not modes or any(m not in HEUR_MODES for m in modes):
        raise SpecError("heuristics", modes, f"must be one or more of {', '.join(HEUR_MODES)}")
    return tuple(dict.fromkeys(modes))


def _enum_name(value: Any) -> str:
    return str(value).rsplit(".", 1)[-1]


def knobs_of(name: str, knobs: Any) -> dict[str, int]:
    """Knob settings by knob type: ``{"k2": 7, ...}`` read from the plan's name (``eng41_k2=7_k13=1``).

    The name carries every knob type's number; frontend 1.32 has no enum name for some of them (they come back
    as NOT_SET and collide), so the name is the lossless record, which ``create_execution_plan`` can replay.
    """
    parsed = re.findall(r"_k(\d+)=(-?\d+)", name)
    if parsed and name.startswith("eng"):
        return {f"k{t}": int(v) for t, v in parsed}
    return {_enum_name(k): int(v) for k, v in dict(knobs).items()}


def propose(spec: Spec, handle: Any, modes: tuple[str, ...], where: str, cudnn_version: str) -> list[PlanEntry]:
    """Every plan the chosen heuristic modes propose, in heuristic order (mode by mode, rank by rank)."""
    if spec.op == "pool":  # no frontend graph holds pooling in 1.32: one row for cuDNN's classic cudnnPoolingForward
        from .classic_pool import entries
        return entries(spec, handle)
    import cudnn

    plans: dict[str, PlanEntry] = {}
    failures: list[str] = []
    for mode in modes:
        lab = build_graph(spec, handle=handle)
        g = lab.pygraph
        try:
            g.validate()
            g.build_operation_graph()
        except Exception as e:  # noqa: BLE001 - graph-level failure: the whole graph is unsupported
            raise UnsupportedGraphError(explain(str(e), spec), detail=str(e), device=where,
                                        cudnn_version=cudnn_version) from None
        try:
            g.create_execution_plans([getattr(cudnn.heur_mode, mode)])
            count = g.get_execution_plan_count()
        except Exception as e:  # noqa: BLE001 - one mode proposing nothing is normal
            failures.append(f"heur_mode {mode}: {first_line(str(e))}")
            continue
        try:
            g.check_support()
        except Exception as e:  # noqa: BLE001 - aggregate answer; plans are still tried one by one
            failures.append(f"check_support ({mode}): {first_line(str(e))}")
        for i in range(count):
            name = g.get_plan_name_at_index(i)
            if name in plans:
                plans[name].ranks[mode] = i
                continue
            engine_id, knobs = g.get_engine_and_knobs_at_index(i)
            try:
                notes = tuple(_enum_name(n) for n in g.get_behavior_notes_for_plan_at_index(i))
            except Exception:  # noqa: BLE001 - python engines have no behavior notes
                notes = ()
            plans[name] = PlanEntry(name=name, engine_id=int(engine_id),
                                    knobs=knobs_of(name, knobs),
                                    graph=lab, index=i, ranks={mode: i}, behavior_notes=notes)
    if not plans:
        detail = "\n".join(failures) or "the heuristics returned no plans"
        raise UnsupportedGraphError(explain(detail, spec), detail=detail, device=where, cudnn_version=cudnn_version)
    return list(plans.values())
