"""Plans from a cuDNN frontend graph, the default plan source: ask the heuristics mode by mode, list every plan.

One graph is built per heuristic mode so that each plan's rank in each mode is known; plans that several modes
propose (same engine and knobs) are listed once.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UnsupportedGraphError
from ..graph import build_graph
from ..specs import Spec
from .explain import explain, first_line
from .plans import PLAN_SOURCES, PlanEntry


def _enum_name(value: Any) -> str:
    return str(value).rsplit(".", 1)[-1]


def knobs_of(name: str, knobs: Any) -> dict[str, int]:
    """Knob settings by knob type: ``{"k2": 7, ...}`` read from the plan's name (``eng41_k2=7_k13=1``).

    The name carries every knob type's number, so it is the lossless record (``create_execution_plan`` can replay
    it); the knob enum's names are not (docs/FINDINGS.md: some knob types come back as NOT_SET and collide).
    """
    parsed = re.findall(r"_k(\d+)=(-?\d+)", name)
    if parsed and name.startswith("eng"):
        return {f"k{t}": int(v) for t, v in parsed}
    return {_enum_name(k): int(v) for k, v in dict(knobs).items()}


@PLAN_SOURCES.register(Spec)
def graph_plans(spec: Spec, handle: Any, modes: tuple[str, ...], where: str, cudnn_version: str) -> list[PlanEntry]:
    """Every plan the chosen heuristic modes propose for ``spec``'s graph, mode by mode, rank by rank."""
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
            plans[name] = PlanEntry(name=name, engine_id=int(engine_id), knobs=knobs_of(name, knobs), graph=lab,
                                    index=i, ranks={mode: i}, behavior_notes=notes)
    if not plans:
        detail = "\n".join(failures) or "the heuristics returned no plans"
        raise UnsupportedGraphError(explain(detail, spec), detail=detail, device=where, cudnn_version=cudnn_version)
    return list(plans.values())
