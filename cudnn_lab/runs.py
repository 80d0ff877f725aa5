"""``cl.run(spec)``: check the arguments, run the spec's plans on the GPU, return a :class:`RunResult`.

The one entry point of a single run: options are validated here (before any GPU is asked for), the GPU layer returns
plain records (``gpu.runner.run_records``) and the results layer makes them a ``RunResult``.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from .errors import OptionError
from .gpu import frontend, run_records  # (imports no torch, cudnn or graphviz: they load when a run starts)
from .gpu.timing import SUPPORTED_MODES
from .options import RunOptions
from .specs import Spec
from .results import RunResult

__all__ = ["run", "check_progress", "check_spec", "check_stop", "Progress", "RowProgress"]

#: ``progress(done, total, message)`` of one run.
Progress = Callable[[int, int, str], None]


class RowProgress(Protocol):
    """A progress object that also hears each plan's row: ``row(row_dict)`` is called as soon as a plan is built,
    checked and timed (the heuristics' pick first; the row holds the plan table's columns measured so far). It may
    also be callable as ``(done, total, message)``; a plain :data:`Progress` function still works."""

    def row(self, row: dict[str, Any]) -> None: ...


def check_spec(spec: Any, *, where: str = "run") -> Spec:
    """``spec`` if it is a cudnn_lab spec, else the kit's error naming the argument."""
    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "must be a cudnn_lab spec such as ConvSpec, MatmulSpec or SdpaSpec "
                          "(build one with cl.ConvSpec(...) or cl.spec_from_dict(...))", where=where)
    return spec


def check_progress(progress: Any, *, where: str = "run") -> Any:
    """``progress`` if it is None, a callable or an object with a callable ``row`` (:class:`RowProgress`); False
    means None. Anything else (``True`` too) is refused."""
    if progress is None or progress is False:
        return None
    if not callable(progress) and not callable(getattr(progress, "row", None)):
        raise OptionError("progress", progress, "must be a function called with the progress (or an object with a "
                          "row(row) method), None or False", where=where)
    return progress


def check_stop(stop: Any, *, where: str = "run") -> Callable[[], bool] | None:
    """``stop`` as a function answering whether to stop: None, a callable, or a ``threading.Event`` (its
    ``is_set``). Anything else is refused."""
    if stop is None:
        return None
    if isinstance(stop, threading.Event):
        return stop.is_set
    if not callable(stop):
        raise OptionError("stop", stop, "must be a function answering True to stop the run, a threading.Event or "
                          "None", where=where)
    return stop


def check_runnable(options: RunOptions) -> RunOptions:
    """Options that this version's GPU layer cannot honour yet, refused before the GPU is asked for."""
    if options.timing not in SUPPORTED_MODES:
        raise OptionError("timing", options.timing, f"is not measured by this version yet; use one of "
                          f"{', '.join(SUPPORTED_MODES)}")
    return options


def check_carve_out(spec: Spec, options: RunOptions) -> RunOptions:
    """An SM carve-out (``sm_count``) for a family that runs through a classic cuDNN call (softmax, activation,
    transform 'convert', pooling, RNN) is refused before the GPU is asked for: classic calls run on the whole GPU.
    (A count above the GPU's own is refused by the run, which knows the GPU.)"""
    if options.sm_count is not None:
        frontend.check_carve_out(spec, options.sm_count)
    return options


def run(spec: Spec, options: RunOptions | dict[str, Any] | None = None, *, progress: Any = None,
        stop: Any = None, **overrides: Any) -> Any:
    """Run ``spec`` on the GPU: every plan the heuristics propose (``plans='all'``) or only their pick.

    ``options`` is a :class:`~cudnn_lab.options.RunOptions`, a dict of its fields or None (the defaults); keyword
    overrides on top (``cl.run(spec, plans="heuristic", time_cap_s=0.1)``) are validated the same way. Each plan
    that runs is checked against a float64 PyTorch reference (outputs NaN-poisoned first) and timed (CUDA-graph
    replay by default where capture works). ``progress(done, total, message)`` hears of each step; a progress
    object with a ``row(row_dict)`` method (:class:`RowProgress`) also gets each plan's row as soon as it is measured,
    the heuristics' pick first. ``stop`` (a function answering True, or a ``threading.Event``) is asked after each
    plan and step: the run then ends with what it measured, marked partial (``result.partial``); so does a
    KeyboardInterrupt once a plan has been measured.
    ``sm_count=N`` runs the graph on N SMs (an SM carve-out; ``cl.sm_scaling`` compares several counts).

    Raises OptionError for a bad option (before the GPU is touched), NoGPUError without a GPU.
    """
    spec = check_spec(spec)
    opts = check_runnable(RunOptions.coerce(options, **overrides))
    check_carve_out(spec, opts)
    progress = check_progress(progress)
    halt = check_stop(stop)
    _preload("pandas")
    return _result(spec, run_records(spec, opts, progress, halt))


def _preload(module: str) -> None:
    """Import ``module`` on a thread while the GPU layer starts (torch, CUDA, cuDNN): a fresh process's first run
    then does not import pandas (~0.4 s) only after the GPU work; the results layer's own import waits for it."""
    if module not in sys.modules:
        threading.Thread(target=_quiet_import, args=(module,), name=f"cudnn_lab-preload-{module}",
                         daemon=True).start()


def _quiet_import(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 - the import that needs it raises the real error, in the caller's thread
        pass


def _result(spec: Spec, records: dict[str, Any]) -> Any:
    """The results layer's RunResult of a run's records."""
    return RunResult.from_records(spec, records)
