"""The engine space of a graph: every engine cuDNN knows for it, its knob ranges, whether it runs here, and a
budgeted sample of knob configurations beyond the heuristics' proposals.

The full product of knob ranges is ~1e11 for a conv, so configurations are sampled: first each proposed plan's
one-knob neighbourhood (its knobs one step up or down; proposals whose knobs all carry over first), then random draws
near the proposals and over the runnable engines, up to a budget.
Each sampled configuration is appended to one exploration graph with ``create_execution_plan``; the runner builds,
checks and times it like any plan and marks it as not proposed. The records and the sampling are pure (tested
without a GPU); listing engines and appending configurations need one. What the exploration found (did anything
beat the heuristics' best) is read from the plan table in ``cudnn_lab.results.anatomy``.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import knobs as knob_table
from ..errors import PlanError
from .pin import KnobRange, engine_count, engine_knobs, plan_error, status_of
from .pin import append_config, prepared_graph

Progress = Callable[[int, int, str], None]


@dataclasses.dataclass(frozen=True)
class EngineInfo:
    """One engine of the graph: whether it can run here (and why not), and its knobs with their ranges."""

    engine_id: int
    runnable: bool
    reason: str = ""
    knobs: tuple[KnobRange, ...] = ()

    @property
    def settable(self) -> tuple[KnobRange, ...]:
        return tuple(k for k in self.knobs if k.settable)

    @property
    def unnamed(self) -> int:
        """Knobs the frontend reports as NOT_SET: they keep the engine's default in sampled configurations."""
        return sum(1 for k in self.knobs if not k.settable)

    @property
    def configs(self) -> int:
        """Configurations over the settable knobs (the product of their range sizes)."""
        return math.prod(k.size for k in self.settable) if self.runnable else 0

    def to_dict(self) -> dict[str, Any]:
        return {"engine_id": self.engine_id, "runnable": self.runnable, "reason": self.reason,
                "knobs": [k.to_dict() for k in self.knobs], "configs": self.configs, "unnamed_knobs": self.unnamed}


def list_engines(g: Any) -> list[EngineInfo]:
    """Every engine of a prepared pygraph (after ``build_operation_graph``), runnable or not, with reasons."""
    out = []
    for engine_id in range(engine_count(g)):
        try:
            out.append(EngineInfo(engine_id, True, "", engine_knobs(g, engine_id)))
        except PlanError as e:
            out.append(EngineInfo(engine_id, False, status_of(str(e)) or str(e)[:200]))
    return out


#: Highest cuDNN backend version (``cudnn.backend_version()``) on which sampling the engine space of a graph with
#: fused operations (more than one node: a conv with a bias+relu epilogue) took the whole process down or hung it
#: (H100, 9.19.0, 2026-11-22 and 2026-11-25; docs/FINDINGS.md). Up to it such graphs are not explored.
FUSED_EXPLORE_CRASHES_UP_TO = 91999


def explore_refusal(node_count: int, backend: int | None) -> str | None:
    """Why the engine space of a graph with ``node_count`` operation nodes is not sampled on cuDNN ``backend``, or
    None when it is. A refusal keeps the user's process (a notebook kernel) alive; the run itself goes on."""
    if node_count > 1 and backend is not None and int(backend) <= FUSED_EXPLORE_CRASHES_UP_TO:
        return (f"not explored: on cuDNN {int(backend) // 10000}.{int(backend) // 100 % 100}, sampling knob "
                f"configurations of a graph with fused operations ({node_count} nodes) crashed or hung the process "
                f"(docs/FINDINGS.md). Explore the main operation alone (e.g. spec.replace(epilogue=()) for a conv "
                f"or matmul) to see its engine space, or upgrade cuDNN (newer than "
                f"{FUSED_EXPLORE_CRASHES_UP_TO // 10000}.{FUSED_EXPLORE_CRASHES_UP_TO // 100 % 100}).")
    return None


def space_size(engines: Iterable[EngineInfo]) -> int:
    """Configurations in the whole space (runnable engines, settable knobs)."""
    return sum(e.configs for e in engines)


# ---------------------------------------------------------------------------------------------------- sampling
@dataclasses.dataclass(frozen=True)
class Config:
    """One engine configuration to try: engine id, settable knob values by name, and why it was chosen."""

    engine_id: int
    knobs: tuple[tuple[str, int], ...]
    origin: str  # "neighbour of <plan>" | "random"

    @property
    def values(self) -> dict[str, int]:
        return dict(self.knobs)

    @property
    def key(self) -> tuple[int, tuple[tuple[str, int], ...]]:
        return self.engine_id, self.knobs

    def backend_knobs(self) -> dict[int, int]:
        """The same settings by backend knob number (what ``pin.append_config`` takes)."""
        return {knob_table.BY_NAME[n].number: v for n, v in self.knobs}


