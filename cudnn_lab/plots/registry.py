"""The figures of one run, in one table: the Lab's result views, the HTML report and the CLI (whose ``--report``
and ``report`` write that report) all read :data:`RUN_FIGURES`, so a figure added here shows everywhere.

Each entry names the figure (the Lab's pane), says what it shows, the Lab view that holds it, how it is drawn from a
:class:`~cudnn_lab.results.RunResult` and the plan selected, whether a result has it at all (``applies``), and when
the Lab's view says in a sentence why there is no figure instead (``said_instead``; the report, which has no such
sentence, keeps the figure: it says the same in its title).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..results import metrics
from .anatomy import engine_knobs, engine_space
from .run import classic_call, error_histogram, errors_per_plan, heuristic_vs_measured, latency_bar, roofline

if TYPE_CHECKING:
    from ..results import RunResult

__all__ = ["RunFigure", "RUN_FIGURES", "run_figure", "figures_of_view", "VIEWS"]


def _always(result: RunResult) -> bool:
    return True


def _never(result: RunResult) -> bool:
    return False


def _explored(result: RunResult) -> bool:
    """Whether the run sampled the engine space beyond the heuristics' proposals (``explore`` > 0)."""
    return bool(result.exploration["explored"])


def _classic(result: RunResult) -> bool:
    """Whether the result's plans are one classic cuDNN call (no heuristics to compare with)."""
    return classic_call(result) is not None


def _histogram(result: RunResult, selected: str | None) -> Any:
    """The selected plan's error histogram, else the heuristic's pick's (the results layer's pick)."""
    if selected is None:
        row = metrics.pick(result.plans)
        selected = None if row is None else str(row["plan"])
    return error_histogram(result, selected)


@dataclasses.dataclass(frozen=True)
class RunFigure:
    """One figure of a run: its name (the Lab's pane), what it shows, the Lab view holding it, how it is drawn
    (``draw(result, selected plan or None)``), whether a result has it, and when a Lab view's sentence replaces it."""

    name: str
    title: str
    view: str
    draw: Callable[[RunResult, str | None], Any]
    applies: Callable[[RunResult], bool] = _always
    said_instead: Callable[[RunResult], bool] = _never
    in_report: bool = True


#: Every figure of one run, in the order the Lab's views and the report show them.
RUN_FIGURES: tuple[RunFigure, ...] = (
    RunFigure("latency", "Latency per plan", "Latency", lambda r, s: latency_bar(r, selected=s)),
    RunFigure("heuristics", "Heuristic order vs measured order", "Heuristics",
              lambda r, s: heuristic_vs_measured(r, selected=s), said_instead=_classic),
    RunFigure("errors", "Error per plan vs float64 reference", "Numerics", lambda r, s: errors_per_plan(r, selected=s)),
    RunFigure("histogram", "Absolute error per element of one plan", "Numerics", _histogram),
    RunFigure("roofline", "Roofline of the plans that ran", "Roofline", lambda r, s: roofline(r, selected=s)),
    RunFigure("engines", "Engine space: latency by engine", "Anatomy", lambda r, s: engine_space(r, selected=s),
              applies=_explored),
    RunFigure("knobs", "Engine space: latency by one knob's value", "Anatomy",
              lambda r, s: engine_knobs(r, selected=s), applies=_explored),
)
#: The Lab views that hold a figure, in order.
VIEWS: tuple[str, ...] = tuple(dict.fromkeys(f.view for f in RUN_FIGURES))


def run_figure(name: str) -> RunFigure:
    """The entry named ``name`` (KeyError naming the figures there are)."""
    for figure in RUN_FIGURES:
        if figure.name == name:
            return figure
    raise KeyError(f"no run figure {name!r}; there are {', '.join(f.name for f in RUN_FIGURES)}")


def figures_of_view(view: str) -> tuple[RunFigure, ...]:
    """The figures a Lab view holds, in order."""
    return tuple(f for f in RUN_FIGURES if f.view == view)
