"""What every figure shares: colours, marker sizes, titles, hover text, axis helpers, number formatting, and the
checks that a figure got the kind of input it draws (one run's RunResult, or a sweep frame).

Names here are for the figure modules of this package (``plots.run``, ``plots.sweep``, ``plots.compare``); the
constants and :func:`engine_colors` are public through ``cudnn_lab.plots``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import OptionError
from ..results.metrics import cell_text, is_finite, point_key, sweep_ran
from ..provenance import cudnn_version_text
from ..results.run import RunResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import plotly.graph_objects as go

__all__ = ["SELECTED_LINE_WIDTH", "LINE_WIDTH", "PASS_COLOR", "FAIL_COLOR", "UNKNOWN_COLOR", "engine_colors",
           "require_run", "require_sweep", "require_plan"]

#: Outline width of the selected plan's bar or marker, and of every other one.
SELECTED_LINE_WIDTH = 3.0
LINE_WIDTH = 0.5
MARKER_SIZE, SELECTED_MARKER_SIZE = 10, 16
SELECTED_LINE_COLOR, LINE_COLOR = "black", "rgba(40, 40, 40, 0.5)"
PASS_COLOR, FAIL_COLOR, UNKNOWN_COLOR = "#2ca02c", "#d62728", "#7f7f7f"
#: Sweep figures: what 'which' draws, and the y axes sweep_latency offers (column -> name, title, scale).
WHICH_TEXT = {"pick": "heuristic's pick", "best": "best plan", "all": "every plan"}
Y_AXES = {"median_ms": ("latency", "median latency per call (µs)", 1e3),
          "tflops": ("throughput", "throughput (TFLOP/s)", 1.0),
          "gbps": ("bandwidth", "bandwidth at minimal bytes (GB/s)", 1.0)}
NHWC_FASTER_SCALE = "RdBu"  # red: NCHW faster (ratio < 1), blue: NHWC faster (ratio > 1)
_GROUP_PALETTE: list[str] = []


# ------------------------------------------------------------------------------------------------ input checks

class _Kind:
    """A value's kind for a message (its repr could be a whole DataFrame)."""

    def __init__(self, value: Any) -> None:
        rows = f", {len(value)} rows" if hasattr(value, "columns") else ""
        self.text = f"<{type(value).__name__}{rows}>"

    def __repr__(self) -> str:
        return self.text


def require_run(result: Any, figure: str) -> Any:
    """``result`` if it is one run's RunResult, else OptionError saying what the figure wants and what to use."""
    import pandas as pd

    if isinstance(result, RunResult):
        return result
    hint = ""
    if isinstance(result, pd.DataFrame):
        hint = ("; this is a sweep frame (one row per plan per point): draw it with plots.sweep_latency, "
                "sweep_roofline, regret_along or compare_gpus, or load one run (cl.recorded_datasets(kind='run'))")
    raise OptionError("result", _Kind(result), "must be a single RunResult (from cl.run or cl.load_results of a "
                      f"run's JSON){hint}", where=f"plots.{figure}")


def require_sweep(frame: Any, figure: str, name: str = "frame") -> Any:
    """``frame`` if it is a sweep frame (a DataFrame), else OptionError saying what the figure wants."""
    import pandas as pd

    if isinstance(frame, pd.DataFrame):
        return frame
    hint = ""
    if hasattr(frame, "plans") and hasattr(frame, "spec"):
        hint = ("; this is a single run: draw it with plots.latency_bar, heuristic_vs_measured, errors_per_plan or "
                "roofline")
    raise OptionError(name, _Kind(frame), "must be a sweep frame (from cl.sweep(...) or cl.load_results of a sweep "
                      f"or store){hint}", where=f"plots.{figure}")


def require_plan(plan: Any, figure: str, name: str = "selected") -> str | None:
    """A plan name argument: None or text."""
    if plan is not None and not isinstance(plan, str):
        raise OptionError(name, plan, "must be a plan name (text, as in .plans['plan']) or None",
                          where=f"plots.{figure}")
    return plan


def require_choice(value: Any, allowed: Any, name: str, figure: str) -> Any:
    if not isinstance(value, str) or value not in allowed:
        raise OptionError(name, value, f"must be one of {', '.join(map(repr, allowed))}", where=f"plots.{figure}")
    return value


# ------------------------------------------------------------------------------------------------ shared parts

def engine_colors(frame: Any) -> dict[int, str]:
    """One colour per engine id of a plan table (or a RunResult), the same in every figure drawn from it.

    Engines are numbered in ascending id order over every row (plans that failed included), so which plans ran
    does not change an engine's colour.
    """
    from plotly.colors import qualitative

    plans = getattr(frame, "plans", frame)
    palette = list(qualitative.Plotly) + list(qualitative.Dark24) + list(qualitative.Light24)
    ids = sorted({int(e) for e in plans["engine_id"].dropna()})
    return {eid: palette[i % len(palette)] for i, eid in enumerate(ids)}


