"""What a parallel prebuild did (``settings["parallel_build"]``): per plan its helper, status and build time, and the
prebuild's wall time, waits and problems. Pure data; the scheduling is :mod:`cudnn_lab.gpu.parallel_build`."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["STATUSES", "PlanBuild", "BuildReport"]

#: What :class:`PlanBuild.status` can say.
STATUSES: dict[str, str] = {
    "stored": "built by a helper and put into the plan cache: the run loads it",
    "cached": "already in the plan cache: nothing to build",
    "fast": "built by a helper faster than the plan cache's threshold (not stored, as a run would not store it): "
            "the run builds it",
    "not_stored": "built by a helper but not stored (cuDNN could not serialize it, or the cache is off): the run "
                  "builds it",
    "failed": "the helper could not build it: the run builds it (and records cuDNN's reason if it fails there too)",
    "missed": "its helper died, hung or was left out before reaching it: the run builds it",
    "left": "left to the run: the heuristics' pick, which the run builds itself at once while helpers build the rest, "
            "or (parallel_builds='auto') a plan the run built itself before its helper had reached it",
}


@dataclasses.dataclass(frozen=True)
class PlanBuild:
    """One plan of a prebuild: which helper had it (-1: none), what happened and its build time in the helper."""

    plan: str
    helper: int
    status: str
    build_ms: float | None = None
    error: str = ""

    def __post_init__(self) -> None:
        assert self.status in STATUSES, self.status


@dataclasses.dataclass(frozen=True)
class BuildReport:
    """What a prebuild did: per plan its helper, status and build ms; wall time (``start_s`` of it starting
    helpers), the serial sum of the handed-over plans' build times and the time saved; the problems met."""

    workers: int
    helpers: int
    plans: tuple[PlanBuild, ...] = ()
    wall_s: float = 0.0
    start_s: float = 0.0
    problems: tuple[str, ...] = ()
    skipped: str = ""
    #: seconds the run spent waiting for helpers' plans (asynchronous prebuild)
    waited_s: float = 0.0

    @property
    def built(self) -> int:
        """Plans the helpers built and handed over (stored in the plan cache)."""
        return sum(p.status == "stored" for p in self.plans)

    @property
    def serial_s(self) -> float:
        """Seconds one process would have spent building the handed-over plans one after another."""
        return sum(p.build_ms or 0.0 for p in self.plans if p.status == "stored") / 1e3

    @property
    def saved_s(self) -> float:
        """Serial build time minus the prebuild's wall time (negative: the helpers cost more than they saved)."""
        return self.serial_s - self.wall_s

    def to_dict(self) -> dict[str, Any]:
        """For the run's ``settings["parallel_build"]`` (plain JSON)."""
        return {"workers": self.workers, "helpers": self.helpers, "built": self.built,
                "wall_s": round(self.wall_s, 4), "start_s": round(self.start_s, 4),
                "serial_s": round(self.serial_s, 4), "saved_s": round(self.saved_s, 4),
                "waited_s": round(self.waited_s, 4),
                "plans": [dataclasses.asdict(p) for p in self.plans], "problems": list(self.problems),
                **({"skipped": self.skipped} if self.skipped else {})}
