"""The Lab's Sweep view: sweep one or two spec fields on the GPU, or show recorded sweeps and compare two GPUs.

Pure helpers (no widgets), which tests call directly: :func:`sweep_fields` (the fields of an operation that can be
swept), :func:`parse_values` (a comma-separated Text value -> typed values, or a SpecError naming the field),
:func:`validate_axes` (the ``over`` dict of ``cl.sweep`` and, per axis, what is wrong), :func:`plot_fields` (the spec
fields of a sweep frame to put on x or colour).

:class:`SweepView` holds the widgets and does the work in plain methods (:meth:`SweepView.validate`,
:meth:`SweepView.run`, :meth:`SweepView.load`, :meth:`SweepView.show`, :meth:`SweepView.redraw`,
:meth:`SweepView.compare`); every widget callback goes through the Lab's ``_guard`` (errors and warnings to the Log
view and the status line).
"""

from __future__ import annotations

import html
import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import NoGPUError, SpecError
from ..specs import Spec
from .controls import CHOICES, FIELDS, INVALID_BORDER, OP_LABELS, OPS, POLICY_CHOICES, _row, field_kind

if TYPE_CHECKING:  # pragma: no cover
    from .lab import Lab

__all__ = ["DEFAULT_AXES", "MAX_POINTS", "SWEEP_Y", "SweepView", "parse_values", "plot_fields", "sweep_fields",
           "validate_axes"]

#: Most points the panel sweeps at once (a larger grid: ``cl.sweep`` from code, with a store that resumes).
MAX_POINTS = 64
#: The first axis (and second, if any) proposed for each operation.
DEFAULT_AXES: dict[str, tuple[str, str]] = {"conv": ("n", "layout"), "matmul": ("m", "dtype"),
                                            "sdpa": ("seq_q", "causal"), "norm": ("rows", "dtype"),
                                            "pool": ("n", "layout")}
#: y choices of the sweep figure -> ``plots.sweep_latency``'s ``y``.
SWEEP_Y: dict[str, str] = {"latency": "median_ms", "TFLOP/s": "tflops", "GB/s": "gbps"}
#: Which plan of each point is drawn -> ``plots.sweep_latency``'s ``which``.
SWEEP_WHICH: dict[str, str] = {"heuristic's pick": "pick", "best plan": "best"}
NO_GPU_SWEEP_TEXT = "No GPU: load a recorded sweep below, or compare two GPUs"
NONE = ""
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_FIGURE_HEIGHT = 480
_FIGURE_WIDTH = 920


# ------------------------------------------------------------------------------------------------ pure helpers

def sweep_fields(op: str) -> tuple[str, ...]:
    """The fields of operation ``op`` a sweep can vary (every control's field but the epilogue list)."""
    if op not in FIELDS:
        raise SpecError("op", op, f"must be one of {', '.join(FIELDS)}")
    return tuple(f for f in FIELDS[op] if field_kind(op, f) != "tags")


def _parse_one(op: str, field: str, item: str) -> Any:
    kind = field_kind(op, field)
    low = item.lower()
    if kind in ("optional_int", "optional_float") and low in ("none", "default"):
        return None
    if kind in ("int", "optional_int"):
        try:
            return int(item)
        except ValueError:
            raise SpecError(field, item, "must be a whole number" + (" or none" if kind == "optional_int" else "")
                            ) from None
    if kind == "pair":
        parts = item.replace("×", "x").split("x")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise SpecError(field, item, "must be a whole number or a pair such as 3x1 (height x width)") from None
        if len(nums) == 1:
            return nums[0]
        if len(nums) == 2:
            return tuple(nums)
        raise SpecError(field, item, "must be a whole number or a pair such as 3x1 (height x width)")
    if kind in ("float", "optional_float"):
        try:
            value = float(item)
        except ValueError:
            raise SpecError(field, item, "must be a number" + (" or none" if kind == "optional_float" else "")
                            ) from None
        if not math.isfinite(value):
            raise SpecError(field, item, "must be a finite number")
        return value
    if kind == "bool":
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise SpecError(field, item, "must be true or false")
    if kind == "choice":
        choices = CHOICES.get((op, field), ())
        if choices and all(isinstance(c, int) for c in choices):
            try:
                value: Any = int(item)
            except ValueError:
                value = item
        else:
            value = item
        if choices and value not in choices:
            raise SpecError(field, item, f"must be one of {', '.join(map(str, choices))}")
        return value
    return item