def cudnn_version(value: Any) -> str:
    """cuDNN's backend version number as text: 91900 -> '9.19.0 (91900)', 8907 -> '8.9.7 (8907)'
    (:func:`~cudnn_lab.provenance.cudnn_version_text`, with the number cuDNN reports)."""
    text = cudnn_version_text(value)
    try:
        v = int(value)
    except (TypeError, ValueError):
        return text
    return f"{text} ({v})" if v >= 1000 else text


def fmt(value: Any, spec: str, unit: str = "") -> str:
    """A number formatted with ``spec`` and ``unit``, or 'n/a' when missing."""
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        return "n/a"
    if math.isnan(v):
        return "n/a"
    return f"{v:{spec}}{unit}"


def outline(plans: Any, selected: str | None) -> dict[str, Any]:
    """Marker outline per point: thick and dark for the selected plan."""
    chosen = [p == selected for p in plans]
    return {"width": [SELECTED_LINE_WIDTH if c else LINE_WIDTH for c in chosen],
            "color": [SELECTED_LINE_COLOR if c else LINE_COLOR for c in chosen]}


def sizes(plans: Any, selected: str | None) -> list[int]:
    return [SELECTED_MARKER_SIZE if p == selected else MARKER_SIZE for p in plans]


def empty(fig: go.Figure, text: str) -> go.Figure:
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def positive(value: Any) -> float | None:
    """A cell's value as a float where it is a finite number above zero, else None (a ceiling, a rate, a ratio)."""
    return float(value) if is_finite(value) and float(value) > 0 else None


def verdict_of(value: Any) -> str:
    """'pass', 'fail' or 'unknown' (NA: not checked) for a pass_torch / pass_cudnn cell."""
    import pandas as pd

    if value is None or pd.isna(value):
        return "unknown"
    return "pass" if bool(value) else "fail"


def ratio_colorscale(zmin: float, zmax: float, scale: str = NHWC_FASTER_SCALE) -> list[list[Any]]:
    """A diverging colour scale over [zmin, zmax] whose neutral middle colour sits at a ratio of exactly 1.

    Plotly's ``zmid`` has no effect once zmin and zmax are set, and a plain scale over [1/m, m] puts its middle at
    (1/m + m) / 2, not 1; this one maps the scale's low half onto [zmin, 1] and its high half onto [1, zmax].
    """
    from plotly.colors import get_colorscale

    stops = get_colorscale(scale)
    w = (1.0 - zmin) / (zmax - zmin)
    out: list[list[Any]] = []
    for pos, color in stops:
        at = pos * 2 * w if pos <= 0.5 else w + (pos - 0.5) * 2 * (1 - w)
        if out and at <= out[-1][0]:
            continue
        out.append([min(max(at, 0.0), 1.0), color])
    return out


def group_palette() -> list[str]:
    from plotly.colors import qualitative

    if not _GROUP_PALETTE:
        _GROUP_PALETTE.extend(list(qualitative.Plotly) + list(qualitative.Dark24) + list(qualitative.Light24))
    return _GROUP_PALETTE


def column(frame: pd.DataFrame, name: str, role: str) -> str:
    """The column a field name means: spec_<name> if the frame has it, else the column itself."""
    if not isinstance(name, str):
        raise OptionError(role, name, "must be a spec field name (e.g. 'n') or a column name")
    for col in (f"spec_{name}", name):
        if col in frame.columns:
            return col
    fields = sorted(c[len("spec_"):] for c in frame.columns if str(c).startswith("spec_"))
    raise OptionError(role, name, f"is neither a spec field of this sweep ({', '.join(fields) or 'none'}) nor a "
                      "column")


def field_name(col: str) -> str:
    return col[len("spec_"):] if col.startswith("spec_") else col


def numeric(values: Any) -> bool:
    """Whether every value is a real number (not bool, not text)."""
    import numbers

    vals = list(values)
    return bool(vals) and all(isinstance(v, numbers.Real) and not isinstance(v, bool) and is_finite(v) for v in vals)


def sorted_values(values: Any) -> list[Any]:
    """Distinct values, numerically sorted when they are numbers, else by their text."""
    distinct = list(dict.fromkeys(v for v in values if cell_text(v) is not None))
    if numeric(distinct):
        return sorted(distinct, key=float)
    return sorted(distinct, key=str)


def log_span(values: Any) -> bool:
    """True when the values are positive numbers spanning more than 10x."""
    vals = [float(v) for v in values] if numeric(values) else []
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) > 10


