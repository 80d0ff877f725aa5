"""One run on the GPU as plain records (``run_records``): the steps of a :class:`~cudnn_lab.gpu.run.Run`, each
plan's row handed out as soon as it is measured.

The results layer turns the records into a ``RunResult`` (``cudnn_lab.runs.run`` does both); nothing here makes a
frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..options import RunOptions
from ..specs import Spec
from .run import Run
from .session import RUN_LOCK

#: ``progress(done, total, message)``; an object may also offer ``row(row_dict)``, called with each plan's row as
#: soon as it is measured (``cudnn_lab.runs.Progress``).
Progress = Callable[[int, int, str], None]


def run_records(spec: Spec, options: RunOptions, progress: Any = None,
                stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Run ``spec`` on the GPU as ``options`` say; returns plain records (``cudnn_lab.results.RECORD_KEYS``).

    ``plans`` holds one row dict per proposed plan in heuristic order, with what was measured (times, errors);
    throughput and the share of the roofline are derived from them by the results layer. ``settings`` is
    ``options.to_dict()`` plus the run's facts (``proposed``: how many plans the heuristics listed; ``partial``:
    the run was stopped, ``stopped`` says why). Each plan's row goes to ``progress.row`` (if it has one) as soon as
    the plan is measured, the heuristics' pick first; ``stop()`` answering True, or a KeyboardInterrupt, stops the
    run there with what it measured. Runs in one process take turns (``session.RUN_LOCK``).
    """
    hand_out = getattr(progress, "row", None)
    with RUN_LOCK:
        run = Run(spec, options, progress, stop)
        run.start()  # an interrupt before any plan is measured leaves nothing to keep: it propagates
        run.propose()
        rows = run.plans()
        try:
            for row in rows:
                if callable(hand_out):
                    hand_out(row)
        except KeyboardInterrupt:
            run.halt("interrupted (KeyboardInterrupt)")
        finally:
            rows.close()
        return run.finish()
