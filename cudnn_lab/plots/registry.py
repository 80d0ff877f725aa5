"""Every view of the kit's answers, in one table: a run's figures, a sweep's figures and the what-if answers' tables
and figure. The Lab's views (ui/results_view.py, ui/sweepview.py, ui/whatif_view.py), the HTML report and the CLI
(whose ``--report`` and ``report`` write that report) all read :data:`ENTRIES`, so a view added here shows
everywhere its answer is given.

Each entry names the view (the Lab's pane or part), says what it shows, what it draws from (``source``, one of
:data:`SOURCES`: a :class:`~cudnn_lab.results.RunResult`, a sweep frame, or a what-if answer type), the function that
draws it, whether it is a figure (plotly) or a table (an HTML string), the Lab view that holds it ('' for none), the
report's section that holds it ('' for none), whether an answer has it at all (``applies``), and when the Lab's view
says in a sentence why there is none instead (``said_instead``; the report, which has no such sentence, keeps the
figure: it says the same in its title).

A run's figure is drawn ``draw(result, selected plan or None)``, with the keyword options it names in ``options``
(:data:`FIGURE_OPTIONS`: what each draws, for the Lab's toggles); every other entry ``draw(answer, **options)``. To add
a view of a new answer (a forecast, say): one entry here (and its source in :data:`SOURCES`), one part of a Lab view
named like it, and the caller that gathers the answer for the report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import OptionError
from ..results import metrics
from ..results.backend_map import has_backends
from .anatomy import engine_knobs, engine_space
from .backend_map import plot_backend_map
from .axes import default_axes
from .compare import compare_gpus
from .forecast import forecast_table_html
from .run import classic_call, error_histogram, errors_per_plan, heuristic_vs_measured, latency_bar, roofline
from .sm_scaling import plot_sm_scaling
from .sweep import error_by_dtype, sweep_latency, sweep_roofline
from ..whatif.speed_lines import model_lines
from .whatif_tables import (answer_label_html, block_answers_asked_html, block_formats_html,
                            block_scale_answers_html, compare_table_html, drift_html, drift_summary_html, reasons_html,
                            refusals_html, run_drift_html)

if TYPE_CHECKING:
    from ..results import RunResult

__all__ = ["SOURCES", "KINDS", "FigureOption", "FIGURE_OPTIONS", "ViewEntry", "RunFigure", "ENTRIES", "RUN_FIGURES",
           "SWEEP_VIEWS", "WHATIF_VIEWS", "VIEWS", "entry", "entries", "run_figure", "figures_of_view",
           "options_of_view"]

#: What an entry draws from: its ``source`` -> the answer type (the layer that makes it).
SOURCES: dict[str, str] = {
    "run": "RunResult (cl.run, cl.load_results of a run)",
    "sweep": "sweep frame (cl.sweep, cl.load_results of a sweep or store)",
    "sweep pair": "two sweep frames of one problem set on two GPUs",
    "compare": "what-if compare frame (whatif.compare: WhatIf answers side by side, attrs answers/labels/refused)",
    "whatif": "WhatIf (whatif.plans_for: one target's answer)",
    "drift": "Drift (whatif.drift: one target's answers under two cuDNN versions)",
    "run drift": "RunDrift (whatif.run_drift, whatif.recorded_run_drifts: a run under two cuDNN versions)",
    "sm scaling": "ScalingResult (whatif.sm_scaling, whatif.recorded_scalings)",
    "block whatif": "BlockWhatIf (whatif.block_format_whatif: a block format emulated)",
    "block answers": "list of BlockScaleAnswer (whatif.recorded_block_scale_answers, whatif.ask_block_scaled)",
    "forecast": "list of Forecast (whatif.forecasts.forecasts_for: cl.forecast per target)",
}
#: What an entry's draw returns: a plotly figure, or a table (an HTML string).
KINDS: tuple[str, ...] = ("figure", "table")


def _always(answer: Any) -> bool:
    return True


def _never(answer: Any) -> bool:
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


def _sweep_ran(frame: Any) -> bool:
    """Whether some point of the sweep ran a plan."""
    return not metrics.sweep_ran(frame).empty


def _has_axis(frame: Any) -> bool:
    """Whether a point ran and the frame has a spec field to draw along."""
    return _sweep_ran(frame) and default_axes(frame)[0] is not None


def _has_errors(frame: Any) -> bool:
    """Whether some plan that ran has its error against the reference."""
    ran = metrics.sweep_ran(frame)
    return "rel_l2" in ran.columns and bool(ran["rel_l2"].notna().any())


def _sweep_latency(frame: Any, x: str | None = None, *, color: str | None = None, **options: Any) -> Any:
    """A metric of a sweep along ``x`` (by default the axes the Lab and the report choose: plots/axes.py)."""
    if x is None:
        x, default_color = default_axes(frame)
        color = color if color is not None else default_color
        options.setdefault("which", "best")
    return sweep_latency(frame, x, color=color, **options)


def _answer_label(frame: Any) -> str:
    """The label of a compare frame's answers: not a measurement, and where they were recorded (or asked)."""
    return answer_label_html(frame.attrs["answers"])


