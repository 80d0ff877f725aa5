"""The execution seam of a run: what a plan offers (:class:`ExecutablePlan`), one record per plan in a run
(:class:`PlanRecord`), and checking then timing one plan (:func:`measure_plan`).

An executable plan is what cudnn-frontend's ``APIBase`` is to its graphs: build it, check it can run here, size its
workspace, execute it. Frontend plans implement it through :class:`FrontendPlan` (a thin adapter over the session's
:class:`~cudnn_lab.gpu.plans.PlanEntry`); classic calls reach it the same way today, through the ``pygraph`` their
plan entries offer (gpu/classic*.py), until they implement the interface themselves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

from ..options import HEURISTIC_MODES
from ..specs import Spec
from .anatomy import knob_columns
from .plans import PlanEntry
from .timing import Timer, TimingResult, replay_over_kernel, run_poisoned
from ..numerics import band_args, compare
from ..reference import comparable_outputs
from ..reference.common import TORCH_DTYPES, torch_dtype

#: The parts of a run timed in ``settings["phase_s"]`` (seconds), in the order a run does them.
PHASES: tuple[str, ...] = ("import", "device", "session", "propose", "inputs", "reference", "build", "ceilings",
                           "check", "time", "kernels", "notes", "explore", "baseline", "records")
#: Bins of the error histogram: log10 |actual - expected|, 1e-12 .. 1e2.
HIST_EDGES = [float(x) for x in range(-12, 3)]


class Phases:
    """Wall seconds per named part of a run (``with phases("build"): ...``); repeated parts add up."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, seconds: float) -> None:
        self.s[name] = self.s.get(name, 0.0) + seconds

    def record(self, total: float) -> dict[str, float]:
        """Every phase (0 where it did not happen) in run order, then ``total``, rounded to 0.1 ms."""
        out = {name: round(self.s.get(name, 0.0), 4) for name in PHASES}
        out.update({k: round(v, 4) for k, v in self.s.items() if k not in out})
        out["total"] = round(total, 4)
        return out


@runtime_checkable
class ExecutablePlan(Protocol):
    """One plan a run can build, check, size and execute (as cudnn-frontend's ``APIBase``)."""

    @property
    def name(self) -> str:
        """The plan's name (engine id and knobs, e.g. ``eng4_k24=27``)."""
        ...

    @property
    def error(self) -> str:
        """Why the build failed (one line), or ``""``."""
        ...

    def build(self) -> bool:
        """Build the plan once (failures recorded in :attr:`error`, never raised); True when it is built."""
        ...

    def check_support(self) -> bool:
        """Whether the plan can execute here (built, and cuDNN accepted it while building)."""
        ...

    def workspace_size(self) -> int:
        """Scratch bytes one execution needs (0 before a build)."""
        ...

    def call(self) -> Callable[[], None]:
        """A zero-argument callable that executes the plan once into the run's outputs: what the timer repeats."""
        ...

    def execute(self) -> None:
        """Execute the plan once on the run's stream, into the run's outputs."""
        ...


class FrontendPlan:
    """:class:`ExecutablePlan` of a session's plan entry: built through the plan cache (``RunCache.build``, which
    loads kept plans), executed by the session (``Session.call``) on its inputs, outputs and workspace."""

    def __init__(self, entry: PlanEntry, sess: Any, cache: Any = None) -> None:
        self.entry, self.sess, self.cache = entry, sess, cache

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def error(self) -> str:
        return self.entry.build_error

    def build(self) -> bool:
        if self.cache is None:  # no plan cache (the engine space's configurations): built in this process
            return self.entry.build()
        return self.cache.build(self.entry, self.sess.loaded)

    def check_support(self) -> bool:
        return self.entry.built is True  # build_plan_at_index is where cuDNN checks the plan's support

    def workspace_size(self) -> int:
        return int(self.entry.workspace_bytes or 0)

    def call(self) -> Callable[[], None]:
        return self.sess.call(self.entry)

    def execute(self) -> None:
        self.call()()


