"""Parallel plan builds: warm helper processes on the same GPU host build a graph's proposed plans and hand them to
the run through the plan cache (``gpu/cache.py``).

Why processes: building one graph's plans from 8 threads of one process was no faster than from one; from 8
processes it was (``../shared/GPU_FACTS.md``: rmsnorm bf16 4096x4096, 24 plans, 11.5 s in one process, 0.63-0.90 s
in each of eight). A pool of helpers (:mod:`cudnn_lab.gpu.build_pool`: kit workers of the build role,
:mod:`cudnn_lab.gpu.build_role`) is started once per process and device and kept: each imports torch and cuDNN and
makes its CUDA context and cuDNN handle at start, so a later run finds it ready. This module is the scheduling.

:func:`prebuild` asks every helper for the graph's plan list (each builds the same graph from the spec and asks the
same heuristic modes), keeps the helpers whose list matches, gives each a round-robin share (the heuristics' first
choices first) and has it build its plans through :class:`~cudnn_lab.gpu.cache.RunCache` exactly as a run would:
same identity and keys, same rule for what is stored. The run proper then loads them from the plan cache and checks
each against the reference before its time is shown, as it does for any cached plan. A helper that dies, hangs past
the per-plan deadline, lists other plans or cannot build a plan is left out: those plans are built in the run's own
process as usual, one warning says so, and the pool starts a new helper next time.

A run uses the asynchronous form (:func:`start_prebuild`, :class:`AsyncPrebuild`): the helpers list the plans and
take every plan but the first ``leave`` (the heuristics' pick, which the run builds at once; with a warm pool and
``parallel_builds='auto'`` none is left) as each becomes free, while the run makes its inputs and reference; for
each plan the run waits for its helper (:meth:`AsyncPrebuild.wait`), loading and timing later plans that other
helpers have stored meanwhile (:meth:`AsyncPrebuild.ready`), loads it from the plan cache, or builds it itself
where the helper failed or ran out of time. Helpers run at a lower CPU priority (:data:`HELPER_NICE`) and build
at once (holding builds until the run had timed its pick measured worse: docs/FINDINGS.md). :func:`prebuild`
(blocking, round-robin shares) is for comparison.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

from .. import cache_dir
from .build_report import STATUSES, BuildReport, PlanBuild
from .build_pool import HELPER_NICE, START_DEADLINE_S, Helper, HelperPool, pool_for, pump, wait_lines
from .build_role import identity_fields, split_shares
from .workers.claims import TAKING, claim_owner
from .defaults import MAX_AUTO_HELPERS, auto_helpers, spare_cores
from .device import kit_thread
from .frontend import from_frontend_graph
from .session import require_gpu

__all__ = ["PlanBuild", "BuildReport", "HelperPool", "pool_for", "split_shares", "pool_size", "prebuild",
           "parallel_prebuild", "AsyncPrebuild", "start_prebuild", "parallel_prebuild_async", "PLAN_DEADLINE_S",
           "START_DEADLINE_S", "HELPER_NICE", "Helper", "skip_reason"]

#: A helper that has not answered for this long while building one plan (or listing the plans) is killed; its
#: remaining plans are built in the run's process.
PLAN_DEADLINE_S = 120.0


def pool_size(workers: int, plans: int, cores: int | None = None) -> int:
    """Helpers a prebuild uses: ``min(workers, plans, cores)`` (cores: this host's usable CPU cores)."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(0, min(int(workers), int(plans), int(cores)))


# ------------------------------------------------------------------------------------------------ prebuild

def prebuild(spec: Any, options: Any, workers: int, *, info: dict[str, Any] | None = None,
             plans: Sequence[str] | None = None, pool: HelperPool | None = None,
             deadline_s: float = PLAN_DEADLINE_S, cores: int | None = None) -> BuildReport:
    """Build ``spec``'s proposed plans (``options``' heuristic modes and carve-out) in up to ``workers`` warm helpers
    and put them into the plan cache as a run would; never raises for a helper's trouble (see the module's doc).

    ``plans``: the run's own proposals in heuristic order (a helper whose list differs is left out); None: the list
    most helpers agree on, cut to ``options.max_plans``. ``info``: the run's device record (a helper on another GPU
    or cuDNN is left out)."""
    t0 = time.perf_counter()
    pool = pool or pool_for(options.device)
    expected = list(plans) if plans is not None else None
    n = pool_size(workers, len(expected) if expected is not None else workers, cores)
    problems: list[str] = []
    with pool.lock:
        helpers, start_s, started_problems = pool.ensure(n)
        problems += started_problems
        if info is not None:
            for h in list(helpers):
                theirs = identity_fields((h.ready or {}).get("info") or {})
                if theirs != identity_fields(info):
                    problems.append(f"helper {h.index} runs on another GPU or cuDNN ({theirs}): left out")
                    helpers.remove(h)
        # 1. every helper lists the plans of the same graph; those that disagree are left out
        query = {"cmd": "propose", "spec": spec.to_dict(), "modes": list(options.heuristics),
                 "sm_count": options.sm_count, "cache_root": str(cache_dir.cache_root()),
                 "info": info}
        sent = [h for h in helpers if h.send(query)]
        problems.extend(f"helper {h.index} is gone" for h in helpers if h not in sent)
        helpers = sent
        answers = wait_lines(helpers, deadline_s, lambda m: "plans" in m or "error" in m)
        lists: dict[int, list[str]] = {}
        for h in helpers:
            answer = answers.get(h.index)
            if isinstance(answer, dict) and isinstance(answer.get("plans"), list):
                lists[h.index] = [str(p) for p in answer["plans"]]
            else:
                problems.append(_trouble(h, answer, deadline_s, "listing the plans"))
        if expected is None:
            candidates = [tuple(v) for v in lists.values()]
            best = max(candidates, key=candidates.count) if candidates else ()
            expected = list(best)[:options.max_plans] if options.max_plans is not None else list(best)
        agreeing = []
        for h in helpers:
            if h.index not in lists:
                continue
            if lists[h.index][:len(expected)] == expected:
                agreeing.append(h)
            else:
                problems.append(f"helper {h.index} proposed other plans ({len(lists[h.index])} plans, not the run's "
                                f"{len(expected)}): left out")
        agreeing = agreeing[:pool_size(len(agreeing), len(expected), cores)]
        # 2. each agreeing helper builds its share, answering plan by plan
        shares = split_shares(expected, len(agreeing))
        outcome: dict[str, PlanBuild] = {}
        for h, share in zip(agreeing, shares):
            if not h.send({"cmd": "build", "plans": share}):
                problems.append(f"helper {h.index} is gone")
        outcome.update(_collect(agreeing, shares, deadline_s, problems))
    builds = tuple(outcome.get(p, PlanBuild(p, -1, "missed")) for p in expected)
    report = BuildReport(workers=int(workers), helpers=len(agreeing), plans=builds,
                         wall_s=time.perf_counter() - t0, start_s=start_s, problems=tuple(problems))
    if problems or any(b.status in ("failed", "missed") for b in builds):
        _warn(report)
    return report


def _trouble(h: Helper, answer: Any, deadline_s: float, doing: str) -> str:
    """One problem line for a helper that did not answer as asked (and is killed: the pool replaces it)."""
    if answer == "timeout":
        h.kill()
        return f"helper {h.index} gave no answer within {deadline_s:g} s {doing}: killed"
    if isinstance(answer, dict) and answer.get("error"):
        return f"helper {h.index} failed {doing}: {str(answer['error'])[:200]}"
    how = h.how_it_ended()
    h.kill()
    return f"helper {h.index} died {doing} ({how})"


def _collect(helpers: list[Helper], shares: list[list[str]], deadline_s: float,
             problems: list[str]) -> dict[str, PlanBuild]:
    """Read each helper's per-plan answers until it says done, dies or misses the per-plan deadline (then it is
    killed and its remaining plans are 'missed': the run builds them)."""
    out: dict[str, PlanBuild] = {}
    pending = {h.index: list(share) for h, share in zip(helpers, shares)}
    finished: set[int] = set()

    def handle(h: Helper, message: dict[str, Any]) -> bool:
        if message.get("done"):
            finished.add(h.index)
            return True
        plan = message.get("plan")
        if plan in pending[h.index]:
            pending[h.index].remove(plan)
            status = str(message.get("status"))
            ms = message.get("build_ms")
            out[str(plan)] = PlanBuild(str(plan), h.index, status if status in STATUSES else "failed",
                                       float(ms) if isinstance(ms, (int, float)) else None,
                                       str(message.get("error") or "")[:300])
        return False

    timed_out = pump(helpers, deadline_s, handle)
    for h in helpers:
        if h.index not in finished:
            doing = f"building {pending[h.index][0]}" if pending[h.index] else "finishing"
            problems.append(_trouble(h, "timeout" if h.index in timed_out else None, deadline_s, doing))
        for plan in pending[h.index]:
            out[plan] = PlanBuild(plan, h.index, "missed")
    return out


_warned_lock = threading.Lock()


def _warn(report: BuildReport) -> None:
    """One warning per prebuild that met trouble: what went wrong, and that nothing is lost."""
    left = [p.plan for p in report.plans if p.status in ("failed", "missed")]
    said = "; ".join(report.problems[:4]) + (f"; and {len(report.problems) - 4} more" if len(report.problems) > 4
                                             else "")
    plans = (f"{len(left)} plan(s) ({', '.join(left[:3])}{', ...' if len(left) > 3 else ''}) were not built by a "
             f"helper: the run builds them in its own process as usual" if left
             else "the other helpers built every plan")
    warnings.warn(f"cudnn_lab: parallel builds went on without some help ({said or 'a helper could not build'}): "
                  f"{plans}, and nothing is lost. A helper that died or hung is started again next time "
                  f"(settings['parallel_build']).", RuntimeWarning, stacklevel=3)


#: Graphs whose plans were handed over in this process: (spec, modes, sm_count, device, plan cache root).
_DONE: set[tuple[Any, ...]] = set()


def parallel_prebuild(spec: Any, options: Any, info: dict[str, Any],
                      plans: Sequence[str] | None = None) -> dict[str, Any] | None:
    """What a run calls once before its build step: None when ``options.parallel_builds`` is off; NoGPUError without
    a usable GPU (before any helper starts); else the report (:class:`BuildReport`) as ``settings["parallel_build"]``,
    or ``{"skipped": why, ...}`` where helpers cannot help (no frontend graph, kernel cache, plan cache off, already
    handed over in this process). ``plans``: the run's proposals in heuristic order (recommended)."""
    workers = _workers(options)
    if not workers:
        return None
    key, why = _skip_reason(spec, options, plans)
    if why:
        return {"workers": int(workers), "helpers": 0, "built": 0, "skipped": why}
    report = prebuild(spec, options, int(workers), info=info, plans=plans)
    if report.built:
        _DONE.add(key)
    return report.to_dict()


def skip_reason(spec: Any, options: Any, plans: Sequence[str] | None = None,
                all_plans: bool = True) -> tuple[tuple[Any, ...], str]:
    """The graph's key (for :class:`AsyncPrebuild`'s ``key``) and why helpers cannot help this run ('' where they
    can); NoGPUError without a usable GPU. What ``gpu/defaults.decide_parallel_builds`` reads."""
    return _skip_reason(spec, options, plans, all_plans)


def _workers(options: Any) -> int:
    """The helper count of ``options.parallel_builds``: a number as given; True or 'auto' counted from the cores
    (``gpu/defaults``); off (None, False, 0): 0."""
    value = options.parallel_builds
    if value is True:
        return max(1, min(MAX_AUTO_HELPERS, spare_cores() - 1))
    if isinstance(value, str):
        return auto_helpers(spare_cores())
    return int(value or 0)


def _skip_reason(spec: Any, options: Any, plans: Sequence[str] | None,
                 all_plans: bool = False) -> tuple[tuple[Any, ...], str]:
    """The graph's key in :data:`_DONE` and why helpers cannot help this run ("" where they can); NoGPUError without
    a usable GPU. ``all_plans``: the run builds more than the pick only with ``plans='all'``."""
    require_gpu(options.device)
    key = (spec, tuple(options.heuristics), options.sm_count, options.device, str(cache_dir.cache_root()))
    why = ("its plans come from a classic cuDNN call, not a frontend graph" if not from_frontend_graph(spec)
           else "kernel_cache=True: plans built with cuDNN's kernel cache are built in the run's process"
           if options.kernel_cache
           else "plan_cache=False: helpers hand plans over through the plan cache" if not options.plan_cache
           else f"the plan cache is off ({cache_dir.disabled_reason() or 'CUDNN_LAB_NO_CACHE'})"
           if not cache_dir.cache_enabled()
           else "plans='heuristic' builds only the heuristics' pick, in the run's own process"
           if all_plans and options.plans != "all"
           else "this graph's plans were handed over earlier in this process" if key in _DONE
           else "no plans to build" if plans is not None and not plans else "")
    return key, why


# ------------------------------------------------------------------------------------------------ asynchronous

class AsyncPrebuild:
    """Helpers building a graph's plans while the run goes on: a thread starts them and reads their answers; the
    run asks plan by plan (:meth:`wait`) and for the report at its end (:meth:`report`). The first ``leave`` plans
    (the heuristics' pick) are left to the run; helper ``slot`` first builds plan ``leave + slot``, then a free
    helper takes the next plan no helper has (:mod:`~cudnn_lab.gpu.workers.claims`): dealt round-robin, one slow
    compile held up the plans dealt after it while other helpers idled (docs/FINDINGS.md)."""

    def __init__(self, spec: Any, options: Any, workers: int, *, info: dict[str, Any] | None = None,
                 plans: Sequence[str] | None = None, leave: int = 1, pool: HelperPool | None = None,
                 deadline_s: float = PLAN_DEADLINE_S, cores: int | None = None, key: tuple[Any, ...] | None = None,
                 eager: bool = False) -> None:
        self.t0 = time.perf_counter()
        #: the run builds a plan itself rather than wait while the helpers are still starting (parallel_builds='auto')
        self.eager = bool(eager)
        #: perf_counter when every helper had finished (None: still building)
        self.ended_at: float | None = None
        self.workers, self.leave, self.deadline_s = int(workers), max(0, int(leave)), float(deadline_s)
        self.max_plans = options.max_plans
        self._cond = threading.Condition()
        cut = list(plans) if plans is not None else None
        self._ref: list[str] | None = cut[:self.max_plans] if cut is not None and self.max_plans else cut
        self._slots: int | None = None
        self._slot_helper: dict[int, int] = {}  # slot -> helper index
        self._dead: set[int] = set()  # slots whose helper is gone or left out
        self._outcome: dict[str, PlanBuild] = {}
        self._problems: list[str] = []
        self._helpers = 0
        self._start_s = 0.0
        self._waited = 0.0
        self._finished = False
        self._warned = False
        self._key = key
        self._abandoned = ""
        self._listed: set[int] = set()  # slots whose helper has listed the plans
        self._claims: str | None = None  # the folder of the helpers' claims (None: no helper asked yet)
        self._thread = kit_thread(self._drive, "cudnn_lab-prebuild", spec, options, info,
                                  pool or pool_for(options.device), cores)

    # ---------------------------------------------------------------- the run's side

    def abandon(self, why: str) -> dict[str, Any]:
        """The run stops waiting for these helpers (its plans turned out recalled from the plan cache, or one is left
        to build): they finish in the background, what they store stays in the plan cache; the record the run keeps
        (``settings["parallel_build"]``: skipped, why)."""
        with self._cond:
            self._abandoned = why
        return {"workers": self.workers, "helpers": 0, "built": 0, "skipped": why}

    @property
    def finished(self) -> bool:
        """Every helper has finished, died or been cut off."""
        return self._finished

    def answered(self, name: str) -> bool:
        """Whether nothing is left to wait for about ``name``: the helpers finished, its helper answered, or no helper
        has it. Not answered: the run has its own work to do first (a helper may be listing or building the plan)."""
        with self._cond:
            return self._answered(name)

    def pending(self, name: str) -> bool:
        """Whether :meth:`wait` for ``name`` would block now (the run has time for other work first)."""
        with self._cond:
            return not self._answered(name) and not self._unlisted(name)

    def unlisted(self, name: str) -> bool:
        """Whether an eager run would build ``name`` itself now only because no helper that could has listed the
        plans yet (a run with work of its own does that first: by then a helper may be building the plan)."""
        with self._cond:
            return self._unlisted(name)

    def wait(self, name: str, timeout: float | None = None) -> PlanBuild | None:
        """Wait until ``name``'s helper has answered for it (at most ``timeout`` s); its :class:`PlanBuild`, or None
        at once for a plan no helper has (the pick, a plan the helpers did not list) and after a timeout (the run
        then builds it itself; said once in the report)."""
        t = time.perf_counter()
        with self._cond:
            if self._unlisted(name):  # its helper is not building it
                return None
            ok = self._cond.wait_for(lambda: self._answered(name), timeout)
            self._waited += time.perf_counter() - t
            if name in self._outcome:
                return self._outcome[name]
            if not ok:
                self._problems.append(f"the run waited {timeout:g} s for {name} and built it itself")
            return None

    def ready(self, name: str, later: Sequence[str], timeout: float | None = None) -> list[str]:
        """While the run waits for ``name``: those of ``later`` that helpers have stored in the plan cache (the run
        loads and times them meanwhile), waiting up to ``timeout`` s for one of them or for ``name``'s answer."""
        def stored() -> list[str]:
            return [p for p in later if (b := self._outcome.get(p)) is not None and b.status == "stored"]
        t = time.perf_counter()
        with self._cond:
            self._cond.wait_for(lambda: bool(stored()) or self._answered(name), timeout)
            self._waited += time.perf_counter() - t
            return stored()

    def report(self, timeout: float | None = None, *, overtaken: bool = False) -> BuildReport:
        """The prebuild's report (waits up to ``timeout`` s for the helpers to finish; plans still building then are
        'missed'); the one warning about trouble is given here, in the caller's thread. ``overtaken``: the run went
        through every plan and built itself those no helper had handed over (an eager run that did not wait for
        helpers still starting): they are 'left', not trouble, and the helpers finish in the background."""
        self._thread.join(timeout)
        with self._cond:
            ref = self._ref or []
            plans = tuple(self._outcome.get(p) or PlanBuild(p, -1, "left" if i < self.leave or overtaken else "missed",
                                                            error="" if self._finished or i < self.leave or overtaken
                                                            else "still building when the run ended")
                          for i, p in enumerate(ref))
            problems = list(self._problems)
            if not self._finished and not overtaken:
                problems.append("the helpers were still building when the run ended")
            report = BuildReport(workers=self.workers, helpers=self._helpers, plans=plans,
                                 wall_s=(self.ended_at or time.perf_counter()) - self.t0, start_s=self._start_s,
                                 problems=tuple(problems), waited_s=self._waited)
            warn = not self._warned and (bool(problems) or any(b.status in ("failed", "missed") for b in plans))
            self._warned = self._warned or warn
        if warn:
            _warn(report)
        return report

    # ---------------------------------------------------------------- the helpers' side (the thread)

    def _drive(self, spec: Any, options: Any, info: dict[str, Any] | None, pool: HelperPool,
               cores: int | None) -> None:
        """Start the helpers, send each its share and read their answers until all are done (the thread's body)."""
        helpers: list[Helper] = []
        try:
            wanted = max(0, len(self._ref) - self.leave) if self._ref is not None else self.workers
            n = pool_size(self.workers, wanted, cores)
            if n == 0:
                return
            with pool.lock:
                ready, start_s, problems = pool.ensure(n)
                with self._cond:
                    self._start_s = start_s
                    self._problems += problems
                for h in ready:
                    theirs = identity_fields((h.ready or {}).get("info") or {})
                    if info is not None and theirs != identity_fields(info):
                        with self._cond:
                            self._problems.append(f"helper {h.index} runs on another GPU or cuDNN ({theirs}): left out")
                    else:
                        helpers.append(h)
                with self._cond:
                    self._claims = tempfile.mkdtemp(prefix="cudnn_lab-claims-")
                    self._slots, self._helpers = len(helpers), len(helpers)
                    self._slot_helper = {slot: h.index for slot, h in enumerate(helpers)}
                query = {"cmd": "share", "spec": spec.to_dict(), "modes": list(options.heuristics),
                         "sm_count": options.sm_count, "cache_root": str(cache_dir.cache_root()), "info": info,
                         "leave": self.leave, "max_plans": self.max_plans, "slots": len(helpers),
                         "claims": self._claims}
                slot_of = {h.index: slot for slot, h in enumerate(helpers)}
                sent = []
                for slot, h in enumerate(helpers):
                    if h.send({**query, "slot": slot}):
                        sent.append(h)
                    else:
                        self._fail(slot, f"helper {h.index} is gone")
                self._read(sent, slot_of)
        except Exception as e:  # noqa: BLE001 - the run goes on without help
            with self._cond:
                self._problems.append(f"the helpers' thread failed: {type(e).__name__}: {' '.join(str(e).split())}")
        finally:
            self._end()

    def _answered(self, name: str) -> bool:
        """(Holding the lock.) Whether nothing is left to wait for about plan ``name``: the helpers finished, its
        helper answered, or no helper has it (the pick, a plan the helpers did not list)."""
        return (self._finished or name in self._outcome
                or (self._ref is not None and name not in self._ref[self.leave:]))

    def _unlisted(self, name: str) -> bool:
        """(Holding the lock.) :meth:`unlisted`: eager, no answer yet, and no listed helper to build ``name``."""
        return self.eager and not self._answered(name) and not self._listed_owner(name)

    def _listed_owner(self, name: str) -> bool:
        """(Holding the lock.) Whether the helper that has plan ``name`` has listed the plans (so builds its share
        now): an eager run waits only for such a helper, and builds the plan itself otherwise."""
        if self._slots is None or self._ref is None or name not in self._ref[self.leave:]:
            return False
        owner = self._owner(self._ref.index(name))
        if owner is None:  # not taken yet: the first listed helper to be free takes it
            return any(slot in self._listed and slot not in self._dead for slot in range(self._slots))
        return owner == TAKING or owner in self._listed

    def _fail(self, slot: int, problem: str = "") -> None:
        """Slot ``slot``'s helper builds nothing more: its plans without an answer are 'missed' (the run builds
        them)."""
        with self._cond:
            if problem:
                self._problems.append(problem)
            self._dead.add(slot)
            self._mark_dead()
            self._cond.notify_all()

    def _owner(self, i: int) -> int | None:
        """The slot building plan ``i >= leave`` of the list (claims.TAKING: being taken; None: not taken yet)."""
        return None if self._claims is None else claim_owner(self._claims, i - self.leave)

    def _mark_dead(self, ended: bool = False) -> None:
        """(Holding the lock.) Unanswered plans are 'missed' where their helper is gone (untaken ones: once every
        helper is) or, ``ended``, all of them."""
        if self._ref is None or not (self._slots or ended):
            return
        alive = any(slot not in self._dead for slot in range(self._slots or 0))
        for i, p in enumerate(self._ref[self.leave:], self.leave):
            if p in self._outcome:
                continue
            owner = self._owner(i)
            if ended or (not alive if owner is None else owner in self._dead):
                self._outcome[p] = PlanBuild(p, -1 if owner is None else self._slot_helper.get(owner, -1), "missed")

    def _read(self, helpers: list[Helper], slot_of: dict[int, int]) -> None:
        """Read every helper's listing and per-plan answers until each is done, dies, disagrees or times out."""
        listed: set[int] = set()
        finished: set[int] = set()
        left_out: list[Helper] = []

        def handle(h: Helper, message: dict[str, Any]) -> bool:
            slot = slot_of[h.index]
            with self._cond:
                if h.index not in listed:
                    if not isinstance(message.get("plans"), list):
                        if "error" not in message:
                            return False
                        listed.add(h.index)
                        finished.add(h.index)
                        self._problems.append(_trouble(h, message, self.deadline_s, "listing the plans"))
                        self._dead.add(slot)
                        self._mark_dead()
                        self._cond.notify_all()
                        return True
                    listed.add(h.index)
                    self._listed.add(slot)
                    names = [str(p) for p in message["plans"]]
                    names = names[:self.max_plans] if self.max_plans else names
                    if self._ref is None:
                        self._ref = names
                        self._mark_dead()
                    elif names != self._ref:
                        self._problems.append(f"helper {h.index} proposed other plans ({len(names)} plans, not the "
                                              f"run's {len(self._ref)}): left out")
                        left_out.append(h)  # killed after the pump: what it builds now goes under its own keys
                        finished.add(h.index)
                        self._dead.add(slot)
                        self._mark_dead()
                    self._cond.notify_all()
                    return h.index in finished
                if message.get("done"):
                    finished.add(h.index)
                    return True
                plan = message.get("plan")
                if plan in (self._ref or []) and plan not in self._outcome:
                    status, ms = str(message.get("status")), message.get("build_ms")
                    self._outcome[str(plan)] = PlanBuild(str(plan), h.index, status if status in STATUSES else "failed",
                                                         float(ms) if isinstance(ms, (int, float)) else None,
                                                         str(message.get("error") or "")[:300])
                    self._cond.notify_all()
                return False

        timed_out = pump(helpers, self.deadline_s, handle)
        for h in left_out:
            h.kill()
        for h in helpers:
            if h.index not in finished:
                doing = "building its plans" if h.index in listed else "listing the plans"
                self._fail(slot_of[h.index], _trouble(h, "timeout" if h.index in timed_out else None,
                                                      self.deadline_s, doing))

    def _end(self) -> None:
        """Every plan without an answer is 'missed'; wake the run; remember a graph whose plans were handed over."""
        with self._cond:
            self._mark_dead(ended=True)
            if self._claims is not None:  # a helper still running takes nothing more
                shutil.rmtree(self._claims, ignore_errors=True)
            self._finished = True
            self.ended_at = time.perf_counter()
            if self._key is not None and any(b.status == "stored" for b in self._outcome.values()):
                _DONE.add(self._key)
            self._cond.notify_all()


def start_prebuild(spec: Any, options: Any, workers: int, **kwargs: Any) -> AsyncPrebuild:
    """Start helpers building ``spec``'s plans (all but the first ``leave``, default 1) and return at once; keyword
    arguments as :class:`AsyncPrebuild`."""
    return AsyncPrebuild(spec, options, workers, **kwargs)


def parallel_prebuild_async(spec: Any, options: Any, info: dict[str, Any], plans: Sequence[str] | None = None, *,
                            workers: int | None = None, deadline_s: float = PLAN_DEADLINE_S, eager: bool = False,
                            leave: int = 1) -> AsyncPrebuild | dict[str, Any] | None:
    """What a run calls before making its session: None when ``options.parallel_builds`` is off; NoGPUError without
    a usable GPU (before any helper starts); ``{"skipped": why, ...}`` where helpers cannot help (as
    :func:`parallel_prebuild`, and for ``plans='heuristic'``); else a started :class:`AsyncPrebuild` (the first
    ``leave`` plans, the heuristics' pick, left to the run). ``plans``: the run's proposals in heuristic order where
    known (None: the helpers' list)."""
    workers = _workers(options) if workers is None else int(workers)
    if not workers:
        return None
    key, why = _skip_reason(spec, options, plans, all_plans=True)
    if why:
        return {"workers": int(workers), "helpers": 0, "built": 0, "skipped": why}
    return start_prebuild(spec, options, int(workers), info=info, plans=plans, leave=leave, key=key,
                          deadline_s=deadline_s, eager=eager)
