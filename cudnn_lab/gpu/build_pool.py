"""The pool of plan-building helpers: warm kit workers (:class:`cudnn_lab.gpu.workers.Worker`) of the build role
(:mod:`cudnn_lab.gpu.build_role`) for one GPU, started once per process and device, at a lower CPU priority
(:data:`HELPER_NICE`), and read together (:func:`pump`) while they stream their answers plan by plan. The scheduling
is :mod:`cudnn_lab.gpu.parallel_build`."""

from __future__ import annotations

import atexit
import selectors
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import WorkerError
from .build_role import DEVICE_ENV, TARGET
from .workers import Worker, worker_env

__all__ = ["Helper", "HelperPool", "pool_for", "pump", "wait_lines", "HELPER_NICE", "START_DEADLINE_S"]

#: Seconds a helper may take to start (import torch and cuDNN, make its CUDA context and handle).
START_DEADLINE_S = 120.0
#: How much a helper lowers its CPU priority (``os.nice``): the run's own process goes first on a busy host.
HELPER_NICE = 5


class Helper:
    """One helper (a :class:`Worker` of ``target``, launched at once) and what it sent; ``index``: its place in the
    pool. Its stream's end of each request reads as ``{"done": true}``, the role's uncaught error as ``{"error"}``."""

    def __init__(self, index: int, target: str = TARGET, device: int = 0,
                 start_deadline_s: float = START_DEADLINE_S) -> None:
        self.index = index
        self.worker = Worker(target, env={**worker_env(None), DEVICE_ENV: str(device)}, nice=HELPER_NICE,
                             ready_timeout_s=start_deadline_s, stderr="discard")
        self.worker.launch()
        #: messages read from the pipe and not yet handled (a read may bring several lines at once)
        self.inbox: list[dict[str, Any]] = []
        #: the pipe reached its end (the helper died, closed it or wrote garbage)
        self.eof = False

    @property
    def ready(self) -> dict[str, Any] | None:
        """The helper's ready line (None: not ready)."""
        return self.worker.ready

    @property
    def pid(self) -> int | None:
        return self.worker.pid

    @property
    def fd(self) -> int:
        return self.worker.fileno()

    def alive(self) -> bool:
        return self.worker.alive()

    def send(self, message: dict[str, Any]) -> bool:
        """Write one message; False when the helper is gone."""
        try:
            self.worker.send(message)
            return True
        except WorkerError:
            return False

    def fill(self) -> None:
        """Read what the pipe holds now (call when it is readable) into :attr:`inbox`; the end of the pipe or a
        line that is not JSON (the helper is then killed) sets :attr:`eof`."""
        try:
            events = self.worker.receive()
        except WorkerError:
            events = None
        if events is None:
            self.eof = True
            return
        for event in events:
            if isinstance(event.get("reply"), dict):
                self.inbox.append(event["reply"])
            elif isinstance(event.get("part"), dict):
                self.inbox.append(event["part"])
            elif event.get("end") is True:
                self.inbox.append({"done": True})
            elif isinstance(event.get("failed"), dict):
                f = event["failed"]
                self.inbox.append({"error": f"{f.get('type', 'Error')}: {f.get('message', '')}"})

    def how_it_ended(self) -> str:
        """'exit code N' / 'signal N (NAME)' once the process ended, else 'no answer'."""
        return self.worker.how_it_ended()

    def kill(self) -> None:
        """End the helper (its process group) and close its pipes."""
        self.worker.kill()


def pump(helpers: list[Helper], deadline_s: float, handle: Callable[[Helper, dict[str, Any]], bool]) -> set[int]:
    """Hand each helper's messages to ``handle(helper, message)`` (True: that helper is finished) until every helper
    is finished, reached the end of its pipe or sent nothing for ``deadline_s`` seconds; the indices of those that
    timed out (the others ended or finished; see ``Helper.eof``)."""
    live = {h.index: h for h in helpers}
    last = {h.index: time.perf_counter() for h in helpers}
    timed_out: set[int] = set()
    sel = selectors.DefaultSelector()
    try:
        for h in helpers:
            sel.register(h.fd, selectors.EVENT_READ, h)

        def settle(h: Helper) -> None:
            while h.index in live and h.inbox:
                if handle(h, h.inbox.pop(0)):
                    del live[h.index]
                    sel.unregister(h.fd)
            if h.index in live and h.eof:
                del live[h.index]
                sel.unregister(h.fd)

        for h in helpers:
            settle(h)
        while live:
            now = time.perf_counter()
            for index in [i for i in live if now - last[i] > deadline_s]:
                timed_out.add(index)
                sel.unregister(live.pop(index).fd)
            if not live:
                break
            timeout = max(0.0, min(last[i] + deadline_s for i in live) - now)
            for key, _ in sel.select(timeout):
                h = key.data
                if h.index not in live:
                    continue
                h.fill()
                last[h.index] = time.perf_counter()
                settle(h)
    finally:
        sel.close()
    return timed_out