def plain(value: Any) -> Any:
    """A numpy scalar as its Python value (so figures hold plain ints, floats and strings)."""
    return value.item() if hasattr(value, "item") else value


def sweep_devices(frame: Any) -> list[str]:
    """'GPU, cuDNN x.y.z (n)' for each distinct GPU and cuDNN version among the frame's rows that name one."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty or "gpu" not in frame.columns:
        return []
    out = []
    versions = frame["cudnn"] if "cudnn" in frame.columns else [None] * len(frame)
    for value, version in zip(frame["gpu"], versions):  # columns, not iterrows: a sweep has thousands of rows
        gpu = cell_text(value)
        if gpu is None:
            continue
        name = f"{gpu}, cuDNN {cudnn_version(version)}"
        if name not in out:
            out.append(name)
    return out


def point_counts(frame: Any, shown: int) -> str:
    """'4 of 6 points ran; 1 failed, 1 invalid' (or '4 points') for a subtitle."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return "no points"
    key = point_key(frame) if point_key(frame) in frame.columns else None
    if key is None:
        return f"{shown} points"
    per_point = frame.drop_duplicates(subset=[key])
    total = len(per_point)
    statuses = (per_point["point_status"].map(cell_text).value_counts() if "point_status" in frame.columns
                else pd.Series(dtype=int))
    skipped = [f"{int(statuses[s])} {s}" for s in ("failed", "invalid") if s in statuses]
    text = f"{shown} of {total} points shown" if shown != total else f"{total} points"
    return text + (f"; {', '.join(skipped)}" if skipped else "")


def sweep_title(frame: Any, what: str, extra: str = "") -> dict[str, Any]:
    """Title naming what is drawn and where, one line each: what, the ops, the GPU(s) and cuDNN version(s),
    ``extra``."""
    import pandas as pd

    ops = []
    if isinstance(frame, pd.DataFrame) and "op" in frame.columns:
        ops = [o for o in dict.fromkeys(cell_text(v) for v in frame["op"]) if o]
    devices = sweep_devices(sweep_ran(frame)) or sweep_devices(frame)
    return title_block(what, f"{'operation' if len(ops) == 1 else 'operations'}: {', '.join(ops)}" if ops else "",
                       " vs ".join(devices) if devices else "unknown GPU, cuDNN unknown", extra)


def sweep_hover(row: Any, *extra: str) -> str:
    """Point label, plan, engine, knobs, median and IQR (in us), then any extra lines."""
    get = row.get
    med, iqr = get("median_ms"), get("iqr_ms")
    lines = [f"<b>{cell_text(get('label')) or cell_text(get('point_id')) or 'point'}</b>",
             f"plan {cell_text(get('plan')) or 'n/a'}, engine {fmt(get('engine_id'), '.0f')}",
             f"knobs {cell_text(get('knobs')) or '{}'}",
             f"median {fmt(float(med) * 1e3 if is_finite(med) else None, '.2f', ' µs')}, "
             f"IQR {fmt(float(iqr) * 1e3 if is_finite(iqr) else None, '.2f', ' µs')}", *extra]
    return "<br>".join(lines)


def shared_x_note(groups: list[tuple[Any, pd.DataFrame]], xcol: str) -> str:
    """A note when points of one line share an x (other spec fields vary): the line then zigzags."""
    if any(g[xcol].duplicated().any() for _, g in groups):
        return "points of one line share an x (other fields vary: pass color=)"
    return ""


def annotation_x(value: Any, log: bool) -> Any:
    """An annotation's x: log10 of the value on a log axis (shapes and traces take the value itself)."""
    return math.log10(float(value)) if log else value


def group_colors(values: list[Any], col: str | None, frame: pd.DataFrame) -> dict[Any, str]:
    if col == "engine_id":
        colors = engine_colors(frame)
        return {v: colors.get(int(v), UNKNOWN_COLOR) if is_finite(v) else UNKNOWN_COLOR for v in values}
    pal = group_palette()
    return {v: pal[i % len(pal)] for i, v in enumerate(values)}


def split_groups(rows: pd.DataFrame, col: str | None) -> list[tuple[Any, pd.DataFrame]]:
    """Rows split by the value of ``col`` (sorted; one group, key None, without a column)."""
    if col is None:
        return [(None, rows)]
    return [(v, rows[rows[col].map(plain) == v]) for v in sorted_values(rows[col].map(plain))]


def group_name(col: str | None, value: Any) -> str:
    if col is None:
        return "all points"
    if col == "engine_id" and is_finite(value):
        return f"engine {int(float(value))}"
    return f"{field_name(col)}={value}" if numeric([value]) else str(value)