def parse_values(op: str, field: str, text: str) -> list[Any]:
    """The values of a comma-separated Text field for spec field ``field`` of ``op``, typed as the field is.

    ``'1, 8, 32'`` -> ``[1, 8, 32]``; a pair field also takes ``3x1``; a flag ``true``/``false``; an optional field
    ``none``. Raises :class:`SpecError` naming the field for an empty list, a value of the wrong type, a choice
    that does not exist or a value listed twice.
    """
    if field not in sweep_fields(op):
        raise SpecError("field", field, f"is not a field {OPS[op].__name__} can sweep; choose one of "
                        f"{', '.join(sweep_fields(op))}")
    items = [t.strip() for t in str(text or "").split(",")]
    if not any(items):
        raise SpecError(field, text, "give one or more values separated by commas, e.g. '1, 8, 32'")
    if any(not t for t in items):
        raise SpecError(field, text, "has an empty value between commas")
    values: list[Any] = []
    for item in items:
        value = _parse_one(op, field, item)
        if value in values:
            raise SpecError(field, item, "is listed twice")
        values.append(value)
    return values


def _combo_error(spec: Spec, field: str, value: Any, others: list[tuple[str, Any]]) -> SpecError | None:
    """None if ``spec`` with ``field=value`` is valid with some value of the other axis, else the first error."""
    first: SpecError | None = None
    for other in others or [(None, None)]:
        changes = {field: value}
        if other[0] is not None:
            changes[other[0]] = other[1]
        try:
            spec.replace(**changes)
            return None
        except SpecError as e:
            first = first or e
        except (TypeError, ValueError) as e:  # a value the spec's own checks do not expect
            first = first or SpecError(field, value, str(e))
    return first


def validate_axes(spec: Spec, axes: list[tuple[str, str]]) -> tuple[dict[str, list[Any]] | None, dict[int, str],
                                                                    int]:
    """Check the sweep's axes: ``[(field, text), ...]`` (an axis with field ``''`` or no values is unused).

    Returns ``(over, errors, invalid)``: ``over`` the ``cl.sweep`` argument (None when any axis is wrong), the
    message of each wrong axis by its index, and how many points of the grid the spec refuses (they are recorded
    as invalid, not run). A value is wrong when it does not parse or when the spec refuses it with every value of
    the other axis; then its axis is marked with the SpecError's message.
    """
    op = spec.op
    errors: dict[int, str] = {}
    parsed: dict[int, tuple[str, list[Any]]] = {}
    for i, (field, text) in enumerate(axes):
        if not field or (i > 0 and not str(text or "").strip()) or (
                not str(text or "").strip() and any(str(t or "").strip() for _, t in axes)):
            continue  # no field, or no values while another axis has some (or a later axis): unused
        if any(field == f and str(t or "").strip() for j, (f, t) in enumerate(axes) if j < i):
            errors[i] = f"{field}: is already swept by axis {[f for f, _ in axes].index(field) + 1}; choose another"
            continue
        try:
            parsed[i] = (field, parse_values(op, field, text))
        except SpecError as e:
            errors[i] = f"{e.field}={e.value!r}: {e.allowed}"
    if not parsed and not errors:
        errors[0] = "choose a field to sweep"
    for i, (field, values) in parsed.items():
        if i in errors:
            continue
        others = [(f, v) for j, (f, vs) in parsed.items() if j != i for v in vs]
        for value in values:
            e = _combo_error(spec, field, value, others)
            if e is not None:
                why = e.allowed if e.field == field else f"{e.field}={e.value!r}: {e.allowed}"
                errors[i] = f"{field}={value!r}: {why}"
                break
    total = math.prod(len(v) for _, v in parsed.values()) if parsed else 0
    if not errors and total > MAX_POINTS:
        last = max(parsed)
        errors[last] = (f"{total} points is more than the panel sweeps ({MAX_POINTS}); use fewer values, or "
                        "cl.sweep(spec, over, store=...) from code")
    if errors:
        return None, errors, 0
    over = {field: values for _, (field, values) in sorted(parsed.items())}
    from ..sweeps import grid

    invalid = sum(isinstance(p, SpecError) for p in grid(spec, over))
    return over, {}, invalid


