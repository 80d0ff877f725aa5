"""``Lab``: the kit's panel, composed of its parts. Controls on the left (the spec form, the run form, where results
come from); the status line and the views on the right (graph, plans, figures, what-if, sweep, code, log).

The parts: :class:`~.forms.SpecForm`, :class:`~.run_form.RunForm`, :class:`~.status.StatusLog` (status line and
Log view; every widget callback runs through its ``guard`` inside the Log's Output), :class:`~.figures.FigureHost`,
:class:`~.graph_view.GraphView`, :class:`~.results_view.ResultView`, :class:`~.whatif_view.WhatIfView` and
:class:`~.sweepview.SweepView` (each built when its tab is first shown), and :class:`~.state.LabState`. A new Lab
builds only what is on screen (the chosen operation's form, the first view: at most 300 widget models; issue 24),
and each button says what it did under itself (an answer line), as well as in the status line. The Lab only wires
them; its behaviour is in plain methods (:meth:`Lab.redraw`, :meth:`Lab.run`, :meth:`Lab.load_recorded`,
:meth:`Lab.select`, :meth:`Lab.save_report`, :meth:`Lab.state`), so tests drive it headless by setting widget values
and calling ``Button.click()``.
"""

from __future__ import annotations

import html
import threading
from pathlib import Path
from typing import Any

from ..capabilities import gpu_visible
from ..report_inputs import report_answers
from ..errors import CudnnLabError, NoGPUError, OptionError, SpecError, shorten
from ..gpu.defaults import warm_async
from ..gpu.frontend import warm_engine_family_async
from ..options import RunOptions
from ..provenance import provenance
from ..report import save_report
from ..results.paths import check_output_path
from ..runs import run
from ..specs import Spec
from .fields import OPS, controls_from_spec
from .figures import FigureHost
from .forms import SpecForm
from .graph_view import GraphView
from .lab_recordings import LIVE, RECORDED, RecordedResults
from .results_view import ResultView
from .run_form import RunForm, call_with_options
from .state import STATE_VERSION, VIEWS, LabState
from .state_panel import StatePanel
from .status import Busy, StatusLog, error_sentence, file_link
from .style import CSS, acting, answer, button, html_style, offer_run, row, section, shared_layout, show_working
from .sweepview import SweepView
from .whatif_view import WhatIfView

__all__ = ["DEFAULT_REPORT", "Lab", "NO_GPU_TEXT", "STATE_VERSION", "VIEWS"]

#: Where Save report writes when its path field is left as it is: lab_output/ in the current folder (the notebook's),
#: made on first use and ignored by git, so that the Lab leaves the repository clean.
DEFAULT_REPORT = "lab_output/cudnn_lab_report.html"
NO_GPU_TEXT = "No GPU: load recorded results"


def _check_spec(spec: Any) -> Spec:
    if not isinstance(spec, Spec):
        raise SpecError("spec", type(spec).__name__, "must be a cudnn_lab spec such as ConvSpec or MatmulSpec")
    if spec.op not in OPS:
        raise SpecError("spec", type(spec).__name__, f"has no controls here; the Lab edits "
                        f"{', '.join(c.__name__ for c in OPS.values())}")
    return spec


