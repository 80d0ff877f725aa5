"""The views of one result: the plan table and its plan choice, the result's label, the heuristics sentence, the
figures (latency, heuristics, errors, histogram, roofline) with the selected plan highlighted everywhere, the toggles
of the figure options the registry names (the model lines of Latency and Roofline), and the Anatomy view (the engine
space explored beyond the proposals, the kernels per plan).

The pick and the best plan are :mod:`cudnn_lab.results.metrics`' (one definition); the figures are
:mod:`cudnn_lab.plots`'; the table is :mod:`.tables`'. This part only puts them in their panes.
"""

from __future__ import annotations

import functools
import html
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import OptionError
from ..plots.registry import FIGURE_OPTIONS, RUN_FIGURES, VIEWS, RunFigure, figures_of_view, options_of_view
from ..specs import Spec
from .figure_options import ViewToggles, option_note
from .figures import FigureHost, grown_height, pane_height
from .status import StatusLog
from .plans_widget import PlansTable, table_data
from .tables import full_table_html, heuristic_summary, plan_table_html
from ..results import metrics
from .. import plots
from ..plots.anatomy import no_sample_text
from ..results.anatomy import answer_text

__all__ = ["ANATOMY_FIGURES", "RESULT_FIGURES", "ResultView", "pick_name"]

#: The figures of one result by pane name (the registry's, plots/registry.py): the Anatomy view's apart.
RESULT_FIGURES: tuple[str, ...] = tuple(f.name for f in RUN_FIGURES if f.view != "Anatomy")
ANATOMY_FIGURES: tuple[str, ...] = tuple(f.name for f in figures_of_view("Anatomy"))
_EMPTY = "No results yet: Run on a GPU, or load a recorded result (source: Recorded)."
#: How many drawings (figures, tables, sentences) of recordings a ResultView keeps for loads and picks that come back.
MEMO_SIZE = 96


def result_key(result: Any) -> tuple[Any, ...] | None:
    """What a recording's drawings are made from: its file, with the file's size and time (a file written again is
    drawn again); None for a result not read from a file (a live run: drawn each time)."""
    path = getattr(result, "loaded_from", None)
    if path is None:
        return None
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return (str(path), stat.st_mtime_ns, stat.st_size)


def pick_name(result: Any) -> str | None:
    """The heuristic's pick of a result (a plan name), or None when no plan ran."""
    row = metrics.pick(result.plans)
    return None if row is None else str(row["plan"])


def _all_columns_html(result: Any) -> str:
    """Every column of the plan frame under a ``<details>`` (the Plans table above has the compact columns)."""
    if result is None or not len(result.plans):
        return plan_table_html(result)
    return (f"<details class='cl-all-columns'><summary>all columns ({len(result.plans.columns)})</summary>"
            f"<div class='cl-table-wrap cl-table-wide'>{full_table_html(result)}</div></details>")


