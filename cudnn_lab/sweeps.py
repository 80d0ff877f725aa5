"""``sweep(spec, over={...})``: run a grid of problems, append each finished point to a store, resume where it stopped.

A point is one spec (the base spec with some fields replaced) run as ``cl.run`` runs it. Its rows are the plan table
(every plan, or only the heuristic's pick) plus the spec's fields, the device and the PyTorch baseline, so a store
is one tidy frame that the plots read directly. Points run one after another, or on any
``concurrent.futures.Executor`` (one worker process per GPU with :class:`GPUExecutor`, or a Dask client's
executor), and are written by this process as they finish.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import hashlib
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .errors import CudnnLabError, NoGPUError, SpecError
from .specs import Spec, spec_from_dict
from .store import Store

#: Columns a sweep adds to the plan table's (results.PLAN_COLUMNS).
POINT_COLUMNS = ("point_id", "op", "label", "spec", "is_pick", "is_best", "point_status", "point_error", "flops",
                 "min_bytes", "torch_off_ms", "torch_on_ms", "gpu", "driver", "cuda", "cudnn", "cudnn_frontend",
                 "sm_count", "ceiling_tflops", "ceiling_gbps", "created")
Progress = Callable[[int, int, float | None, str], None]


def grid(spec: Spec | Iterable[Spec], over: dict[str, Iterable[Any]] | None = None) -> list[Spec | SpecError]:
    """The points of a sweep: every combination of ``over``'s values applied to ``spec`` (or a list of specs).

    A combination the spec rejects stays in the list as its SpecError, so the sweep records why it was skipped.
    """
    bases = [spec] if isinstance(spec, Spec) else list(spec)
    if not bases or not all(isinstance(b, Spec) for b in bases):
        raise SpecError("spec", spec, "must be a spec or a non-empty list of specs")
    over = dict(over or {})
    for field, values in over.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise SpecError(f"over[{field!r}]", values, "must be a list of values")
    names = list(over)
    points: list[Spec | SpecError] = []
    for base in bases:
        known = {f.name for f in dataclasses.fields(base)}
        for name in names:
            if name not in known:
                raise SpecError(f"over[{name!r}]", name, f"is not a field of {type(base).__name__}; fields are "
                                f"{', '.join(sorted(known))}")
        for combo in itertools.product(*(list(over[n]) for n in names)):
            try:
                points.append(base.replace(**dict(zip(names, combo))))
            except SpecError as e:
                e.point = {"base": base.to_dict(), **dict(zip(names, map(_cell, combo)))}  # names the point
                points.append(e)
    return points


def point_id(spec: Spec, settings: dict[str, Any], device_key: str) -> str:
    """A stable id for one point: the spec, the run settings that change the numbers, and the GPU."""
    blob = json.dumps({"spec": spec.to_dict(), "settings": settings, "device": device_key}, sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def run_point(spec_dict: dict[str, Any], settings: dict[str, Any], pid: str) -> Any:
    """Run one point and return its rows (a DataFrame); failures become one row saying why. Picklable."""
    import pandas as pd

    from .gpu import run

    spec = spec_from_dict(spec_dict)
    base = {"point_id": pid, "op": spec.op, "label": spec.label(), "spec": spec.to_json(), "flops": spec.flops(),
            "min_bytes": spec.min_bytes(), **{f"spec_{k}": _cell(v) for k, v in spec.to_dict().items() if k != "op"}}
    try:
        result = run(spec, **settings)
    except CudnnLabError as e:
        return pd.DataFrame([{**base, "point_status": "failed", "point_error": str(e).split("\n")[0][:500],
                              "created": _now()}])
    frame = result.plans[result.plans["status"] != "not_built"].copy()
    pick = result.heuristic_pick["plan"] if len(result.ok) else None
    best = result.best["plan"] if len(result.ok) else None
    dev, ceil = result.device, result.ceilings
    extra = {**base, "point_status": "ok", "point_error": "",
             "torch_off_ms": result.torch.get("benchmark_off_ms"), "torch_on_ms": result.torch.get("benchmark_on_ms"),
             "gpu": dev.get("gpu"), "driver": dev.get("driver"), "cuda": dev.get("cuda"),
             "cudnn": dev.get("cudnn_backend"), "cudnn_frontend": dev.get("cudnn_frontend"),
             "sm_count": dev.get("sm_count"), "ceiling_tflops": ceil.get("tflops"),
             "ceiling_gbps": ceil.get("gbps"), "created": result.created}
    for key, value in extra.items():
        frame[key] = value
    frame["is_pick"] = frame["plan"] == pick
    frame["is_best"] = frame["plan"] == best
    return frame


def _cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def text_progress(stream: Any = None) -> Progress:
    """A one-line text bar with an ETA, for terminals and logs."""
    out = stream or sys.stderr

    def show(done: int, total: int, eta_s: float | None, message: str) -> None:
        width = 30
        filled = int(width * done / max(total, 1))
        eta = f" ETA {eta_s:5.0f} s" if eta_s is not None else ""
        end = "\n" if done >= total else ""
        out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}{eta} {message[:60]:<60}{end}")
        out.flush()

    return show


def sweep(spec: Spec | Iterable[Spec], over: dict[str, Iterable[Any]] | None = None, *,
          store: str | Path | None = None, plans: str = "heuristic", heuristics: Any = ("A", "FALLBACK"),
          timing: str = "auto", cold_l2: bool = False, check: bool = True, torch_baseline: bool = True,
          time_cap_s: float = 0.5, executor: cf.Executor | None = None, progress: Progress | None | bool = None,
          ) -> Any:
    """Run every point of the grid and return all rows of the store (or of this sweep, without a store).

    With ``store``, each finished point is appended at once and points already there are skipped, so a
    killed sweep resumes where it stopped. ``progress`` is a callback ``(done, total, eta_s, message)``; by default
    a text bar on stderr; ``False`` for none.
    """
    import pandas as pd

    from .capabilities import probe

    settings = {"plans": plans, "heuristics": list(heuristics) if not isinstance(heuristics, str) else [heuristics],
                "timing": timing, "cold_l2": cold_l2, "check": check, "torch_baseline": torch_baseline,
                "time_cap_s": time_cap_s}
    caps = probe()
    if executor is None and not caps.gpu:
        raise NoGPUError("a sweep runs every point on a GPU and none is visible (pass executor= to run elsewhere)")
    device_key = caps.gpu_name or "remote"
    points = grid(spec, over)
    db = Store(store) if store is not None else None
    done = db.done() if db else set()
    show: Progress | None = text_progress() if progress is None else (progress or None)
    frames: list[Any] = []
    todo: list[tuple[str, Spec]] = []
    for p in points:
        if isinstance(p, SpecError):
            pid = hashlib.sha1(json.dumps(p.point, sort_keys=True).encode()).hexdigest()[:16]
            row = pd.DataFrame([{"point_id": pid, "point_status": "invalid", "point_error": str(p),
                                 "created": _now()}])
            if db and pid not in done:
                db.append(pid, row)
            frames.append(row)
            continue
        pid = point_id(p, settings, device_key)
        if pid not in done:
            todo.append((pid, p))
    total, start = len(todo), time.perf_counter()

    def finished(i: int, frame: Any, label: str) -> None:
        if db:
            db.append(frame["point_id"].iloc[0], frame, failed=frame["point_status"].iloc[0] == "failed")
        frames.append(frame)
        if show:
            rate = (time.perf_counter() - start) / i
            show(i, total, rate * (total - i), label)

    if show and total:
        show(0, total, None, f"{len(points) - total} point(s) already stored" if done else "starting")
    if executor is None:
        for i, (pid, p) in enumerate(todo, 1):
            finished(i, run_point(p.to_dict(), settings, pid), p.label())
    else:
        futures = {executor.submit(run_point, p.to_dict(), settings, pid): p for pid, p in todo}
        for i, fut in enumerate(cf.as_completed(futures), 1):
            finished(i, fut.result(), futures[fut].label())
    if db:
        return db.read()
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
