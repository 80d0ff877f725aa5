"""Pin a plan by (engine id, knobs): rebuild exactly that engine configuration on a fresh graph.

Plan indices change between cuDNN versions and GPUs; (engine id, knobs) names a plan exactly. Knobs come in any form
the kit records (plan name ``eng62_k2=0_k13=1``, ``{"k2": 0}``, ``{"TILE_SIZE": 0}``): backend numbers are mapped to
the frontend's ``cudnn.knob_type`` BY NAME (:mod:`cudnn_lab.knobs`), checked against the engine's knob ranges, and
appended with ``create_execution_plan``. Every refusal is a ``PlanError`` naming the engine, the knob and its range.
The arguments themselves (spec, engine id, knobs, plan name) are checked first, with bounds, and refused with an
``OptionError``/``SpecError`` before a GPU is asked for; without one, ``NoGPUError``.
"""

from __future__ import annotations

import dataclasses
import numbers
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .. import knobs as knob_table
from ..errors import DataError, NoGPUError, OptionError, PlanError, shorten
from ..files import parse_json
from .explain import first_line
from .. import capabilities
from ..specs import Spec, spec_from_dict
from ..graph import LabGraph, build_graph
from .session import cudnn_handle


def plan_error(message: str, *, engine_id: int | None = None, knob: str | None = None,
               allowed: str | None = None) -> PlanError:
    """A PlanError that also carries the engine, the knob and its allowed range as attributes."""
    err = PlanError(message)
    err.engine_id, err.knob, err.allowed = engine_id, knob, allowed  # type: ignore[attr-defined]
    return err


