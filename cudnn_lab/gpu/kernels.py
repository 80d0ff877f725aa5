"""Kernels per plan, measured with CUPTI (PyTorch's kineto profiler): which kernels, how many, each one's GPU time.

All plans are profiled in ONE profiler session (a session costs far more than a plan's executions): each plan's
executions are preceded by a one-element ``fill_`` on the same stream, whose kernel (PyTorch's ``FillFunctor``, never
launched by cuDNN) marks where the plan's kernels begin on the GPU timeline. Failures are recorded per plan, never
raised. The plain reading of each name is in :mod:`cudnn_lab.kernel_names`.

The first profiler session of a process also loads and sets up CUPTI (kineto's tracer): a one-time process cost,
paid by :func:`start_cupti` and recorded apart (:func:`cupti_first_use_s`) so that benchmarks and notes can tell it
from the per-run cost.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

#: Executions of each plan inside the profiler; per-execution numbers are averages over them.
DEFAULT_RUNS = 5
_MARK = "FillFunctor"
#: Seconds the first CUPTI session of this process took (None until :func:`start_cupti` ran).
_FIRST_USE_S: float | None = None
#: Held while the process's first profiler session starts (:func:`start_cupti`). PyTorch's profiler (kineto) must
#: first run on the thread that loaded torch: its client registers there when libtorch loads, and a first session on
#: another thread logs "External init callback must run in same thread as registerClient", after which the process
#: can abort at exit ("free(): invalid pointer"; H200, 2026-11-29, scripts/live_rows.py --defaults, whose Lab
#: imports torch on its warm-up thread). A thread that loads torch holds this lock until it has run that first session
#: (gpu/defaults.warm), so no other thread's session comes first.
FIRST_SESSION = threading.RLock()
#: The name of the thread that loaded torch through :func:`load_torch` (None: no kit thread did).
_LOADED_BY: str | None = None


class _LoaderSpy:
    """A meta-path finder that only notes which thread looks torch up: the one that runs its import (a thread that
    meets torch half-imported waits on the import lock and never asks the finders)."""

    def __init__(self) -> None:
        self.thread: int | None = None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" and self.thread is None:
            self.thread = threading.get_ident()
        return None  # the real finders find it


def import_torch_here() -> bool:
    """Import torch; True when this thread is the one that loaded it, so the profiler's first session belongs here.
    A check of ``sys.modules`` first is not enough: another thread (a Lab's caller) may start the same import a moment
    later and win it (H200, 2026-11-29: live_rows.py --defaults ended in SIGSEGV after kineto's "External init
    callback" error, 1 run in 6 suites)."""
    if "torch" in sys.modules:
        return False
    spy = _LoaderSpy()
    sys.meta_path.insert(0, spy)
    try:
        import torch  # noqa: F401
    finally:
        sys.meta_path.remove(spy)
    return spy.thread == threading.get_ident()


def load_torch(device: Any = None) -> bool:
    """Import torch from a kit thread under kineto's rule: where this thread is the one that loads it and CUDA is
    here, the profiler's first session runs here at once (:data:`FIRST_SESSION` held throughout, so no other thread's
    comes first). True when this thread loaded torch. A thread that only imports modules which import torch (the
    frontend's engine families) calls this first: else it may load torch and leave the first session to another
    thread (H200, 2026-11-29: a Lab's engine warm-up did, and its process ended in SIGSEGV at exit, 2 runs in 8)."""
    global _LOADED_BY
    if "torch" in sys.modules:
        return False
    with FIRST_SESSION:
        loads = import_torch_here()
        if loads:
            _LOADED_BY = threading.current_thread().name
            import torch

            try:
                if torch.cuda.is_available():
                    start_cupti(device)
            except Exception:  # noqa: BLE001 - no CUPTI here: the run says so when it records kernels
                pass
        return loads


def torch_loaded_by() -> str | None:
    """The name of the kit thread that loaded torch through :func:`load_torch` (None: none did)."""
    return _LOADED_BY


@dataclasses.dataclass(frozen=True)
class KernelStat:
    """One kernel (or memset/memcpy) of a plan: launches per execution and the mean GPU time of one launch."""

    name: str
    kind: str  # kernel | memset | memcpy
    count: float
    us: float

    @property
    def total_us(self) -> float:
        return self.count * self.us

    def to_dict(self) -> dict[str, Any]:
        count: float | int = int(round(self.count)) if abs(self.count - round(self.count)) < 1e-9 else self.count
        return {"name": self.name, "kind": self.kind, "count": count, "us": round(self.us, 4),
                "total_us": round(self.total_us, 4)}


@dataclasses.dataclass(frozen=True)
class PlanKernels:
    """What one plan launches per execution (CUPTI), the sum of their GPU time (``kernel_ms``) and the GPU time
    between them (``gap_us``: the span from the first kernel's start to the last one's end, minus their summed time,
    median over executions; None where not measured)."""

    kernels: tuple[KernelStat, ...] = ()
    runs: int = 0
    error: str = ""
    gap_us: float | None = None

    @property
    def kernel_gap_ms(self) -> float | None:
        """The ``kernel_gap_ms`` column: GPU time between one execution's kernels, in ms (0 for one kernel;
        negative where kernels overlap, as with programmatic dependent launch); None when not measured."""
        if self.error or not self.runs or self.gap_us is None:
            return None
        return self.gap_us / 1e3

    @property
    def kernel_ms(self) -> float | None:
        """GPU time of all kernels (and memsets/copies) of one execution, in ms; None when nothing was measured."""
        if self.error or not self.runs:
            return None
        return sum(k.total_us for k in self.kernels) / 1e3

    @property
    def kernel_count(self) -> float | None:
        """Launches per execution (kernels, memsets and copies)."""
        return None if self.error or not self.runs else sum(k.count for k in self.kernels)

    def to_json(self) -> str:
        """The ``kernels`` column: a JSON list of {name, kind, count, us, total_us}."""
        return json.dumps([k.to_dict() for k in self.kernels])

    @staticmethod
    def from_json(text: Any) -> PlanKernels:
        """Inverse of :meth:`to_json` (runs unknown: 1); an empty record for missing or unreadable text."""
        try:
            items = json.loads(text) if isinstance(text, str) else list(text or [])
            stats = tuple(KernelStat(str(i["name"]), str(i.get("kind", "kernel")), float(i.get("count", 1)),
                                     float(i.get("us", 0.0))) for i in items)
        except (TypeError, ValueError, KeyError):
            return PlanKernels(error="unreadable kernels record")
        return PlanKernels(stats, runs=1 if stats else 0)


def cupti_profiler() -> Any:
    """A context manager recording GPU activity only (kernels, memsets, copies) through CUPTI; after it exits its
    ``kineto_results`` hold the events (:func:`_device_events`). ``torch.autograd.profiler.profile`` rather than
    ``torch.profiler.profile``, whose first use imports ``torch._inductor`` (dynamo, sympy: seconds in a fresh
    process) only to read a config flag."""
    from torch.autograd.profiler import profile

    return profile(use_cpu=False, use_device="cuda", use_kineto=True)


def start_cupti(device: Any = None) -> float:
    """Start CUPTI in this process with one profiled one-element fill, once: the first session loads libcupti and
    sets up the tracer, a one-time process cost that would otherwise land on the first plan profiled. Returns the
    seconds this call spent (0.0 once CUPTI has been started). Raises what the profiler raises (no CUPTI here)."""
    global _FIRST_USE_S
    with FIRST_SESSION:
        if _FIRST_USE_S is not None:
            return 0.0
        import torch

        t0 = time.perf_counter()
        x = torch.zeros(1, device=device if device is not None else "cuda")
        torch.cuda.synchronize(x.device)
        with cupti_profiler():
            x.fill_(1.0)
            torch.cuda.synchronize(x.device)
        _FIRST_USE_S = time.perf_counter() - t0
        return _FIRST_USE_S


def cupti_first_use_s() -> float | None:
    """Seconds the first CUPTI session of this process took (None: CUPTI not started in this process)."""
    return _FIRST_USE_S


def _kind(activity: str, name: str) -> str:
    a, n = activity.lower(), name.lower()
    if "memset" in a or n.startswith("memset"):
        return "memset"
    if "memcpy" in a or n.startswith("memcpy"):
        return "memcpy"
    return "kernel"


def _device_events(prof: Any) -> list[tuple[int, int, str, str]]:
    """(start_ns, end_ns, name, kind) of every GPU activity in the trace (kernels, memsets, copies)."""
    import torch

    demangle = getattr(torch._C, "_demangle", lambda s: s)
    out: list[tuple[int, int, str, str]] = []
    raw = getattr(prof, "kineto_results", None) or getattr(getattr(prof, "profiler", None), "kineto_results", None)
    if raw is not None and hasattr(raw, "events"):
        for e in raw.events():
            if e.device_type() != torch.autograd.DeviceType.CUDA:
                continue
            activity = e.activity_type() if hasattr(e, "activity_type") else ""
            if "annotation" in activity or (hasattr(e, "is_user_annotation") and e.is_user_annotation()):
                continue
            name = e.name()
            name = demangle(name) if name.startswith("_Z") else name
            out.append((e.start_ns(), e.end_ns(), name, _kind(activity, name)))
        return out
    for e in prof.events():  # the FunctionEvent path of older torch
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        activity = str(getattr(e, "activity_type", "") or "")
        if "annotation" in activity or getattr(e, "is_user_annotation", False):
            continue
        start, end = int(e.time_range.start * 1e3), int(e.time_range.end * 1e3)
        out.append((start, end, e.name, _kind(activity, e.name)))
    return out


def summarize(events: list[tuple[int, int, str, str]], runs: int) -> tuple[KernelStat, ...]:
    """Kernels of one plan's segment, grouped by name in order of first launch, per execution."""
    order: dict[tuple[str, str], list[int]] = {}
    for start, end, name, kind in events:
        order.setdefault((name, kind), []).append(max(0, end - start))
    return tuple(KernelStat(name, kind, len(d) / runs, sum(d) / len(d) / 1e3) for (name, kind), d in order.items())


def span_gap_us(segment: list[tuple[int, int, str, str]]) -> tuple[float, float] | None:
    """(span, gap) of one execution's activities in us: first start to last end, and the span minus their summed
    time (the GPU idle between them; negative where they overlap); None for an empty segment."""
    if not segment:
        return None
    span = max(e for _, e, _, _ in segment) - min(s for s, _, _, _ in segment)
    busy = sum(max(0, e - s) for s, e, _, _ in segment)
    return span / 1e3, (span - busy) / 1e3


def _median(values: list[float]) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def split_segments(events: list[tuple[int, int, str, str]], plans: int) -> list[list[tuple[int, int, str, str]]] | None:
    """The GPU timeline cut at the marker kernels into one segment per plan (None when the markers do not add up)."""
    ordered = sorted(events)
    for mark in (_MARK, "at::native"):  # PyTorch's fill kernel; any PyTorch kernel if its name were to change
        marks = [i for i, e in enumerate(ordered) if mark in e[2]]
        if len(marks) == plans + 1:
            return [ordered[a + 1:b] for a, b in zip(marks, marks[1:])]
    return None


def profile_plans(calls: Mapping[str, Callable[[], None]], stream: Any, *, runs: int | Mapping[str, int] = DEFAULT_RUNS,
                  warmup: int = 1, progress: Callable[[int, int, str], None] | None = None) -> dict[str, PlanKernels]:
    """Kernels of every plan in ``calls`` (name -> zero-argument callable enqueueing one execution on ``stream``).

    ``runs``: executions recorded per plan, or a number per plan name (plans missing from it get DEFAULT_RUNS);
    ``warmup``: executions before recording (0 for plans that just ran). Returns name -> :class:`PlanKernels`; a plan
    that fails, or a profiler that cannot run, is recorded in ``error``.
    """
    import torch

    names = list(calls)
    runs_of = {n: int(runs.get(n, DEFAULT_RUNS)) if isinstance(runs, Mapping) else int(runs) for n in names}
    errors: dict[str, str] = {}
    for i, name in enumerate(names):
        if progress:
            progress(i, len(names), f"kernels of {name}")
        try:
            with torch.cuda.stream(stream):
                for _ in range(warmup):
                    calls[name]()
            stream.synchronize()
        except Exception as e:  # noqa: BLE001 - one plan failing must not stop the others
            errors[name] = "run failed: " + " ".join(str(e).split())[:240]
    marks: dict[str, int] = {}  # markers queued before each plan's executions (one before each execution)
    try:
        start_cupti(stream.device)
        marker = torch.zeros(1, device=stream.device)
        stream.synchronize()
        with cupti_profiler() as prof:
            with torch.cuda.stream(stream):
                for i, name in enumerate(names):
                    marks[name] = 0
                    if name in errors:
                        marker.fill_(float(i + 1))
                        marks[name] = 1
                        continue
                    try:
                        for _ in range(runs_of[name]):
                            marker.fill_(float(i + 1))  # each execution its own segment: its span and gaps
                            marks[name] += 1
                            calls[name]()
                    except Exception as e:  # noqa: BLE001
                        errors[name] = "run failed: " + " ".join(str(e).split())[:240]
                marker.fill_(-1.0)
            stream.synchronize()
        events = _device_events(prof)
    except Exception as e:  # noqa: BLE001 - no CUPTI (driver, permissions): say so on every plan
        why = "CUPTI profiling failed: " + " ".join(str(e).split())[:240]
        return {n: PlanKernels(error=errors.get(n, why)) for n in names}
    segments = split_segments(events, sum(marks.values()))
    if segments is None:
        why = "could not attribute kernels to plans (marker kernels missing from the CUPTI trace)"
        return {n: PlanKernels(error=errors.get(n, why)) for n in names}
    out = {}
    at = 0
    for name in names:
        execs, at = segments[at:at + marks.get(name, 0)], at + marks.get(name, 0)
        seg = [e for one in execs for e in one]
        if name in errors:
            out[name] = PlanKernels(error=errors[name])
        elif not seg:
            out[name] = PlanKernels(error="no GPU activity recorded for this plan")
        else:
            gaps = [g for one in execs if (g := span_gap_us(one)) is not None]
            out[name] = PlanKernels(summarize(seg, runs_of[name]), runs=runs_of[name],
                                    gap_us=_median([gap for _, gap in gaps]))
    return out


def kernel_times(call: Callable[[], None], stream: Any, *, samples: int = 20) -> list[float]:
    """CUPTI kernel time of ``samples`` executions of one plan, in ms each (the ``cupti`` timing mode's samples)."""
    import torch

    with torch.cuda.stream(stream):
        call()
    stream.synchronize()
    start_cupti(stream.device)
    marker = torch.zeros(1, device=stream.device)
    with cupti_profiler() as prof:
        with torch.cuda.stream(stream):
            for i in range(samples):
                marker.fill_(float(i + 1))
                call()
            marker.fill_(-1.0)
        stream.synchronize()
    segments = split_segments(_device_events(prof), samples)
    if segments is None:
        raise RuntimeError("could not attribute kernels to executions (marker kernels missing from the trace)")
    return [sum(end - start for start, end, _, _ in seg) / 1e6 for seg in segments]