def spec_dict(row: Any) -> dict[str, Any]:
    """The point's spec fields: from its ``spec`` JSON, else from its spec_<field> columns."""
    import json

    text = cell_text(row.get("spec"))
    if text:
        try:
            data = json.loads(text)
            if isinstance(data, dict):
                return data
        except (ValueError, RecursionError):
            pass
    return {str(k)[len("spec_"):]: plain(v) for k, v in row.items() if str(k).startswith("spec_")}


def spec_key(row: Any, drop: tuple[str, ...] = ()) -> str:
    """The point's spec as canonical JSON, without the fields in ``drop``."""
    import json

    data = {k: v for k, v in spec_dict(row).items() if k not in drop}
    return json.dumps(data, sort_keys=True, default=str)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def us(ms: Any) -> str:
    """A latency in ms shown in µs ('12.34 µs'), or 'n/a'."""
    return fmt(float(ms) * 1e3 if is_finite(ms) else None, ".2f", " µs")


# ------------------------------------------------------------------------------------------------ layout for any width

#: Legend under the plot, in rows (a legend on the right takes a third of a 430 px pane). plotly.js lays a
#: horizontal legend out in columns as wide as its widest entry, within the plot area's width: entry names are
#: kept under about 22 characters so that two columns fit a 430 px figure.
LEGEND_BELOW: dict[str, Any] = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom",
                                "xref": "container", "x": 0.0, "xanchor": "left", "title": {"side": "top"},
                                "font": {"size": 11}}
FONT_SIZE = 12


def title_block(what: str, *lines: str) -> dict[str, Any]:
    """A title: ``what`` on its first line, then each non-empty line in a smaller font (problem, device, counts).
    Short lines wrap less: a figure is as wide as its pane, 430 px in a narrow Lab."""
    subs = "".join(f"<br><span style='font-size:11px'>{line}</span>" for line in lines if line)
    # Anchored at the top (plotly measures a multi-line title's top from its first baseline: pad.t makes room).
    return {"text": f"{what}{subs}", "x": 0.0, "xanchor": "left", "xref": "paper", "font": {"size": 15},
            "yref": "container", "y": 1.0, "yanchor": "top", "pad": {"t": 24}}


def fit_width(fig: go.Figure) -> go.Figure:
    """The layout every figure ends with: no fixed width (it fills its pane, notebook or page), the legend under
    the plot, room above for the title's lines."""
    title = fig.layout.title.text or ""
    lines = title.count("<br>") + 1 if title else 0
    fig.update_layout(width=None, autosize=True, legend=LEGEND_BELOW, font={"size": FONT_SIZE},
                      margin={"l": 60, "r": 16, "t": 36 + 19 * lines, "b": 40, "autoexpand": True},
                      hoverlabel={"font_size": 11}, title_automargin=False)
    return fig


def fitted(make: Any) -> Any:
    """Decorator: the figure function's result goes through :func:`fit_width` (every return path)."""
    import functools

    @functools.wraps(make)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fit_width(make(*args, **kwargs))

    return wrapper


def short_gpu(name: Any) -> str:
    """A GPU's name short enough for a legend: 'NVIDIA H100 80GB HBM3' -> 'H100', 'NVIDIA H200' -> 'H200'."""
    words = str(name or "unknown GPU").split(",")[0].replace("NVIDIA", "").split()
    return words[0] if words else str(name)


def legend_line(fig: go.Figure, name: str, line: dict[str, Any]) -> None:
    """A legend entry for a line drawn as a shape (``add_hline``): shapes in a legend stop it from wrapping into
    rows, so the entry is an empty line trace with the shape's style."""
    import plotly.graph_objects as go

    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=name, line=line, hoverinfo="skip"))


def nice_number(v: float) -> str:
    """A tick label without float noise: 0.5, 2, 10, 1000, 1e-05 -> '1e-5'."""
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-2:
        mant, exp = f"{v:.0e}".split("e")
        return f"{mant}e{int(exp)}"
    return f"{v:g}"


def log_ticks(lo: float, hi: float, text: Any = nice_number) -> dict[str, Any]:
    """Ticks for a log axis from ``lo`` to ``hi`` (data units): 1-2-5 steps over up to two decades, powers of ten
    beyond (every other one past eight decades), labelled by ``text`` (plain numbers, never 0.295 or '2' alone)."""
    lo, hi = max(float(lo), 1e-300), max(float(hi), 1e-300)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1, 2, 5) if last - first <= 2 else (1,)
    stride = 2 if last - first > 8 else 1
    vals = [m * 10.0 ** e for e in range(first, last + 1) if (e - first) % stride == 0 for m in steps]
    vals = [v for v in vals if lo * 0.999 <= v <= hi * 1.001]
    return {"tickvals": vals, "ticktext": [text(v) for v in vals]}