# ---------------------------------------------------------------------------------------------------- knob ranges
@dataclasses.dataclass(frozen=True)
class KnobRange:
    """One knob of an engine as ``get_knobs_for_engine`` reports it: frontend type name and min..max by stride."""

    name: str
    min: int
    max: int
    stride: int = 1

    @property
    def step(self) -> int:
        return self.stride if self.stride and self.stride > 0 else 1

    @property
    def settable(self) -> bool:
        """False for NOT_SET (a backend knob the frontend cannot name): it only takes the engine's default."""
        return self.name in knob_table.BY_NAME

    @property
    def size(self) -> int:
        return max(0, (self.max - self.min) // self.step + 1)

    def values(self) -> range:
        return range(self.min, self.max + 1, self.step)

    def allows(self, value: int) -> bool:
        return self.min <= value <= self.max and (value - self.min) % self.step == 0

    @property
    def allowed(self) -> str:
        text = f"{self.min}..{self.max}"
        return text + (f" in steps of {self.step}" if self.step != 1 else "")

    @property
    def text(self) -> str:
        return f"{self.name} {self.allowed}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "min": self.min, "max": self.max, "stride": self.step}


def _enum_name(value: Any) -> str:
    return str(getattr(value, "name", value)).rsplit(".", 1)[-1]


def status_of(message: str) -> str:
    """The CUDNN_STATUS_* name a backend message carries ('' when none), e.g. NOT_SUPPORTED_ARCH_MISMATCH."""
    found = re.findall(r"CUDNN_STATUS_([A-Z_]+)", message)
    return max(found, key=len) if found else ""


def engine_count(g: Any) -> int:
    """``get_engine_count()`` of a pygraph after ``build_operation_graph`` (lowering it first where needed)."""
    try:
        return int(g.get_engine_count())
    except AttributeError:
        lower = getattr(g, "_lower_backend_graph", None)  # graphs that python engines may serve lower lazily
        if lower is None:
            raise
        lower()
        return int(g.get_engine_count())


def engine_knobs(g: Any, engine_id: int) -> tuple[KnobRange, ...]:
    """The engine's knobs with their ranges; a PlanError when the engine cannot run this graph here (and why)."""
    try:
        raw = g.get_knobs_for_engine(int(engine_id))
    except Exception as e:  # noqa: BLE001 - NOT_SUPPORTED_ARCH_MISMATCH, NOT_SUPPORTED, ...
        status = status_of(str(e)) or "NOT_SUPPORTED"
        raise plan_error(f"engine {engine_id} cannot run this graph on this GPU ({status}): {first_line(str(e))}",
                         engine_id=engine_id) from None
    return tuple(KnobRange(_enum_name(k.type), int(k.min_value), int(k.max_value), int(k.stride)) for k in raw)


def check_config(engine_id: int, ranges: Sequence[KnobRange], values: Mapping[str, int]) -> None:
    """PlanError unless every named knob value is one of the engine's knobs and inside its range."""
    by_name = {r.name: r for r in ranges if r.settable}
    for name, value in values.items():
        r = by_name.get(name)
        if r is None:
            have = ", ".join(x.text for x in by_name.values()) or "no settable knobs"
            raise plan_error(f"engine {engine_id} has no knob {name}; its knobs are: {have}",
                             engine_id=engine_id, knob=name, allowed=have)
        if not r.allows(value):
            raise plan_error(f"engine {engine_id}: knob {name}={value} is outside its range {r.allowed}",
                             engine_id=engine_id, knob=name, allowed=r.allowed)


# ---------------------------------------------------------------------------------------------------- pinning
@dataclasses.dataclass
class PinnedPlan:
    """One plan made from (engine id, knobs): its graph, index there, name and build state."""

    lab: Any  # LabGraph
    index: int
    name: str
    engine_id: int
    knobs: dict[str, int]  # {"k2": 0, ...}: backend numbers, read from the built plan's name
    workspace_bytes: int | None = None
    build_ms: float | None = None
    behavior_notes: tuple[str, ...] = ()

    def named_knobs(self, version: Any = None) -> dict[str, int]:
        return knob_table.named(self.knobs, version)


#: the GPU layer's one cuDNN handle per device (a name of its own so tests can replace it)
_default_handle = cudnn_handle


def _cudnn_version() -> Any:
    import cudnn

    try:
        return cudnn.backend_version()
    except Exception:  # noqa: BLE001
        return None


def prepared_graph(spec_or_lab: Any, handle: Any = None) -> Any:
    """A LabGraph (fresh for a spec) validated and with its operation graph built."""
    if handle is None:
        import torch

        handle = _default_handle(torch.cuda.current_device())
    lab = spec_or_lab if isinstance(spec_or_lab, LabGraph) else build_graph(spec_or_lab, handle=handle)
    g = lab.pygraph
    if not getattr(g, "_is_validated", False):
        g.validate()
    g.build_operation_graph()
    return lab


#: Bounds of pin_plan's arguments, checked before a GPU is asked for: a plan name's length, engine ids, backend knob
#: numbers (cuDNN 9 has fewer than 64) and values, knobs per configuration, and knobs given as text.
MAX_PLAN_NAME = 512
MAX_ENGINE_ID = 100_000
MAX_KNOB_NUMBER = 1_000
MAX_KNOB_VALUE = 2**31 - 1
MAX_KNOBS = 64
MAX_KNOB_TEXT = 4096
MAX_KNOB_KEY = 64
_WHERE = "pin_plan"
_PLAN_FORM = "a plan name such as 'eng62_k2=0_k13=1' (eng<engine id>, then _k<knob>=<value> per knob)"
_KNOBS_FORM = (f"None, a dict of knob -> value ({{'k2': 0}}, {{2: 0}} or {{'TILE_SIZE': 0}}; at most {MAX_KNOBS}), "
               "a plan name or that dict as JSON text")


def _whole(option: str, value: Any, high: int, what: str) -> int:
    """``value`` as an int 0..``high`` (not a bool, not a float), or an OptionError naming ``option``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise OptionError(option, value, f"{what} must be a whole number 0..{high}", where=_WHERE)
    v = int(value)
    if not 0 <= v <= high:
        raise OptionError(option, value, f"{what} must be from 0 to {high}", where=_WHERE)
    return v


def _parse_name(option: str, name: str) -> tuple[int, dict[int, int]]:
    """A plan name (length-bounded) -> (engine id, {knob number: value}), each number within bounds."""
    if len(name) > MAX_PLAN_NAME:
        raise OptionError(option, name, f"is {len(name)} characters; {_PLAN_FORM} has at most {MAX_PLAN_NAME}",
                          where=_WHERE)
    parsed = knob_table.parse_plan_name(name)
    if parsed is None:
        raise OptionError(option, name, f"must be {_PLAN_FORM}", where=_WHERE)
    eid, backend = parsed
    if not 0 <= eid <= MAX_ENGINE_ID:
        raise OptionError(option, name, f"engine id {eid} must be from 0 to {MAX_ENGINE_ID}", where=_WHERE)
    numbers_seen = [int(n) for n in re.findall(r"_k(\d+)=", name)]
    if len(numbers_seen) != len(set(numbers_seen)):
        twice = sorted({n for n in numbers_seen if numbers_seen.count(n) > 1})
        raise OptionError(option, name, f"sets knob k{twice[0]} more than once", where=_WHERE)
    for number, value in backend.items():
        if not 0 <= number <= MAX_KNOB_NUMBER or not 0 <= value <= MAX_KNOB_VALUE:
            raise OptionError(option, name, f"knob k{number}={value}: knob numbers must be 0..{MAX_KNOB_NUMBER} "
                              f"and values 0..{MAX_KNOB_VALUE}", where=_WHERE)
    return eid, backend


def check_knobs(knobs: Any) -> dict[int, int]:
    """``knobs`` in any form the kit records -> {backend knob number: value}, bounded; OptionError naming 'knobs'."""
    if knobs is None:
        return {}
    if isinstance(knobs, str):
        if len(knobs) > MAX_KNOB_TEXT:
            raise OptionError("knobs", knobs, f"is {len(knobs)} characters of text; must be {_KNOBS_FORM} "
                              f"(at most {MAX_KNOB_TEXT} characters)", where=_WHERE)
        text = knobs.strip()
        if knob_table.parse_plan_name(text) is not None:
            return _parse_name("knobs", text)[1]
        if not text:
            return {}
        try:
            knobs = parse_json(text, "knobs", "knobs", max_depth=1)
        except DataError as e:
            raise OptionError("knobs", text, f"must be {_KNOBS_FORM}: {e.problem}", where=_WHERE) from None
    if not isinstance(knobs, Mapping):
        raise OptionError("knobs", knobs, f"must be {_KNOBS_FORM}", where=_WHERE)
    if len(knobs) > MAX_KNOBS:
        raise OptionError("knobs", knobs, f"sets {len(knobs)} knobs; a configuration has at most {MAX_KNOBS}",
                          where=_WHERE)
    out: dict[int, int] = {}
    for key, value in knobs.items():
        member = getattr(key, "name", None)
        if isinstance(key, bool) or not (isinstance(key, (int, str)) or isinstance(member, str)):
            raise OptionError("knobs", key, "a knob must be a backend number (2, 'k2'), a knob name ('TILE_SIZE') "
                              "or a cudnn.knob_type member", where=_WHERE)
        text_key = key if isinstance(key, str) else member if isinstance(member, str) else None
        if text_key is not None and len(text_key) > MAX_KNOB_KEY:
            raise OptionError("knobs", key, f"a knob name has at most {MAX_KNOB_KEY} characters", where=_WHERE)
        if isinstance(key, int) and not 0 <= key <= MAX_KNOB_NUMBER:
            raise OptionError("knobs", key, f"knob numbers must be 0..{MAX_KNOB_NUMBER}", where=_WHERE)
        v = _whole("knobs", value, MAX_KNOB_VALUE, f"the value of knob {shorten(key, 40)}")
        try:
            (number,) = knob_table.backend_numbers({key: v})
        except PlanError as e:
            raise OptionError("knobs", key, str(e), where=_WHERE) from None
        if not 0 <= number <= MAX_KNOB_NUMBER:
            raise OptionError("knobs", key, f"knob numbers must be 0..{MAX_KNOB_NUMBER}", where=_WHERE)
        if number in out:
            raise OptionError("knobs", knobs, f"sets knob k{number} twice (as {shorten(key, 40)} and another key)",
                              where=_WHERE)
        out[number] = v
    return out


def check_request(engine_id: Any, knobs: Any, plan: Any) -> tuple[int, dict[int, int]]:
    """(engine id, {backend knob number: value}) from pin_plan's arguments, each checked and bounded, and agreeing
    with each other where both a plan name and engine id / knobs are given; OptionError otherwise."""
    given = check_knobs(knobs)
    eid = None if engine_id is None else _whole("engine_id", engine_id, MAX_ENGINE_ID, "an engine id")
    if plan is None:
        if eid is None:
            raise OptionError("engine_id", None, f"give an engine id (0..{MAX_ENGINE_ID}) or plan='eng<id>_k...'",
                              where=_WHERE)
        return eid, given
    if not isinstance(plan, str):
        raise OptionError("plan", plan, f"must be {_PLAN_FORM}", where=_WHERE)
    parsed_id, backend = _parse_name("plan", plan.strip())
    if eid is not None and eid != parsed_id:
        raise OptionError("engine_id", eid, f"disagrees with plan={shorten(plan)} (engine {parsed_id}); give one "
                          "or make them agree", where=_WHERE)
    if knobs is not None and given != backend:
        raise OptionError("knobs", knobs, f"disagree with plan={shorten(plan)} "
                          f"({knob_table.label(backend) or 'no knobs'}); give one or make them agree", where=_WHERE)
    return parsed_id, backend


def check_spec(spec: Any) -> Any:
    """A spec, or a dict made one (SpecError for a bad dict), or a LabGraph; OptionError for anything else."""
    if isinstance(spec, (Spec, LabGraph)):
        return spec
    if isinstance(spec, dict):
        return spec_from_dict(spec)
    raise OptionError("spec", spec, "must be a spec (e.g. cl.ConvSpec(...)), a dict as Spec.to_dict() writes it, "
                      "or a LabGraph", where=_WHERE)


def _check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionError(name, value, "must be True or False", where=_WHERE)
    return value


def append_config(lab: Any, engine_id: int, backend_knobs: Mapping[int, int], *, version: Any = None,
                  check_ranges: bool = True) -> tuple[int, str]:
    """Append (engine id, knobs) to ``lab``'s prepared graph; returns (plan index, plan name). PlanError on refusal."""
    import cudnn

    g = lab.pygraph
    named = knob_table.decode(dict(backend_knobs), version)
    frontend = knob_table.frontend_knobs(dict(backend_knobs), cudnn.knob_type, version, engine_id=engine_id)
    ranges: tuple[KnobRange, ...] | None = None
    if check_ranges:
        count = engine_count(g)
        if not 0 <= engine_id < count:
            raise plan_error(f"engine {engine_id} is not an engine of this graph; its engines are 0..{count - 1}",
                             engine_id=engine_id, allowed=f"0..{count - 1}")
        ranges = engine_knobs(g, engine_id)
        check_config(engine_id, ranges, {k.name: k.value for k in named if k.name})
    label = knob_table.label(dict(backend_knobs), version) or "no knobs"
    try:
        g.create_execution_plan(engine_id, frontend)
    except Exception as e:  # noqa: BLE001
        raise plan_error(f"engine {engine_id} with {label}: cuDNN refused this configuration "
                         f"({status_of(str(e)) or 'error'}): {first_line(str(e))}", engine_id=engine_id) from None
    index = g.get_execution_plan_count() - 1
    return index, g.get_plan_name_at_index(index)


def find_by_name(spec: Any, name: str, handle: Any = None, modes: Sequence[str] = ("A", "B", "FALLBACK")
                 ) -> tuple[Any, int] | None:
    """(LabGraph, index) of the plan called ``name`` among the heuristics' proposals, or None."""
    import cudnn

    lab = prepared_graph(spec, handle)
    g = lab.pygraph
    try:
        g.create_execution_plans([getattr(cudnn.heur_mode, m) for m in modes])
    except Exception:  # noqa: BLE001
        return None
    for i in range(g.get_execution_plan_count()):
        if g.get_plan_name_at_index(i) == name:
            return lab, i
    return None


def pin_plan(spec: Any, engine_id: int | None = None, knobs: Any = None, *, plan: str | None = None,
             handle: Any = None, build: bool = True, check_ranges: bool = True) -> PinnedPlan:
    """Build the plan (engine id, knobs), or the plan named ``plan`` (``eng62_k2=0_...``), on a fresh graph of ``spec``.

    Knobs the frontend cannot name cannot be replayed: for a named plan the heuristics' lists are searched for it
    instead; otherwise a PlanError says which knob. ``spec`` may be a spec, its dict or a LabGraph. The arguments
    are checked (OptionError/SpecError) before a GPU is asked for; without one, NoGPUError.
    """
    spec = check_spec(spec)
    eid, backend = check_request(engine_id, knobs, plan)
    _check_flag("build", build)
    _check_flag("check_ranges", check_ranges)

    if not capabilities.probe().gpu:  # looked up when called (tests replace it)
        raise NoGPUError("pin_plan builds the plan on a GPU and none is visible")
    if plan is not None:
        plan = plan.strip()
    version = _cudnn_version()
    lab = prepared_graph(spec, handle)
    try:
        index, name = append_config(lab, eid, backend, version=version, check_ranges=check_ranges)
    except PlanError as e:
        if plan is None or knob_table.replayable(backend, version, knob_table.enum_names(_knob_enum())):
            raise
        found = find_by_name(spec, plan, handle)  # a knob the frontend cannot name: pick the plan by its name
        if found is None:
            raise plan_error(f"{e} The heuristics (A, B, FALLBACK) do not propose {plan} either.",
                             engine_id=eid) from None
        lab, index = found
        name = plan
    pinned = PinnedPlan(lab=lab, index=index, name=name, engine_id=eid,
                        knobs={f"k{n}": v for n, v in sorted((knob_table.parse_plan_name(name) or (eid, backend))[1]
                                                             .items())})
    g = lab.pygraph
    try:
        pinned.behavior_notes = tuple(_enum_name(n) for n in g.get_behavior_notes_for_plan_at_index(index))
    except Exception:  # noqa: BLE001
        pass
    if build:
        t0 = time.perf_counter()
        try:
            g.build_plan_at_index(index)
            pinned.build_ms = (time.perf_counter() - t0) * 1e3
            pinned.workspace_bytes = int(g.get_workspace_size_plan_at_index(index))
        except Exception as e:  # noqa: BLE001
            raise plan_error(f"plan {name} (engine {eid}, {knob_table.label(backend, version) or 'no knobs'}) does "
                             f"not support this graph here: {first_line(str(e))}", engine_id=eid) from None
    return pinned


def _knob_enum() -> Any:
    import cudnn

    return cudnn.knob_type
