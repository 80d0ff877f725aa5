"""Plan records and where they come from: :class:`PlanEntry`, and the registry of plan sources by spec class.

A plan source turns a spec into its list of plans (``PlanEntry``), in heuristic order. The cuDNN frontend graph is
the source of every spec (``gpu/frontend.py``, registered for :class:`~cudnn_lab.specs.Spec`); a family that has no
graph node registers its own source for its spec class (pooling: ``gpu/classic/pool.py``). A plan's build state
(built, build time, workspace) belongs to its session and lasts; what happened to it in one run is the runner's.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any, Protocol

from ..registry import FamilyRegistry
from ..specs import Spec
from .explain import first_line


@dataclasses.dataclass
class PlanEntry:
    """One engine configuration of a spec's graph and its build state (kept by the session across runs).

    ``graph`` is what executes it: a :class:`~cudnn_lab.graph.LabGraph` (or an object offering the same
    ``tensors`` and ``pygraph.build_plan_at_index`` / ``get_workspace_size_plan_at_index`` /
    ``execute_plan_at_index``), with ``index`` the plan's position in it.
    """

    name: str
    engine_id: int
    knobs: dict[str, int]
    graph: Any
    index: int
    ranks: dict[str, int] = dataclasses.field(default_factory=dict)
    behavior_notes: tuple[str, ...] = ()
    workspace_bytes: int | None = None
    build_ms: float | None = None
    #: None: not tried yet; True: built; False: the build failed (see build_error); a failed build is not retried
    built: bool | None = None
    build_error: str = ""
    #: the plan cache's key of the graph that proposed this plan (None: the plan cache computes it from ``graph``)
    cache_key: str | None = None
    #: keep this plan in the plan cache however fast it builds (its graph's proposals are kept on disk too)
    keep: bool = False
    #: recalled from the heuristics cache: ``graph`` has no plans yet, so the plan must load from the plan cache
    #: (or the session asks the heuristics first: ``Session.ask_heuristics``)
    recalled: bool = False

    def build(self) -> bool:
        """Build (and time the build of) this plan once; failures are recorded, never raised."""
        if self.built is not None:
            return self.built
        g = self.graph.pygraph
        t0 = time.perf_counter()
        try:
            g.build_plan_at_index(self.index)
        except Exception as e:  # noqa: BLE001 - one plan failing must not stop the others
            self.built, self.build_error = False, first_line(str(e))
            return False
        self.build_ms = (time.perf_counter() - t0) * 1e3
        try:
            self.workspace_bytes = int(g.get_workspace_size_plan_at_index(self.index))
        except Exception as e:  # noqa: BLE001
            self.built, self.build_error = False, first_line(f"workspace query failed: {e}")
            return False
        self.built = True
        return True


class PlanSource(Protocol):
    """``source(spec, handle, modes, where, cudnn_version, graph_options=None) -> [PlanEntry, ...]`` in heuristic
    order.

    ``where`` (the GPU's name) and ``cudnn_version`` go into the UnsupportedGraphError raised when nothing runs;
    ``graph_options`` (an SM carve-out, a kernel cache) go to ``cudnn.pygraph``, and a source that runs a classic
    call (on the whole GPU) refuses them.
    """

    def __call__(self, spec: Any, handle: Any, modes: tuple[str, ...], where: str, cudnn_version: str, *,
                 graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]: ...


#: Spec class -> its plan source; the frontend graph's is registered for Spec itself (every family's default).
PLAN_SOURCES: FamilyRegistry[PlanSource] = FamilyRegistry("GPU plan source")


def propose(spec: Spec, handle: Any, modes: tuple[str, ...], where: str, cudnn_version: str) -> list[PlanEntry]:
    """Every plan of ``spec`` from its family's registered source (the sources register on import of ``gpu``)."""
    return PLAN_SOURCES[spec](spec, handle, modes, where, cudnn_version)
