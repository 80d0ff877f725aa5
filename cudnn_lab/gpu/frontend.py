"""Plans from a cuDNN frontend graph, the default plan source: ask the heuristics mode by mode, list every plan.

One graph is built per heuristic mode so that each plan's rank in each mode is known; plans that several modes
propose (same engine and knobs) are listed once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from ..errors import OptionError, UnsupportedGraphError
from ..graph import build_graph
from ..specs import Spec
from .reasons import CATEGORIES, category_of, summarize
from .explain import explain
from .device import kit_thread
from .kernels import load_torch
from .plans import PLAN_SOURCES, PlanEntry

#: Engine families whose frontend modules this process has imported (or is importing) ahead of a run.
_WARMED: set[str] = set()


def warm_engine_family(spec: Spec) -> None:
    """Import the cuDNN frontend's Python modules that plan ``spec``'s graph (its engine family's analyzer,
    heuristics, validator and guard; once per family and process), so that a run's proposals need not wait for them:
    the GEMM family's took 0.5-0.9 s of a first GEMM run's proposals (docs/FINDINGS.md). Quiet on any failure: the
    proposals then import what they need themselves."""
    try:
        load_torch()  # the family modules import torch: loaded here, this thread also owns the profiler's first session
        from cudnn.engines import manifest

        family = manifest.family_for(build_graph(spec).pygraph)
        if family is None or family.name in _WARMED:
            return
        _WARMED.add(family.name)
        for resolve in (manifest.resolve_analyzer, manifest.resolve_heuristics, manifest.resolve_validator,
                        manifest.resolve_backend_guard):
            resolve(family)
    except Exception:  # noqa: BLE001 - only a head start: the run does the same imports when it needs them
        pass


def warm_engine_family_async(spec: Spec) -> threading.Thread:
    """:func:`warm_engine_family` on a thread of its own, started now (a session whose plans must be asked makes its
    inputs meanwhile; a Lab on a GPU starts it when an operation is first drawn)."""
    return kit_thread(warm_engine_family, "cudnn_lab-warm-engines", spec)


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


CLASSIC_WHOLE_GPU = ("runs through one of cuDNN's classic (non-graph) calls, and classic calls run on the whole GPU: "
                     "only a frontend graph takes an SM carve-out; leave sm_count=None")


def takes_carve_out(spec: Spec) -> bool:
    """Whether ``spec`` runs as a frontend graph, which takes an SM carve-out: its plan source is
    :func:`graph_plans`, or a source that says so for this spec (``source.takes_carve_out(spec)``: a TransformSpec's
    graph kinds). Classic calls (softmax, activation, transform 'convert', pooling, RNN) do not."""
    if from_frontend_graph(spec):
        return True
    says = getattr(PLAN_SOURCES.get(spec), "takes_carve_out", None)
    return bool(says(spec)) if callable(says) else False


def check_carve_out(spec: Spec, sm_count: int | None) -> None:
    """OptionError naming sm_count when ``spec``'s family has no frontend graph (a classic call: softmax, activation,
    transform, pooling, RNN; see the ``PLAN_SOURCES`` registrations of ``gpu/classic*.py``) and a carve-out is
    asked for. No GPU needed (the sources register on import of ``cudnn_lab.gpu``, which imports no torch)."""
    if sm_count is not None and not takes_carve_out(spec):
        raise OptionError("sm_count", sm_count, f"{type(spec).__name__} {CLASSIC_WHOLE_GPU}")


def carve_out_sentence(detail: str, sm_count: int | None = None) -> str:
    """What cuDNN's refusal says, in one sentence (``why_not.summarize``: engines refused, by category); under a
    carve-out, when cuDNN's message names the SM count without per-engine blocks, the carve-out category's own
    words. Empty when the message holds neither."""
    text = summarize(detail)
    if not text and sm_count is not None and category_of("", detail) == "carve-out":
        text = f"cuDNN refused the graph on {sm_count} SMs (carve-out: {CATEGORIES['carve-out']})."
    return text


def unsupported(detail: str, spec: Spec, where: str, cudnn_version: str,
                sm_count: int | None = None) -> UnsupportedGraphError:
    """The error for a graph nothing runs: explain()'s sentence, then cuDNN's reasons (:func:`carve_out_sentence`)
    where its message holds them, and the carve-out asked for; ``detail`` keeps cuDNN's whole message."""
    summary = explain(detail, spec)
    why = carve_out_sentence(detail, sm_count)
    if why:
        summary = f"{summary} {why}"
    if sm_count is not None:
        summary += f" (asked to run on {sm_count} SMs, an SM carve-out; sm_count=None runs on the whole GPU)"
    return UnsupportedGraphError(summary, detail=detail, device=where, cudnn_version=cudnn_version)