def wait_lines(helpers: list[Helper], deadline_s: float, want: Callable[[dict[str, Any]], bool]) -> dict[int, Any]:
    """The first message of each helper that ``want(message)`` accepts, by index; None for a helper whose pipe
    ended first, "timeout" for one silent for ``deadline_s`` seconds."""
    out: dict[int, Any] = {}

    def handle(h: Helper, message: dict[str, Any]) -> bool:
        if want(message):
            out[h.index] = message
            return True
        return False

    timed_out = pump(helpers, deadline_s, handle)
    for h in helpers:
        if h.index not in out:
            out[h.index] = "timeout" if h.index in timed_out else None
    return out


class HelperPool:
    """Warm helpers for one GPU (``device``), started on first use and kept; a dead one is replaced the next time
    helpers are asked for. ``target``: the role each runs (default: the build role; tests use
    :mod:`cudnn_lab.gpu.workers.selftest`)."""

    def __init__(self, device: int = 0, target: str = TARGET, start_deadline_s: float = START_DEADLINE_S) -> None:
        self.device = int(device)
        self.target = target
        self.start_deadline_s = float(start_deadline_s)
        self.helpers: list[Helper] = []
        #: helpers started (again) over the pool's life
        self.started = 0
        self.lock = threading.Lock()

    def ensure(self, n: int) -> tuple[list[Helper], float, list[str]]:
        """``n`` ready helpers where they can be had: starts the missing ones and replaces dead ones (in parallel).
        Returns the ready helpers, the seconds spent starting and one problem per helper that did not start."""
        t0 = time.perf_counter()
        problems: list[str] = []
        fresh: list[Helper] = []
        if _EXITING:
            return [], 0.0, ["the process is exiting: no helper is started"]
        for i in range(n):
            if i < len(self.helpers) and self.helpers[i].alive() and self.helpers[i].ready:
                continue
            if i < len(self.helpers):
                self.helpers[i].kill()
            try:
                h = Helper(i, self.target, self.device, self.start_deadline_s)
            except WorkerError as e:
                problems.append(f"helper {i} could not be started ({e.detail})")
                continue
            self.started += 1
            if i < len(self.helpers):
                self.helpers[i] = h
            else:
                self.helpers.append(h)
            fresh.append(h)
        if fresh:
            with ThreadPoolExecutor(max_workers=len(fresh), thread_name_prefix="cudnn_lab-helper-start") as ex:
                failures = list(ex.map(_wait_ready, fresh))
            problems += [f"helper {h.index} {why}" for h, why in zip(fresh, failures) if why]
        ready = [h for h in self.helpers[:n] if h.alive() and h.ready]
        return ready, (time.perf_counter() - t0) if fresh else 0.0, problems

    def close(self) -> None:
        """End every helper."""
        for h in self.helpers:
            h.kill()
        self.helpers = []


def _wait_ready(h: Helper) -> str:
    """Wait for a launched helper's ready line: "" once ready, else why not (the helper is killed)."""
    try:
        h.worker.wait_ready()
        return ""
    except WorkerError as e:
        return e.what + (f" ({e.how})" if e.how else "") + (f": {e.detail}" if e.detail else "")


_POOLS: dict[int, HelperPool] = {}


def pool_for(device: int) -> HelperPool:
    """The process's pool of helpers for ``device`` (made on first use; helpers start when first asked for)."""
    if device not in _POOLS:
        _register_early_exit()
        _POOLS[device] = HelperPool(device)
    return _POOLS[device]


def _abort_all() -> None:
    """End every helper's process at once, without the workers' locks: the threads starting helpers
    (:meth:`HelperPool.ensure`) and the run's prebuild thread reading their pipes then end at once."""
    global _EXITING
    _EXITING = True
    for pool in list(_POOLS.values()):
        for h in list(pool.helpers):
            h.worker.abort()


def _register_early_exit() -> None:
    """Have :func:`_abort_all` run when the interpreter starts to exit, before Python joins its worker threads
    (``threading._register_atexit`` hooks run newest first, so before concurrent.futures' own join of the threads
    starting helpers) and before the kit's atexit join of its threads: a run's helpers still starting or building
    in the background made a process take 5.2-5.5 s to exit instead of 0.6-1.0 s (H200, 2026-11-29,
    scripts/probe_exit.py). Once per process; where this Python has no such hook, the atexit close below serves."""
    global _EARLY_EXIT
    register = getattr(threading, "_register_atexit", None)
    if _EARLY_EXIT or register is None:
        return
    try:
        register(_abort_all)
        _EARLY_EXIT = True
    except RuntimeError:  # the interpreter is already exiting
        pass


_EARLY_EXIT = False
#: Set when the interpreter began to exit: no helper is started any more.
_EXITING = False


@atexit.register
def _close_all() -> None:
    for pool in _POOLS.values():
        pool.close()
