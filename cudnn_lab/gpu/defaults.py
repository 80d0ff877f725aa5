"""Fast by default (issue 36): what a run uses when its options leave it to the kit (``parallel_builds='auto'``,
``kernel_cache=None``), decided per run from what is known before it builds, and recorded in the result
(``settings["decisions"]``: each option's asked value, what was used and why); and :func:`warm`, what a Lab on a GPU
starts in the background so that a first Run finds torch, CUDA, the frontend's engine family, the check's kernels
and the helpers ready.

The rules, from the measurements (``docs/FINDINGS.md``, ``../shared/GPU_FACTS.md``):

- **Parallel builds** pay when a run has several plans to compile (rmsnorm's 26 plans: 12.2 s in one process, 2.2 s
  with 8 warm helpers) and cost a helper's start (4.3-5.3 s, once per process, in the background) and its cores. So
  'auto' uses them for a frontend graph with all plans asked (``plans='all'``, ``max_plans`` not 1), the plan cache on
  (the hand-over), no kernel cache, at least :data:`MIN_SPARE_CORES` cores to spare (the run's own process keeps one),
  and plans not built before in this process; with ``min(MAX_AUTO_HELPERS, spare - 1, plans to build)`` helpers,
  from the process's one pool (started once, kept warm). A warm pool starts with the run (the helpers list the plans
  while the run makes its inputs) and builds the heuristics' pick too (unless the process's session shows more plans
  to build than helpers): the run loads and times what the helpers store as it comes, so no compile holds its path.
  A cold pool starts only once the run's plans show it pays (two or more to build beside the pick, not recalled from
  the plan cache, some compiled at run time), and the run builds plans itself while it
  starts. Where the plans turn out recalled or only one is left to build, the run stops waiting for the helpers.
  A helper that hangs is given :data:`AUTO_PLAN_DEADLINE_S` (not the 120 s a run that asked for helpers waits).
- **cuDNN's kernel cache** pays where shapes share a runtime-compiled kernel: a sweep over one dimension (a 6-shape
  GEMM sweep 3.2-3.9x faster; a shape sharing a cached kernel rebuilt in 6 ms instead of 0.4-0.95 s), where the
  sweep turns it on. A single run's plans are distinct kernels; the cache would change the heuristics' pick (it did
  for a GEMM) and keep its plans from the helpers, so 'auto' leaves it off there. When it is used the result says so
  (``settings["kernel_cache_run"]`` and a warning naming the pick it may have changed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..options import AUTO, RunOptions
from .build_pool import _POOLS, pool_for
from .device import kit_thread, start_device
from .execution import warm_check
from .frontend import warm_engine_family
from .kernels import FIRST_SESSION, import_torch_here, start_cupti
from .session import _SESSIONS

__all__ = ["Decision", "MIN_SPARE_CORES", "MAX_AUTO_HELPERS", "AUTO_PLAN_DEADLINE_S", "usable_cores", "spare_cores",
           "auto_helpers", "env_cap", "ENV_AUTO_HELPERS",
           "decide_parallel_builds", "decide_kernel_cache", "unbuilt_in_process", "pool_warm", "worth_starting",
           "warm", "warm_async", "warm_state"]

#: 'auto' uses helpers only where at least this many cores are spare (the run's own process keeps one).
MIN_SPARE_CORES = 4
#: Most helpers 'auto' starts (at most the spare cores less one). On an H200 host of 16 cores (2026-11-29) 14 took
#: the default-options rmsnorm from 3.31 s (8) to 2.90 s, DenseNet conv + concatenate 3.94 -> 3.22 s, GPT-2 layernorm
#: 1.83 -> 1.24 s, with the same warm-up (5.9 s in the background): plans that compile for a second each come in
#: fewer rounds.
MAX_AUTO_HELPERS = 14
#: Seconds a run made with 'auto' waits for a silent helper (per plan) before building the plan itself.
AUTO_PLAN_DEADLINE_S = 30.0
#: Environment variable capping the helpers 'auto' starts in this process (0: none), for hosts where several kit
#: processes share the cores (a test suite's workers, a sweep's GPU workers); a number set by hand is not capped.
ENV_AUTO_HELPERS = "CUDNN_LAB_AUTO_HELPERS"


def env_cap() -> int | None:
    """The cap :data:`ENV_AUTO_HELPERS` sets (None: unset or not a whole number >= 0, which is ignored)."""
    text = os.environ.get(ENV_AUTO_HELPERS, "").strip()
    return int(text) if text.isdigit() else None


@dataclasses.dataclass(frozen=True)
class Decision:
    """What a run did with one option: the value asked (``asked``: as given, 'auto' or None where the kit decides),
    what was used (helpers: a count; kernel cache: True/False) and why, in words."""

    option: str
    asked: Any
    used: Any
    why: str

    def to_dict(self) -> dict[str, Any]:
        """For ``settings["decisions"][option]`` (plain JSON)."""
        return {"asked": self.asked, "used": self.used, "why": self.why}


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the OS says, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def spare_cores(cores: int | None = None) -> int:
    """Cores left beside the run's own process (``cores``: the usable cores, default :func:`usable_cores`)."""
    return max(0, (usable_cores() if cores is None else int(cores)) - 1)


