"""``Lab``: the kit's panel. Controls on the left; views of the graph, the plans and the measurements on the right.

Every piece of behaviour is a plain method (:meth:`Lab.redraw`, :meth:`Lab.run`, :meth:`Lab.load_recorded`,
:meth:`Lab.select`, :meth:`Lab.save_report`, :meth:`Lab.state`; the Sweep view's in ``lab.sweep_view``), so tests
drive the panel headless by setting widget values and calling ``Button.click()``. Widget callbacks go through
:meth:`Lab._guard`: an exception or a warning never escapes into the notebook; it is written to the Log view and
summarized in the status line.
"""

from __future__ import annotations

import functools
import html
import json
import re
import shutil
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import CudnnLabError, NoGPUError, SpecError
from ..specs import ConvSpec, Spec, spec_from_dict
from .controls import OPS, SpecControls, _row
from .tables import cudnn_version_text, heuristic_summary, plan_table_html, result_label

__all__ = ["DEFAULT_REPORT", "Lab", "NO_GPU_TEXT", "STATE_VERSION", "VIEWS"]

VIEWS: tuple[str, ...] = ("Graph", "Plans", "Latency", "Heuristics", "Numerics", "Roofline", "Sweep", "Code", "Log")
#: The figures of a result (one run); the Sweep view's figure is "sweep".
RESULT_FIGURES: tuple[str, ...] = ("latency", "heuristics", "errors", "histogram", "roofline")
#: Where Save report writes when its path field is left as it is (the current folder).
DEFAULT_REPORT = "cudnn_lab_report.html"
STATE_VERSION = 1
NO_GPU_TEXT = "No GPU: load recorded results"
LIVE, RECORDED = "Live GPU", "Recorded"
_FIGURE_HEIGHT = 440
_FIGURE_WIDTH = 920

_CSS = """
<style>
.cl-lab { font-family: var(--jp-ui-font-family, sans-serif); }
.cl-lab .cl-title { font-size: 15px; font-weight: 600; margin: 0 0 4px 0; }
.cl-lab .cl-section { font-size: 12px; font-weight: 600; color: #374151; margin: 8px 0 2px 0;
  border-bottom: 1px solid #e5e7eb; }
.cl-lab .cl-label { font-size: 13px; }
.cl-lab .cl-hint { color: #6b7280; font-size: 11px; white-space: nowrap; }
.cl-lab .cl-error { color: #b91c1c; font-size: 11px; line-height: 1.3; }
.cl-lab .cl-invalid input, .cl-lab .cl-invalid select { border-color: #dc2626 !important;
  background: #fef2f2 !important; }
.cl-lab .cl-status-text { font-size: 12px; color: #374151; }
.cl-lab .cl-status-error { font-size: 12px; color: #b91c1c; }
.cl-lab .cl-result-info { font-size: 12px; color: #1f2937; }
.cl-lab .cl-stale { color: #b45309; }
.cl-lab .cl-table-wrap { max-height: 620px; overflow: auto; }
.cl-lab .cl-plan-table { border-collapse: collapse; font-size: 12px; line-height: 1.35; }
.cl-lab .cl-plan-table th { text-align: left; border-bottom: 2px solid #9ca3af; padding: 3px 8px;
  position: sticky; top: 0; background: white; }
.cl-lab .cl-plan-table td { border-bottom: 1px solid #e5e7eb; padding: 2px 8px; white-space: nowrap;
  font-variant-numeric: tabular-nums; vertical-align: top; }
.cl-lab .cl-plan-table tr.cl-selected { background: #fef3c7; }
.cl-lab .cl-plan-table tr.cl-failed { color: #9ca3af; }
.cl-lab .cl-plan-table td.cl-col-plan { font-family: var(--jp-code-font-family, monospace); font-size: 11px; }
.cl-lab .cl-plan-table td.cl-col-knobs, .cl-lab .cl-plan-table td.cl-col-notes { white-space: normal;
  font-size: 11px; color: #4b5563; max-width: 200px; }
.cl-lab .cl-plan-table td.cl-col-knobs { min-width: 220px; max-width: 320px; }
.cl-lab .cl-plan-table td.cl-col-error { white-space: normal; min-width: 64px; max-width: 260px; }
.cl-lab .cl-plan-table td.cl-col-median, .cl-lab .cl-plan-table td.cl-col-iqr,
.cl-lab .cl-plan-table td.cl-col-workspace { text-align: right; }
.cl-lab .cl-code-text { max-height: 600px; overflow: auto; font-size: 12px; background: #f9fafb;
  border: 1px solid #e5e7eb; padding: 8px; margin: 0; white-space: pre; line-height: 1.4; }
.cl-lab .cl-graph-svg { overflow: auto; }
.cl-lab .cl-empty { color: #6b7280; font-style: italic; }
.cl-lab .cl-not-offered-text { font-size: 11px; white-space: normal; }
.cl-lab .cl-op .widget-toggle-button, .cl-lab .cl-compact .widget-toggle-button { padding-left: 2px;
  padding-right: 2px; }
.cl-lab .cl-code-note { font-size: 13px; line-height: 1.45; max-width: 820px; }
</style>
"""


