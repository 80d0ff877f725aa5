"""The Lab's Sweep view: sweep one or two spec fields on the GPU, or show recorded sweeps and compare two GPUs.

:class:`SweepView` is given the parts of the Lab it uses (status and log, figure host, busy flag, the current spec
and run options as callables) and nothing else: it does not know the Lab. Its work is in plain methods
(:meth:`SweepView.validate`, :meth:`SweepView.run`, :meth:`SweepView.load`, :meth:`SweepView.show`,
:meth:`SweepView.redraw`, :meth:`SweepView.compare`); every widget callback goes through the log's ``guard``.
The pure helpers (axis parsing and checking, the fields a figure can draw) are in :mod:`.sweep_axes`.

Nothing is drawn on trust: every frame shown or compared goes through :func:`drawable` first, which leaves out the rows
the loading layer's checks refuse (impossible values, an operation the kit does not know, a point's plan twice) and
says in one sentence what it left out.
"""

from __future__ import annotations

import html
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import DataError, NoGPUError, OptionError
from ..options import RunOptions
from ..provenance import banner_html
from ..results import load_results, recorded_datasets
from ..results.loading import check_sweep_columns, sweep_row_problems
from ..results.store import Store
from ..specs import Spec
from ..sweeps import sweep
from .fields import OPS
from .figures import FigureHost
from .run_form import call_with_options, plan_policy_buttons
from .status import Busy, StatusLog
from .style import clear_invalid, mark_invalid, offer_run, section
from .sweep_report import SweepReport
from .sweep_axes import (MAX_POINTS, NONE, default_axes, default_sweep_axes, frame_of_op, parse_values, plot_fields,
                         plain_text_columns, sweep_fields, validate_axes)
from .tables import cudnn_version_text
from ..plots.registry import entries

__all__ = ["COMPARE_CHARTS", "MAX_POINTS", "NO_GPU_SWEEP_TEXT", "SWEEP_FIGURES", "SWEEP_Y", "SweepView", "compare_pair",
           "drawable", "parse_values", "plot_fields", "sweep_fields", "validate_axes"]

#: y choices of the sweep figure -> ``plots.sweep_latency``'s ``y``; 'who wins' draws the backend map instead
#: (plots/registry.py 'backend_map': attention shapes swept with PyTorch's backends timed).
SWEEP_Y: dict[str, str] = {"latency": "median_ms", "TFLOP/s": "tflops", "GB/s": "gbps", "who wins": ""}
#: What the view says when 'who wins' is chosen for a sweep without PyTorch's backends.
NO_BACKENDS_TEXT = ("who wins needs attention shapes swept with PyTorch's backends timed (RunOptions(backends=True), "
                    "cudnn-lab sweep ... --backends): load the recorded h200_attention_backends sweep")
#: Which plan of each point is drawn -> ``plots.sweep_latency``'s ``which``.
SWEEP_WHICH: dict[str, str] = {"heuristic's pick": "pick", "best plan": "best"}
#: What the comparison of two GPUs draws -> ``plots.compare_gpus``'s ``kind``.
COMPARE_CHARTS: dict[str, str] = {"speedup vs intensity": "intensity", "latency per problem": "bars"}
NO_GPU_SWEEP_TEXT = "No GPU: load a recorded sweep below, or compare two GPUs"
#: The view's figures by name (plots/registry.py's entries of the Sweep view, drawn in its one pane): 'sweep', a
#: metric along a spec field; 'sweep_compare', two GPUs compared; 'backend_map', which attention backend wins where.
SWEEP_FIGURES = {e.name: e for e in entries(view="Sweep")}


def _unset(source: Any) -> bool:
    """Whether a sweep to show is not chosen (None or ''); a frame is a choice (and has no truth value)."""
    return source is None or (isinstance(source, str) and not source)