class Lab(RecordedResults):
    """The panel: ``Lab(spec)`` shows a spec's graph at once; Run (GPU) or Load (recorded results) fills the rest.

    ``lab.spec`` (get/set; any family, the operation choice follows), ``lab.result``, ``lab.selected`` (a plan
    name), ``lab.view`` (a tab title), ``lab.model_lines`` (the Latency and Roofline views' toggle),
    ``lab.run_options`` (a RunOptions, get/set), ``lab.save_report(path)``,
    ``lab.sweep_view``, ``lab.state()`` / ``Lab.from_state(d)`` and ``lab.save(path)`` / ``Lab.load(path)`` are the
    programmatic side. ``gpu`` overrides what :func:`cudnn_lab.probe` says (``gpu=False`` shows the recorded path).
    """

    def __init__(self, spec: Spec | None = None, *, gpu: bool | None = None) -> None:
        import ipywidgets as W

        if spec is not None:
            _check_spec(spec)
        self._gpu: bool = gpu_visible() if gpu is None else bool(gpu)  # no torch import: the Lab shows at once
        self.recorded: str | None = None
        #: The last report written by :meth:`save_report` (absolute path), or None.
        self.report_written: Path | None = None
        self.datasets_frame: Any = None
        self._offered_op: str | None = None
        #: operations whose cuDNN frontend engine modules were imported ahead of a Run (GPU Labs only)
        self._warmed: set[str] = set()

        # ---- the parts
        self.status_log = StatusLog(W)
        self.log, self.status, self.messages = self.status_log.log, self.status_log.status, self.status_log.messages
        self.busy_flag = Busy()
        self.figure_host = FigureHost(W, self.status_log)
        self.controls = SpecForm(spec, on_change=self._on_spec_change, guard=self.status_log.guard)
        self.run_form = RunForm()
        self.graph_view = GraphView(W, guard=self.status_log.guard)
        self.results = ResultView(W, self.figure_host, self.status_log, visible=VIEWS[0])  # the first tab
        #: The Sweep view's place in the tabs: :attr:`sweep_view` is built into it when first shown (or reached).
        self._sweep_view: SweepView | None = None
        self._sweep_box = W.VBox([])
        #: The What-if view: cuDNN's answers for other GPUs and cuDNN versions (built when its tab is first shown).
        self.whatif_view = WhatIfView(W, log=self.status_log, busy=self.busy_flag, spec=lambda: self.spec,
                                      result=lambda: self.result, shown=lambda: self.view == "What-if")

        # ---- left: where results come from
        self.run_button = button(W, "Run", icon="play", button_style="primary").add_class("cl-run")
        self.run_note = W.HTML("", _dom_classes=("cl-run-note",))
        #: Stop (beside Run, enabled while a run is under way): the run ends after the plan being measured and
        #: keeps what it measured (a partial result).
        self.stop_button = button(W, "Stop", icon="stop", tooltip="stop the run after the plan being measured; "
                                  "keep what it measured").add_class("cl-stop")
        self._stop = threading.Event()
        self._running = False
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="290px"))
        self.source = W.ToggleButtons(options=[LIVE, RECORDED], value=LIVE if self._gpu else RECORDED,
                                      style={"button_width": "100px"},
                                      tooltips=["measure on this machine's GPU", "show results recorded on a real GPU"])
        self._datasets = W.Dropdown(options=[], layout=W.Layout(width="290px"))
        self._reading: Any = None  # the thread reading the recordings' list, while it does
        self.load_button = button(W, "Load", icon="folder-open", tooltip="show the chosen recording in every view"
                                  ).add_class("cl-load")
        #: What Load did (or why not), under its button; and Save report's, under that one.
        self.load_answer = answer(W).add_class("cl-load-answer")
        self.report_answer = answer(W).add_class("cl-report-answer")
        self.recordings_note = W.HTML("", layout=W.Layout(width="400px"), _dom_classes=("cl-recordings-note",))
        self.live_box = W.VBox([row(W, "", self.run_button, self.stop_button, self.run_note),
                                row(W, "progress", self.progress)],
                               _dom_classes=("cl-live",))
        self.recorded_box = W.VBox([row(W, "recording", self._datasets), self.recordings_note,
                                    row(W, "", self.load_button), self.load_answer], _dom_classes=("cl-recorded",))
        self.report_path = W.Text(value=DEFAULT_REPORT, placeholder=DEFAULT_REPORT,
                                  tooltip="an .html file; a relative path is in the current folder",
                                  layout=W.Layout(width="290px"), _dom_classes=("cl-report-path",))
        self.report_button = button(W, "Save report", icon="file-text").add_class("cl-report")
        self.report_box = W.VBox([row(W, "report", self.report_path), row(W, "", self.report_button),
                                  self.report_answer], _dom_classes=("cl-report-box",))
        self.state_panel = StatePanel(W, state=lambda: LabState.from_dict(self.state()), apply=self.apply_state,
                                      log=self.status_log)
        plain = {"style": html_style(W), "layout": shared_layout(W)}
        left = W.VBox([W.HTML(CSS, **plain), W.HTML("<div class='cl-title'>cuDNN lab</div>", **plain),
                       section(W, "problem"), self.controls.box, section(W, "run options"), self.run_form.box,
                       section(W, "results"), row(W, "source", self.source), self.live_box, self.recorded_box,
                       self.report_box, section(W, "lab state (hand it out)"), self.state_panel.box],
                      layout=W.Layout(width="420px", min_width="420px", padding="0 12px 0 0"),
                      _dom_classes=("cl-left",))

        # ---- right: status and views
        views = {"Graph": self.graph_view.graph_box, **self.results.views, "What-if": self.whatif_view.box,
                 "Sweep": self._sweep_box, "Code": self.graph_view.code_html, "Log": self.log}
        self.tabs = W.Tab(children=[views[v] for v in VIEWS])
        self.tabs.titles = VIEWS
        right = W.VBox([self.status, self.results.info, self.tabs],
                       layout=W.Layout(flex="1 1 560px", min_width="0"), _dom_classes=("cl-right",))
        # Side by side where both fit (420 + 560 px), else the views wrap below the controls at full width.
        self.root = W.HBox([left, right], layout=W.Layout(width="100%", flex_flow="row wrap"), _dom_classes=("cl-lab",))

        # ---- wiring: every callback goes through the log's guard
        guard = self.status_log.guard
        self.run_button.on_click(lambda _: guard(self.run))
        # Stop acts at once, beside the Run under way (delivered on the widgets' kernel subshell, it must not wait
        # for the Run's turn in the guard)
        self.stop_button.on_click(lambda _: self.status_log.at_once(self.stop))
        self.load_button.on_click(lambda _: guard(self._load_clicked))
        self.report_button.on_click(lambda _: guard(acting(self.report_answer, self.save_report, lambda path: (
            f"Saved: {file_link(path)} (one HTML file that opens offline)."))))
        self.source.observe(lambda ch: guard(self._show_source), names="value")
        self.tabs.observe(lambda ch: guard(self._on_tab), names="selected_index")
        self.results.visible = self.view  # a plan pick redraws only the view on screen
        self._read_datasets()
        self.gpu = self._gpu
        self.busy_flag.subscribe(self._set_buttons)
        self._show_source()
        guard(self.redraw)
        if not self.messages:
            self.status_log.say("Ready. " + ("Run measures every plan on this GPU." if self._gpu else
                                             "No GPU here: choose a recording and Load it."))
        #: the background warm-up of a Lab on a GPU machine (torch, CUDA, cuDNN, the helper pool: gpu/defaults.warm;
        #: the engine family is warmed by redraw); None elsewhere, where the Lab stays as light as before
        self.warming: threading.Thread | None = None
        if self._gpu and gpu_visible():
            self.run_form.show_used({"state": "warming", "helpers": 0})
            self.warming = warm_async(None, 0, self.run_form.options, on_done=self.run_form.show_used)

    # ============================================================================================ public API

    @property
    def spec(self) -> Spec:
        """The current (last valid) spec; setting it updates every control and view."""
        return self.controls.spec

    @spec.setter
    def spec(self, spec: Spec) -> None:
        self.controls.set_spec(_check_spec(spec))
        self.status_log.guard(self.redraw)

    @property
    def gpu(self) -> bool:
        """Whether Run is offered (a GPU here, or ``gpu=True``)."""
        return self._gpu

    @gpu.setter
    def gpu(self, gpu: bool) -> None:
        self._gpu = offer_run(self.run_button, self.run_note, gpu, NO_GPU_TEXT)
        if self._sweep_view is not None:
            self._sweep_view.gpu = self._gpu
        self._set_buttons(self.busy)

    @property
    def datasets(self) -> Any:
        """The recording list (a Dropdown of the chosen operation's recordings), once it is read."""
        self._datasets_read()
        return self._datasets

    @property
    def sweep_view(self) -> SweepView:
        """The Sweep view: live sweeps, recorded sweeps, GPU comparison (given the parts it uses, not the Lab);
        built when its tab is first shown or it is first reached here, into the tab's box (``sweep_view.box``)."""
        if self._sweep_view is None:
            view = SweepView(log=self.status_log, figures=self.figure_host, busy=self.busy_flag,
                             spec=lambda: self.spec, run_options=lambda: self.run_form.options, gpu=self._gpu)
            built, box = view.box, self._sweep_box
            box.layout, box.children = built.layout, built.children  # into the tab's place, which stays
            for name in built._dom_classes:
                box.add_class(name)
            built.children = ()
            built.close()
            view.box = box
            self._sweep_view = view
            view.set_op(self.spec.op)
        return self._sweep_view

    @property
    def busy(self) -> bool:
        """True while a run, a load or a sweep is under way (every button is disabled)."""
        return self.busy_flag.busy

    @property
    def result(self) -> Any:
        """The :class:`~cudnn_lab.results.RunResult` shown (None before a run or a load)."""
        return self.results.result

    @property
    def selected(self) -> str | None:
        """The plan every figure highlights (a plan name), or None."""
        return self.results.selected

    @selected.setter
    def selected(self, plan: str | None) -> None:
        self.select(plan)

    @property
    def model_lines(self) -> bool:
        """Whether the Latency and Roofline views draw the speed models' lines beside the measured points (their
        "model lines" toggle)."""
        return self.results.options["models"]

    @model_lines.setter
    def model_lines(self, on: bool) -> None:
        self.results.set_option("models", on)

    @property
    def view(self) -> str:
        """Title of the tab shown."""
        index = self.tabs.selected_index
        return VIEWS[index] if index is not None else VIEWS[0]

    @view.setter
    def view(self, title: str) -> None:
        if title not in VIEWS:
            raise OptionError("view", title, f"must be one of {', '.join(VIEWS)}", where="Lab")
        self.tabs.selected_index = VIEWS.index(title)

    @property
    def run_options(self) -> RunOptions:
        """The run form's options (what Run passes to ``cl.run``)."""
        return self.run_form.options

    @run_options.setter
    def run_options(self, options: Any) -> None:
        self.run_form.set_options(options)

    def redraw(self) -> None:
        """Draw the current spec's graph and script; the Sweep view offers its fields; stale results are marked."""
        spec = self.spec
        if self._sweep_view is not None:  # else it takes the operation when built
            self._sweep_view.set_op(spec.op)
        if spec.op != self._offered_op:
            self.offer_recordings()
        self.results.label(spec)
        self._banner_partial()
        self.graph_view.redraw(spec)
        self.run_form.show_for(spec)  # a classic call's form has no heuristics options
        self.whatif_view.changed()
        if self._gpu and spec.op not in self._warmed:  # the first Run of this family need not import them
            self._warmed.add(spec.op)
            warm_engine_family_async(spec)

    def run(self) -> Any:
        """Run the current spec on the GPU with the run form's options and show the result (Run button).

        Without a GPU (this machine has none, or ``gpu=False``) the status says so and the recordings are offered.
        """
        if self.busy:
            return None
        spec, options = self.spec, self.run_form.options
        self._stop.clear()
        self._running = True
        with self.busy_flag.working():
            try:
                if not self._gpu:
                    raise NoGPUError("this Lab was made with gpu=False")
                self.progress.value, self.progress.max = 0, 1
                self.status_log.say(f"Running {spec.label()} …")
                result = call_with_options(run, spec, options=options, progress=LiveRows(self, spec),
                                           stop=self._stop.is_set)
            except NoGPUError as e:
                self._offer_recordings(e)
                return None
            finally:
                self._running = False
            self.progress.value = self.progress.max
            self.show_result(result)
            self.run_form.show_used(result.settings.get("decisions"))  # what the run used: helpers, kernel cache
        return result

    def stop(self) -> None:
        """Stop the run under way after the plan being measured (Stop button); it keeps what it measured."""
        if self._running:
            self._stop.set()
            self.status_log.say("Stopping after the plan being measured …")

    @property
    def figures(self) -> dict[str, Any]:
        """The figure each pane shows, by name; views a load left waiting are drawn first (only the view on
        screen is drawn at a load or plan pick)."""
        self.results.draw_stale()
        return self.figure_host.figures

    @property
    def figure_widgets(self) -> dict[str, Any]:
        """The pane (Output widget) of each figure, by name, every view drawn (see :attr:`figures`)."""
        self.results.draw_stale()
        return self.figure_host.widgets

    def show_result(self, result: Any, *, recorded: str | None = None, every_view: bool = True) -> None:
        """Show ``result`` in every view (without ``every_view``: in the view on screen, the others left stale for
        ``lab.results.draw_stale()``); its spec becomes ``lab.spec`` (when the form edits its family). A result
        of another operation switches the operation and says so. Where it came from is the result's own
        (:func:`~cudnn_lab.provenance.provenance`: RECORDED when loaded from a file, else MEASURED HERE);
        ``recorded``: the recording's name or path that the panel's state keeps (default: the file)."""
        origin = provenance(result)
        self.recorded = (recorded or str(result.loaded_from)) if origin.kind == "recorded" else None
        before = self.spec.op
        if result.spec != self.spec:
            try:
                self.controls.set_spec(result.spec)
            except SpecError:  # a family the form does not edit: show its results all the same
                self.status_log.warn(f"the controls edit {', '.join(OPS)} only; the results shown are for "
                                     f"{result.spec.label()}")
            else:
                self.graph_view.redraw(result.spec)
                if self._sweep_view is not None:
                    self._sweep_view.set_op(result.spec.op)
                if result.spec.op != self._offered_op:
                    self.offer_recordings()
        self.results.show(result, origin, self.spec, every_view=every_view)
        self._banner_partial()
        self.whatif_view.changed()  # the measured column follows the result shown
        self._set_buttons(self.busy)
        n_ok = int((result.plans["status"] == "ok").sum())
        switched = (f" The operation switched from {before} to {result.spec.op} to match it."
                    if result.spec.op != before else "")
        what = f"recording {origin.name}" if origin.kind == "recorded" else "run on this machine's GPU"
        partial = " A PARTIAL run: it was stopped before its end." if getattr(result, "partial", False) else ""
        self.status_log.say(f"Showing {len(result.plans)} plans ({n_ok} ran) from the {what}.{switched}{partial}")

    def select(self, plan: str | None) -> None:
        """Highlight ``plan`` in the table and every figure (None: no highlight)."""
        self.results.select(plan)

    def save_report(self, path: str | Path | None = None) -> Path:
        """Write the result shown as one self-contained HTML file (Save report); the status line links to it.

        ``path`` defaults to the report field's value; a relative path is taken in the current folder.
        """
        if self.result is None:
            raise OptionError("report", None, "there is no result to report yet: Run, or Load a recording first",
                              where="Save report")
        text = str(path if path is not None else self.report_path.value).strip() or DEFAULT_REPORT
        target = check_output_path(text, what="report", suffixes=(".html", ".htm"),
                                   make_parents=text == DEFAULT_REPORT)  # the default folder is made on first use
        with self.busy_flag.working():  # progress under the button at once (an earlier "Saved" goes); what the
            show_working(self.report_answer, "gathering cuDNN's answers for the report")  # views drew is reused
            result = self.result  # the graph drawn, its script, the recorded what-if answers (kept per recording)
            answers = self.results.kept("report answers", lambda: report_answers(result))
            show_working(self.report_answer, "writing the report (figures, tables)")
            written = save_report(result, target, answers, origin=self.results.origin,
                                  drawn=self.results.kept).resolve()
        self.report_written = written
        link = file_link(written)
        self.status_log.say_html(f"Report saved: {link} (one HTML file that opens offline)")
        return written

    # ---- state

    def state(self) -> dict[str, Any]:
        """Everything needed to rebuild this panel (:class:`~.state.LabState` as a dict)."""
        return LabState(spec=self.spec, view=self.view, selected=self.selected, run=self.run_form.options,
                        source="recorded" if self.source.value == RECORDED else "live",
                        recorded=self.recorded, whatif_targets=self.whatif_view.state_targets(),
                        preset=self.controls.preset, model_lines=self.model_lines).to_dict()

    @classmethod
    def from_state(cls, state: dict[str, Any] | LabState, **kwargs: Any) -> Lab:
        """Rebuild a panel from :meth:`state` (a recording named there is loaded again)."""
        st = state if isinstance(state, LabState) else LabState.from_dict(state)
        lab = cls(st.spec, **kwargs)
        lab.apply_state(st)
        return lab

    def apply_state(self, state: LabState) -> None:
        """Show ``state`` in this panel: run options, source, recording, spec, selected plan, What-if targets,
        model lines, view. All of it is checked first (the controls edit its spec, its recording loads and is one
        run, its plan is one of that run's, its What-if targets are known); only then does anything change, so a
        state that fails leaves the panel as it was."""
        if not isinstance(state, LabState):
            raise OptionError("state", type(state).__name__, "must be a LabState (LabState.from_dict(lab.state()))",
                              where="Lab")
        try:
            controls_from_spec(state.spec)
        except SpecError as e:
            raise OptionError("spec", state.spec.label(), f"cannot be shown here: {e.allowed}",
                              where="Lab state") from None
        result = None
        if state.recorded:
            try:
                result = self._read_run(state.recorded, "recorded", "Lab state")
            except CudnnLabError as e:
                if getattr(e, "option", None) == "recorded":
                    raise
                raise OptionError("recorded", state.recorded, f"does not load here: {error_sentence(e)}",
                                  where="Lab state") from None
        shown = result if result is not None else self.result
        plans = set() if shown is None else set(shown.plans["plan"])
        if result is not None and state.selected is not None and state.selected not in plans:
            raise OptionError("selected", state.selected, f"is not a plan of the recording {shorten(state.recorded)}",
                              where="Lab state")
        if state.whatif_targets is not None:
            try:
                self.whatif_view.check_targets(list(state.whatif_targets))
            except OptionError as e:
                raise OptionError("whatif_targets", state.whatif_targets, e.allowed, where="Lab state") from None
        self.run_form.set_options(state.run)
        self.source.value = RECORDED if state.source == "recorded" else LIVE
        # a recording shown next draws them (once)
        self.results.set_option("models", state.model_lines, draw=result is None)
        if result is not None:
            with self.busy_flag.working():
                self.show_result(result, recorded=state.recorded)
        if self.spec != state.spec:
            self.spec = state.spec
        self.controls.restore_preset(state.preset)
        if state.selected in plans:
            self.select(state.selected)
        elif state.selected is not None:  # a live run's plan: shown only where that run is
            self.status_log.note(f"the state's plan {shorten(state.selected)} is not in the result shown here")
        self.whatif_view.restore(state.whatif_targets)
        self.view = state.view

    def save(self, path: str | Path) -> Path:
        """Write :meth:`state` as JSON."""
        return LabState.from_dict(self.state()).save(path)

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> Lab:
        """A panel rebuilt from a :meth:`save` file."""
        return cls.from_state(LabState.load(path), **kwargs)

    # ---- display

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        return self.root._repr_mimebundle_(include=include, exclude=exclude, **kwargs)

    def __repr__(self) -> str:
        return f"Lab({self.spec!r})"

    # ============================================================================================ internals

    def _set_buttons(self, busy: bool) -> None:
        self.run_button.disabled = busy or not self._gpu
        self.stop_button.disabled = not (busy and self._running)
        self.load_button.disabled = busy or not self._datasets.options
        self.report_button.disabled = busy or self.result is None
        self.report_button.tooltip = ("write a self-contained HTML report of the result shown"
                                      if self.result is not None else "show a result first (Run or Load)")

    def _banner_partial(self) -> None:
        """A partial result (a stopped run) says so under the banner over every view."""
        result = self.result
        if result is not None and getattr(result, "partial", False):
            why = html.escape(str(result.settings.get("stopped") or "stopped"))
            self.results.info.value += (f"<div class='cl-partial'>PARTIAL run ({why}): {len(result.plans)} of "
                                        f"{result.settings.get('proposed', len(result.plans))} proposed plans "
                                        f"measured.</div>")

    def _progress(self, done: int, total: int, message: str) -> None:
        self.progress.max = max(int(total), 1)
        self.progress.value = min(int(done), self.progress.max)
        self.status_log.say(f"{message} ({done}/{total})")

    def _show_source(self) -> None:
        live = self.source.value == LIVE
        self.live_box.layout.display = "flex" if live else "none"
        self.recorded_box.layout.display = "none" if live else "flex"

    def _on_tab(self) -> None:
        self.results.show_view(self.view)
        if self.view == "What-if":
            self.whatif_view.show()
        elif self.view == "Sweep":
            self.sweep_view  # noqa: B018 - built when first shown

    def _on_spec_change(self, spec: Spec) -> None:
        self.status_log.guard(self.redraw)


class LiveRows:
    """The progress a Lab's run reports to: the progress bar and status line, and each plan's row as it comes,
    filling the Plans table (one table model, refilled) while the rest of the plans build."""

    def __init__(self, lab: Lab, spec: Spec) -> None:
        self.lab, self.spec = lab, spec
        self.rows: list[dict[str, Any]] = []

    def __call__(self, done: int, total: int, message: str) -> None:
        self.lab._progress(done, total, message)

    def row(self, row: dict[str, Any]) -> None:
        """One more plan measured: the table shows every row so far, and the line under it says the run goes on."""
        self.rows.append(row)
        self.lab.results.plans_table.show_rows(self.spec, self.rows)
        self.lab.results.plans_html.value = (
            f"<p class='cl-empty'>Run in progress: {len(self.rows)} plan{'s' * (len(self.rows) != 1)} measured so "
            f"far, in the heuristics' order (Stop keeps them). Every column and the other views come when the run "
            f"ends.</p>")