def _config(engine_id: int, values: Mapping[str, int], origin: str) -> Config:
    return Config(engine_id, tuple(sorted(values.items())), origin)


def proposal_values(plan_name: str, engine: EngineInfo, version: Any = None) -> dict[str, int] | None:
    """A proposed plan's settable knob values by name, from its plan name (None: not a plan of ``engine``)."""
    parsed = knob_table.parse_plan_name(plan_name)
    if parsed is None or parsed[0] != engine.engine_id:
        return None
    settable = {k.name for k in engine.settable}
    return {k.name: k.value for k in knob_table.decode(parsed[1], version) if k.name in settable}


def keeps_all_knobs(plan_name: str, engine: EngineInfo, version: Any = None) -> bool:
    """Whether every knob in a proposal's name is one the frontend can set on ``engine``, so that configurations
    made from it keep all of its values. A knob that only takes the engine's default (one the frontend cannot name,
    e.g. KBLOCK of engine 45) is lost, and cuDNN often refuses the other values without it."""
    parsed = knob_table.parse_plan_name(plan_name)
    if parsed is None or parsed[0] != engine.engine_id:
        return False
    settable = {k.name for k in engine.settable}
    return all(k.name in settable for k in knob_table.decode(parsed[1], version))


def neighbours(engine: EngineInfo, values: Mapping[str, int]) -> list[dict[str, int]]:
    """Configurations one knob step away from ``values`` (each settable knob one stride up and one down)."""
    out = []
    for k in engine.settable:
        base = values.get(k.name, k.min)
        for v in (base - k.step, base + k.step):
            if k.allows(v):
                out.append({**{x.name: values.get(x.name, x.min) for x in engine.settable}, k.name: v})
    return out


def random_config(engine: EngineInfo, rng: random.Random) -> dict[str, int]:
    return {k.name: k.values()[rng.randrange(k.size)] for k in engine.settable if k.size}


def random_near(engine: EngineInfo, values: Mapping[str, int], rng: random.Random, knobs: int = 2
                ) -> dict[str, int]:
    """``values`` with ``knobs`` settable knobs (chosen at random) set to random values in their ranges."""
    out = {k.name: values.get(k.name, k.min) for k in engine.settable}
    movable = [k for k in engine.settable if k.size > 1]
    for k in rng.sample(movable, min(knobs, len(movable))):
        out[k.name] = k.values()[rng.randrange(k.size)]
    return out


def ordered_proposals(engines: Sequence[EngineInfo], proposals: Sequence[str], version: Any = None
                      ) -> list[tuple[str, EngineInfo, bool]]:
    """(plan name, engine, keeps all knobs) of the proposals of runnable engines: those whose knobs all carry over
    (:func:`keeps_all_knobs`) first, each group in heuristic order."""
    by_id = {e.engine_id: e for e in engines if e.runnable}
    found = []
    for name in proposals:
        parsed = knob_table.parse_plan_name(name)
        if parsed and parsed[0] in by_id:
            engine = by_id[parsed[0]]
            found.append((name, engine, keeps_all_knobs(name, engine, version)))
    return [p for p in found if p[2]] + [p for p in found if not p[2]]


def sample_configs(engines: Sequence[EngineInfo], proposals: Sequence[str], budget: int, *, seed: int = 0,
                   version: Any = None, neighbour_share: float = 0.6) -> list[Config]:
    """Up to ``budget`` configurations not among the proposals, most likely runnable first:

    1. the proposals' one-knob neighbourhoods (at most ``neighbour_share`` of the budget), proposals whose knobs
       all carry over first (:func:`ordered_proposals`), each group best-ranked first;
    2. random draws, alternately near a proposal (two knobs of a proposal that carries over set at random,
       origin ``random near <plan>``) and over every runnable engine (origin ``random``).

    Uniform draws over foreign engines are mostly refused by cuDNN (docs/FINDINGS.md), so a small budget spent in
    this order still gets configurations that run. ``proposals`` are plan names in heuristic order. Deterministic
    for a given seed.
    """
    if budget <= 0:
        return []
    rng = random.Random(seed)
    by_id = {e.engine_id: e for e in engines if e.runnable}
    ordered = ordered_proposals(engines, proposals, version)
    taken: set[tuple[Any, ...]] = set()
    for name, engine, _ in ordered:
        taken.add(_config(engine.engine_id, proposal_values(name, engine, version) or {}, "").key)
    out: list[Config] = []

    def add(engine_id: int, values: Mapping[str, int], origin: str) -> None:
        c = _config(engine_id, values, origin)
        if c.key not in taken and len(out) < budget:
            taken.add(c.key)
            out.append(c)

    cap = max(1, int(budget * neighbour_share))
    for name, engine, _ in ordered:
        if len(out) >= cap:
            break
        for values in neighbours(engine, proposal_values(name, engine, version) or {}):
            if len(out) >= cap:
                break
            add(engine.engine_id, values, f"neighbour of {name}")
    near = [(name, engine) for name, engine, keeps in ordered if keeps and engine.configs > 1]
    pool = [e for e in by_id.values() if e.configs > 0]
    misses = 0
    draw = 0
    while len(out) < budget and pool and misses < 20 * budget:
        before = len(out)
        if near and draw % 2 == 0:
            name, engine = near[rng.randrange(len(near))]
            add(engine.engine_id, random_near(engine, proposal_values(name, engine, version) or {}, rng),
                f"random near {name}")
        else:
            engine = pool[rng.randrange(len(pool))]
            add(engine.engine_id, random_config(engine, rng), "random")
        draw += 1
        misses += len(out) == before
    return out