@functools.lru_cache(maxsize=128)
def _svg(source: str) -> str:
    """The drawing of a DOT text as inline SVG (needs ``dot``), sized to fit the view."""
    import graphviz

    svg = graphviz.Source(source).pipe(format="svg").decode("utf-8")
    svg = svg[svg.find("<svg"):]
    m = re.match(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    if m:
        w, h = float(m.group(1)) * 4 / 3, float(m.group(2)) * 4 / 3
        scale = min(1.0, 680 / w, 600 / h)
        svg = svg.replace(m.group(0), f'<svg width="{w * scale:.0f}px" height="{h * scale:.0f}px"', 1)
    return svg


@functools.lru_cache(maxsize=128)
def dot_source(spec: Spec) -> str:
    """DOT text of any spec's drawing: the frontend graph, or for pooling the classic call that runs instead."""
    from ..graph.labgraph import cached_dot_source

    return cached_dot_source(spec)


def code_html(spec: Spec) -> str:
    """The Code view: the standalone script that rebuilds the graph, or for pooling why there is none."""
    if spec.op == "pool":
        from ..graph.pool import CLASSIC_CALL, NO_GRAPH_SUMMARY, classic_params

        params = ", ".join(f"{k}={v}" for k, v in classic_params(spec).items())
        return (f"<div class='cl-code-note'><p><b>No script for pooling.</b> The standalone script rebuilds a "
                f"cuDNN frontend graph, and pooling has none: {html.escape(NO_GRAPH_SUMMARY)}</p>"
                f"<p class='cl-hint'>What runs: {html.escape(CLASSIC_CALL)}({html.escape(params)}) on X "
                f"{list(spec.x_dims)} -> Y {list(spec.y_dims)} ({html.escape(spec.layout)}, "
                f"{html.escape(spec.dtype)}).</p></div>")
    from ..graph import build_graph

    script = build_graph(spec).to_script()
    return (f"<div class='cl-hint'>A standalone script that rebuilds, runs and checks this "
            f"graph with cudnn and torch only (for bug reports).</div>"
            f"<pre class='cl-code-text'>{html.escape(script)}</pre>")


def _placeholder(text: str) -> Any:
    import plotly.graph_objects as go

    fig = go.Figure(layout={"template": "plotly_white", "height": 260})
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


class Lab:
    """The panel: ``Lab(spec)`` shows a spec's graph at once; Run (GPU) or Load (recorded results) fills the rest.

    ``spec`` is any operation's spec (ConvSpec, MatmulSpec, SdpaSpec, NormSpec, PoolSpec); setting ``lab.spec`` to
    another operation's switches the operation choice. ``lab.spec`` (get/set), ``lab.result``, ``lab.selected``
    (a plan name), ``lab.view`` (a tab title), ``lab.save_report(path)``, ``lab.sweep_view`` (the Sweep tab:
    ``.load(name)``, ``.compare(a, b)``, ``.run()``), ``lab.state()`` / ``Lab.from_state(d)`` and
    ``lab.save(path)`` / ``Lab.load(path)`` are the programmatic side.
    ``gpu`` overrides what :func:`cudnn_lab.probe` says (``gpu=False`` shows the recorded-results path on a GPU box).
    """

    def __init__(self, spec: Spec | None = None, *, gpu: bool | None = None) -> None:
        import ipywidgets as W

        from ..capabilities import probe

        if spec is not None and not isinstance(spec, Spec):
            raise SpecError("spec", type(spec).__name__, "must be a cudnn_lab spec such as ConvSpec or MatmulSpec")
        if spec is not None and spec.op not in OPS:
            raise SpecError("spec", type(spec).__name__, f"has no controls here; the Lab edits "
                            f"{', '.join(c.__name__ for c in OPS.values())}")
        self._W = W
        self.gpu: bool = probe().gpu if gpu is None else bool(gpu)
        self.dot_path: str | None = shutil.which("dot")
        self._result: Any = None
        self._selected: str | None = None
        self._silent = False
        self.recorded: str | None = None
        #: The last report written by :meth:`save_report` (absolute path), or None.
        self.report_written: Path | None = None
        self._source_text = ""
        self.busy = False
        self._wasm_graph: Any = None  # GraphvizAnyWidget once made, False where it cannot be
        #: Every error and warning reported by a callback, newest last (also written to the Log view).
        self.messages: list[str] = []

        # ---- left: controls, run options, source and actions
        self.log = W.Output(layout=W.Layout(max_height="500px", overflow="auto")).add_class("cl-log")
        self.controls = SpecControls(spec if spec is not None else ConvSpec(), on_change=self._on_spec_change,
                                     guard=self._guard)
        self.run_button = W.Button(description="Run", icon="play", button_style="primary",
                                   layout=W.Layout(width="110px")).add_class("cl-run")
        self.run_note = W.HTML("").add_class("cl-run-note")
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="290px"))
        self.source = W.ToggleButtons(options=[LIVE, RECORDED], value=LIVE if self.gpu else RECORDED,
                                      style={"button_width": "100px"},
                                      tooltips=["measure on this machine's GPU",
                                                "show results recorded on a real GPU"])
        self.datasets = W.Dropdown(options=[], layout=W.Layout(width="290px"))
        self.load_button = W.Button(description="Load", icon="folder-open",
                                    tooltip="show the chosen recording in every view",
                                    layout=W.Layout(width="110px")).add_class("cl-load")
        self.live_box = W.VBox([_row(W, "", self.run_button, self.run_note),
                                _row(W, "progress", self.progress)]).add_class("cl-live")
        self.recorded_box = W.VBox([_row(W, "recording", self.datasets),
                                    _row(W, "", self.load_button)]).add_class("cl-recorded")
        self.datasets_frame: Any = None
        self.report_path = W.Text(value=DEFAULT_REPORT, placeholder=DEFAULT_REPORT,
                                  tooltip="an .html file; a relative path is in the current folder",
                                  layout=W.Layout(width="290px")).add_class("cl-report-path")
        self.report_button = W.Button(description="Save report", icon="file-text", disabled=True,
                                      tooltip="show a result first (Run or Load)",
                                      layout=W.Layout(width="110px")).add_class("cl-report")
        self.report_box = W.VBox([_row(W, "report", self.report_path), _row(W, "", self.report_button)]
                                 ).add_class("cl-report-box")
        if not self.gpu:
            self.run_button.disabled = True
            self.run_button.tooltip = NO_GPU_TEXT
            self.run_note.value = f"<span class='cl-hint'>{NO_GPU_TEXT}</span>"

        section = functools.partial(self._section, W)
        left = W.VBox([W.HTML(_CSS), W.HTML("<div class='cl-title'>cuDNN lab</div>"),
                       section("problem"), self.controls.box,
                       section("run options"), self.controls.run_box,
                       section("results"), _row(W, "source", self.source), self.live_box, self.recorded_box,
                       self.report_box],
                      layout=W.Layout(width="420px", min_width="420px", padding="0 12px 0 0")).add_class("cl-left")

        # ---- right: status and views
        self.status = W.HTML("").add_class("cl-status")
        self.result_info = W.HTML("").add_class("cl-result-info")
        self.graph_html = W.HTML("").add_class("cl-graph-svg")
        self.graph_box = W.VBox([self.graph_html]).add_class("cl-graph")
        self.plan_select = W.Dropdown(options=[], value=None, description="plan",
                                      style={"description_width": "40px"}, layout=W.Layout(width="360px"))
        self.plans_html = W.HTML(plan_table_html(None)).add_class("cl-plans-table")
        self.heuristics_html = W.HTML("").add_class("cl-heuristic-summary")
        self.code_html = W.HTML("").add_class("cl-code")

        #: The plotly figures shown, by name (latency, heuristics, errors, histogram, roofline).
        self.figures: dict[str, Any] = {}
        #: The widget that shows each figure, and the box that holds it (a redraw puts a new widget in the box:
        #: a FigureWidget updated in place keeps stale annotations and shapes in the browser).
        self.figure_widgets: dict[str, Any] = {}
        self._figure_boxes: dict[str, Any] = {k: W.Box(layout=W.Layout(width="100%", overflow="auto")) for k in
                                              (*RESULT_FIGURES, "sweep")}
        boxes = self._figure_boxes
        from .sweepview import SweepView

        #: The Sweep view: live sweeps, recorded sweeps, GPU comparison (its own plain methods).
        self.sweep_view = SweepView(self)
        views = {
            "Graph": self.graph_box,
            "Plans": W.VBox([self.plan_select, self.plans_html]).add_class("cl-plans"),
            "Latency": W.VBox([boxes["latency"]]).add_class("cl-latency"),
            "Heuristics": W.VBox([self.heuristics_html, boxes["heuristics"]]).add_class("cl-heuristics"),
            "Numerics": W.VBox([boxes["errors"], boxes["histogram"]]).add_class("cl-numerics"),
            "Roofline": W.VBox([boxes["roofline"]]).add_class("cl-roofline"),
            "Sweep": self.sweep_view.box,
            "Code": self.code_html,
            "Log": self.log,
        }
        self.tabs = W.Tab(children=[views[v] for v in VIEWS])
        self.tabs.titles = VIEWS
        right = W.VBox([self.status, self.result_info, self.tabs],
                       layout=W.Layout(flex="1 1 auto", min_width="0")).add_class("cl-right")
        self.root = W.HBox([left, right], layout=W.Layout(width="100%")).add_class("cl-lab")

        self.refresh_datasets()

        # ---- wiring: every callback goes through _guard
        self.run_button.on_click(lambda _: self._guard(self.run))
        self.load_button.on_click(lambda _: self._guard(self.load_recorded, self.datasets.value))
        self.report_button.on_click(lambda _: self._guard(self.save_report))
        self.plan_select.observe(lambda ch: self._guard(self._on_plan_select, ch), names="value")
        self.source.observe(lambda ch: self._guard(self._show_source), names="value")
        self._show_source()
        self._draw_figures()
        self._guard(self.redraw)
        if not self.messages:
            self._status("Ready. " + ("Run measures every plan on this GPU." if self.gpu else
                                      "No GPU here: choose a recording and Load it."))

    @staticmethod
    def _section(W: Any, title: str) -> Any:
        return W.HTML(f"<div class='cl-section'>{html.escape(title)}</div>")

    # ============================================================================================ public API

    @property
    def spec(self) -> Spec:
        """The current (last valid) spec; setting it updates every control and view."""
        return self.controls.spec

    @spec.setter
    def spec(self, spec: Spec) -> None:
        if not isinstance(spec, Spec):
            raise SpecError("spec", type(spec).__name__, "must be a cudnn_lab spec such as ConvSpec or MatmulSpec")
        self.controls.set_spec(spec)  # any operation: the operation choice follows
        self._guard(self.redraw)

    @property
    def result(self) -> Any:
        """The :class:`~cudnn_lab.results.RunResult` shown (None before a run or a load)."""
        return self._result

    @property
    def selected(self) -> str | None:
        """The plan every figure highlights (a plan name), or None."""
        return self._selected

    @selected.setter
    def selected(self, plan: str | None) -> None:
        self.select(plan)

    @property
    def view(self) -> str:
        """Title of the tab shown."""
        index = self.tabs.selected_index
        return VIEWS[index] if index is not None else VIEWS[0]

    @view.setter
    def view(self, title: str) -> None:
        if title not in VIEWS:
            raise SpecError("view", title, f"must be one of {', '.join(VIEWS)}")
        self.tabs.selected_index = VIEWS.index(title)

    @property
    def run_options(self) -> dict[str, Any]:
        """``cl.run`` keyword arguments from the run-option widgets."""
        return self.controls.run_options()

    def redraw(self) -> None:
        """Draw the current spec's graph (SVG from ``dot``, or the fallback without it) and its script.

        Pooling has no frontend graph in cuDNN frontend 1.32: its drawing is the classic call that runs instead
        (``cudnn_lab.graph.pool.to_dot``) and the Code view says why there is no script.
        """
        spec = self.spec
        from ..graph.render import DOT_INSTALL_HINT, fallback_bundle

        self.sweep_view.set_op(spec.op)
        try:
            source = dot_source(spec)
            if self.dot_path:
                self.graph_html.value = f"<div class='cl-graph-drawing'>{_svg(source)}</div>"
            elif (wasm := self._browser_graph()) is not None:  # Graphviz compiled to WebAssembly draws it
                wasm.dot_source = source
                self.graph_html.value = (f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div><details>"
                                         f"<summary class='cl-hint'>DOT source</summary><pre>{html.escape(source)}"
                                         "</pre></details>")
            else:
                self.graph_html.value = fallback_bundle(source)["text/html"]
            code = code_html(spec)
        except Exception as e:
            self.graph_html.value = (f"<p class='cl-status-error'>Cannot draw {html.escape(spec.label())}: "
                                     f"{html.escape(str(e))}</p>")
            raise
        self.code_html.value = code
        if not self.dot_path:
            self.code_html.value += f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div>"
        self._show_result_info()

    def run(self) -> Any:
        """Run the current spec on the GPU with the chosen options and show the result (Run button)."""
        if not self.gpu:
            raise NoGPUError("this machine has no usable CUDA GPU; choose Source: Recorded and Load a recording")
        if self.busy:
            return None
        import cudnn_lab

        options = self.controls.run_options()
        spec = self.spec
        self._set_busy(True)
        try:
            self.progress.value, self.progress.max = 0, 1
            self._status(f"Running {spec.label()} …")
            result = cudnn_lab.run(spec, progress=self._progress, **options)
            self.progress.value = self.progress.max
            self.show_result(result, source="live")
        finally:
            self._set_busy(False)
        return result

    def load_recorded(self, name_or_path: str | Path) -> Any:
        """Show a recording: a name from ``cl.recorded_datasets()`` or the path of a ``RunResult.save`` file.

        The recording's spec becomes ``lab.spec``.
        """
        if name_or_path is None or name_or_path == "":
            raise SpecError("recording", name_or_path, "choose a recording first (none is selected)")
        path = Path(str(name_or_path)).expanduser()
        self._set_busy(True)
        try:
            self._status(f"Loading {name_or_path} …")
            if path.is_file():
                from ..results import RunResult

                result = RunResult.load(path)
            else:
                import cudnn_lab

                loader = getattr(cudnn_lab, "load_results", None)
                if loader is None:
                    raise CudnnLabError(f"{name_or_path!r} is not a file, and this cudnn_lab has no recorded "
                                        "datasets (cudnn_lab.load_results is missing)")
                result = loader(name_or_path)
            self.show_result(result, source="recorded", recorded=str(name_or_path))
        finally:
            self._set_busy(False)
        return result

    def show_result(self, result: Any, *, source: str = "live", recorded: str | None = None) -> None:
        """Show ``result`` in every view; its spec becomes ``lab.spec``."""
        self._result = result
        self.recorded = recorded if source == "recorded" else None
        self._source_text = "recorded " + (Path(recorded).stem if recorded else "") if recorded else "live run"
        if result.spec != self.spec:
            try:
                self.controls.set_spec(result.spec)
            except SpecError:  # an operation these controls do not edit: show its results all the same
                self._warn(f"the controls edit {', '.join(OPS)} only; the results shown are for "
                           f"{result.spec.label()}")
            else:
                self.redraw()
        plans = result.plans.sort_values("heuristic_rank", kind="stable", na_position="last")
        options = [(name if status == "ok" else f"{name} ({status})", name)
                   for name, status in zip(plans["plan"], plans["status"])]
        try:
            pick = str(result.heuristic_pick["plan"])
        except Exception:  # noqa: BLE001 - no plan ran
            pick = None
        self._silent = True
        try:
            self.plan_select.options = options
            self.plan_select.value = None
        finally:
            self._silent = False
        self._selected = None
        self.select(pick)
        self._show_result_info()
        for note in getattr(result, "warnings", []) or []:
            self.log.append_stdout(f"note: {note}\n")
        n_ok = int((result.plans["status"] == "ok").sum())
        self.report_button.disabled = self.busy
        self.report_button.tooltip = "write a self-contained HTML report of the result shown"
        self._status(f"Showing {len(result.plans)} plans ({n_ok} ran) from the {self._source_text}.")

    def select(self, plan: str | None) -> None:
        """Highlight ``plan`` in the table and every figure (None: no highlight)."""
        if plan is not None:
            known = [] if self._result is None else list(self._result.plans["plan"])
            if plan not in known:
                raise SpecError("selected", plan, "is not a plan of the result shown" if known else
                                "no result is shown yet")
        self._selected = plan
        self._silent = True
        try:
            self.plan_select.value = plan
        finally:
            self._silent = False
        self.plans_html.value = plan_table_html(self._result, plan)
        self._draw_figures()

    def save_report(self, path: str | Path | None = None) -> Path:
        """Write the result shown as one self-contained HTML file (Save report); the status line links to it.

        ``path`` defaults to the report field's value (``cudnn_lab_report.html``); a relative path is taken in the
        current folder. Returns the absolute path written.
        """
        if self._result is None:
            raise SpecError("report", None, "there is no result to report yet: Run, or Load a recording first")
        text = str(path if path is not None else self.report_path.value).strip() or DEFAULT_REPORT
        target = Path(text).expanduser()
        if target.suffix.lower() not in (".html", ".htm"):
            raise SpecError("report", text, "must be an .html file name (the report is one HTML page)")
        if not target.parent.exists():
            raise SpecError("report", text, f"is in a folder that does not exist ({target.parent})")
        from ..report import save_report

        self._set_busy(True)
        try:
            written = save_report(self._result, target).resolve()
        finally:
            self._set_busy(False)
        self.report_written = written
        try:
            href = written.relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            href = None
        link = (f"<a href='{html.escape(href)}' target='_blank' class='cl-report-link'>{html.escape(str(written))}"
                f"</a>" if href else f"<code class='cl-report-link'>{html.escape(str(written))}</code>")
        self.status.value = (f"<span class='cl-status-text'>Report saved: {link} (one HTML file that opens "
                             "offline)</span>")
        return written

    def refresh_datasets(self) -> Any:
        """Fill the recording dropdown from ``cl.recorded_datasets(kind='run')`` (name, gpu, driver, cudnn, date,
        label); recorded sweeps are in the Sweep view."""
        import cudnn_lab

        frame = None
        lister = getattr(cudnn_lab, "recorded_datasets", None)
        if lister is not None:
            try:
                frame = lister(kind="run")
            except Exception as e:  # noqa: BLE001 - a broken data folder must not break the panel
                self._report(e)
        options = []
        if frame is not None:
            for _, row in frame.iterrows():
                label = row.get("label") or row["name"]
                options.append((f"{label} — {row.get('gpu') or '?'}, cuDNN {cudnn_version_text(row.get('cudnn'))}, "
                                f"{str(row.get('date') or '')[:10]}", str(row["name"])))
        self.datasets_frame = frame
        self.datasets.options = options
        if options:  # preselect the recording of the spec shown, if there is one
            labels = list(frame["label"]) if "label" in frame else []
            mine = self.spec.label()
            self.datasets.value = options[labels.index(mine)][1] if mine in labels else options[0][1]
        self.datasets.disabled = not options
        self.load_button.disabled = not options
        self.datasets.tooltip = "" if options else "no recorded datasets are shipped with this cudnn_lab"
        return frame

    # ---- state

    def state(self) -> dict[str, Any]:
        """Everything needed to rebuild this panel: spec, view, selected plan, run options, source, recording."""
        return {
            "version": STATE_VERSION,
            "spec": self.spec.to_dict(),
            "view": self.view,
            "selected": self.selected,
            "run": {"heuristics": [m for m, cb in self.controls.heuristics.items() if cb.value],
                    "plans": {"heuristic choice": "heuristic", "all plans": "all"}[self.controls.policy.value],
                    **_timing_kwargs(self.controls.timing.value)},
            "source": "recorded" if self.source.value == RECORDED else "live",
            "recorded": self.recorded,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], **kwargs: Any) -> Lab:
        """Rebuild a panel from :meth:`state` (a recording named there is loaded again)."""
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            got = state.get("version") if isinstance(state, dict) else type(state).__name__
            raise SpecError("version", got, f"must be {STATE_VERSION} (a dict made by Lab.state())")
        spec = spec_from_dict(state["spec"])
        lab = cls(spec, **kwargs)
        lab.controls.set_run_options(state.get("run", {}))
        if state.get("source") in ("live", "recorded"):
            lab.source.value = RECORDED if state["source"] == "recorded" else LIVE
        if state.get("recorded"):
            lab._guard(lab.load_recorded, state["recorded"])
            if lab.spec != spec:
                lab.spec = spec
        if state.get("selected") is not None and lab.result is not None:
            lab._guard(lab.select, state["selected"])
        lab.view = state.get("view", VIEWS[0])
        return lab

    def save(self, path: str | Path) -> Path:
        """Write :meth:`state` as JSON."""
        path = Path(path)
        path.write_text(json.dumps(self.state(), indent=1, sort_keys=True))
        return path

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> Lab:
        """A panel rebuilt from a :meth:`save` file."""
        return cls.from_state(json.loads(Path(path).read_text()), **kwargs)

    # ---- display

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
        return self.root._repr_mimebundle_(include=include, exclude=exclude, **kwargs)

    def __repr__(self) -> str:
        return f"Lab({self.spec!r})"

    # ============================================================================================ internals

    def _browser_graph(self) -> Any:
        """The in-browser Graphviz widget of the Graph view (made on first use), or None where it is missing."""
        if self._wasm_graph is None:
            try:
                from graphviz_anywidget import GraphvizAnyWidget
            except Exception:  # noqa: BLE001 - neither dot nor the widget: the DOT text is the drawing
                self._wasm_graph = False
                return None
            self._wasm_graph = GraphvizAnyWidget(dot_source="digraph {}").add_class("cl-graph-wasm")
            self.graph_box.children = [self._wasm_graph, self.graph_html]
        return self._wasm_graph or None

    def _guard(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn``; exceptions and warnings go to the Log view and the status line, never to the caller."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with self.log:  # prints inside callbacks show in the Log view
                try:
                    return fn(*args)
                except Exception as e:  # noqa: BLE001 - the notebook must never see a callback's exception
                    self._report(e)
                    return None
                finally:
                    for w in caught:
                        self._warn(f"{w.category.__name__}: {w.message}")

    def _report(self, error: BaseException) -> None:
        short = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        self.messages.append(short)
        detail = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        if isinstance(error, CudnnLabError):  # the kit's own errors say what to do: no traceback needed
            detail = f"{type(error).__name__}: {error}\n"
        self.log.append_stderr(detail)
        self.status.value = f"<span class='cl-status-error'>{html.escape(short)} (details in the Log tab)</span>"

    def _warn(self, text: str) -> None:
        self.messages.append(text)
        self.log.append_stderr(f"warning: {text}\n")

    def _status(self, text: str) -> None:
        self.status.value = f"<span class='cl-status-text'>{html.escape(text)}</span>"

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.run_button.disabled = busy or not self.gpu
        self.load_button.disabled = busy or not self.datasets.options
        self.report_button.disabled = busy or self._result is None
        self.sweep_view.set_busy(busy)

    def _progress(self, done: int, total: int, message: str) -> None:
        self.progress.max = max(int(total), 1)
        self.progress.value = min(int(done), self.progress.max)
        self._status(f"{message} ({done}/{total})")

    def _show_source(self) -> None:
        live = self.source.value == LIVE
        self.live_box.layout.display = "flex" if live else "none"
        self.recorded_box.layout.display = "none" if live else "flex"

    def _on_spec_change(self, spec: Spec) -> None:
        self._guard(self.redraw)

    def _on_plan_select(self, change: dict[str, Any]) -> None:
        if not self._silent:
            self.select(change["new"])

    def _show_result_info(self) -> None:
        if self._result is None:
            self.result_info.value = ""
            return
        text = html.escape(result_label(self._result, self._source_text))
        if self._result.spec != self.spec:
            text += (f"<br><span class='cl-stale'>These results are for {html.escape(self._result.spec.label())}; "
                     "the controls have changed since (Run to measure them).</span>")
        self.result_info.value = f"<span class='cl-result-info'>{text}</span>"

    def _draw_figures(self) -> None:
        """Recompute every figure from the result and the selected plan and put it in its widget."""
        from .. import plots

        result, selected = self._result, self._selected
        if result is None:
            empty = "No results yet: Run on a GPU, or load a recorded result (source: Recorded)."
            figures = {key: (lambda: _placeholder(empty)) for key in RESULT_FIGURES}
            self.heuristics_html.value = ""
        else:
            plan = selected
            if plan is None:
                try:
                    plan = str(result.heuristic_pick["plan"])
                except Exception:  # noqa: BLE001
                    plan = None
            figures = {
                "latency": lambda: plots.latency_bar(result, selected=selected),
                "heuristics": lambda: plots.heuristic_vs_measured(result, selected=selected),
                "errors": lambda: plots.errors_per_plan(result, selected=selected),
                "histogram": lambda: plots.error_histogram(result, plan),
                "roofline": lambda: plots.roofline(result, selected=selected),
            }
            self.heuristics_html.value = f"<p class='cl-label'>{heuristic_summary(result)}</p>"
        for key, make in figures.items():
            try:
                fig = make()
            except Exception as e:  # noqa: BLE001 - one broken figure must not hide the others
                self._report(e)
                fig = _placeholder(f"could not draw this figure: {type(e).__name__}")
            _fit(fig, key if result is not None else "placeholder")
            self.figures[key] = fig
            self._put_figure(key, fig)

    def _put_figure(self, key: str, fig: Any) -> None:
        old = self.figure_widgets.get(key)
        try:
            import plotly.graph_objects as go

            widget = go.FigureWidget(fig)
        except Exception as e:  # noqa: BLE001 - plotly >= 6 needs anywidget: fall back to an Output
            if not any("FigureWidget" in m for m in self.messages):
                self._warn(f"plotly FigureWidget unavailable ({e}); figures are shown as static output")
            from IPython.display import display

            widget = self._W.Output()
            with widget:
                display(fig)
        widget.add_class(f"cl-figure-{key}")
        self.figure_widgets[key] = widget
        self._figure_boxes[key].children = [widget]
        if old is not None:
            old.close()


def _fit(fig: Any, key: str) -> None:
    """Size a figure for its view."""
    height = {"placeholder": 260, "histogram": 360}.get(key, _FIGURE_HEIGHT)
    # An explicit width: a FigureWidget does not follow its container and would take plotly's default 700 px.
    fig.update_layout(height=height, width=_FIGURE_WIDTH, margin={"t": 80, "r": 20})


def _timing_kwargs(label: str) -> dict[str, Any]:
    from .controls import TIMING_CHOICES

    return dict(TIMING_CHOICES[label])