def drawable(frame: Any, source: str = "the sweep shown") -> tuple[Any, str]:
    """The rows of a sweep frame that can be drawn, and one sentence saying which were left out and why ('' when
    none): the loading layer's checks of a sweep's values (:func:`~cudnn_lab.results.loading.sweep_row_problems`).
    DataError (naming ``source``) when the frame is no sweep at all (no point_id, text in a number column)."""
    import numpy as np

    if frame is None or frame.empty:
        return frame, ""
    check_sweep_columns(frame, source)
    problems = sweep_row_problems(frame)
    if not problems:
        return frame, ""
    drop = np.zeros(len(frame), bool)
    said: dict[str, tuple[int, list[str]]] = {}
    for p in problems:
        new = int((p.rows & ~drop).sum())
        if new:
            n, fields = said.get(p.what, (0, []))
            said[p.what] = (n + new, fields + [p.field])
        drop |= p.rows
    parts = "; ".join(f"{n} {what} ({', '.join(dict.fromkeys(fields))})" for what, (n, fields) in said.items())
    return frame[~drop], f"Not drawn: {int(drop.sum())} of {len(frame)} rows of {source}: {parts}."


def _recorded_points(path: Any) -> set[str]:
    """The points (spec JSON) a recorded sweep holds, read from its ``spec`` column alone (empty when unreadable)."""
    try:
        import pyarrow.parquet as pq

        return {s for s in pq.read_table(str(path), columns=["spec"]).column("spec").to_pylist() if s}
    except Exception:  # noqa: BLE001 - a sweep that cannot be read offers no default pair
        return set()


def compare_pair(datasets: Any) -> tuple[str, str] | None:
    """The two recorded sweeps Compare GPUs opens on: of two different GPUs, the pair that shares the most points
    (by spec), in the recordings' order (a before b); None when no two sweeps of different GPUs share a point.
    ``datasets`` is ``cl.recorded_datasets(kind='sweep')`` (name, gpu and path columns)."""
    if datasets is None or getattr(datasets, "empty", True) or not {"name", "gpu", "path"} <= set(datasets.columns):
        return None
    rows = [(str(r["name"]), r["gpu"] if isinstance(r["gpu"], str) else "", _recorded_points(r["path"]))
            for _, r in datasets.iterrows()]
    best, most = None, 0
    for i, (a, gpu_a, points_a) in enumerate(rows):
        for b, gpu_b, points_b in rows[i + 1:]:
            if not gpu_a or not gpu_b or gpu_a == gpu_b:
                continue
            shared = len(points_a & points_b)
            if shared > most:
                best, most = (a, b), shared
    return best