def plan_facts(g: Any, i: int, name: str) -> tuple[int, dict[str, int], tuple[str, ...]]:
    """Plan ``i`` of a graph whose plans were created: its engine id, knobs by knob type and behaviour notes."""
    engine_id, knobs = g.get_engine_and_knobs_at_index(i)
    try:
        notes = tuple(_enum_name(n) for n in g.get_behavior_notes_for_plan_at_index(i))
    except Exception:  # noqa: BLE001 - python engines have no behavior notes
        notes = ()
    return int(engine_id), knobs_of(name, knobs), notes


def add_ranked(g: Any, count: int, mode: str, found: dict[str, Any], make: Any) -> None:
    """Add the ``count`` plans heuristic ``mode`` proposed to ``found`` by name: a plan several modes propose is
    listed once, with its rank in each (``make(name, engine_id, knobs, notes, index)`` makes a new entry)."""
    for i in range(count):
        name = g.get_plan_name_at_index(i)
        if name in found:
            found[name].ranks[mode] = i
            continue
        engine_id, knobs, notes = plan_facts(g, i, name)
        found[name] = make(name, engine_id, knobs, notes, i)


@PLAN_SOURCES.register(Spec)
def graph_plans(spec: Spec, handle: Any, modes: tuple[str, ...], where: str, cudnn_version: str, *,
                graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]:
    """Every plan the chosen heuristic modes propose for ``spec``'s graph, mode by mode, rank by rank.

    ``graph_options`` go to ``cudnn.pygraph`` (``{"sm_count": n}``: an SM carve-out). When no mode proposes a plan,
    the UnsupportedGraphError's detail keeps cuDNN's whole message per mode, and its summary says what the message's
    per-engine reasons add up to (``why_not.summarize``)."""
    import cudnn

    sm_count = (graph_options or {}).get("sm_count")
    plans: dict[str, PlanEntry] = {}
    messages: list[str] = []  # cuDNN's whole message per failed step (its per-engine reasons), for the error
    for mode in modes:
        lab = build_graph(spec, handle=handle, graph_options=graph_options)
        g = lab.pygraph
        try:
            g.validate()
            g.build_operation_graph()
        except Exception as e:  # noqa: BLE001 - graph-level failure: the whole graph is unsupported
            raise unsupported(str(e), spec, where, cudnn_version, sm_count) from None
        try:
            g.create_execution_plans([getattr(cudnn.heur_mode, mode)])
            count = g.get_execution_plan_count()
        except Exception as e:  # noqa: BLE001 - one mode proposing nothing is normal
            messages.append(f"heur_mode {mode}: {str(e).strip()}")
            continue
        try:
            g.check_support()
        except Exception as e:  # noqa: BLE001 - aggregate answer; plans are still tried one by one
            messages.append(f"check_support ({mode}): {str(e).strip()}")
        add_ranked(g, count, mode, plans, lambda name, engine_id, knobs, notes, i, lab=lab, mode=mode: PlanEntry(
            name=name, engine_id=engine_id, knobs=knobs, graph=lab, index=i, ranks={mode: i}, behavior_notes=notes))
    if not plans:
        detail = "\n".join(messages) or "the heuristics returned no plans"
        raise unsupported(detail, spec, where, cudnn_version, sm_count)
    return list(plans.values())


def from_frontend_graph(spec: Spec) -> bool:
    """Whether ``spec``'s plans come from a frontend graph (:func:`graph_plans`), not a classic cuDNN call: only such
    plans go through the heuristics and plan caches, cuDNN's kernel cache and the helpers' parallel builds."""
    return PLAN_SOURCES.get(spec) is graph_plans