def auto_helpers(spare: int, plans: int | None = None) -> int:
    """Helpers 'auto' uses with ``spare`` cores and ``plans`` plans to build (None: not known yet): none below
    :data:`MIN_SPARE_CORES`, else ``min(MAX_AUTO_HELPERS, spare - 1, plans)``."""
    if spare < MIN_SPARE_CORES:
        return 0
    n = min(MAX_AUTO_HELPERS, spare - 1, MAX_AUTO_HELPERS if env_cap() is None else env_cap() or 0)
    return max(0, min(n, plans) if plans is not None else n)


def unbuilt_in_process(spec: Any, options: RunOptions) -> int | None:
    """Plans of the session this run would reuse that are not built yet (None: no such session in this process)."""
    for key, sess in list(_SESSIONS.items()):
        extra = dict(x for x in key[5:] if isinstance(x, tuple) and len(x) == 2)
        if (key[0] == spec and key[1] == tuple(options.heuristics) and key[2] == options.device
                and key[3] == options.seed and key[4] == options.check and "kernel_cache" not in extra
                and extra.get("sm_count") == options.sm_count):
            entries = sess.entries[:options.max_plans] if options.max_plans is not None else sess.entries
            return sum(getattr(e, "built", None) is None for e in entries)
    return None


def decide_parallel_builds(spec: Any, options: RunOptions, skip: str = "", *, cores: int | None = None,
                           unbuilt: int | None = None) -> Decision:
    """How many helpers this run uses, and why. ``skip``: why helpers cannot help this run at all
    (``parallel_build._skip_reason``: a classic call, the kernel cache, the plan cache off, ...; '' where they can);
    ``unbuilt``: plans of this process's session still to build (None: no session yet)."""
    asked = options.parallel_builds
    if asked is None or asked is False or asked == 0:
        return Decision("parallel_builds", asked, 0, f"off, as asked (parallel_builds={asked!r})")
    spare = spare_cores(cores)
    if asked is True or isinstance(asked, int):
        n = max(1, min(MAX_AUTO_HELPERS, spare - 1)) if asked is True else int(asked)
        if skip:
            return Decision("parallel_builds", asked, 0, f"asked for ({asked!r}) but not used: {skip}")
        return Decision("parallel_builds", asked, n, f"as asked (parallel_builds={asked!r}: {n} helpers)")
    assert asked == AUTO, asked
    if skip:
        return Decision("parallel_builds", asked, 0, f"auto: off, {skip}")
    if options.max_plans == 1:
        return Decision("parallel_builds", asked, 0, "auto: off, one plan to build (max_plans=1)")
    if unbuilt is not None and unbuilt <= 1:
        return Decision("parallel_builds", asked, 0, f"auto: off, {unbuilt} plan(s) left to build: the others were "
                        f"built earlier in this process")
    n = auto_helpers(spare, None if unbuilt is None else unbuilt - 1)  # the run builds the pick itself
    if n == 0 and env_cap() == 0:
        return Decision("parallel_builds", asked, 0, f"auto: off, {ENV_AUTO_HELPERS}=0 in this process's "
                        f"environment")
    if n == 0:
        return Decision("parallel_builds", asked, 0, f"auto: off, {spare} core(s) to spare beside the run: helpers "
                        f"need {MIN_SPARE_CORES} (parallel_builds=N forces N)")
    return Decision("parallel_builds", asked, n, f"auto: {n} helpers ({spare} cores to spare; the pool is started "
                    f"once per process and kept warm)")


def pool_warm(device: int = 0) -> bool:
    """Whether this process's helper pool for ``device`` has a started, ready helper (then 'auto' starts its helpers
    with the run; else only once the run's plans show they pay: :func:`worth_starting`)."""
    pool = _POOLS.get(int(device))
    return pool is not None and any(h.alive() and h.ready for h in pool.helpers)


def worth_starting(entries: list[Any], recalled: bool = False) -> str:
    """Why starting the helper pool for these plans (heuristic order; the first is the run's own) would not pay, ''
    where it would: plans recalled from the plan cache, fewer than two left to build beside the pick, or none of them
    compiled at run time (cuDNN's RUNTIME_COMPILATION note: the others build in milliseconds)."""
    if recalled:
        return "auto: off, the plans were recalled from the plan cache (the heuristics cache held the proposals)"
    rest = [e for e in entries[1:] if getattr(e, "built", None) is None]
    if len(rest) < 2:
        return f"auto: off, {len(rest)} plan(s) to build beside the pick"
    if not any("RUNTIME_COMPILATION" in tuple(getattr(e, "behavior_notes", ()) or ()) for e in rest):
        return ("auto: off, none of the plans is compiled at run time (they build in milliseconds); the helper pool "
                "was not started")
    return ""