@dataclasses.dataclass
class PlanRecord:
    """What one run did with one proposed plan: its status and error, and what was measured (check, timing and
    anatomy columns in ``measured``; the timing's samples in ``timing``). ``shown``: its row was handed out."""

    entry: PlanEntry
    rank: int | None
    plan: ExecutablePlan | None = None
    #: not_built, built (between its build and its timing), build_failed, ok or run_failed
    status: str = "not_built"
    error: str = ""
    timing: TimingResult | None = None
    measured: dict[str, Any] = dataclasses.field(default_factory=dict)
    shown: bool = False

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def built(self) -> bool:
        """Built in this run (then checked and timed, whatever that gave)."""
        return self.status in ("built", "ok", "run_failed")

    @property
    def build_ms(self) -> float | None:
        return self.entry.build_ms

    @property
    def sample_ms(self) -> tuple[float, ...]:
        """The timing samples (ms per call) behind the median, as taken (none when reused or not timed)."""
        return self.timing.sample_ms if self.timing is not None else ()

    @property
    def kernels(self) -> Any:
        return self.measured.get("kernels")

    @property
    def notes(self) -> Any:
        return self.measured.get("numeric_notes")

    def row(self) -> dict[str, Any]:
        """The plan's row of the plan table (private ``_`` keys left for :func:`finish_rows`)."""
        return plan_row(self.entry, self.rank, self.status, self.error, self.measured)


def measure_plan(spec: Spec, plan: ExecutablePlan, sess: Any, timer: Timer, phases: Phases | None = None,
                 contender_ms: float | None = None) -> tuple[tuple[str, str], dict[str, Any], TimingResult | None]:
    """Check one plan's numbers (on NaN-poisoned outputs), then time it: ((status, error), measured columns, the
    timing). ``contender_ms``: the best median so far in this run (a far slower plan is screened)."""

    phases = phases or Phases()
    call, outputs, stream, expected = plan.call(), sess.outputs, sess.stream, sess.expected
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        run_poisoned(call, outputs, stream)
    except Exception as e:  # noqa: BLE001 - a plan that fails to run is recorded, the others go on
        return ("run_failed", " ".join(str(e).split())[:300]), out, None
    if expected is not None:
        out.update(check_outputs(spec, outputs, expected, sess.inputs))
    phases.add("check", time.perf_counter() - t0)
    try:
        with phases("time"):
            t = timer.time(call, key=plan.name, contender_ms=contender_ms)
    except Exception as e:  # noqa: BLE001
        return ("run_failed", f"timing failed: {' '.join(str(e).split())[:280]}"), out, None
    out.update(timing_mode=t.mode, calls_per_sample=t.calls_per_sample, median_ms=t.median_ms, iqr_ms=t.iqr_ms,
               min_ms=t.min_ms, samples=t.samples, capped=t.capped, host_ms=t.host_ms, screened=t.screened)
    if t.replay_ms is not None:
        out["_replay_ms"] = t.replay_ms
    return ("ok", ""), out, t