@dataclasses.dataclass(frozen=True)
class FigureOption:
    """A keyword option some run figures draw with (off by default): the Lab's toggle text and tooltip, and
    ``about(result)``: whether the result has something for it to draw, and a sentence saying what (or why not)."""

    name: str
    label: str
    tooltip: str
    about: Callable[[Any], tuple[bool, str]]


def _models_about(result: RunResult) -> tuple[bool, str]:
    """Whether ``result`` has validated model lines (:func:`~cudnn_lab.whatif.speed_lines.model_lines`) and its
    note: where they come from, or why there are none."""
    lines = model_lines(result)
    return bool(lines.lines), lines.note


#: The run figures' keyword options by name (a :class:`ViewEntry`'s ``options`` names them).
FIGURE_OPTIONS: dict[str, FigureOption] = {
    "models": FigureOption(
        "models", "model lines",
        "Draw the speed models beside the measured points: the transfer model, the datasheet roofline ratio and "
        "NVIDIA's GEMM estimator (where installed), forecast for this GPU from the same problem recorded on the "
        "other GPU, and in Roofline the GPU's datasheet roofs. Each is named in the legend with its validation "
        "error (MAPE) on this operation family. Forecasts, not measurements.",
        _models_about),
}


@dataclasses.dataclass(frozen=True)
class ViewEntry:
    """One view of one answer: its name (the Lab's pane or part), what it shows, what it draws from (``source``, a
    key of :data:`SOURCES`), how it is drawn, whether a figure or a table (``kind``), the Lab view holding it (''
    for none), the report's section holding it ('' for none; 'figures' for the report's figures), whether an answer
    has it, when a Lab view's sentence replaces it, and (``per_op``) whether the report draws it once per operation
    of a sweep. ``options``: the keyword options (keys of :data:`FIGURE_OPTIONS`) a run figure draws with."""

    name: str
    title: str
    view: str
    draw: Callable[..., Any]
    source: str = "run"
    kind: str = "figure"
    section: str = "figures"
    applies: Callable[[Any], bool] = _always
    said_instead: Callable[[Any], bool] = _never
    per_op: bool = False
    options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise OptionError("source", self.source, "one of " + ", ".join(SOURCES), where=f"view {self.name!r}")
        if self.kind not in KINDS:
            raise OptionError("kind", self.kind, "one of " + ", ".join(KINDS), where=f"view {self.name!r}")
        for option in self.options:
            if option not in FIGURE_OPTIONS:
                raise OptionError("options", option, "each one of " + ", ".join(FIGURE_OPTIONS),
                                  where=f"view {self.name!r}")

    @property
    def in_report(self) -> bool:
        """Whether the HTML report draws it (where its answer is given)."""
        return bool(self.section)


#: A run's figure (the name its first entries had).
RunFigure = ViewEntry

#: Every figure of one run, in the order the Lab's views and the report show them.
RUN_FIGURES: tuple[ViewEntry, ...] = (
    ViewEntry("latency", "Latency per plan", "Latency", lambda r, s, **o: latency_bar(r, selected=s, **o),
              options=("models",)),
    ViewEntry("heuristics", "Heuristic order vs measured order", "Heuristics",
              lambda r, s: heuristic_vs_measured(r, selected=s), said_instead=_classic),
    ViewEntry("errors", "Error per plan vs float64 reference", "Numerics", lambda r, s: errors_per_plan(r, selected=s)),
    ViewEntry("histogram", "Absolute error per element of one plan", "Numerics", _histogram),
    ViewEntry("roofline", "Roofline of the plans that ran", "Roofline",
              lambda r, s, **o: roofline(r, selected=s, **o), options=("models",)),
    ViewEntry("engines", "Engine space: latency by engine", "Anatomy", lambda r, s: engine_space(r, selected=s),
              applies=_explored),
    ViewEntry("knobs", "Engine space: latency by one knob's value", "Anatomy",
              lambda r, s: engine_knobs(r, selected=s), applies=_explored),
)