def _ok_rows(frame: Any) -> Any:
    if "point_status" in frame.columns:
        return frame[frame["point_status"] == "ok"]
    return frame


def plot_fields(frame: Any) -> tuple[list[str], list[str]]:
    """The spec fields of a sweep frame (columns ``spec_<field>``) that hold values in points that ran.

    Returns ``(varying, constant)``: those whose value changes from point to point (what x and colour are chosen
    from), and those with one value.
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return [], []
    rows = _ok_rows(frame)
    key = "point_id" if "point_id" in rows.columns else None
    points = rows.drop_duplicates(subset=[key]) if key else rows
    varying, constant = [], []
    for col in points.columns:
        if not str(col).startswith("spec_") or col == "spec_epilogue":
            continue
        values = points[col].dropna()
        if values.empty:
            continue
        n = values.astype(str).nunique()
        (varying if n > 1 else constant).append(col[len("spec_"):])
    return varying, constant


def _distinct(frame: Any, field: str) -> int:
    col = f"spec_{field}"
    return int(frame[col].dropna().astype(str).nunique()) if col in frame.columns else 0


def _numeric_field(frame: Any, field: str) -> bool:
    import pandas as pd

    col = f"spec_{field}"
    return col in frame.columns and pd.api.types.is_numeric_dtype(frame[col]) and not \
        pd.api.types.is_bool_dtype(frame[col])


def default_axes(frame: Any, x: str | None = None, color: str | None = None) -> tuple[str | None, str | None]:
    """x and colour for a sweep frame: the ones asked for where the frame has them, else the numeric field with the
    most distinct values on x and the non-numeric (or else numeric) field with the fewest on colour."""
    varying, constant = plot_fields(frame)
    fields = varying or constant
    if not fields:
        return None, None
    rows = _ok_rows(frame)
    if x not in fields:
        numeric = [f for f in varying if _numeric_field(rows, f)]
        x = max(numeric or fields, key=lambda f: _distinct(rows, f))
    if color is not None and color != NONE and color in varying and color != x:
        return x, color
    if color == NONE:
        return x, None
    rest = [f for f in varying if f != x]
    if not rest:
        return x, None
    words = [f for f in rest if not _numeric_field(rows, f)]
    return x, min(words or rest, key=lambda f: _distinct(rows, f))


def _frame_of_op(frame: Any, op: str) -> Any:
    if not op or frame is None or "op" not in frame.columns:
        return frame
    return frame[frame["op"] == op]


# ------------------------------------------------------------------------------------------------ widgets

class SweepView:
    """The Sweep tab of a :class:`~cudnn_lab.ui.Lab` (``lab.sweep_view``); ``box`` is the tab's widget.

    ``frame`` is the sweep shown (a tidy frame as ``cl.sweep`` returns), ``mode`` what the figure draws now
    ('latency', 'compare' or None), ``fig`` the plotly figure and ``figure`` the widget that shows it.
    """

    def __init__(self, lab: Lab) -> None:
        W = lab._W
        self.lab = lab
        self._W = W
        self._silent = False
        self._op: str | None = None
        self.frame: Any = None
        self.source_text = ""
        self.mode: str | None = None
        self.store: Path | None = None
        self._compared: tuple[Any, Any] | None = None
        self._compare_text = ""
        self._live: tuple[str, str | None] | None = None
        self.datasets_frame: Any = None

        # ---- live sweep
        self.axis_fields = [W.Dropdown(options=[], layout=W.Layout(width="150px")).add_class(f"cl-sweep-field-{i}")
                            for i in (1, 2)]
        self.axis_values = [W.Text(value="", placeholder=p, continuous_update=False,
                                   layout=W.Layout(width="300px")).add_class(f"cl-sweep-values-{i}")
                            for i, p in ((1, "values, comma-separated: 1, 8, 32"),
                                         (2, "values, comma-separated (optional)"))]
        self.axis_messages = [W.HTML("", layout=W.Layout(display="none", margin="0 0 4px 84px")
                                     ).add_class("cl-message") for _ in (1, 2)]
        self.count = W.HTML("").add_class("cl-sweep-count")
        self.policy = W.ToggleButtons(options=list(POLICY_CHOICES), value="heuristic choice",
                                      style={"button_width": "136px"},
                                      tooltips=["time only the heuristics' pick of each point",
                                                "build and time every proposed plan of each point"])
        self.run_button = W.Button(description="Run sweep", icon="play", button_style="primary",
                                   layout=W.Layout(width="130px")).add_class("cl-sweep-run")
        self.run_note = W.HTML("").add_class("cl-sweep-note")
        self.progress = W.IntProgress(value=0, min=0, max=1, layout=W.Layout(width="300px")).add_class(
            "cl-sweep-progress")
        self.eta = W.HTML("").add_class("cl-sweep-eta")
        if not lab.gpu:
            self.run_button.disabled = True
            self.run_button.tooltip = NO_GPU_SWEEP_TEXT
            self.run_note.value = f"<span class='cl-hint'>{html.escape(NO_GPU_SWEEP_TEXT)}</span>"

        # ---- recorded sweeps and comparison
        self.recorded = W.Dropdown(options=[], layout=W.Layout(width="440px")).add_class("cl-sweep-recorded")
        self.load_button = W.Button(description="Load sweep", icon="folder-open",
                                    tooltip="show the chosen recorded sweep in the figure",
                                    layout=W.Layout(width="130px")).add_class("cl-sweep-load")
        self.compare_a = W.Dropdown(options=[], layout=W.Layout(width="240px")).add_class("cl-compare-a")
        self.compare_b = W.Dropdown(options=[], layout=W.Layout(width="240px")).add_class("cl-compare-b")
        self.compare_button = W.Button(description="Compare GPUs", icon="balance-scale",
                                       tooltip="best-plan latency of the points both recordings share",
                                       layout=W.Layout(width="150px")).add_class("cl-compare")

        # ---- what the figure draws
        self.op_filter = W.Dropdown(options=[("all operations", NONE)] + [(OP_LABELS[o][0], o) for o in OPS],
                                    value=NONE, layout=W.Layout(width="130px")).add_class("cl-sweep-op")
        self.x = W.Dropdown(options=[], layout=W.Layout(width="130px")).add_class("cl-sweep-x")
        self.color = W.Dropdown(options=[("(none)", NONE)], value=NONE, layout=W.Layout(width="130px")
                                ).add_class("cl-sweep-color")
        self.y = W.ToggleButtons(options=list(SWEEP_Y), value="latency", style={"button_width": "76px"}
                                 ).add_class("cl-compact")
        self.which = W.ToggleButtons(options=list(SWEEP_WHICH), value="heuristic's pick",
                                     style={"button_width": "120px"}).add_class("cl-compact")
        self.info = W.HTML("").add_class("cl-sweep-info")
        self.figure_box = lab._figure_boxes["sweep"]

        def small(text: str) -> Any:
            return W.HTML(f"<span class='cl-label'>{html.escape(text)}</span>",
                          layout=W.Layout(margin="0 4px 0 12px"))

        section = lab._section
        self.box = W.VBox([
            section(W, "sweep the problem on the left (one or two fields)"),
            _row(W, "axis 1", self.axis_fields[0], self.axis_values[0]), self.axis_messages[0],
            _row(W, "axis 2", self.axis_fields[1], self.axis_values[1]), self.axis_messages[1],
            _row(W, "plans", self.policy, small("heuristics and timing: the run options")),
            _row(W, "", self.run_button, self.count, self.run_note),
            _row(W, "progress", self.progress, self.eta),
            section(W, "recorded sweeps (made on real GPUs)"),
            _row(W, "recording", self.recorded, self.load_button),
            _row(W, "compare", self.compare_a, small("vs"), self.compare_b, self.compare_button),
            section(W, "figure"),
            W.HBox([small("operation"), self.op_filter, small("x"), self.x, small("colour"), self.color],
                   layout=W.Layout(align_items="center", margin="2px 0")),
            W.HBox([small("y"), self.y, small("plan"), self.which], layout=W.Layout(align_items="center")),
            self.info, self.figure_box,
        ]).add_class("cl-sweep")

        guard = lab._guard
        self.run_button.on_click(lambda _: guard(self.run))
        self.load_button.on_click(lambda _: guard(self.load, self.recorded.value))
        self.compare_button.on_click(lambda _: guard(self.compare))
        for w in (*self.axis_fields, *self.axis_values):
            w.observe(lambda ch: guard(self._axes_changed, ch), names="value")
        self.op_filter.observe(lambda ch: guard(self._filter_changed, ch), names="value")
        for w in (self.x, self.color, self.y, self.which):
            w.observe(lambda ch: guard(self._plot_option_changed, ch), names="value")
        self.refresh_recorded()
        self._enable_plot_options()
        self.set_op(lab.spec.op)
        self._placeholder("No sweep yet: " + ("Run sweep on this GPU, or " if lab.gpu else "")
                          + "Load a recorded sweep, or Compare GPUs.")

    # ============================================================================================ public API

    @property
    def fig(self) -> Any:
        """The plotly figure shown (a ``go.Figure``)."""
        return self.lab.figures.get("sweep")

    @property
    def figure(self) -> Any:
        """The widget that shows :attr:`fig` (a ``FigureWidget``, or an Output without anywidget)."""
        return self.lab.figure_widgets.get("sweep")

    @property
    def axes(self) -> list[tuple[str, str]]:
        """The axes as set: ``[(field, text), (field or '', text)]``."""
        return [(f.value or NONE, v.value) for f, v in zip(self.axis_fields, self.axis_values)]

    def set_op(self, op: str) -> None:
        """Offer the fields of operation ``op`` on the axes (called when the Lab's operation changes)."""
        if op == self._op:
            return
        self._op = op
        fields = list(sweep_fields(op))
        first, second = DEFAULT_AXES.get(op, (fields[0], NONE))
        self._silent = True
        try:
            self.axis_fields[0].options = fields
            self.axis_fields[0].value = first if first in fields else fields[0]
            self.axis_fields[1].options = [("(none)", NONE)] + [(f, f) for f in fields]
            self.axis_fields[1].value = second if second in fields else NONE
            for v in self.axis_values:
                v.value = ""
        finally:
            self._silent = False
        self._clear_axis_marks()
        self.count.value = ""

    def validate(self) -> dict[str, list[Any]] | None:
        """The ``over`` of the axes as set, or None with each wrong axis marked in red with its message."""
        over, errors, invalid = validate_axes(self.lab.spec, self.axes)
        self._clear_axis_marks()
        for i, message in errors.items():
            widget = self.axis_values[i]
            widget.add_class("cl-invalid")
            widget.layout.border = INVALID_BORDER
            self.axis_messages[i].value = f"<span class='cl-error'>{html.escape(message)}</span>"
            self.axis_messages[i].layout.display = "flex"
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
        lab = self.lab
        if not lab.gpu:
            raise NoGPUError("a sweep runs every point on a GPU; load a recorded sweep instead")
        if lab.busy:
            return None
        over = self.validate()
        if over is None:
            raise SpecError("sweep", self.axes, "fix the sweep's values marked in red first")
        import cudnn_lab

        spec = lab.spec
        options = lab.controls.run_options()
        options["plans"] = POLICY_CHOICES[self.policy.value]
        fields = list(over)
        self._live = (fields[0], fields[1] if len(fields) > 1 else None)
        self.store = Path(tempfile.mkdtemp(prefix="cudnn_lab_sweep_")) / "sweep.parquet"
        self._compared = None
        lab._set_busy(True)
        try:
            self.progress.value, self.progress.max = 0, 1
            self.eta.value = ""
            lab._status(f"Sweeping {spec.label()} over {', '.join(fields)} …")
            frame = cudnn_lab.sweep(spec, over, store=self.store, progress=self._progress, **options)
            self.progress.value = self.progress.max
            self.show(frame, source="live sweep", x=self._live[0], color=self._live[1] or NONE)
            lab._status(f"Sweep done: {self._points(frame)} points, stored in {self.store}.")
        finally:
            self._live = None
            lab._set_busy(False)
        return frame

    def load(self, name_or_path: Any) -> Any:
        """Show a recorded sweep: a name from ``cl.recorded_datasets(kind='sweep')`` or a Parquet file/store."""
        if name_or_path is None or name_or_path == "":
            raise SpecError("recording", name_or_path, "choose a recorded sweep first (none is selected)")
        frame = self._frame(name_or_path)
        if "op" in frame.columns and self.lab.spec.op in set(frame["op"].dropna()):
            self._set(self.op_filter, self.lab.spec.op)  # the operation of the Lab's problem first
        elif "op" in frame.columns and len(frame["op"].dropna()):
            self._set(self.op_filter, str(frame["op"].dropna().iloc[0]))
        self.show(frame, source=self._name(name_or_path))
        self.lab._status(f"Showing recorded sweep {self._name(name_or_path)}: {self._points(frame)} points.")
        return frame

    def show(self, frame: Any, *, source: str = "", x: str | None = None, color: str | None = None) -> None:
        """Show a sweep frame: x and colour offered from its spec fields (those asked for where it has them)."""
        self.frame = frame
        self.source_text = source
        self.mode = "latency"
        self._fill_axes(x, color)
        self.redraw()

    def redraw(self) -> Any:
        """Draw the figure again from the frame (or the comparison) and the figure options."""
        from .. import plots

        if self.mode == "compare" and self._compared is not None:
            op = self.op_filter.value
            a, b = (_frame_of_op(f, op) for f in self._compared)
            fig = plots.compare_gpus(a, b)
            self.info.value = (f"<span class='cl-hint'>{html.escape(self._compare_text)}"
                               f"{' · ' + html.escape(op) + ' points only' if op else ''}</span>")
            return self._draw(fig)
        if self.frame is None:
            return None
        rows = _frame_of_op(self.frame, self.op_filter.value)
        if self.x.value is None or rows is None or rows.empty:
            what = f"no {self.op_filter.value} point" if self.op_filter.value else "nothing"
            return self._placeholder(f"{what} in {self.source_text or 'this sweep'}: choose another operation")
        fig = plots.sweep_latency(rows, self.x.value, color=self.color.value or None, y=SWEEP_Y[self.y.value],
                                  which=SWEEP_WHICH[self.which.value])
        self.info.value = (f"<span class='cl-hint'>{html.escape(self.source_text)}: "
                           f"{self._points(rows)} points drawn by spec field</span>")
        return self._draw(fig)

    def compare(self, a: Any = None, b: Any = None) -> Any:
        """Draw ``plots.compare_gpus`` of two sweeps (names, files or frames; by default the two chosen)."""
        a = self.compare_a.value if a is None else a
        b = self.compare_b.value if b is None else b
        if a in (None, "") or b in (None, ""):
            raise SpecError("compare", (a, b), "choose two recorded sweeps")
        self._compared = (self._frame(a), self._frame(b))
        self._compare_text = f"a: {self._name(a)} vs b: {self._name(b)}"
        self.mode = "compare"
        fig = self.redraw()
        self.lab._status(f"Comparing {self._name(a)} with {self._name(b)}.")
        return fig

    def refresh_recorded(self) -> Any:
        """Fill the recorded-sweep dropdowns from ``cl.recorded_datasets(kind='sweep')``."""
        import cudnn_lab

        from .tables import cudnn_version_text

        frame = None
        try:
            frame = cudnn_lab.recorded_datasets(kind="sweep")
        except Exception as e:  # noqa: BLE001 - a broken data folder must not break the panel
            self.lab._report(e)
        options = []
        if frame is not None:
            for _, row in frame.iterrows():
                options.append((f"{row.get('gpu') or '?'} — {row.get('label') or row['name']}, cuDNN "
                                f"{cudnn_version_text(row.get('cudnn'))}, {str(row.get('date') or '')[:10]} "
                                f"({row['name']})", str(row["name"])))
        self.datasets_frame = frame
        self.recorded.options = options
        short = [(o[1], o[1]) for o in options]
        self.compare_a.options, self.compare_b.options = short, short
        if options:
            self.recorded.value = options[0][1]
            self.compare_a.value = options[0][1]
            self.compare_b.value = options[1][1] if len(options) > 1 else options[0][1]
        for w in (self.recorded, self.compare_a, self.compare_b):
            w.disabled = not options
        self.set_busy(self.lab.busy)
        return frame

    def set_busy(self, busy: bool) -> None:
        """Disable the buttons while the Lab is busy (and Run sweep without a GPU)."""
        self.run_button.disabled = busy or not self.lab.gpu
        has = bool(self.recorded.options)
        self.load_button.disabled = busy or not has
        self.compare_button.disabled = busy or not has

    # ============================================================================================ internals

    def _frame(self, source: Any) -> Any:
        import pandas as pd

        if isinstance(source, pd.DataFrame):
            return source
        import cudnn_lab

        frame = cudnn_lab.load_results(source)
        if not isinstance(frame, pd.DataFrame):
            raise SpecError("recording", str(source), "is a single run, not a sweep: Load it from the results "
                            "section on the left")
        return frame

    @staticmethod
    def _name(source: Any) -> str:
        import pandas as pd

        if isinstance(source, pd.DataFrame):
            return "a sweep frame"
        return Path(str(source)).stem if str(source).endswith(".parquet") else str(source)

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
        """x, colour, y and plan apply to a sweep shown, not to a comparison alone."""
        for w in (self.x, self.color, self.y, self.which):
            w.disabled = self.frame is None

    def _fill_axes(self, x: str | None, color: str | None) -> None:
        self._enable_plot_options()
        rows = _frame_of_op(self.frame, self.op_filter.value)
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
            if "cl-invalid" in w._dom_classes:
                w.remove_class("cl-invalid")
            w.layout.border = None
            m.value, m.layout.display = "", "none"

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

    def _plot_option_changed(self, change: dict[str, Any]) -> None:
        if self._silent or self.frame is None:
            return
        if change.get("owner") is self.x and self.color.value == change.get("new"):
            self._set(self.color, NONE)
        if change.get("owner") is self.x:
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
        self.lab._status(f"Sweep: {done}/{total} points{eta}")
        if self.store is None or self._live is None:
            return
        try:  # a figure that cannot be drawn yet must not stop the sweep
            from .. import plots
            from ..store import Store

            rows = Store(self.store).read()
            self.frame, self.source_text, self.mode = rows, "live sweep (so far)", "latency"
            if rows.empty or "op" not in rows.columns:
                self._placeholder(f"{done}/{total} points: the first point is running …")
                return
            x, color = self._live
            self._draw(plots.sweep_latency(rows, x, color=color, y=SWEEP_Y[self.y.value],
                                           which=SWEEP_WHICH[self.which.value]))
        except Exception as e:  # noqa: BLE001
            self.lab._report(e)

    def _placeholder(self, text: str) -> Any:
        from .lab import _placeholder

        self.info.value = ""
        return self._draw(_placeholder(text), height=260)

    def _draw(self, fig: Any, height: int = _FIGURE_HEIGHT) -> Any:
        fig.update_layout(height=height, width=_FIGURE_WIDTH, margin={"t": 80, "r": 20})
        self.lab.figures["sweep"] = fig
        self.lab._put_figure("sweep", fig)
        return fig