def check_outputs(spec: Spec, outputs: dict[str, Any], expected: dict[str, Any],
                  inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Error columns over every output: the worst error, the least share within each band, all must pass."""
    # FP8 outputs dequantized, rows a padding mask leaves undefined zeroed, as the references state them
    outputs = dict(comparable_outputs(spec, outputs, inputs)) if inputs is not None else outputs
    metrics = [compare(outputs[name], ref, **band_args(spec)) for name, ref in expected.items()]
    main = next(iter(expected))
    return {"rel_l2": max(m.rel_l2 for m in metrics), "max_abs": max(m.max_abs for m in metrics),
            "max_rel": max(m.max_rel for m in metrics), "nan_count": sum(m.nan_count for m in metrics),
            "inf_count": sum(m.inf_count for m in metrics), "within_torch": min(m.within_torch for m in metrics),
            "within_cudnn": min(m.within_cudnn for m in metrics), "pass_torch": all(m.passed_torch for m in metrics),
            "pass_cudnn": all(m.passed_cudnn for m in metrics),
            "_histogram": error_histogram(outputs[main], expected[main])}


#: Elements of the small tensors :func:`warm_check` checks: a size of its own, so the kernels a check of any size
#: calls are the ones it loads (the same kernels: elementwise and reductions are not specialised by size).
WARM_CHECK_NUMEL = 4096


def warm_check(spec: Spec, device: int = 0) -> float:
    """Load the torch kernels a run's numerical check calls (draw, poison, compare, histogram) on ``device`` by
    checking a small tensor in ``spec``'s dtypes once: CUDA loads a kernel at its first call, which the first run of
    a process paid in its check (docs/FINDINGS.md). Returns the seconds it took; the run's own check is unchanged."""
    import torch

    t0 = time.perf_counter()
    where = torch.device("cuda", device)
    args = band_args(spec)
    gen = torch.Generator(device=where).manual_seed(0)
    expected = torch.rand(WARM_CHECK_NUMEL, generator=gen, dtype=torch.float32, device=where).mul_(2).add_(-1)
    expected = expected.double()
    for name in dict.fromkeys(n for n in (args.get("dtype"), args.get("out_dtype"), "fp32") if n in TORCH_DTYPES):
        dtype = torch_dtype(name)
        if not dtype.is_floating_point:
            continue
        actual = expected.to(dtype, copy=True)  # a copy also where dtype is float64: the poison must not reach it
        actual.fill_(float("nan"))  # the poison run_poisoned puts in every output
        actual.copy_(expected)
        check_outputs(spec, {"warm": actual}, {"warm": expected})
    torch.cuda.synchronize(where)
    return time.perf_counter() - t0


def error_histogram(actual: Any, expected: Any) -> dict[str, list[float]]:
    """Counts of log10 |actual - expected| per decade; exact matches fall in the first bin, NaN/Inf in the last."""
    import torch

    err = (actual.double() - expected).abs().nan_to_num(nan=float("inf")).clamp(min=1e-12, max=1e2)
    counts = torch.histc(err.log10().float(), bins=len(HIST_EDGES) - 1, min=HIST_EDGES[0], max=HIST_EDGES[-1])
    return {"edges": HIST_EDGES, "counts": [int(c) for c in counts.tolist()]}


def plan_row(entry: PlanEntry, rank: int | None, status: str, error: str, measured: dict[str, Any]) -> dict[str, Any]:
    """A plan's row: its entry's facts, this run's status and error, and what was measured."""
    row: dict[str, Any] = {
        "plan": entry.name, "engine_id": entry.engine_id, "knobs": json.dumps(entry.knobs, sort_keys=True),
        "heuristic_rank": rank, "behavior_notes": ",".join(entry.behavior_notes),
        "workspace_bytes": entry.workspace_bytes, "build_ms": entry.build_ms, "status": status, "error": error,
    }
    if status == "not_built":  # built by an earlier run of the session, perhaps, but not part of this one
        row["workspace_bytes"] = row["build_ms"] = None
    for mode in HEURISTIC_MODES:
        row[f"rank_{mode}"] = entry.ranks.get(mode)
    row.update(measured)
    return row


def finish_rows(rows: Iterable[dict[str, Any]], loaded: dict[str, Any], version: Any) -> None:
    """Fill the columns read from a row itself: knob names (``anatomy.knob_columns``), whether the plan came from
    the plan cache, and the launch-gap figures of a plan timed by CUPTI (``_replay_ms`` popped)."""
    rows = list(rows)
    knob_columns(rows, version)
    for row in rows:
        row["from_cache"] = row["status"] != "not_built" and row["plan"] in loaded
        replayed = row.pop("_replay_ms", None)  # auto timing's replayed time of a plan it timed by CUPTI
        if replayed is not None:
            kernel = row.get("kernel_ms") if row.get("kernel_ms") is not None else row.get("median_ms")
            row["replay_over_kernel"] = replay_over_kernel(replayed, kernel)
            if row.get("kernel_ms") is not None:
                row["launch_gap_ms"] = replayed - row["kernel_ms"]
        if row.get("kernel_ms") is not None and row.get("replay_over_kernel") is None:
            row["replay_over_kernel"] = replay_over_kernel(row.get("median_ms"), row["kernel_ms"])
