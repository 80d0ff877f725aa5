"""How latency is measured: CUDA events after warm-up, repeated until the spread is small or a time cap is hit.

Four modes:
- ``auto``: ``cuda_graph`` where capture works (else ``events``); a call whose replayed time is under
  ``cupti_below_ms`` (10 us) is then timed by ``cupti`` as well and reports that, with the replayed time kept in
  ``replay_ms``: inside a graph each kernel node still costs ~0.3 us of gap (more around a memset node), which is
  a large share of a 2 us kernel and none of the kernel's own time.
- ``cuda_graph``: ``calls`` executions are captured once in a CUDA graph and replayed; each sample is one replay's
  event time divided by ``calls``. This takes the host's ~10-20 us per ``execute`` out of small problems. The graph
  holds enough calls that one replay takes ``target_replay_ms`` (``tiny_replay_ms`` for calls under ``tiny_ms``, up
  to ``max_calls`` calls), sized from the GPU time of a first replay (an eager estimate is host-bound for small
  calls), so the replay's fixed cost is spread thin; the gaps between kernels inside the graph remain
  (``replay_over_kernel`` in a run's plan table shows them where CUPTI kernel time is known).
- ``cupti``: kernel time by construction: each sample is the sum of the GPU time of the kernels (and memsets) one
  execution launches, as CUPTI records them (``gpu/kernels.py``: ``cupti_profiler``).
- ``events``: events around each call, with a short busy kernel queued first so the call is enqueued while the GPU
  is still busy and the host's launch time hides behind it.
- ``cold_l2`` (either mode off): a 2x-L2-sized buffer is written before every call, so the call starts with a
  cold L2; events mode only, since the flush must sit between calls.

Every mode starts alike: the warm-up calls run, each timed by events (the GPU kept busy ahead of it, so the time is
the GPU's); the last one's time sizes the host-time measurement and the captured graph. When the caller names the
best median so far (``contender_ms``), a call whose warm-up is ``screen_ratio`` times slower (and at least
``screen_min_ms``), confirmed by ``screen_samples`` event samples, cannot win and is *screened*: those samples are
its result, instead of sampling it to the spread target (one slow fallback plan could otherwise take most of an
all-plan run's timing).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from typing import Any

from ..options import TIMING_SETTINGS, RunOptions
from .kernels import kernel_times

#: The RunOptions timing modes this timer implements.
SUPPORTED_MODES: tuple[str, ...] = ("auto", "cuda_graph", "events", "cupti")


@dataclasses.dataclass(frozen=True)
class TimingResult:
    """Latency statistics of one callable, in milliseconds per call."""

    median_ms: float
    iqr_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    samples: int
    mode: str
    calls_per_sample: int
    capped: bool
    host_ms: float | None
    cold_l2: bool
    #: for ``auto`` calls timed by CUPTI: the replayed (CUDA graph) median per call, kernel gaps included
    replay_ms: float | None = None
    #: timed by a few event samples only: far slower than the best plan so far (see the module's docstring)
    screened: bool = False
    #: every sample (ms per call) the statistics above were taken from, in the order they were taken
    sample_ms: tuple[float, ...] = ()

    @property
    def rel_iqr(self) -> float:
        return self.iqr_ms / self.median_ms if self.median_ms > 0 else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: The TimingOptions fields a run takes from its RunOptions as they are (the mode is RunOptions.timing_mode): the
#: options whose metadata says ``timing``.
RUN_SETTINGS: tuple[str, ...] = TIMING_SETTINGS


@dataclasses.dataclass(frozen=True)
class TimingOptions:
    """When to stop: at least ``min_samples``; then once IQR/median < ``rel_iqr_target`` or ``time_cap_s`` passed.

    Internal to the GPU layer: runs build it from their validated :class:`~cudnn_lab.options.RunOptions`
    (:meth:`from_options`); the ceilings use their own fixed settings.
    """

    mode: str = RunOptions.timing
    # the sampling settings a run passes on (:data:`RUN_SETTINGS`), with RunOptions' defaults
    cold_l2: bool = RunOptions.cold_l2
    warmup: int = RunOptions.warmup
    min_samples: int = RunOptions.min_samples
    max_samples: int = RunOptions.max_samples
    rel_iqr_target: float = RunOptions.rel_iqr_target
    time_cap_s: float = RunOptions.time_cap_s
    screen_ratio: float = RunOptions.screen_ratio
    #: calls shorter than this (ms) are never screened: their eager estimate may be the host's launch time
    screen_min_ms: float = 0.1
    #: event samples a screened call gets
    screen_samples: int = 3
    #: GPU time (ms) the host-time measurement may take: its calls are drained before the next step
    host_budget_ms: float = 1.0
    target_replay_ms: float = 0.3
    #: calls shorter than this (ms) are "tiny": their graph is sized to ``tiny_replay_ms`` instead. A replay's fixed
    #: cost (1.4-6.8 us per replay on an H200) was 1-3% of a 0.3 ms replay of 16-19 us kernels: issue 36's kit/CUPTI
    #: 1 +- 0.03 needs their replays longer too (docs/FINDINGS.md, 2026-11-29 round 15)
    tiny_ms: float = 0.025
    tiny_replay_ms: float = 1.0
    #: most executions captured in one graph
    max_calls: int = 1000
    #: ``auto`` reports CUPTI kernel time for calls whose replayed time is below this (ms); 0: never
    cupti_below_ms: float = 0.010

    @classmethod
    def from_options(cls, options: Any) -> TimingOptions:
        """The timing part of a RunOptions (its mode as the timer runs it: cold L2 means events)."""
        return cls(mode=options.timing_mode, **{name: getattr(options, name) for name in RUN_SETTINGS})


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(q1, median, q3) with the inclusive method, as torch.utils.benchmark reports them."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    q1, med, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, med, q3


def calls_per_graph(per_call_ms: float, options: TimingOptions) -> int:
    """Executions to capture in one graph so that a replay takes about the target time (longer for tiny calls)."""
    target = options.tiny_replay_ms if per_call_ms < options.tiny_ms else options.target_replay_ms
    return int(min(options.max_calls, max(1, target / max(per_call_ms, 1e-4))))


def host_calls(per_call_ms: float, options: TimingOptions) -> int:
    """Calls the host-time measurement enqueues: 20, fewer for long calls (2 at least) so that draining them stays
    within ``host_budget_ms`` of GPU time."""
    return int(max(2, min(20, options.host_budget_ms / max(per_call_ms, 1e-4))))


def screened(per_call_ms: float, contender_ms: float | None, options: TimingOptions) -> bool:
    """Whether a call whose warm-up took ``per_call_ms`` is far slower than the best so far (``contender_ms``)."""
    return (contender_ms is not None and contender_ms > 0 and options.screen_ratio > 0
            and per_call_ms >= options.screen_min_ms and per_call_ms > options.screen_ratio * contender_ms)


def _summarize(samples: list[float], mode: str, calls: int, capped: bool, host_ms: float | None,
               cold: bool, screened: bool = False) -> TimingResult:
    q1, med, q3 = quartiles(samples)
    return TimingResult(median_ms=med, iqr_ms=q3 - q1, q1_ms=q1, q3_ms=q3, min_ms=min(samples),
                        samples=len(samples), mode=mode, calls_per_sample=calls, capped=capped, host_ms=host_ms,
                        cold_l2=cold, screened=screened, sample_ms=tuple(samples))


def spread_met(samples: list[float], options: TimingOptions) -> bool:
    """The one stop rule: at least ``min_samples`` samples whose IQR/median is below ``rel_iqr_target``."""
    if len(samples) < options.min_samples:
        return False
    q1, med, q3 = quartiles(samples)
    return med > 0 and (q3 - q1) / med < options.rel_iqr_target


class Timer:
    """Times callables that enqueue GPU work on ``stream`` (cuDNN's handle must be bound to the same stream)."""

    def __init__(self, stream: Any, options: TimingOptions | None = None,
                 graph_cache: dict[Any, Any] | None = None) -> None:
        import torch

        self.torch = torch
        # key -> (captured graph, calls): a repeated measurement of the same callable skips the capture.
        self.graph_cache = graph_cache if graph_cache is not None else {}
        self.stream = stream
        self.options = options or TimingOptions()
        l2 = getattr(torch.cuda.get_device_properties(stream.device), "L2_cache_size", 50 << 20)
        self._flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device=stream.device)
        self._busy = torch.empty(1 << 24, dtype=torch.float32, device=stream.device)

    def _lead(self) -> None:
        """Queue ~0.1 ms of GPU work (three passes over a 64 MiB buffer) ahead of a call timed alone by events, so
        the call is enqueued before the GPU reaches it: its time is then the GPU's, not the host's launch time
        (a cuDNN execute from Python takes ~20-60 us to enqueue)."""
        for _ in range(3):
            self._busy.mul_(1.0)

    def host_ms(self, fn: Callable[[], None], calls: int = 20) -> float:
        """Host time per call to enqueue ``fn`` (no sync between calls): the launch overhead a user pays."""
        torch = self.torch
        with torch.cuda.stream(self.stream):
            self._busy.mul_(1.0)  # keeps the GPU ahead of the host so enqueueing never blocks
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            elapsed = time.perf_counter() - t0
        self.stream.synchronize()
        return elapsed * 1e3 / calls

    def time(self, fn: Callable[[], None], key: Any = None, contender_ms: float | None = None) -> TimingResult:
        """Median latency of ``fn`` per call, by the options' mode (``auto`` tries a CUDA graph first).

        ``key`` names ``fn`` for the graph cache: the same key must always mean the same work. ``contender_ms``:
        the best median so far among calls doing the same work; a call far slower than it is screened.
        """
        opts = self.options
        estimate = self._warm_up(fn, contender_ms)
        host = self.host_ms(fn, host_calls(estimate, opts))
        if screened(estimate, contender_ms, opts):
            quick = self._time_events(fn, host, fixed=opts.screen_samples)
            if screened(quick.median_ms, contender_ms, opts):  # confirmed by the samples, not one call alone
                return quick
        if opts.mode == "cupti":
            return self._time_cupti(fn, host)
        if opts.mode in ("auto", "cuda_graph") and not opts.cold_l2:
            try:
                replayed = self._time_graph(fn, host, key, estimate)
            except Exception:
                if opts.mode == "cuda_graph":
                    raise
                self.torch.cuda.synchronize(self.stream.device)
            else:
                if opts.mode == "auto" and replayed.median_ms < opts.cupti_below_ms:
                    try:
                        kernel = self._time_cupti(fn, host)
                    except Exception:  # noqa: BLE001 - no CUPTI here: the replayed time stands
                        return replayed
                    return dataclasses.replace(kernel, replay_ms=replayed.median_ms)
                return replayed
        return self._time_events(fn, host)

    def _warm_up(self, fn: Callable[[], None], contender_ms: float | None = None) -> float:
        """Run the warm-up calls (at least one), each queued behind a busy kernel and timed by events; returns the
        last one's GPU ms. A first call that is already screened ends the warm-up (it will not be sampled much)."""
        estimate = 0.0
        for i in range(max(1, self.options.warmup)):
            a, b = self._event_pair()
            with self.torch.cuda.stream(self.stream):
                self._lead()
                a.record(self.stream)
                fn()
                b.record(self.stream)
            self.stream.synchronize()
            estimate = a.elapsed_time(b)
            if i == 0 and screened(estimate, contender_ms, self.options):
                break
        return estimate

    def _collect(self, one_sample: Callable[[], tuple[Any, Any]], scale: float,
                 fixed: int | None = None) -> tuple[list[float], bool]:
        """Take samples in batches of 5 until the spread is small enough or the time cap is hit (``fixed``: that
        many samples in one batch, no spread target)."""
        opts = self.options
        samples: list[float] = []
        start = time.perf_counter()
        if fixed:
            with self.torch.cuda.stream(self.stream):
                pairs = [one_sample() for _ in range(fixed)]
            self.stream.synchronize()
            return [a.elapsed_time(b) / scale for a, b in pairs], False
        while True:
            with self.torch.cuda.stream(self.stream):  # entered once per batch: entering it costs ~10 us
                pairs = [one_sample() for _ in range(5)]
            self.stream.synchronize()
            samples += [a.elapsed_time(b) / scale for a, b in pairs]
            if spread_met(samples, opts):
                return samples, False
            if len(samples) >= opts.max_samples or time.perf_counter() - start > opts.time_cap_s:
                return samples, True  # the spread target was not met (spread_met said so just above)

    def _event_pair(self) -> tuple[Any, Any]:
        ev = self.torch.cuda.Event
        return ev(enable_timing=True), ev(enable_timing=True)

    def _time_events(self, fn: Callable[[], None], host: float, fixed: int | None = None) -> TimingResult:
        cold = self.options.cold_l2

        def one() -> tuple[Any, Any]:  # runs on the timer's stream (_collect enters it)
            a, b = self._event_pair()
            if cold:
                self._flush.fill_(1)
            else:
                self._lead()
            a.record(self.stream)
            fn()
            b.record(self.stream)
            return a, b

        samples, capped = self._collect(one, 1.0, fixed)
        return _summarize(samples, "events", 1, capped, host, cold, screened=bool(fixed))

    def _time_graph(self, fn: Callable[[], None], host: float, key: Any = None,
                    estimate: float | None = None) -> TimingResult:
        if key is not None and key in self.graph_cache:
            graph, calls = self.graph_cache[key]
        else:
            graph, calls = self._capture(fn, estimate)
            if key is not None:
                self.graph_cache[key] = (graph, calls)

        def one() -> tuple[Any, Any]:  # runs on the timer's stream (_collect enters it)
            a, b = self._event_pair()
            a.record(self.stream)
            graph.replay()
            b.record(self.stream)
            return a, b

        samples, capped = self._collect(one, float(calls))
        return _summarize(samples, "cuda_graph", calls, capped, host, False)

    def _time_cupti(self, fn: Callable[[], None], host: float) -> TimingResult:
        """Samples of kernel time per execution from CUPTI, in one profiler session (starting one costs most)."""
        opts = self.options
        n = max(opts.min_samples, min(opts.max_samples, 30))
        samples = kernel_times(fn, self.stream, samples=n)
        if not samples or not all(s > 0 for s in samples):
            raise RuntimeError("CUPTI recorded no GPU time for this call")
        return _summarize(samples, "cupti", 1, not spread_met(samples, opts), host, False)

    def _capture(self, fn: Callable[[], None], estimate: float | None = None) -> tuple[Any, int]:
        """Capture ``calls`` executions of ``fn`` in one CUDA graph sized to take about target_replay_ms, from the
        warm-up's estimate of one call's GPU time (measured here when not given)."""
        torch = self.torch
        calls = calls_per_graph(estimate if estimate is not None else self._warm_up(fn), self.options)
        graph = self._graph_of(fn, calls)
        # Eager calls of a few us are host-bound (an execute takes ~10-20 us to enqueue), so the estimate above is
        # too long for them: size the graph again from one replay's GPU time per call.
        a, b = self._event_pair()
        with torch.cuda.stream(self.stream):
            a.record(self.stream)
            graph.replay()
            b.record(self.stream)
        self.stream.synchronize()
        better = calls_per_graph(a.elapsed_time(b) / calls, self.options)
        if better > 1.5 * calls:
            del graph
            graph, calls = self._graph_of(fn, better), better
        return graph, calls

    def _graph_of(self, fn: Callable[[], None], calls: int) -> Any:
        """``calls`` executions of ``fn`` captured in one CUDA graph, replayed once (warm)."""
        torch = self.torch
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self.stream):
            for _ in range(calls):
                fn()
        graph.replay()
        self.stream.synchronize()
        return graph


def replay_over_kernel(median_ms: Any, kernel_ms: Any) -> float | None:
    """Replayed latency over CUPTI kernel time (1.0: no launch gaps); None unless both are positive numbers."""
    try:
        m, k = float(median_ms), float(kernel_ms)
    except (TypeError, ValueError):
        return None
    return m / k if m > 0 and k > 0 and m == m and k == k else None


def run_poisoned(call: Callable[[], Any], outputs: dict[str, Any], stream: Any) -> None:
    """Fill the floating-point ``outputs`` with NaN, then ``call()`` on ``stream`` and wait for it: a value the
    plan did not write cannot pass as its answer. ``stream`` first waits for the caller's stream: a read of the last
    run's outputs still queued there (a clone, a comparison) must not see this run's NaN (docs/FINDINGS.md)."""
    import torch

    stream.wait_stream(torch.cuda.current_stream(stream.device))
    with torch.cuda.stream(stream):
        for t in outputs.values():
            if t.is_floating_point():
                t.fill_(float("nan"))
        call()
    stream.synchronize()
