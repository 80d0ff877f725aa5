"""One run on the GPU as named steps (:class:`Run`): start, propose, then build, check and time each plan in the
heuristics' order, handing out its row as soon as it is measured (:meth:`Run.plans`), then kernels, notes, explore,
baseline and the records (:meth:`Run.finish`). A run can be stopped between plans or steps (``stop()`` answering
True, or a KeyboardInterrupt): it keeps what it measured and its records say it is partial.

What happened to each plan in this run is decided here, one :class:`~cudnn_lab.gpu.execution.PlanRecord` per plan;
a session's plans keep only their build state, so a later run with another plan policy starts clean.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Generator
from typing import Any

from ..errors import OptionError, UnsupportedGraphError
from ..numerics import tf32_note
from ..options import RunOptions
from ..specs import Spec
from .reasons import CATEGORIES, category_of, summarize
from . import anatomy
from .baseline import torch_baseline
from .cache import RunCache, kernel_cache_for
from .ceilings import measure_ceilings
from .device import device_info, start_device
from .execution import FrontendPlan, Phases, PlanRecord, finish_rows, measure_plan, plan_row
from .fp8 import ceiling_dtype, check_requirements, quantization_figures
from .defaults import (AUTO_PLAN_DEADLINE_S, Decision, decide_kernel_cache, decide_parallel_builds, pool_warm,
                       unbuilt_in_process, worth_starting)
from .frontend import check_carve_out, from_frontend_graph
from .parallel_build import PLAN_DEADLINE_S, AsyncPrebuild, parallel_prebuild_async, skip_reason
from .plans import PlanEntry
from .session import require_gpu, session
from .timing import Timer, TimingOptions

#: ``progress(done, total, message)``; an object may also offer ``row(row_dict)`` (see ``cudnn_lab.runs``).
Progress = Callable[[int, int, str], None]
#: The steps :meth:`Run.finish` takes after the plans, in order (each a method of :class:`Run`).
FINISH_STEPS: tuple[str, ...] = ("ceilings", "kernels", "notes", "explore", "baseline")


class Run:
    """One run of ``spec`` with ``options``: ``run.start()``, ``for row in run.plans(): ...``, ``run.finish()``."""

    def __init__(self, spec: Spec, options: RunOptions, progress: Any = None,
                 stop: Callable[[], bool] | None = None) -> None:
        self.spec, self.options, self.progress, self.stop = spec, options, progress, stop
        self.t_start = time.perf_counter()
        self.phases = Phases()
        self.warnings: list[str] = []
        self.records: list[PlanRecord] = []
        #: why the run stopped before its end (None: it ran to the end)
        self.stopped: str | None = None
        self.best_ms: float | None = None  # the best median so far: a plan far slower is screened (timing.py)
        self.info: dict[str, Any] = {}
        self.ceil: Any = None
        self.explored: list[dict[str, Any]] = []
        self.space: dict[str, Any] = {}
        self.explored_histograms: dict[str, Any] = {}
        self.torch_info: dict[str, Any] = {}
        #: what the parallel plan builds did (settings["parallel_build"]; None: not asked for)
        self.parallel_build: dict[str, Any] | None = None
        #: helpers building the plans while the run goes on (None: not asked for, or skipped)
        self.prebuild: AsyncPrebuild | None = None
        self.waited_for_helpers = False  # a plan was waited for (else the end of the plans does not wait for them)
        self.ahead: list[str] = []  # plans loaded and timed while the run waited for an earlier one (work_ahead)
        self.kernel_cache: Any = None
        self.kernels_saved = False
        #: what the run did with the options it may decide itself (settings["decisions"]; gpu/defaults.py)
        self.decisions: dict[str, Decision] = {}
        #: helpers 'auto' chose while the pool is cold: started once the session shows they pay (0: none)
        self.deferred_helpers = 0
        self.sess: Any = None

    # ------------------------------------------------------------------------------------------------ steps

    def start(self) -> None:
        """Import torch and cuDNN while CUDA starts; check the device, the spec's needs and the carve-out on it."""
        spec, options, phases = self.spec, self.options, self.phases
        with phases("import"):  # torch and cudnn, on a process's first run
            import torch  # noqa: F401


            starting = start_device(options.device)  # CUDA starts while cuDNN and the modules below import
            import cudnn  # noqa: F401

        with phases("device"):
            if starting is not None:
                starting.wait(60.0)
            require_gpu(options.device)
            self.info = info = device_info(options.device)
            check_requirements(spec, info)  # e.g. FP8 attention's fp16 output needs Blackwell: refused, rule named
            check_sm_count(spec, options.sm_count, info)
        if (note := tf32_note(spec)) is not None:
            self.warnings.append(note)
        if options.sm_count is not None:
            self.warnings.append(carve_out_note(options, info))

    def propose(self) -> list[PlanRecord]:
        """The session's plans (made once per spec and options: inputs, reference, the heuristics' proposals), one
        record per plan in heuristic order (``max_plans`` first ones), the plan cache and the timer."""
        options, info = self.options, self.info
        self.decisions["kernel_cache"] = decide_kernel_cache(options, from_frontend_graph(self.spec))
        self.kernel_cache = kernels = _kernel_cache(options, info)
        self.start_helpers()  # helpers start now: they list and build while the session makes its inputs
        sess = self.sess = session(self.spec, options.heuristics, device=options.device, seed=options.seed,
                                   check=options.check, sm_count=options.sm_count,
                                   kernel_cache=kernels.cache if kernels is not None else None)
        self.let_go_of_helpers(sess, entries=sess.entries[:options.max_plans] if options.max_plans is not None
                               else sess.entries)
        made, sess.phase_s = sess.phase_s, {}  # the run that made the session reports what making it took
        for name, seconds in made.items():
            self.phases.add(name, seconds)
        entries = sess.entries[:options.max_plans] if options.max_plans is not None else sess.entries
        cache = RunCache(self.spec, info, sess.handle, options.plan_cache, ask=sess.ask_heuristics,
                         sm_count=options.sm_count, kernel_cache=sess.kernel_cache is not None)
        self.cache = cache
        self.records = [PlanRecord(entry=e, rank=rank, plan=FrontendPlan(e, sess, cache))
                        for rank, e in enumerate(entries)]
        self.topts = TimingOptions.from_options(options)
        with self.phases("time"):
            self.timer = Timer(sess.stream, self.topts, graph_cache=sess.graphs)
        return self.records

    def build(self, record: PlanRecord) -> bool:
        """Build one plan (loaded from the plan cache where it is kept; once per session) and make room for its
        workspace: built, or build_failed with cuDNN's reason. A plan handed to a helper is waited for first (then
        loaded from the plan cache, or built here where the helper failed or ran out of time)."""
        handed = self.prebuild
        if (handed is not None and record.entry.built is None and record.rank is not None
                and record.rank >= handed.leave):
            self.waited_for_helpers = True
            if not handed.answered(record.name):  # a helper lists or builds it: the run's own work first
                self.work_while_waiting()
            if handed.pending(record.name):
                self.work_ahead(handed, record)
            with self.phases("parallel_wait"):
                handed.wait(record.name, timeout=handed.deadline_s)
        with self.phases("build"):
            if record.plan is None or not record.plan.build():
                record.status, record.error = "build_failed", record.plan.error if record.plan else ""
                return False
            record.status = "built"
            self.check(record)
        return True

    def work_while_waiting(self) -> None:
        """While a helper builds (or has yet to list) the plan the run needs next: ask the numerical notes, a query
        the notes step would ask after the last plan. Quiet on failure: the notes step asks again and says why."""
        options, kept = self.options, getattr(self.sess, "notes_by_modes", None)
        if not options.notes or kept is None or tuple(options.heuristics) in kept:
            return
        with self.phases("notes"):
            try:
                anatomy.session_notes(self.spec, self.sess, tuple(options.heuristics), bool(options.plan_cache))
            except Exception:  # noqa: BLE001 - asked again, and reported, by the notes step
                pass

    def work_ahead(self, handed: AsyncPrebuild, waiting: PlanRecord) -> None:
        """While a helper still builds ``waiting``: load, check and time the later plans other helpers have stored,
        in heuristic order as they come (their rows are handed out in heuristic order all the same)."""
        later = [r for r in self.records if r.rank is not None and waiting.rank is not None
                 and r.rank > waiting.rank and r.status == "not_built"]
        while later and handed.pending(waiting.name):
            with self.phases("parallel_wait"):
                ready = set(handed.ready(waiting.name, [r.name for r in later], timeout=handed.deadline_s))
            ahead = [r for r in later if r.name in ready]
            if not ahead:
                return
            record = ahead[0]
            later.remove(record)
            self.ahead.append(record.name)
            self.say(waiting.rank or 0, len(self.records), f"timing {record.name} while {waiting.name} builds")
            if self.build(record):
                self.time(record)

    def check(self, record: PlanRecord) -> None:
        """A built plan's support on this GPU: its workspace must fit (ResourceError naming it, as before a run)."""
        if record.plan is not None and record.plan.check_support():
            self.sess.ensure_workspace(record.plan.workspace_size())

    def time(self, record: PlanRecord) -> None:
        """Check a built plan's numbers, then time it; a repeat in this process reuses the plan's check and time
        (same inputs, same timing) unless ``resample`` asks again."""
        sess, key = self.sess, ("plan", record.name, self.topts, self.options.check)
        if not self.options.resample and key in sess.memo:
            (record.status, record.error), kept, record.timing = sess.memo[key]
            record.measured = {**kept, "reused": True}
        else:
            plan = record.plan
            assert plan is not None  # timed only after build() returned True, which needs a plan
            (record.status, record.error), record.measured, record.timing = measure_plan(
                self.spec, plan, sess, self.timer, self.phases, self.best_ms)
            record.measured["reused"] = False
            if record.status == "ok":
                sess.memo[key] = ((record.status, record.error), dict(record.measured), record.timing)
        median = record.measured.get("median_ms")
        if record.status == "ok" and median and (self.best_ms is None or median < self.best_ms):
            self.best_ms = median

    def plans(self) -> Generator[dict[str, Any], None, None]:
        """Build, check and time each plan in heuristic order, yielding its row (``preview``) as soon as it has
        one: the heuristics' first choice first. The heuristic policy stops building at the first plan that builds
        (what cuDNN itself would run); the rest are not built."""
        import torch

        total, picked = len(self.records), False
        with torch.cuda.device(self.options.device):
            for i, record in enumerate(self.records):
                if self.stopped is not None:
                    return
                if not picked and record.status == "not_built":  # else built and timed while the run waited
                    self.say(i, total, f"building {record.name}")
                    if self.build(record):
                        picked = self.options.plans == "heuristic"
                        self.say(i, total, f"timing {record.name}")
                        self.time(record)
                record.shown = True
                yield self.preview(record)
                if self.stop is not None and self.stop():
                    self.halt(f"stop asked after {i + 1} of {total} plans")
        self.end_prebuild()
        self.save_kernel_cache()
        self.refuse_empty_carve_out()

    def ceilings(self) -> None:
        """The roofline ceilings for the spec's data type (measured once per GPU and kept; ``roofline=False``:
        none)."""
        with self.phases("ceilings"):
            if self.options.roofline:
                self.ceil = measure_ceilings(ceiling_dtype(self.spec.dtype), self.options.device,
                                             refresh=self.options.remeasure_ceilings)

    def kernels(self) -> None:
        """Kernels (CUPTI) of the plans that ran (asked apart from notes so that each one's cost shows in phase_s)."""
        with self.phases("kernels"):
            if self.options.kernels:
                self._anatomy(self.options.replace(notes=False))

    def notes(self) -> None:
        """Numerical notes and determinism of the plans that ran."""
        with self.phases("notes"):
            if self.options.notes:
                self._anatomy(self.options.replace(kernels=False))

    def explore(self) -> None:
        """Configurations beyond the proposals (``explore``): built, checked and timed within its time budget."""
        if not self.options.explore:
            return
        spec, sess = self.spec, self.sess

        def measure(e: PlanEntry) -> tuple[tuple[str, str], dict[str, Any]]:
            status, cols, _ = measure_plan(spec, FrontendPlan(e, sess), sess, self.timer)
            return status, cols

        with self.phases("explore"):
            self.explored, self.space, self.explored_histograms = anatomy.explore_rows(
                spec, self.options, sess, [e.name for e in sess.entries], measure, plan_row, self.progress_call,
                self.info.get("cudnn_backend"))
        if self.space.get("error"):
            self.warnings.append(f"Engine space {self.space['error']}")

    def baseline(self) -> None:
        """PyTorch's latency for the same op (``baselines``), once per session unless ``resample``."""
        built = sum(r.built for r in self.records)
        self.say(built, built, "PyTorch baseline" if self.options.baselines else "done")
        if not self.options.baselines:
            return

        key, sess = ("torch", self.topts, self.options.backends), self.sess
        with self.phases("baseline"):
            if self.options.resample or key not in sess.memo:
                sess.memo[key] = torch_baseline(self.spec, sess.inputs, self.timer, backends=self.options.backends)
        self.torch_info = dict(sess.memo[key])

    def with_rows(self) -> list[PlanRecord]:
        """The records that have a row: handed out, or measured ahead (a stopped run keeps those too)."""
        return [r for r in self.records if r.shown or r.name in self.ahead]

    def rows(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Every plan row handed out (a stopped run: those it reached, and those it measured ahead while it waited
        for a helper: nothing measured is lost) then the explored ones, and the error histograms of the plans that
        were checked."""
        shown = self.with_rows()
        histograms = {r.name: r.measured.pop("_histogram") for r in shown if "_histogram" in r.measured}
        rows = [r.row() for r in shown] + self.explored
        histograms.update(self.explored_histograms)
        finish_rows(rows, self.sess.loaded, self.info.get("cudnn_backend"))
        return rows, histograms

    def finish(self) -> dict[str, Any]:
        """The steps after the plans (none once stopped; a step interrupted stops the run there), then the records
        (``cudnn_lab.results.RECORD_KEYS``)."""
        import torch

        with torch.cuda.device(self.options.device):
            self.save_kernel_cache()
            for step in FINISH_STEPS:
                if self.stopped is None and self.stop is not None and self.stop():
                    self.halt(f"stop asked before {step}")
                if self.stopped is not None:
                    break
                try:
                    getattr(self, step)()
                except KeyboardInterrupt:
                    self.halt(f"interrupted during {step} (KeyboardInterrupt)")
        return self.record()

    # ------------------------------------------------------------------------------------------------ helpers

    def halt(self, why: str) -> None:
        """Stop the run where it is (the first reason is kept); queued GPU work is waited for."""
        if self.stopped is None:
            self.stopped = why
        try:
            import torch

            torch.cuda.synchronize(self.options.device)
        except Exception:  # noqa: BLE001 - an interrupted capture may leave an error behind: what ran is kept
            pass

    @property
    def progress_call(self) -> Progress | None:
        """The progress callback as ``(done, total, message)``, if the caller gave a callable."""
        return self.progress if callable(self.progress) else None

    def say(self, done: int, total: int, message: str) -> None:
        if self.progress_call is not None:
            self.progress_call(done, total, message)

    def preview(self, record: PlanRecord) -> dict[str, Any]:
        """The row a caller sees as soon as a plan is measured (anatomy columns come with the final rows)."""
        row = {k: v for k, v in record.row().items() if k != "_histogram"}
        finish_rows([row], self.sess.loaded, self.info.get("cudnn_backend"))
        return row

    def start_helpers(self) -> None:
        """Decide the helpers of this run (``parallel_builds``: 'auto', True, a count or off; gpu/defaults.py) and
        start them; a count or True that cannot be honoured is said once in the warnings."""
        spec, options = self.spec, self.options
        asked = options.parallel_builds
        off = asked is None or asked is False or asked == 0
        skip = "" if off else skip_reason(spec, options)[1]
        unbuilt = unbuilt_in_process(spec, options) if asked == "auto" and not skip else None
        decision = self.decisions["parallel_builds"] = decide_parallel_builds(spec, options, skip, unbuilt=unbuilt)
        if not decision.used:
            if not off and asked != "auto":  # set by hand and not honoured: the run goes on, said once
                workers = asked if isinstance(asked, int) and not isinstance(asked, bool) else 0
                self.parallel_build = {"workers": workers, "helpers": 0, "built": 0, "skipped": skip}
                self.warnings.append(f"parallel_builds={asked!r} was not used: {skip}; the run built its plans in "
                                     f"its own process.")
            return
        if asked == "auto" and not pool_warm(options.device):  # started once the plans show it pays
            self.deferred_helpers = int(decision.used)
            return
        # 'auto', a warm pool, not more known plans than helpers: a helper builds the pick too, and the run loads
        # and times what the helpers store (a compile here would hold the GIL)
        every = unbuilt is None or int(decision.used) >= unbuilt
        self.launch_helpers(int(decision.used), leave=0 if asked == "auto" and every else 1)

    def launch_helpers(self, workers: int, plans: list[str] | None = None, leave: int = 1) -> None:
        """Start ``workers`` helpers building this run's plans (``plans``: its proposals where known) but the first
        ``leave``, which the run builds itself."""
        auto = self.options.parallel_builds == "auto"
        with self.phases("parallel_build"):
            started = parallel_prebuild_async(self.spec, self.options, self.info, plans, workers=workers,
                                              deadline_s=AUTO_PLAN_DEADLINE_S if auto else PLAN_DEADLINE_S,
                                              eager=auto, leave=leave)
        if isinstance(started, AsyncPrebuild):
            self.prebuild = started
        elif started is not None:
            self.parallel_build = started

    def let_go_of_helpers(self, sess: Any, entries: list[PlanEntry]) -> None:
        """'auto' stops waiting for helpers once the session shows they would not pay: its plans were recalled
        from the plan cache, or at most one is left to build (the run builds the pick itself)."""
        if self.options.parallel_builds != "auto":
            return
        if self.deferred_helpers:  # a cold pool: started now, where the plans show it pays
            why = worth_starting(entries, bool(getattr(sess, "recalled", False)))
            if not why:
                n = min(self.deferred_helpers, len(entries) - 1)
                self.decisions["parallel_builds"] = Decision(
                    "parallel_builds", "auto", n, f"auto: {n} helpers, started once the plans showed they pay (the "
                    f"process's pool was cold; kept warm for later runs)")
                self.launch_helpers(n, [e.name for e in entries])
                return
            self.decisions["parallel_builds"] = Decision("parallel_builds", "auto", 0, why)
            return
        if self.prebuild is None:
            return
        unbuilt = sum(e.built is None for e in entries)
        why = ("auto: off, the plans were recalled from the plan cache (the heuristics cache held the graph's "
               "proposals)" if getattr(sess, "recalled", False)
               else f"auto: off, {unbuilt} plan(s) to build" if unbuilt <= 1 else "")
        if why:
            self.parallel_build = self.prebuild.abandon(why)
            self.prebuild = None
            self.decisions["parallel_builds"] = Decision("parallel_builds", "auto", 0, why)

    def settle_prebuild(self, timeout: float) -> None:
        """The helpers' report as ``settings["parallel_build"]`` (waiting up to ``timeout`` s for them to finish;
        once per run)."""
        if self.prebuild is not None and self.parallel_build is None:
            self.parallel_build = self.prebuild.report(timeout).to_dict()

    def end_prebuild(self) -> None:
        """The helpers' report once every plan went through the run (phase ``helpers_end``). A run that asked for
        helpers and waited for one of them waits for them to finish (its report is whole); an eager run ('auto')
        does not: every plan is handed over or built, and what helpers still do (starting, building plans the run
        built itself) goes on in the background (waiting for a cold pool to start could cost a run seconds)."""
        handed = self.prebuild
        if handed is None:
            return
        with self.phases("helpers_end"):
            if handed.eager and self.parallel_build is None:
                report = handed.report(0.0, overtaken=True)
                self.parallel_build = report.to_dict() if report.built or handed.finished else handed.abandon(
                    "auto: the run built every plan itself before its helpers handed any over (they were starting or "
                    "busy; kept warm for later runs)")
            else:
                self.settle_prebuild(handed.deadline_s if self.waited_for_helpers else 0.0)

    def save_kernel_cache(self) -> None:
        """Keep what this run compiled in cuDNN's kernel cache, for later runs and processes (once per run)."""
        if self.kernel_cache is not None and self.sess.kernel_cache is not None and not self.kernels_saved:
            self.kernels_saved = True
            with self.phases("build"):
                self.kernel_cache.save()

    def refuse_empty_carve_out(self) -> None:
        """UnsupportedGraphError when a carve-out ran to its end and no proposed plan built under it."""
        if self.options.sm_count is None or self.stopped is not None or any(r.built for r in self.records):
            return
        status = {r.name: (r.status, r.error) for r in self.records}
        raise refused_on_carve_out(self.spec, [r.entry for r in self.records], status, self.options.sm_count,
                                   self.info)

    def _anatomy(self, options: RunOptions) -> None:
        built = [r.entry for r in self.records if r.built]
        ran = {r.name for r in self.records if r.status == "ok"}
        anatomy.kernel_and_note_columns(self.spec, options, self.sess, built, ran,
                                        {r.name: r.measured for r in self.records}, self.warnings,
                                        self.progress_call)

    def run_notes(self) -> None:
        """The warnings read from the measured plans: reused, timed by CUPTI, screened, capped."""
        topts, options, measured = self.topts, self.options, [r.measured for r in self.with_rows()]
        if reused := sum(bool(m.get("reused")) for m in measured):
            self.warnings.append(f"{reused} plan(s) reused their check and time from an earlier run of this spec "
                                 f"in this process (column 'reused'); pass resample=True to measure them again.")
        if by_cupti := sum(m.get("_replay_ms") is not None for m in measured):
            self.warnings.append(
                f"{by_cupti} plan(s) ran under {topts.cupti_below_ms * 1e3:.0f} us per call: timing 'auto' reports "
                f"their CUPTI kernel time (timing_mode 'cupti'); inside a replayed CUDA graph each kernel adds a gap "
                f"that is a large share of so short a call (see replay_over_kernel).")
        if screened := sum(bool(m.get("screened")) for m in measured):
            self.warnings.append(
                f"{screened} plan(s) ran over {options.screen_ratio:g}x slower than the best plan timed before them "
                f"in warm-up: each got {topts.screen_samples} event samples, not sampling to the spread target "
                f"(column 'screened'; screen_ratio=0 samples every plan fully).")
        if capped := sum(bool(m.get("capped")) for m in measured):
            self.warnings.append(f"{capped} plan(s) hit the {options.time_cap_s} s time cap before IQR/median fell "
                                 f"below {options.rel_iqr_target:.0%}: their medians are less certain (see 'capped' "
                                 f"and 'iqr_ms').")

    def record(self) -> dict[str, Any]:
        """The run's plain records: rows, device, baseline, ceilings, settings (with ``partial`` and, when
        stopped, ``stopped``: why), warnings, histograms and the engine space."""
        t_records = time.perf_counter()
        self.settle_prebuild(0.0)  # a stopped run does not wait for the helpers: their plans stay in the plan cache
        self.run_notes()
        rows, histograms = self.rows()
        partial = self.stopped is not None
        if partial:
            self.warnings.append(f"Partial run: {self.stopped}; {len(rows)} of {len(self.sess.entries)} proposed "
                                 f"plans have rows, and the steps after them did not run.")
        quantization = {} if partial else _quantization(self.spec, self.sess, self.options.seed)
        kernel_facts = kernel_cache_facts(self.kernel_cache, self.sess, rows, self.warnings)
        self.phases.add("records", time.perf_counter() - t_records)
        settings = {**self.options.to_dict(), "proposed": len(self.sess.entries),
                    "plan_cache_stats": self.cache.summary(), "proposals_recalled": self.sess.recalled,
                    **quantization, **kernel_facts, "partial": partial,
                    **({"parallel_build": self.parallel_build} if self.parallel_build is not None else {}),
                    "decisions": {k: d.to_dict() for k, d in self.decisions.items()},
                    **({"stopped": self.stopped} if partial else {}),
                    "phase_s": self.phases.record(time.perf_counter() - self.t_start)}
        return {"plans": rows, "device": dict(self.info), "torch": self.torch_info,
                "ceilings": self.ceil.to_dict() if self.ceil else {}, "settings": settings,
                "warnings": self.warnings, "histograms": histograms, "engine_space": self.space,
                "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _quantization(spec: Spec, sess: Any, seed: int) -> dict[str, Any]:
    """``{"quantization": ...}`` for an FP8 problem: what quantizing its inputs cost, per input and in the output
    (reference.quantization_report), computed once per (spec, seed) in this process (gpu.fp8.quantization_figures);
    nothing otherwise."""
    report = quantization_figures(spec, sess.inputs, seed)
    return {"quantization": report} if report else {}


def _kernel_cache(options: RunOptions, info: dict[str, Any]) -> Any:
    """The process's kernel cache for this GPU and cuDNN (gpu/cache.KernelCache) when the run asks for it, else
    None (``kernel_cache`` None means off for a single run; sweeps over one dimension turn it on)."""
    if not options.kernel_cache:
        return None

    return kernel_cache_for(info)


def kernel_cache_facts(kernels: Any, sess: Any, rows: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    """``{"kernel_cache_run": ...}`` for a run made with cuDNN's kernel cache: where the cache came from, whether it
    is kept on disk, and the heuristics' order without it (``order_without``) with the first plan of it that ran here
    (``pick_without``); one warning says the pick may have changed and which plan it would have been. Nothing for
    other runs."""
    if kernels is None:
        return {}
    if sess.kernel_cache is None:
        notes.append("kernel_cache=True was not used: this family runs through a classic cuDNN call, which takes no "
                     "kernel cache.")
        return {"kernel_cache_run": {"used": False}}
    order = sess.order_without_kernel_cache
    ran = {r["plan"] for r in rows if r.get("status") == "ok"}
    # the plan the heuristics would have run first without the cache: its first plan that ran here
    without = next((n for n in order if n in ran), order[0]) if order else None
    facts = {"used": True, **kernels.summary(), "pick_without": without, "order_without": order}
    if not kernels.kept_on_disk and kernels.why_not_kept:
        facts["kept"] = f"in this process only ({kernels.why_not_kept})"
    where = ("without it the heuristics' order is unknown" if without is None
             else f"without it the heuristics' pick would have been {without}")
    held = f", {facts['entries']} entries" if facts.get("entries") is not None else ""
    origin = "loaded from disk" if facts["source"] == "disk" else "made in this process"
    notes.append(f"Ran with cuDNN's kernel cache (kernel_cache=True, {origin}{held}): it can change the heuristics' "
                 f"pick; {where} (settings['kernel_cache_run']).")
    return {"kernel_cache_run": facts}


def check_sm_count(spec: Spec, sm_count: int | None, info: dict[str, Any]) -> None:
    """OptionError naming sm_count for a carve-out this run cannot make: a family that runs through a classic call
    (on the whole GPU), or more SMs than the GPU has (naming its count)."""
    if sm_count is None:
        return

    check_carve_out(spec, sm_count)
    total = info.get("sm_count")
    if isinstance(total, int) and sm_count > total:
        raise OptionError("sm_count", sm_count, f"must be at most this GPU's SM count: {info.get('gpu', 'the GPU')} "
                          f"has {total} SMs (sm_count=None runs on the whole GPU)")


def carve_out_note(options: RunOptions, info: dict[str, Any]) -> str:
    """The warning every carve-out run carries: what was scaled and what was not."""
    total = info.get("sm_count")
    of = f" of the GPU's {total}" if total else ""
    return (f"Ran on {options.sm_count}{of} SMs (sm_count={options.sm_count}, an SM carve-out): only the compute "
            f"share is scaled; memory bandwidth and L2 are the whole GPU's, and so are the roofline ceilings "
            f"(pct_of_ceiling) and PyTorch's baseline, which take no carve-out.")


#: Plans whose failed build is asked again for cuDNN's whole message when a carve-out builds none (each fails fast).
MAX_FULL_ERRORS = 8


def _whole_error(entry: PlanEntry) -> str | None:
    """cuDNN's whole message for a plan whose build failed (the plan table keeps its first 300 characters on one
    line): the build is asked once more; None where that cannot be done or it builds now."""
    if entry.recalled or entry.index < 0 or not hasattr(getattr(entry.graph, "pygraph", None), "build_plan_at_index"):
        return None
    try:
        entry.graph.pygraph.build_plan_at_index(entry.index)
    except Exception as e:  # noqa: BLE001 - the refusal itself is what is wanted
        return str(e).strip() or None
    return None


def refused_on_carve_out(spec: Spec, entries: list[PlanEntry], status: dict[str, tuple[str, str]], sm_count: int,
                         info: dict[str, Any]) -> Exception:
    """The UnsupportedGraphError of a carve-out under which no proposed plan built: its detail is cuDNN's error for
    each plan (whole for the first :data:`MAX_FULL_ERRORS`, asked again; else the line the plan table records), its
    summary how many plans were refused and why: ``why_not.summarize`` of the detail, else by ``why_not``'s
    categories of each plan's error (carve-out: the engine runs only on the whole GPU)."""
    failed = [(e.name, _whole_error(e) if i < MAX_FULL_ERRORS else None, status[e.name][1])
              for i, e in enumerate(e for e in entries if status.get(e.name, ("", ""))[0] == "build_failed")]
    # cuDNN's whole message where it could be had again (its per-engine reasons), else the line the table records
    detail = "\n".join(f"{name}: {whole or error}" for name, whole, error in failed)
    cats = [category_of("", whole or error) for _, whole, error in failed]
    counts = {c: cats.count(c) for c in CATEGORIES if c in cats}
    why = summarize(detail)
    if not why and counts:
        why = (f"cuDNN refused {len(failed)} plan{'s' * (len(failed) != 1)}: "
               + "; ".join(f"{counts[c]} by {c} ({CATEGORIES[c]})" for c in CATEGORIES if c in counts) + ".")
    total = info.get("sm_count")
    of = f" of the GPU's {total}" if total else ""
    summary = (f"No plan of {spec.label()} could be built on {sm_count}{of} SMs (sm_count={sm_count}, an SM "
               f"carve-out). {why}").strip()
    return UnsupportedGraphError(summary, detail=detail, device=str(info.get("gpu", "")),
                                 cudnn_version=str(info.get("cudnn_backend", "")),
                                 hint=" Run it on the whole GPU (sm_count=None), or try another layout, data type "
                                      "or size.")
