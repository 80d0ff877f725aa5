"""The views of one result: the plan table and its plan choice, the result's label, the heuristics sentence, the
figures (latency, heuristics, errors, histogram, roofline) with the selected plan highlighted everywhere, and the
Anatomy view (the engine space explored beyond the proposals, the kernels per plan).

The pick and the best plan are :mod:`cudnn_lab.results.metrics`' (one definition); the figures are
:mod:`cudnn_lab.plots`'; the table is :mod:`.tables`'. This part only puts them in their panes.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from ..errors import OptionError
from ..specs import Spec
from .figures import FigureHost
from .status import StatusLog
from .plans_widget import PlansTable
from .tables import full_table_html, heuristic_summary, plan_table_html

__all__ = ["ANATOMY_FIGURES", "RESULT_FIGURES", "ResultView", "pick_name"]

#: The figures of one result, by pane name.
RESULT_FIGURES: tuple[str, ...] = ("latency", "heuristics", "errors", "histogram", "roofline")
#: The Anatomy view's figures (engine space by engine, by one knob's value).
ANATOMY_FIGURES: tuple[str, ...] = ("engines", "knobs")
_EMPTY = "No results yet: Run on a GPU, or load a recorded result (source: Recorded)."


def pick_name(result: Any) -> str | None:
    """The heuristic's pick of a result (a plan name), or None when no plan ran."""
    from ..results import metrics

    row = metrics.pick(result.plans)
    return None if row is None else str(row["plan"])


def _figure_makers(result: Any, selected: str | None) -> dict[str, Callable[[], Any]]:
    from .. import plots

    shown = selected if selected is not None else pick_name(result)
    return {
        "latency": lambda: plots.latency_bar(result, selected=selected),
        "heuristics": lambda: plots.heuristic_vs_measured(result, selected=selected),
        "errors": lambda: plots.errors_per_plan(result, selected=selected),
        "histogram": lambda: plots.error_histogram(result, shown),
        "roofline": lambda: plots.roofline(result, selected=selected),
    }


#: The view each figure of :func:`_figure_makers` is shown in (a plan pick redraws only the view on screen).
FIGURE_VIEWS = {"latency": "Latency", "heuristics": "Heuristics", "errors": "Numerics", "histogram": "Numerics",
                "roofline": "Roofline"}


def _all_columns_html(result: Any) -> str:
    """Every column of the plan frame under a ``<details>`` (the Plans table above has the compact columns)."""
    if result is None or not len(result.plans):
        return plan_table_html(result)
    return (f"<details class='cl-all-columns'><summary>all columns ({len(result.plans.columns)})</summary>"
            f"<div class='cl-table-wrap cl-table-wide'>{full_table_html(result)}</div></details>")


