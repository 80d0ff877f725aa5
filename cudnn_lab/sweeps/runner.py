"""``sweep(spec, over={...})``: run a grid of problems, append each finished point to a store, resume where it stopped.

A point is one spec (the base spec with some fields replaced) run as ``cl.run`` runs it, with the same
:class:`~cudnn_lab.options.RunOptions`. Its rows are the plan table (every plan tried, or only the heuristics' pick)
plus the spec's fields, the device and the PyTorch baseline, so a store is one tidy frame that the plots read
directly. Points run one after another, or on any ``concurrent.futures.Executor`` (one worker process per GPU with
:class:`~cudnn_lab.sweeps.executors.GPUExecutor`, or a Dask client's executor), a few at a time, and are written by this
process as they finish. Every argument is checked before the first point runs.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import NoGPUError, OptionError, PathError, SpecError, shorten
from ..options import RunOptions
from ..specs import Spec
from .axes import check_bases, check_over
from .grid import points_of
from .points import id_settings, invalid_id, invalid_row, point_id, run_point
from .progress import Progress, text_progress
from ..results.paths import check_store_path
from ..results.store import ASIDE_PREFIX, FAILED_PREFIX, PART_PREFIX, Store
from ..capabilities import probe
from ..runs import check_progress, check_runnable

__all__ = ["sweep", "check_executor", "check_store"]

#: Points handed to an executor at once, per worker (more would make the grid in memory for nothing).
IN_FLIGHT_PER_WORKER = 2
#: Seconds between progress reports while skipping points already stored.
SKIP_REPORT_S = 0.5


#: What to do with an executor that cannot take points any more.
_NEW_EXECUTOR = ("make a new one (e.g. `with cl.GPUExecutor() as ex: cl.sweep(..., executor=ex)`, with the sweep "
                 "inside the with block) or pass executor=None")


def check_executor(executor: Any) -> cf.Executor | None:
    """None or a ``concurrent.futures.Executor`` (a process pool, GPUExecutor, a Dask client's executor) that can
    still take points: one already shut down (or broken by a dead worker) is refused before the first point."""
    if executor is not None and not isinstance(executor, cf.Executor):
        raise OptionError("executor", executor, "must be a concurrent.futures.Executor (e.g. cl.GPUExecutor(), "
                          "ProcessPoolExecutor, or a Dask client's get_executor()) or None", where="sweep")
    broken = getattr(executor, "_broken", False)  # a pool whose worker died (it also counts as shut down)
    if broken:
        raise OptionError("executor", executor, f"is broken ({shorten(str(broken), 120)}): {_NEW_EXECUTOR}",
                          where="sweep")
    # ProcessPoolExecutor marks shutdown in _shutdown_thread; ThreadPoolExecutor and Dask's ClientExecutor in _shutdown
    if any(getattr(executor, attr, False) is True for attr in ("_shutdown_thread", "_shutdown")):
        raise OptionError("executor", executor, f"was shut down (its with block ended or shutdown() was called): "
                          f"{_NEW_EXECUTOR}", where="sweep")
    return executor


def check_store(path: Any) -> Any:
    """The sweep's store, checked before any point runs: a folder that is a store or empty, or a place one can be
    made (PathError otherwise, e.g. under a regular file, unwritable, or a folder of other files)."""
    folder = check_store_path(path, what="sweep store")
    if folder.is_dir():
        names = [p.name for p in folder.iterdir()]
        parts = [n for n in names if n.startswith((PART_PREFIX, FAILED_PREFIX, ASIDE_PREFIX, ".tmp-"))]
        if names and not parts:
            raise PathError(folder, "is a folder that is not a sweep store (it holds other files and no "
                                    f"{PART_PREFIX}*.parquet)", hint="give a new or empty folder, or an existing store")
    return Store(folder)


def _workers(executor: cf.Executor) -> int:
    """How many points the executor runs at once: a pool's workers, or a Dask cluster's threads (so each Dask worker
    also holds a point queued behind the one it runs, instead of idling through every round trip)."""
    client = getattr(executor, "_client", None)
    if client is not None and hasattr(client, "nthreads"):
        try:
            total = sum(int(n) for n in client.nthreads().values())
        except Exception:  # noqa: BLE001 - a client that cannot answer gets the default window
            total = 0
        if total > 0:
            return total
    for attr in ("_max_workers", "gpus"):
        n = getattr(executor, attr, None)
        if isinstance(n, int) and n > 0:
            return n
        if isinstance(n, list) and n:
            return len(n)
    return 4


def with_kernel_cache(options: RunOptions, axes: dict[str, Any]) -> RunOptions:
    """``kernel_cache=None`` (the default) turned on for a sweep over one dimension: its shapes share
    runtime-compiled kernels, which cuDNN's kernel cache builds once (the pick each point would have had without it
    is recorded). Other sweeps, and a kernel_cache given, are left as they are."""
    return options.replace(kernel_cache=True) if options.kernel_cache is None and len(axes) == 1 else options


def sweep(spec: Spec | Iterable[Spec], over: dict[str, Iterable[Any]] | None = None, *,
          store: str | Path | None = None, options: RunOptions | dict[str, Any] | None = None,
          executor: cf.Executor | None = None, progress: Progress | None | bool = None, **overrides: Any) -> Any:
    """Run every point of the grid and return all rows of the store (or of this sweep, without a store).

    ``options`` and keyword overrides are the run options of every point (``cl.sweep(spec, over, plans="heuristic",
    time_cap_s=0.1)``), as ``cl.run`` takes them. With ``store`` (a folder), each finished point is appended at once
    and points already there are skipped, so a killed sweep resumes where it stopped. ``progress`` is a callback
    ``(done, total, eta_s, message)``; by default a text bar on stderr; ``False`` for none. The grid is made one
    point at a time, its size announced first.
    """
    import pandas as pd

    bases = check_bases(spec)
    axes = check_over(bases, over)
    opts = with_kernel_cache(check_runnable(RunOptions.coerce(options, **overrides)), axes)
    executor = check_executor(executor)
    show: Progress | None = text_progress() if progress is None else check_progress(progress, where="sweep")
    db = check_store(store) if store is not None else None
    caps = probe()
    if executor is None and not caps.gpu:
        raise NoGPUError("a sweep runs every point on a GPU and none is visible (pass executor= to run elsewhere)")
    device_key = caps.gpu_name or "remote"
    settings, run_options = id_settings(opts.to_dict()), opts.to_dict()
    total = len(bases) * math.prod(len(v) for v in axes.values())
    done = db.done() if db else set()
    frames: list[Any] = []
    state = {"count": 0, "ran": 0, "skipped": 0, "start": time.perf_counter(), "shown": 0.0}

    def report(message: str, force: bool = True) -> None:
        now = time.perf_counter()
        if not show or (not force and now - state["shown"] < SKIP_REPORT_S):
            return
        state["shown"] = now
        ran, left = state["ran"], total - state["count"]
        eta = (now - state["start"]) / ran * left if ran else None
        show(int(state["count"]), total, eta, message)

    def finished(frame: Any, label: str) -> None:
        if db:
            part = db.append(frame["point_id"].iloc[0], frame, failed=frame["point_status"].iloc[0] == "failed")
            db.read_ahead(part)  # read back on a thread while points run: the final read does not wait on it
        frames.append(frame)
        state["count"] += 1
        state["ran"] += 1
        report(label)

    def todo() -> Iterable[tuple[str, Spec]]:
        """Valid points not stored yet; invalid ones are recorded on the way, stored ones skipped."""
        for p in points_of(bases, axes):
            if isinstance(p, SpecError):
                row, pid = invalid_row(p), invalid_id(p)
                if db and pid not in done:
                    db.append(pid, row)
                frames.append(row)
                state["count"] += 1
                report("invalid point recorded")
                continue
            pid = point_id(p, settings, device_key)
            if pid in done:
                state["count"] += 1
                state["skipped"] += 1
                report(f"{state['skipped']} point(s) already stored", force=False)
                continue
            yield pid, p

    if show:
        show(0, total, None, f"{total} point(s)" + (f"; {len(done)} stored in {db.path}" if done and db else ""))
    if executor is None:
        for pid, p in todo():
            finished(run_point(p.to_dict(), run_options, pid), p.label())
    else:
        _on_executor(executor, todo(), run_options, finished)
    if show and state["count"] and state["skipped"] == state["count"]:
        show(total, total, 0.0, "every point was already stored")
    if db:
        return db.read()
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _on_executor(executor: cf.Executor, points: Iterable[tuple[str, Spec]], options: dict[str, Any],
                 finished: Any) -> None:
    """Submit points a few at a time (the grid is never made whole), handing each result to ``finished``."""
    window = IN_FLIGHT_PER_WORKER * _workers(executor)
    pending: dict[cf.Future[Any], Spec] = {}
    source = iter(points)
    try:
        exhausted = False
        while pending or not exhausted:
            while not exhausted and len(pending) < window:
                nxt = next(source, None)
                if nxt is None:
                    exhausted = True
                    break
                pid, p = nxt
                pending[_submit(executor, p.to_dict(), options, pid)] = p
            if not pending:
                break
            ready, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in ready:
                p = pending.pop(fut)
                finished(fut.result(), p.label())
    finally:
        for fut in pending:
            fut.cancel()


def _submit(executor: cf.Executor, point: dict[str, Any], options: dict[str, Any], pid: str) -> cf.Future[Any]:
    """``executor.submit(run_point, ...)``; an executor shut down or broken while the sweep runs is the kit's
    OptionError saying so (points finished so far are already in the store, if there is one)."""
    try:
        return executor.submit(run_point, point, options, pid)
    except cf.BrokenExecutor as e:
        raise OptionError("executor", executor, f"broke while the sweep ran ({shorten(str(e), 120)}); with a "
                          f"store, a rerun resumes where it stopped: {_NEW_EXECUTOR}", where="sweep") from None
    except RuntimeError as e:
        if "shutdown" not in str(e):
            raise
        raise OptionError("executor", executor, f"was shut down while the sweep ran; with a store, a "
                          f"rerun resumes where it stopped: {_NEW_EXECUTOR}", where="sweep") from None