class SweepView:
    """The Sweep tab; ``box`` is its widget, ``frame`` the sweep shown (a tidy frame as ``cl.sweep`` returns),
    ``mode`` what the figure draws ('latency', 'compare' or None), ``fig`` the figure and ``figure`` its widget."""

    def __init__(self, *, log: StatusLog, figures: FigureHost, busy: Busy, spec: Callable[[], Spec],
                 run_options: Callable[[], RunOptions], gpu: bool) -> None:
        import ipywidgets as W

        self._log, self._figures, self._busy = log, figures, busy
        self._spec, self._run_options = spec, run_options
        self._gpu = bool(gpu)
        self._silent = False
        self._op: str | None = None
        self.frame: Any = None
        self.source_text = ""
        self.mode: str | None = None
        self.store: Path | None = None
        self._compared: tuple[Any, Any] | None = None
        self._compare_text = ""
        self._live: tuple[str, str | None] | None = None
        #: What :func:`drawable` left out of the sweep (or comparison) shown, in one sentence ('' when nothing).
        self.dropped_text = ""
        self.datasets_frame: Any = None

        # ---- live sweep
        self.axis_fields = [W.Dropdown(options=[], layout=W.Layout(width="130px")).add_class(f"cl-sweep-field-{i}")
                            for i in (1, 2)]
        self.axis_values = [W.Text(value="", placeholder=p, continuous_update=False,
                                   layout=W.Layout(width="260px", max_width="100%")).add_class(f"cl-sweep-values-{i}")
                            for i, p in ((1, "values, comma-separated: 1, 8, 32"),
                                         (2, "values, comma-separated (optional)"))]
        self.axis_messages = [W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 84px")
                                     ).add_class("cl-message") for _ in (1, 2)]
        self.count = W.HTML("").add_class("cl-sweep-count")
        self.policy = plan_policy_buttons(W, run_options().plans)
        self.run_button = W.Button(description="Run sweep", icon="play", button_style="primary",
                                   layout=W.Layout(width="130px")).add_class("cl-sweep-run")
        self.run_note = W.HTML("").add_class("cl-sweep-note")
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="260px")).add_class(
            "cl-sweep-progress")
        self.eta = W.HTML("").add_class("cl-sweep-eta")

        # ---- recorded sweeps and comparison
        self.recorded = W.Dropdown(options=[], layout=W.Layout(width="340px", max_width="100%")
                                   ).add_class("cl-sweep-recorded")
        self.load_button = W.Button(description="Load sweep", icon="folder-open",
                                    tooltip="show the chosen recorded sweep in the figure",
                                    layout=W.Layout(width="130px")).add_class("cl-sweep-load")
        self.compare_a = W.Dropdown(options=[], layout=W.Layout(width="150px")).add_class("cl-compare-a")
        self.compare_b = W.Dropdown(options=[], layout=W.Layout(width="150px")).add_class("cl-compare-b")
        self.compare_button = W.Button(description="Compare GPUs", icon="balance-scale",
                                       tooltip="how much faster is b than a at the points both recordings share, "
                                               "and why (bandwidth and compute ratios)",
                                       layout=W.Layout(width="140px")).add_class("cl-compare")
        self.chart = W.ToggleButtons(options=list(COMPARE_CHARTS), value=next(iter(COMPARE_CHARTS)),
                                     tooltips=["b's speedup per problem against arithmetic intensity, with the "
                                               "measured bandwidth and compute ratios marked",
                                               "both GPUs' best-plan latency per problem, speedup on the right"],
                                     style={"button_width": "150px"}).add_class("cl-compact").add_class(
            "cl-compare-chart")

        # ---- what the figure draws
        self.op_filter = W.Dropdown(options=[("all operations", NONE)] + [(c.title or o, o) for o, c in OPS.items()],
                                    value=NONE, layout=W.Layout(width="130px")).add_class("cl-sweep-op")
        self.x = W.Dropdown(options=[], layout=W.Layout(width="130px")).add_class("cl-sweep-x")
        self.color = W.Dropdown(options=[("(none)", NONE)], value=NONE, layout=W.Layout(width="130px")
                                ).add_class("cl-sweep-color")
        self.y = W.ToggleButtons(options=list(SWEEP_Y), value="latency", style={"button_width": "76px"}
                                 ).add_class("cl-compact")
        self.which = W.ToggleButtons(options=list(SWEEP_WHICH), value="heuristic's pick",
                                     style={"button_width": "120px"}).add_class("cl-compact")
        self.info = W.HTML("").add_class("cl-sweep-info")

        def small(text: str) -> Any:
            return W.HTML(f"<span class='cl-label'>{html.escape(text)}</span>",
                          layout=W.Layout(margin="0 4px 0 12px"))

        def line(*children: Any) -> Any:  # wraps onto the next line in a narrow pane, never wider than it
            return W.HBox(list(children), layout=W.Layout(align_items="center", margin="2px 0",
                                                          flex_flow="row wrap", max_width="100%"))

        #: What the figure options are for: a sweep's (x, colour, y, plan) and a comparison's (chart); the one
        #: that does not apply to the figure shown is hidden.
        self.sweep_options = W.VBox([line(small("x"), self.x, small("colour"), self.color),
                                     line(small("y"), self.y, small("plan"), self.which)]
                                    ).add_class("cl-sweep-options")
        self.compare_options = line(small("chart"), self.chart).add_class("cl-compare-options")
        #: Save sweep report, beside the figure: writes the sweep shown (``self.frame``) as one HTML file.
        self.report = SweepReport(W, frame=lambda: self.frame, measured=lambda: self.source_text.startswith("live"),
                                  log=log, busy=busy)
        self.box = W.VBox([
            section(W, "sweep the problem on the left (one or two fields)"),
            line(small("axis 1"), self.axis_fields[0], self.axis_values[0]), self.axis_messages[0],
            line(small("axis 2"), self.axis_fields[1], self.axis_values[1]), self.axis_messages[1],
            line(small("plans"), self.policy), W.HTML("<span class='cl-hint'>heuristics and timing: the run options "
                                                      "on the left</span>"),
            line(self.run_button, self.count, self.run_note),
            line(small("progress"), self.progress, self.eta),
            section(W, "recorded sweeps (made on real GPUs)"),
            line(small("recording"), self.recorded, self.load_button),
            line(small("compare"), self.compare_a, small("vs"), self.compare_b, self.compare_button),
            section(W, "figure"),
            line(small("operation"), self.op_filter),
            self.sweep_options, self.compare_options,
            self.info, figures.pane("sweep"), self.report.box,
        ], layout=W.Layout(max_width="100%")).add_class("cl-sweep")

        guard = log.guard
        self.run_button.on_click(lambda _: guard(self.run))
        self.load_button.on_click(lambda _: guard(self.load, self.recorded.value))
        self.compare_button.on_click(lambda _: guard(self.compare))
        for w in (*self.axis_fields, *self.axis_values):
            w.observe(lambda ch: guard(self._axes_changed, ch), names="value")
        self.op_filter.observe(lambda ch: guard(self._filter_changed, ch), names="value")
        for w in (self.x, self.color, self.y, self.which):
            w.observe(lambda ch: guard(self._plot_option_changed, ch), names="value")
        self.chart.observe(lambda ch: guard(self._chart_changed, ch), names="value")
        self.refresh_recorded()
        self.gpu = self._gpu
        busy.subscribe(self.set_busy)
        self._enable_plot_options()
        self.set_op(spec().op)
        self._placeholder("No sweep yet: " + ("Run sweep on this GPU, or " if gpu else "")
                          + "Load a recorded sweep, or Compare GPUs.")

    # ============================================================================================ public API

    @property
    def gpu(self) -> bool:
        """Whether Run sweep is offered (a GPU here)."""
        return self._gpu

    @gpu.setter
    def gpu(self, gpu: bool) -> None:
        self._gpu = offer_run(self.run_button, self.run_note, gpu, NO_GPU_SWEEP_TEXT)
        self.set_busy(self._busy.busy)

    @property
    def fig(self) -> Any:
        """The plotly figure shown (a ``go.Figure``)."""
        return self._figures.figures.get("sweep")

    @property
    def figure(self) -> Any:
        """The widget that shows :attr:`fig` (a ``FigureWidget``, or an Output without anywidget)."""
        return self._figures.widgets.get("sweep")

    @property
    def axes(self) -> list[tuple[str, str]]:
        """The axes as set: ``[(field, text), (field or '', text)]``."""
        return [(f.value or NONE, v.value) for f, v in zip(self.axis_fields, self.axis_values)]

    def set_op(self, op: str) -> None:
        """Offer the fields of operation ``op`` on the axes (the Lab calls it when its operation changes)."""
        if op == self._op:
            return
        self._op = op
        fields = list(sweep_fields(op))
        first, second = default_sweep_axes(op)
        self._silent = True
        try:
            self.axis_fields[0].options = fields
            self.axis_fields[0].value = first
            self.axis_fields[1].options = [("(none)", NONE)] + [(f, f) for f in fields]
            self.axis_fields[1].value = second
            for v in self.axis_values:
                v.value = ""
        finally:
            self._silent = False
        self._clear_axis_marks()
        self.count.value = ""

    def validate(self) -> dict[str, list[Any]] | None:
        """The ``over`` of the axes as set, or None with each wrong axis marked in red with its message."""
        over, errors, invalid = validate_axes(self._spec(), self.axes)
        self._clear_axis_marks()
        for i, message in errors.items():
            mark_invalid(self.axis_values[i], self.axis_messages[i], message)
        if over is None:
            self.count.value = ""
            return None
        total = math.prod(len(v) for v in over.values())
        skipped = f" ({invalid} invalid, recorded as skipped)" if invalid else ""
        self.count.value = f"<span class='cl-hint'>{total} point{'s' if total != 1 else ''}{skipped}</span>"
        return over

    @property
    def invalid(self) -> dict[int, str]:
        """Axis index -> message of the axes marked invalid now."""
        return {i: self.axis_messages[i].value for i, w in enumerate(self.axis_values)
                if "cl-invalid" in w._dom_classes}

    def run(self) -> Any:
        """Run the sweep on the GPU (Run sweep): progress and the figure follow each finished point."""
        if not self._gpu:
            raise NoGPUError("a sweep runs every point on a GPU; load a recorded sweep instead")
        if self._busy.busy:
            return None
        over = self.validate()
        if over is None:
            raise OptionError("sweep", self.axes, "fix the sweep's values marked in red first", where="Sweep view")
        spec = self._spec()
        options = self._run_options().replace(plans=self.policy.value)
        fields = list(over)
        self._live = (fields[0], fields[1] if len(fields) > 1 else None)
        self.store = Path(tempfile.mkdtemp(prefix="cudnn_lab_sweep_")) / "sweep.parquet"
        self._compared = None
        with self._busy.working():
            try:
                self.progress.value, self.progress.max = 0, 1
                self.eta.value = ""
                self._log.say(f"Sweeping {spec.label()} over {', '.join(fields)} …")
                frame = call_with_options(sweep, spec, over, options=options, store=self.store,
                                          progress=self._progress)
                self.progress.value = self.progress.max
                self.show(frame, source="live sweep", x=self._live[0], color=self._live[1] or NONE)
                self._log.say(f"Sweep done: {self._points(frame)} points, stored in {self.store}.")
            finally:
                self._live = None
        return frame

    def load(self, name_or_path: Any) -> Any:
        """Show a recorded sweep: a name from ``cl.recorded_datasets(kind='sweep')`` or a Parquet file/store."""
        if _unset(name_or_path):
            raise OptionError("recording", name_or_path, "choose a recorded sweep first (none is selected)",
                              where="Sweep view")
        frame = self._frame(name_or_path)
        op = self._spec().op
        ops = [o for o in dict.fromkeys(frame["op"].dropna()) if isinstance(o, str) and o in OPS] \
            if "op" in frame.columns else []
        if op in ops:
            self._set(self.op_filter, op)  # the operation of the Lab's problem first
        elif ops:
            self._set(self.op_filter, ops[0])
        self.show(frame, source=self._name(name_or_path))
        self._log.say(f"Showing recorded sweep {self._name(name_or_path)}: {self._points(self.frame)} points."
                      + (f" {self.dropped_text}" if self.dropped_text else ""))
        return self.frame

    def show(self, frame: Any, *, source: str = "", x: str | None = None, color: str | None = None) -> None:
        """Show a sweep frame: x and colour offered from its spec fields (those asked for where it has them). Rows
        that cannot be drawn are left out (:func:`drawable`), and the line above the figure says so."""
        frame, self.dropped_text = drawable(frame, source or "the sweep shown")
        if self.dropped_text:
            self._log.say(self.dropped_text)
        self.frame = frame
        self.source_text = source
        self.mode = "latency"
        self._fill_axes(x, color)
        self.redraw()
        self.set_busy(self._busy.busy)

    def redraw(self) -> Any:
        """Draw the figure again from the frame (or the comparison) and the figure options."""
        if self.mode == "compare" and self._compared is not None:
            op = self.op_filter.value
            a, b = (frame_of_op(f, op) for f in self._compared)
            fig = SWEEP_FIGURES["sweep_compare"].draw(a, b, kind=COMPARE_CHARTS[self.chart.value])
            self._enable_plot_options()
            self.info.value = banner_html("recorded", f"sweeps {html.escape(self._compare_text)}"
                                          f"{' · ' + html.escape(op) + ' points only' if op else ''}"
                                          f"{self._dropped_html()}")
            return self._figures.show("sweep", fig)
        if self.frame is None:
            return None
        self._enable_plot_options()
        rows = frame_of_op(self.frame, self.op_filter.value)
        if self.x.value is None or rows is None or rows.empty:
            what = f"no {self.op_filter.value} point" if self.op_filter.value else "nothing"
            return self._placeholder(f"{what} in {self.source_text or 'this sweep'}: choose another operation")
        height = None
        if not SWEEP_Y[self.y.value]:  # who wins: the backend map of the attention points, at the height it asks
            bmap = SWEEP_FIGURES["backend_map"]
            if not bmap.applies(rows):
                return self._placeholder(NO_BACKENDS_TEXT)
            fig = bmap.draw(rows)
            height = int(fig.layout.height or 0) or None
        else:
            fig = SWEEP_FIGURES["sweep"].draw(rows, self.x.value, color=self.color.value or None,
                                              y=SWEEP_Y[self.y.value], which=SWEEP_WHICH[self.which.value])
        live = self.source_text.startswith("live")
        self.info.value = banner_html("measured" if live else "recorded",
                                      f"{'' if live else 'sweep '}{html.escape(self.source_text)}: "
                                      f"{self._points(rows)} points{html.escape(self._devices(rows))}"
                                      f"{self._dropped_html()}")
        return self._figures.show("sweep", fig, height=height)

    def compare(self, a: Any = None, b: Any = None) -> Any:
        """Draw ``plots.compare_gpus`` of two sweeps (names, files or frames; by default the two chosen)."""
        a = self.compare_a.value if a is None else a
        b = self.compare_b.value if b is None else b
        if _unset(a) or _unset(b):
            raise OptionError("compare", (a, b), "choose two recorded sweeps", where="Sweep view")
        (fa, note_a), (fb, note_b) = (drawable(self._frame(s), self._name(s)) for s in (a, b))
        self._compared = (fa, fb)
        op = self.op_filter.value
        if op and any(frame_of_op(f, op) is None or frame_of_op(f, op).empty for f in (fa, fb)):
            self._set(self.op_filter, NONE)  # a filter one of the pair has no point of would leave nothing to plot
        self.dropped_text = " ".join(n for n in (note_a, note_b) if n)
        if self.dropped_text:
            self._log.say(self.dropped_text)
        self._compare_text = (f"a: {self._name(a)}{self._devices(self._compared[0])} vs "
                              f"b: {self._name(b)}{self._devices(self._compared[1])}")
        self.mode = "compare"
        fig = self.redraw()
        self._log.say(f"Comparing {self._name(a)} with {self._name(b)}.")
        return fig

    def refresh_recorded(self) -> Any:
        """Fill the recorded-sweep dropdowns from ``cl.recorded_datasets(kind='sweep')``."""
        frame = None
        try:
            frame = recorded_datasets(kind="sweep")
        except Exception as e:  # noqa: BLE001 - a broken data folder must not break the panel
            self._log.report(e)
        options = []
        if frame is not None:
            for _, r in frame.iterrows():
                options.append((f"{r.get('gpu') or '?'} — {r.get('label') or r['name']}, cuDNN "
                                f"{cudnn_version_text(r.get('cudnn'))}, {str(r.get('date') or '')[:10]} "
                                f"({r['name']})", str(r["name"])))
        self.datasets_frame = frame
        self.recorded.options = options
        short = [(o[1], o[1]) for o in options]
        self.compare_a.options, self.compare_b.options = short, short
        if options:
            self.recorded.value = options[0][1]
            pair = compare_pair(frame)
            self.compare_a.value, self.compare_b.value = pair or (
                options[0][1], options[1][1] if len(options) > 1 else options[0][1])
        for w in (self.recorded, self.compare_a, self.compare_b):
            w.disabled = not options
        self.set_busy(self._busy.busy)
        return frame

    def set_busy(self, busy: bool) -> None:
        """Disable the buttons while the Lab is busy (and Run sweep without a GPU)."""
        self.run_button.disabled = busy or not self._gpu
        has = bool(self.recorded.options)
        self.load_button.disabled = busy or not has
        self.compare_button.disabled = busy or not has
        self.report.set_busy(busy)

    # ============================================================================================ internals

    def _frame(self, source: Any) -> Any:
        import pandas as pd

        if isinstance(source, pd.DataFrame):
            return source
        frame = load_results(source)
        if not isinstance(frame, pd.DataFrame):
            raise DataError(str(source), "is a single run, not a sweep",
                            hint="Load it from the results section on the left")
        return plain_text_columns(frame)

    @staticmethod
    def _name(source: Any) -> str:
        import pandas as pd

        if isinstance(source, pd.DataFrame):
            return "a sweep frame"
        return Path(str(source)).stem if str(source).endswith(".parquet") else str(source)

    @staticmethod
    def _devices(frame: Any) -> str:
        """' on NVIDIA H200, cuDNN 9.19.0' for the GPUs and cuDNN versions of a sweep's rows ('' if unnamed)."""
        if frame is None or "gpu" not in frame.columns:
            return ""
        pairs = frame[["gpu", "cudnn"]].dropna().drop_duplicates() if "cudnn" in frame.columns else None
        if pairs is None or pairs.empty:
            return ""
        return " on " + ", ".join(f"{g} (cuDNN {cudnn_version_text(c)})"
                                  for g, c in pairs.itertuples(index=False))

    @staticmethod
    def _points(frame: Any) -> int:
        if frame is None or frame.empty:
            return 0
        return int(frame["point_id"].nunique()) if "point_id" in frame.columns else len(frame)

    def _set(self, widget: Any, value: Any) -> None:
        self._silent = True
        try:
            widget.value = value
        finally:
            self._silent = False

    def _enable_plot_options(self) -> None:
        """x, colour, y and plan apply to a sweep shown, the chart choice to a comparison: the others are hidden."""
        for w in (self.x, self.color, self.y, self.which):
            w.disabled = self.frame is None
        self.sweep_options.layout.display = "flex" if self.mode == "latency" and self.frame is not None else "none"
        self.compare_options.layout.display = "flex" if self.mode == "compare" else "none"

    def _fill_axes(self, x: str | None, color: str | None) -> None:
        self._enable_plot_options()
        rows = frame_of_op(self.frame, self.op_filter.value)
        varying, constant = plot_fields(rows)
        fields = varying or constant
        x, color = default_axes(rows, x, color)
        self._silent = True
        try:
            self.x.options = fields
            self.x.value = x
            self.color.options = [("(none)", NONE)] + [(f, f) for f in varying if f != x] + [("plan", "plan"),
                                                                                            ("engine", "engine_id")]
            self.color.value = color or NONE
        finally:
            self._silent = False

    def _clear_axis_marks(self) -> None:
        for w, m in zip(self.axis_values, self.axis_messages):
            clear_invalid(w, m)

    def _axes_changed(self, change: dict[str, Any]) -> None:
        if self._silent:
            return
        if any(v.strip() for _, v in self.axes):
            self.validate()
        else:
            self._clear_axis_marks()
            self.count.value = ""

    def _filter_changed(self, change: dict[str, Any]) -> None:
        if self._silent:
            return
        if self.mode == "latency" and self.frame is not None:
            self._fill_axes(self.x.value, self.color.value)
        self.redraw()

    def _chart_changed(self, change: dict[str, Any]) -> None:
        if not self._silent and self.mode == "compare":
            self.redraw()

    def _plot_option_changed(self, change: dict[str, Any]) -> None:
        if self._silent or self.frame is None:
            return
        x_changed = change.get("owner") is self.x  # a name, not a test: `is` would narrow self.x to the owner's type
        if x_changed and self.color.value == change.get("new"):
            self._set(self.color, NONE)
        if x_changed:
            self._fill_axes(self.x.value, self.color.value)
        self.mode = "latency"
        self.redraw()

    def _progress(self, done: int, total: int, eta_s: float | None, message: str) -> None:
        """``cl.sweep``'s progress callback: the bar, the ETA, and the figure redrawn from the store so far."""
        self.progress.max = max(int(total), 1)
        self.progress.value = min(int(done), self.progress.max)
        eta = f" · about {eta_s:.0f} s left" if eta_s is not None and done < total else ""
        self.eta.value = (f"<span class='cl-hint'>{done}/{total} points{eta} · "
                          f"{html.escape(str(message)[:80])}</span>")
        self._log.say(f"Sweep: {done}/{total} points{eta}")
        if self.store is None or self._live is None:
            return
        try:  # a figure that cannot be drawn yet must not stop the sweep
            rows, self.dropped_text = drawable(Store(self.store).read(), "the live sweep")
            self.frame, self.source_text, self.mode = rows, "live sweep (so far)", "latency"
            if rows.empty or "op" not in rows.columns:
                self._placeholder(f"{done}/{total} points: the first point is running …")
                return
            x, color = self._live
            self._figures.show("sweep", SWEEP_FIGURES["sweep"].draw(rows, x, color=color,
                                                                    y=SWEEP_Y[self.y.value] or "median_ms",
                                                                    which=SWEEP_WHICH[self.which.value]))
        except Exception as e:  # noqa: BLE001
            self._log.report(e)

    def _dropped_html(self) -> str:
        """What was left out of the figure, for the line above it ('' when nothing)."""
        return f"<br><span class='cl-sweep-dropped'>{html.escape(self.dropped_text)}</span>" if self.dropped_text \
            else ""

    def _placeholder(self, text: str) -> Any:
        self.info.value = html.escape(self.dropped_text) if self.dropped_text else ""
        return self._figures.show_text("sweep", text)