# ---------------------------------------------------------------------------------------------------- exploring
@dataclasses.dataclass
class Candidate:
    """A sampled configuration appended to the exploration graph (or refused), before it is built and timed."""

    config: Config
    name: str = ""
    index: int | None = None
    status: str = "proposed"  # proposed -> refused | duplicate | (runner: built/ok/...) | not_tried
    error: str = ""
    behavior_notes: tuple[str, ...] = ()

    @property
    def runtime_compiled(self) -> bool:
        return "RUNTIME_COMPILATION" in self.behavior_notes


class Explorer:
    """One exploration graph of a spec: its engines, and sampled configurations appended to it."""

    def __init__(self, spec: Any, handle: Any = None) -> None:
        self.spec = spec
        self.lab = prepared_graph(spec, handle)
        self.engines = list_engines(self.lab.pygraph)
        # config key -> (index, name) of configurations already appended: a repeat reuses the plan (and any CUDA
        # graph captured from it) instead of appending a copy
        self._appended: dict[tuple[Any, ...], tuple[int, str]] = {}

    def append(self, configs: Iterable[Config], known: Iterable[str] = (), version: Any = None,
               deadline: float | None = None) -> list[Candidate]:
        """Append each configuration (no build, though cuDNN may take long to finalize a runtime-compiled engine's
        configuration); a refused one is recorded, a duplicate of a known plan name (a proposal, or an earlier
        sample) is marked and not built. Past ``deadline`` (a ``time.perf_counter()`` value) the rest are marked
        ``not_tried``. Precompiled ones come first."""
        g = self.lab.pygraph
        seen = set(known)
        out = []
        for config in configs:
            cand = Candidate(config)
            if deadline is not None and time.perf_counter() > deadline:
                cand.status, cand.error = "not_tried", "the exploration time budget ran out while appending"
                out.append(cand)
                continue
            try:
                if config.key not in self._appended:
                    self._appended[config.key] = append_config(self.lab, config.engine_id, config.backend_knobs(),
                                                               version=version, check_ranges=False)
                cand.index, cand.name = self._appended[config.key]
            except PlanError as e:
                cand.status, cand.error = "refused", str(e)[:300]
                out.append(cand)
                continue
            if cand.name in seen:
                cand.status = "duplicate"
            seen.add(cand.name)
            try:
                cand.behavior_notes = tuple(str(getattr(n, "name", n)).rsplit(".", 1)[-1]
                                            for n in g.get_behavior_notes_for_plan_at_index(cand.index))
            except Exception:  # noqa: BLE001
                pass
            out.append(cand)
        return sorted(out, key=lambda c: (c.status != "proposed", c.runtime_compiled))


def explore(candidates: Sequence[Candidate], evaluate: Callable[[Candidate], None], *, time_budget_s: float,
            progress: Progress | None = None, start: float | None = None) -> None:
    """Build/check/time the appended candidates in order with ``evaluate`` until the time budget (counted from
    ``start``, a ``time.perf_counter()`` value, by default now) is spent; the rest are marked ``not_tried``.
    ``evaluate`` records its outcome on the candidate (status, error)."""
    todo = [c for c in candidates if c.status == "proposed"]
    start = time.perf_counter() if start is None else start
    for i, cand in enumerate(todo):
        if time.perf_counter() - start > time_budget_s:
            for rest in todo[i:]:
                rest.status, rest.error = "not_tried", f"the exploration time budget ({time_budget_s:g} s) ran out"
            break
        if progress:
            parsed = knob_table.parse_plan_name(cand.name)
            what = f"engine {parsed[0]} ({knob_table.plan_label(cand.name) or 'no knobs'})" if parsed else cand.name
            progress(i, len(todo), f"exploring {what}")
        try:
            evaluate(cand)
        except Exception as e:  # noqa: BLE001 - one configuration failing must not stop the others
            cand.status, cand.error = "run_failed", " ".join(str(e).split())[:300]
    if progress:
        progress(len(todo), len(todo), "exploration done")


__all__ = ["Candidate", "Config", "EngineInfo", "Explorer", "KnobRange", "explore", "keeps_all_knobs", "list_engines",
           "neighbours", "ordered_proposals", "plan_error", "random_near", "sample_configs", "space_size"]