#: A sweep's figures: the Lab's Sweep view draws the latency (with its own axes) and the comparison of two GPUs;
#: the report draws the roofline, the latency once per operation (default axes) and the errors per dtype.
SWEEP_VIEWS: tuple[ViewEntry, ...] = (
    ViewEntry("sweep_roofline", "Roofline of the sweep's points", "", sweep_roofline, source="sweep",
              applies=_sweep_ran),
    ViewEntry("sweep", "Latency along a size field, per operation", "Sweep", _sweep_latency, source="sweep",
              applies=_has_axis, per_op=True),
    ViewEntry("sweep_errors", "Error per dtype", "", error_by_dtype, source="sweep", applies=_has_errors),
    ViewEntry("sweep_compare", "Two GPUs compared on the same problems", "Sweep", compare_gpus, source="sweep pair",
              section=""),
    ViewEntry("backend_map", "Which backend wins each attention shape", "Sweep", plot_backend_map, source="sweep",
              applies=has_backends),
)

#: The what-if answers' tables and figure, in the order the Lab's What-if view and the report show them.
WHATIF_VIEWS: tuple[ViewEntry, ...] = (
    ViewEntry("whatif_label", "Where the heuristics' answers come from", "What-if", _answer_label, source="compare",
              kind="table", section="what-if"),
    ViewEntry("whatif_compare", "Targets side by side by engine", "What-if", compare_table_html, source="compare",
              kind="table", section="what-if"),
    ViewEntry("whatif_refusals", "Targets that got no plan", "What-if", refusals_html, source="compare",
              kind="table", section="what-if"),
    ViewEntry("forecast", "Forecast of cuDNN's pick per target (not a measurement)", "What-if", forecast_table_html,
              source="forecast", kind="table", section="what-if"),
    ViewEntry("whatif_reasons", "Why not: cuDNN's reasons for a target without a plan", "What-if", reasons_html,
              source="whatif", kind="table", section=""),
    ViewEntry("whatif_drift", "cuDNN version drift", "What-if", drift_html, source="drift", kind="table",
              section=""),
    ViewEntry("whatif_drift_summary", "The drift between cuDNN versions, in one sentence", "", drift_summary_html,
              source="drift", kind="table", section="what-if"),
    ViewEntry("run_drift", "Measured under another cuDNN", "What-if", run_drift_html, source="run drift",
              kind="table", section="what-if"),
    ViewEntry("sm_scaling", "Best time against SMs", "What-if", plot_sm_scaling, source="sm scaling"),
    ViewEntry("block_emulated", "Blackwell block formats: emulated error", "What-if", block_formats_html,
              source="block whatif", kind="table", section=""),
    ViewEntry("block_asked", "The problems cuDNN was asked for", "", block_answers_asked_html,
              source="block answers", kind="table", section="block-formats"),
    ViewEntry("block_answers", "cuDNN's answers for block-scaled graphs", "What-if", block_scale_answers_html,
              source="block answers", kind="table", section="block-formats"),
)

#: Every view, run figures first.
ENTRIES: tuple[ViewEntry, ...] = RUN_FIGURES + SWEEP_VIEWS + WHATIF_VIEWS
#: The Lab's result views that hold a run's figure, in order.
VIEWS: tuple[str, ...] = tuple(dict.fromkeys(f.view for f in RUN_FIGURES))


def entry(name: str) -> ViewEntry:
    """The entry named ``name`` (KeyError naming the entries there are)."""
    for e in ENTRIES:
        if e.name == name:
            return e
    raise KeyError(f"no view {name!r}; there are {', '.join(e.name for e in ENTRIES)}")


def entries(source: str | None = None, *, view: str | None = None, section: str | None = None
            ) -> tuple[ViewEntry, ...]:
    """The entries drawn from ``source``, held by Lab view ``view`` and by report section ``section`` (None: any),
    in order."""
    if source is not None and source not in SOURCES:
        raise KeyError(f"no source {source!r}; there are {', '.join(SOURCES)}")
    return tuple(e for e in ENTRIES if (source is None or e.source == source) and (view is None or e.view == view)
                 and (section is None or e.section == section))


def run_figure(name: str) -> ViewEntry:
    """The run figure named ``name`` (KeyError naming the figures there are)."""
    for figure in RUN_FIGURES:
        if figure.name == name:
            return figure
    raise KeyError(f"no run figure {name!r}; there are {', '.join(f.name for f in RUN_FIGURES)}")


def figures_of_view(view: str) -> tuple[ViewEntry, ...]:
    """The run figures a Lab view holds, in order."""
    return tuple(f for f in RUN_FIGURES if f.view == view)


def options_of_view(view: str) -> tuple[str, ...]:
    """The keyword options (keys of :data:`FIGURE_OPTIONS`) the run figures of Lab view ``view`` draw with, in
    order; () for a view whose figures take none."""
    return tuple(dict.fromkeys(o for f in figures_of_view(view) for o in f.options))