class ResultView:
    """The result shown (``result``), where it came from (``origin``, a :class:`~cudnn_lab.provenance.Provenance`;
    ``source_text`` its line), the plan highlighted (``selected``) and the figure options drawn (``options``)."""

    def __init__(self, W: Any, figures: FigureHost, log: StatusLog, *, visible: str | None = None) -> None:
        self._W = W
        self._figures = figures
        self._log = log
        self._silent = False
        self.result: Any = None
        self.selected: str | None = None
        self.source_text = ""
        self.origin: Any = None
        #: The view on screen (set by the Lab; None: draw every view at once, as a standalone ResultView does), and
        #: the views whose figures wait for a redraw until they are shown.
        self.visible: str | None = visible
        self.stale: set[str] = set()
        self._all_columns_of: Any = None  # the result whose every-column table plans_html shows
        #: Drawings of recordings by (result_key, what, selected plan): a load or pick seen before is not redrawn.
        self._memo_store: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._key: tuple[Any, ...] | None = None
        #: The figure options (plots/registry.py's FIGURE_OPTIONS) every view draws with, off until toggled; the
        #: toggles of each view whose figures take one, by view (built when the view is first drawn).
        self.options: dict[str, bool] = dict.fromkeys(FIGURE_OPTIONS, False)
        self.toggles: dict[str, ViewToggles] = {}
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
        #: What a view shows above and below its figures (the registry's, plots/registry.py, in its order).
        above = {"Heuristics": [self.heuristics_html], "Anatomy": [self.engines_html]}
        below = {"Anatomy": [W.HTML("<div class='cl-section'>kernels per plan</div>"), self.kernels_html]}
        #: The views of the tabs, by title: Plans, then each view of the registry's run figures.
        self.views: dict[str, Any] = {"Plans": self.plans_box, **{
            view: W.VBox([*above.get(view, []), *(figures.pane(f.name) for f in figures_of_view(view)),
                          *below.get(view, [])], _dom_classes=(f"cl-{view.lower()}",))
            for view in VIEWS}}
        self.plan_select.observe(lambda ch: log.guard(self._on_plan_select, ch), names="value")
        self.plans_table.observe(lambda ch: log.guard(self._on_plan_select, ch), names="selected")
        self.draw()

    def show(self, result: Any, origin: Any, spec: Spec, *, every_view: bool = True) -> None:
        """Show ``result`` in every view, its pick selected, under a banner saying where it comes from (``origin``:
        a :class:`~cudnn_lab.provenance.Provenance`); ``spec`` is the problem the controls show now. Without
        ``every_view``, only the view on screen is drawn and the others are left in :attr:`stale` for the caller's
        :meth:`draw_stale` (the Lab's Load answers first, then draws them in the same callback)."""
        self.result, self.origin, self.source_text = result, origin, origin.text
        self._key = result_key(result)
        plans = result.plans.sort_values("heuristic_rank", kind="stable", na_position="last")
        options = [(name if status == "ok" else f"{name} ({status})", name)
                   for name, status in zip(plans["plan"], plans["status"])]
        self._silent = True
        try:
            self.plan_select.options = options
            self.plan_select.value = None
            self.plans_table.show_data(*self._memo("table", None, lambda: table_data(result)))
        finally:
            self._silent = False
        self.selected = None
        # Never drawn in the kernel's idle time: that raced the widget messages of the clicks that came meanwhile
        # (lost tab and operation clicks in Chromium, 2026-11-26); draw_stale runs in the caller's callback.
        self.select(pick_name(result), every_view=every_view)
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
        """Draw every view a load or plan pick left waiting (the Lab's Load, after its answer; code that reads the
        figures of hidden views)."""
        waiting, self.stale = set(self.stale), set()
        self._prepare(waiting)
        self._draw_views(waiting)

    def _prepare(self, views: set[str]) -> None:
        """Make the figures of ``views`` before any is sent (a recording's, kept by :meth:`_memo`): meanwhile the
        browser draws the view a load answered with alone, then gets the others back to back (2026-11-26: sent one
        by one, they joined its message queue and held the answer's paint back)."""
        result, selected = self.result, self.selected
        if self._key is None or result is None:
            return
        if "Plans" in views and self._all_columns_of is not result:
            self._memo("all columns", None, lambda: _all_columns_html(result))
        for figure in RUN_FIGURES:
            if figure.view in views and figure.applies(result) and not figure.said_instead(result):
                try:
                    self._memo(*self._drawing(figure, result, selected))
                except Exception:  # noqa: BLE001 - drawn again and reported in its pane by _show_figure
                    pass

    def set_option(self, name: str, on: bool, *, draw: bool = True) -> None:
        """Draw the figures that take option ``name`` (a key of the registry's FIGURE_OPTIONS: 'models') with it
        ``on`` or not: at once in the view on screen, in the others when shown (``draw`` False: none now, for a
        caller that shows a new result next). Its toggles follow."""
        if name not in FIGURE_OPTIONS:
            raise OptionError("figure option", name, f"must be one of {', '.join(FIGURE_OPTIONS)}",
                              where="result views")
        if not isinstance(on, bool):
            raise OptionError(name, on, "must be True or False", where="result views")
        changed, self.options[name] = self.options[name] != on, on
        affected = {f.view for f in RUN_FIGURES if name in f.options}
        if changed and draw and self.result is not None:
            if self.visible is None:
                self._draw_views(affected)
            else:
                self.stale |= affected - {self.visible}
                self._draw_views(affected & {self.visible})
        self._show_toggles(affected)

    def _drawing(self, figure: RunFigure, result: Any, selected: str | None) -> tuple[str, str | None, Any]:
        """What :meth:`_memo` keeps ``figure`` drawn as (its name, with the options drawn) and how to draw it."""
        on = {o: True for o in figure.options if self.options[o]}
        return (figure.name + "".join(f"+{o}" for o in on), selected,
                functools.partial(figure.draw, result, selected, **on))

    def _show_toggles(self, views: set[str]) -> None:
        """Build the option toggles of ``views`` not built yet (above their figures), and say beside each what it
        draws for the result shown (or that the result has nothing for it)."""
        for view in sorted(views):
            names = options_of_view(view)
            if not names:
                continue
            if view not in self.toggles:
                toggles = self.toggles[view] = ViewToggles(self._W, names, self.options, self.set_option,
                                                           self._log.guard)
                self.views[view].children = (toggles.box, *self.views[view].children)
            notes = [option_note(name, self.options[name], self._about(name)) for name in names]
            self.toggles[view].show(self.options, " ".join(n for n in notes if n))

    def _about(self, name: str) -> tuple[bool, str] | None:
        """What option ``name`` has to draw for the result shown (the registry's ``about``), None before a result;
        one that cannot be told says why (and the Log has it)."""
        result = self.result
        if result is None:
            return None
        try:
            return self._memo(f"about {name}", None, lambda: FIGURE_OPTIONS[name].about(result))
        except Exception as e:  # noqa: BLE001 - the figures must still be drawn
            self._log.report(e)
            return False, f"could not tell ({type(e).__name__})"

    def show_view(self, name: str | None) -> None:
        """The Lab's tab changed to ``name``: draw that view's figures if a plan pick (or, before a result, the new
        Lab) left them waiting."""
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
        views = set(VIEWS) | {"Plans"}  # Plans: its every-column table (made once per result)
        if only_visible and self.visible is not None and self.result is not None:
            self.stale |= views - {self.visible}
            self._draw_views(views & {self.visible})
            return
        self.stale.clear()
        if self.result is None:
            self.heuristics_html.value = ""
            self.engines_html.value = self.kernels_html.value = ""
            if self.visible is not None:  # in a Lab: the view on screen says it now, the others when shown (no
                self.stale |= views - {self.visible}  # plotly figure at start: the browser's first plotly draw cost
                views &= {self.visible}  # more than half of a cold Run to panel, 2026-11-26)
        self._draw_views(views)

    def _all_columns(self, result: Any) -> None:
        """The Plans view's every-column table of ``result`` (the result's, whichever plan is picked: made once)."""
        if self._all_columns_of is not result:
            self.plans_html.value = self._memo("all columns", None, lambda: _all_columns_html(result))
            self._all_columns_of = result

    def _draw_views(self, views: set[str]) -> None:
        """Draw the figures of ``views`` (view titles) from the result and the selected plan (before a result: that
        there is none), with their option toggles."""
        self._show_toggles(views)
        if self.result is None:
            for figure in RUN_FIGURES:
                if figure.view in views:
                    self._figures.show_text(figure.name, _EMPTY)
            return
        if not views:
            return
        if "Plans" in views:
            self._all_columns(self.result)
        if "Heuristics" in views:
            result = self.result
            self.heuristics_html.value = self._memo("heuristics sentence", None, lambda: (
                f"<p class='cl-label'>{heuristic_summary(result)}</p>"))
        for figure in RUN_FIGURES:
            if figure.view in views and figure.view != "Anatomy":
                self._show_figure(figure)
        if "Anatomy" in views:
            self.draw_anatomy()

    def _show_figure(self, figure: RunFigure) -> None:
        """Draw ``figure`` in its pane; none (no empty box) where the result has none or the view's sentence says
        why (a classic call's heuristics, an engine space not sampled); a broken figure says so in its pane."""
        if not figure.applies(self.result) or figure.said_instead(self.result):
            self._figures.clear(figure.name)
            return
        try:
            what, selected, make = self._drawing(figure, self.result, self.selected)
            fig = self._memo(what, selected, make)
            # drawn with an option (model lines: more legend entries, a note under the title): taller, not squeezed
            height = grown_height(fig, pane_height(figure.name)) if what != figure.name else None
            self._figures.show(figure.name, fig, height=height)
        except Exception as e:  # noqa: BLE001 - one broken figure must not hide the others
            self._log.report(e)
            self._figures.show_text(figure.name, f"could not draw this figure: {type(e).__name__}")

    def draw_anatomy(self) -> None:
        """The Anatomy view: the engine-space figures with the exploration's answer, or one sentence saying why the
        result has none (and how to get one); the kernels per plan, or one sentence saying there are none."""
        result = self.result
        try:
            self.kernels_html.value = self._memo("kernels", None, lambda: plots.kernels_html(result))
        except Exception as e:  # noqa: BLE001 - the figures below must still be drawn
            self._log.report(e)
            self.kernels_html.value = f"<p class='cl-anatomy-note'>Cannot list kernels: {html.escape(str(e))}</p>"
        explored = result.exploration["explored"]  # if not, the sentence says why: no empty boxes over the kernels
        text = answer_text(result.exploration) if explored else f"{no_sample_text(result)}."
        self.engines_html.value = f"<p class='cl-anatomy-note'>{html.escape(text)}</p>"
        for figure in figures_of_view("Anatomy"):
            self._show_figure(figure)

    def kept(self, what: str, make: Callable[[], Any]) -> Any:
        """``make()`` for the recording shown, kept with its drawings (a figure drawn with no plan picked, the
        report's answers): Save report reuses what the views drew."""
        return self._memo(what, None, make)

    def _memo(self, what: str, selected: str | None, make: Callable[[], Any]) -> Any:
        """``make()``, kept for the recording shown (``what`` drawn with plan ``selected``): alternating loads of
        recordings, or picks that come back to a plan, reuse what was drawn (made, not changed, by the caller)."""
        if self._key is None:
            return make()
        key = (*self._key, what, selected)
        if key in self._memo_store:
            self._memo_store.move_to_end(key)
            return self._memo_store[key]
        value = self._memo_store[key] = make()
        while len(self._memo_store) > MEMO_SIZE:
            self._memo_store.popitem(last=False)
        return value

    def _on_plan_select(self, change: dict[str, Any]) -> None:
        if not self._silent:
            self.select(change["new"])