class ResultView:
    """The result shown (``result``), where it came from (``origin``, a :class:`~cudnn_lab.provenance.Provenance`;
    ``source_text`` its line) and the plan highlighted (``selected``)."""

    def __init__(self, W: Any, figures: FigureHost, log: StatusLog) -> None:
        self._figures = figures
        self._log = log
        self._silent = False
        self.result: Any = None
        self.selected: str | None = None
        self.source_text = ""
        self.origin: Any = None
        #: The view on screen (set by the Lab; None: draw every view at once, as a standalone ResultView does), and
        #: the views whose figures wait for a redraw until they are shown.
        self.visible: str | None = None
        self.stale: set[str] = set()
        self.info = W.HTML("", _dom_classes=("cl-result-info",))
        self.plan_select = W.Dropdown(options=[], value=None, description="plan",
                                      style={"description_width": "40px"}, layout=W.Layout(width="360px"))
        #: The Plans table (sort by a header, filter, pick and best marked, CSV): a click on a row selects its plan.
        self.plans_table = PlansTable().add_class("cl-plans-table")
        #: Under it: every column of the plan frame, one click away (before a result: why there is none).
        self.plans_html = W.HTML(plan_table_html(None), _dom_classes=("cl-plans-all",))
        self.heuristics_html = W.HTML("", _dom_classes=("cl-heuristic-summary",))
        self.plans_box = W.VBox([self.plan_select, self.plans_table, self.plans_html], _dom_classes=("cl-plans",))
        #: The Anatomy view's sentences: the engine space's (or why there is none) and the kernels table.
        self.engines_html = W.HTML("", _dom_classes=("cl-engines-note",))
        self.kernels_html = W.HTML("", _dom_classes=("cl-kernels-view",))
        pane = figures.pane
        #: The views of the tabs, by title.
        self.views: dict[str, Any] = {
            "Plans": self.plans_box,
            "Latency": W.VBox([pane("latency")], _dom_classes=("cl-latency",)),
            "Heuristics": W.VBox([self.heuristics_html, pane("heuristics")], _dom_classes=("cl-heuristics",)),
            "Numerics": W.VBox([pane("errors"), pane("histogram")], _dom_classes=("cl-numerics",)),
            "Roofline": W.VBox([pane("roofline")], _dom_classes=("cl-roofline",)),
            "Anatomy": W.VBox([self.engines_html, pane("engines"), pane("knobs"),
                               W.HTML("<div class='cl-section'>kernels per plan</div>"), self.kernels_html],
                              _dom_classes=("cl-anatomy",)),
        }
        self.plan_select.observe(lambda ch: log.guard(self._on_plan_select, ch), names="value")
        self.plans_table.observe(lambda ch: log.guard(self._on_plan_select, ch), names="selected")
        self.draw()

    def show(self, result: Any, origin: Any, spec: Spec) -> None:
        """Show ``result`` in every view, its pick selected, under a banner saying where it comes from (``origin``:
        a :class:`~cudnn_lab.provenance.Provenance`); ``spec`` is the problem the controls show now."""
        self.result, self.origin, self.source_text = result, origin, origin.text
        plans = result.plans.sort_values("heuristic_rank", kind="stable", na_position="last")
        options = [(name if status == "ok" else f"{name} ({status})", name)
                   for name, status in zip(plans["plan"], plans["status"])]
        self._silent = True
        try:
            self.plan_select.options = options
            self.plan_select.value = None
            self.plans_table.show_result(result)
        finally:
            self._silent = False
        self.selected = None
        self.plans_html.value = _all_columns_html(result)  # the result's, whichever plan is picked
        # Every view drawn at once: a view drawn later, in the kernel's idle time, raced the widget messages of
        # the clicks that came meanwhile (lost tab and operation clicks in Chromium, 2026-11-26).
        self.select(pick_name(result), every_view=True)
        self.label(spec)
        for note in getattr(result, "warnings", []) or []:
            self._log.note(str(note))

    def select(self, plan: str | None, *, every_view: bool = False) -> None:
        """Highlight ``plan`` in the table and every figure (None: no highlight): at once in the view on screen
        (``every_view``: in all of them), in the others when they are shown."""
        if plan is not None:
            known = [] if self.result is None else list(self.result.plans["plan"])
            if plan not in known:
                raise OptionError("selected", plan, "is not a plan of the result shown" if known else
                                  "no result is shown yet")
        self.selected = plan
        self._silent = True
        try:
            self.plan_select.value = plan
            self.plans_table.selected = plan
        finally:
            self._silent = False
        self.draw(only_visible=not every_view)

    def draw_stale(self) -> None:
        """Draw every view a load or plan pick left waiting (for code that reads the figures of hidden views)."""
        waiting, self.stale = set(self.stale), set()
        self._draw_views(waiting)

    def show_view(self, name: str | None) -> None:
        """The Lab's tab changed to ``name``: draw that view's figures if a plan pick left them waiting."""
        self.visible = name
        if name in self.stale:
            self.stale.discard(name)
            self._draw_views({name})

    def label(self, spec: Spec) -> None:
        """The banner over every view: RECORDED or MEASURED HERE with GPU, driver, cuDNN and date; and a note when
        the controls have moved on from the result's problem."""
        if self.result is None:
            self.info.value = ""
            return
        text = self.origin.to_html()
        if self.result.spec != spec:
            text += (f"<div class='cl-stale'>These results are for {html.escape(self.result.spec.label())}; "
                     "the controls have changed since (Run, or Load its recording, to see theirs).</div>")
        self.info.value = text

    def draw(self, *, only_visible: bool = False) -> None:
        """Draw every figure again from the result and the selected plan; ``only_visible`` (a plan pick in the Lab):
        only the view on screen, the others when they are next shown."""
        views = set(FIGURE_VIEWS.values()) | {"Anatomy"}
        if only_visible and self.visible is not None and self.result is not None:
            self.stale |= views - {self.visible}
            self._draw_views(views & {self.visible})
            return
        self.stale.clear()
        if self.result is None:
            self.heuristics_html.value = ""
            self.engines_html.value = self.kernels_html.value = ""
            for key in RESULT_FIGURES + ANATOMY_FIGURES:
                self._figures.show_text(key, _EMPTY)
            return
        self._draw_views(views)

    def _draw_views(self, views: set[str]) -> None:
        """Draw the figures of ``views`` (view titles) from the result and the selected plan."""
        if self.result is None or not views:
            return
        self.heuristics_html.value = f"<p class='cl-label'>{heuristic_summary(self.result)}</p>"
        from ..plots.run import classic_call

        classic = classic_call(self.result) is not None
        for key, make in _figure_makers(self.result, self.selected).items():
            if FIGURE_VIEWS[key] not in views:
                continue
            if classic and key == "heuristics":  # a classic call has none: the sentence says so, no empty box
                self._figures.clear(key)
                continue
            try:
                self._figures.show(key, make())
            except Exception as e:  # noqa: BLE001 - one broken figure must not hide the others
                self._log.report(e)
                self._figures.show_text(key, f"could not draw this figure: {type(e).__name__}")
        if "Anatomy" in views:
            self.draw_anatomy()

    def draw_anatomy(self) -> None:
        """The Anatomy view: the engine-space figures with the exploration's answer, or one sentence saying why the
        result has none (and how to get one); the kernels per plan, or one sentence saying there are none."""
        from .. import plots
        from ..plots.anatomy import no_sample_text
        from ..results.anatomy import answer_text

        result = self.result
        try:
            self.kernels_html.value = plots.kernels_html(result)
        except Exception as e:  # noqa: BLE001 - the figures below must still be drawn
            self._log.report(e)
            self.kernels_html.value = f"<p class='cl-anatomy-note'>Cannot list kernels: {html.escape(str(e))}</p>"
        if not result.exploration["explored"]:
            self.engines_html.value = f"<p class='cl-anatomy-note'>{html.escape(no_sample_text(result))}.</p>"
            for key in ANATOMY_FIGURES:  # the sentence above says why: no empty boxes over the kernels table
                self._figures.clear(key)
            return
        self.engines_html.value = f"<p class='cl-anatomy-note'>{html.escape(answer_text(result.exploration))}</p>"
        makers = {"engines": lambda: plots.engine_space(result, selected=self.selected),
                  "knobs": lambda: plots.engine_knobs(result, selected=self.selected)}
        for key, make in makers.items():
            try:
                self._figures.show(key, make())
            except Exception as e:  # noqa: BLE001 - one broken figure must not hide the others
                self._log.report(e)
                self._figures.show_text(key, f"could not draw this figure: {type(e).__name__}")

    def _on_plan_select(self, change: dict[str, Any]) -> None:
        if not self._silent:
            self.select(change["new"])