def decide_kernel_cache(options: RunOptions, frontend: bool = True) -> Decision:
    """Whether this run gives its graphs cuDNN's kernel cache, and why (a sweep over one dimension has turned None
    into True before its runs: ``sweeps.runner.with_kernel_cache``). ``frontend``: the spec is a frontend graph."""
    asked = options.kernel_cache
    if asked is None:
        return Decision("kernel_cache", AUTO, False, "auto: off for a single run (its plans are distinct kernels; "
                        "the cache could change cuDNN's pick and keeps plans from the helpers); on for a sweep "
                        "over one dimension, whose shapes share kernels")
    if asked and not frontend:
        return Decision("kernel_cache", asked, False, "asked for but not used: this family runs through a classic "
                        "cuDNN call, which takes no kernel cache")
    return Decision("kernel_cache", asked, bool(asked), f"{'on' if asked else 'off'}, as asked or set by a sweep "
                    f"over one dimension (kernel_cache={asked!r})")


# ------------------------------------------------------------------------------------------------ a Lab's warm-up

_WARM_LOCK = threading.Lock()
#: What :func:`warm` has done in this process: its state ('idle', 'warming', 'ready', 'failed'), helpers ready,
#: seconds each step took, and why it stopped short.
_WARM: dict[str, Any] = {"state": "idle", "helpers": 0, "seconds": {}, "note": ""}


def warm_state() -> dict[str, Any]:
    """A copy of what :func:`warm` has done in this process (for the Run form's line)."""
    with _WARM_LOCK:
        return {**_WARM, "seconds": dict(_WARM["seconds"])}


def _set(**changes: Any) -> None:
    with _WARM_LOCK:
        _WARM.update(changes)


def warm(spec: Any = None, device: int = 0, options: RunOptions | None = None, *, cores: int | None = None) -> dict[
        str, Any]:
    """What a first Run needs, made ready now: torch and CUDA on ``device``, cuDNN, the frontend's engine family of
    ``spec``, the torch kernels of its check (where ``options`` check) and, where ``options`` leave parallel builds
    to the kit and the host has cores to spare, the helper pool. Quiet on failure (the Run does each of these
    itself when it needs them); returns :func:`warm_state`."""
    options = RunOptions.coerce(options)
    seconds: dict[str, float] = {}
    _set(state="warming", note="")
    try:
        t = time.perf_counter()
        with FIRST_SESSION if "torch" not in sys.modules else contextlib.nullcontext():
            loads_torch = import_torch_here()  # this thread ran torch's import (not merely asked for it first)
            import torch

            starting = start_device(device)
            import cudnn  # noqa: F401

            if starting is not None:
                starting.wait(60.0)
            if not torch.cuda.is_available():
                _set(state="failed", note="CUDA is not available")
                return warm_state()
            if loads_torch and options.kernels:  # the profiler's first session on the thread that loaded torch
                try:
                    seconds["cupti"] = start_cupti(device)
                except Exception:  # noqa: BLE001 - no CUPTI here: the run says so when it records kernels
                    pass
        seconds["torch_cuda"] = time.perf_counter() - t - seconds.get("cupti", 0.0)
        if spec is not None:
            t = time.perf_counter()
            warm_engine_family(spec)
            seconds["engine_family"] = time.perf_counter() - t
            if options.check:  # the check's torch kernels, loaded before a Run's first check needs them
                try:
                    seconds["check_kernels"] = warm_check(spec, device)
                except Exception:  # noqa: BLE001 - only a head start: the Run's own check loads them
                    pass
        asked = options.parallel_builds
        n = (auto_helpers(spare_cores(cores)) if asked == AUTO
             else max(1, min(MAX_AUTO_HELPERS, spare_cores(cores) - 1)) if asked is True
             else int(asked) if isinstance(asked, int) and not isinstance(asked, bool) else 0)
        helpers = 0
        if n:
            t = time.perf_counter()
            pool = pool_for(device)
            with pool.lock:
                ready, _, problems = pool.ensure(n)
            helpers = len(ready)
            seconds["helpers"] = time.perf_counter() - t
            if problems:
                _set(note=f"{len(problems)} helper(s) did not start: {problems[0][:160]}")
        else:
            _set(note=f"no helpers: {spare_cores(cores)} core(s) to spare" if asked == AUTO else "")
        _set(state="ready", helpers=helpers, seconds=seconds)
    except Exception as e:  # noqa: BLE001 - only a head start: the Run does the same when it needs it
        _set(state="failed", note=f"{type(e).__name__}: {' '.join(str(e).split())[:200]}", seconds=seconds)
    return warm_state()


def warm_async(spec: Any = None, device: int = 0, options: RunOptions | None = None,
               on_done: Callable[[dict[str, Any]], None] | None = None) -> threading.Thread:
    """:func:`warm` on a daemon thread, started now (a Lab on a GPU: the panel shows at once); ``on_done`` is called
    with its state when it ends (quietly: a failing callback is not the warm-up's concern)."""
    def body() -> None:
        state = warm(spec, device, options)
        if on_done is not None:
            try:
                on_done(state)
            except Exception:  # noqa: BLE001 - e.g. a closed widget
                pass

    return kit_thread(body, "cudnn_lab-warm")
