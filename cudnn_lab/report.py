"""Self-contained HTML reports: one file that opens offline and holds the graph, the figures, the plan table,
the device record, the spec and the repro script: what people attach to a bug report or hand to students.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from .errors import MissingDependencyError, OptionError
from .results import RunResult, metrics
from .results.paths import check_output_path, write_text

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1200px;
color:#111827;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #e5e7eb;padding-bottom:.25rem}
table{border-collapse:collapse;font-size:.8rem}td,th{border:1px solid #e5e7eb;padding:.2rem .4rem;text-align:right}
th{background:#f3f4f6}td:first-child,th:first-child{text-align:left}
pre{background:#f9fafb;border:1px solid #e5e7eb;padding:.75rem;overflow:auto;font-size:.75rem}
.graph svg{max-width:100%;height:auto}.note{color:#6b7280;font-size:.85rem}
"""
TABLE_COLUMNS = ["heuristic_rank", "plan", "engine_id", "knob_names", "behavior_notes", "numeric_notes",
                 "workspace_bytes", "build_ms", "status", "median_ms", "iqr_ms", "samples", "timing_mode", "kernel_ms",
                 "kernel_count", "launch_gap_ms", "tflops", "pct_of_ceiling", "rel_l2", "max_abs", "pass_torch",
                 "pass_cudnn", "deterministic", "proposed", "origin", "error"]


def anatomy_html(result: RunResult) -> str:
    """Kernels per plan (what each name tells) and the exploration's answer, where the result has them."""
    from .results import anatomy

    parts = []
    if result.exploration["explored"] or result.engine_space.get("engines"):
        engines = result.engine_space.get("engines", [])
        runnable = sum(1 for e in engines if e.get("runnable"))
        parts.append(f"<p>{html.escape(anatomy.answer_text(result.exploration))} The graph has {len(engines)} "
                     f"engines, {runnable} of them runnable here.</p>")
    kernels = anatomy.kernels_table(result.plans)
    if not kernels.empty:
        parts.append(kernels.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}"))
    return "<h2>Plan anatomy</h2>" + "".join(parts) if parts else ""


def graph_svg(result: RunResult) -> str:
    """The graph drawn as inline SVG (with ``dot``), or its DOT source with an install hint (without)."""
    from .graph import drawing
    from .graph.render import DOT_INSTALL_HINT, to_svg

    dot = drawing(result.spec)
    try:
        return to_svg(dot)
    except MissingDependencyError:
        return f"<p class='note'>{html.escape(DOT_INSTALL_HINT)}</p><pre>{html.escape(dot.source)}</pre>"


def _figures(result: RunResult) -> list[Any]:
    from . import plots

    if metrics.timed(result.plans).empty:
        return []
    return [plots.latency_bar(result), plots.heuristic_vs_measured(result), plots.errors_per_plan(result),
            plots.error_histogram(result), plots.roofline(result)]


def report_html(result: RunResult, *, title: str | None = None) -> str:
    """The whole report as one HTML string; plotly's library is embedded once, so it opens with no network."""
    import plotly.io as pio

    from . import __version__
    from .errors import UnsupportedGraphError
    from .graph import build_graph

    if not isinstance(result, RunResult):
        raise OptionError("result", type(result).__name__, "must be a single RunResult (a sweep frame has no report "
                          "yet)", where="report")
    if title is not None and not isinstance(title, str):
        raise OptionError("title", title, "must be text or None", where="report")
    title = title or f"cudnn_lab report: {result.spec.label()}"
    figs = _figures(result)
    fig_html = "".join(
        pio.to_html(fig, full_html=False, include_plotlyjs="inline" if i == 0 else False,
                    config={"displaylogo": False}) for i, fig in enumerate(figs)) or \
        "<p class='note'>No plan ran, so there is nothing to plot.</p>"
    from .results.anatomy import with_knob_names

    plans = with_knob_names(result.plans, result.device.get("cudnn_backend"))
    table = plans[[c for c in TABLE_COLUMNS if c in plans and (c in ("plan", "knob_names", "status")
                                                                or not plans[c].isna().all())]]
    device_rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                          for k, v in {**result.device, **{f"ceiling {k}": v for k, v in result.ceilings.items()},
                                       **{f"torch {k}": v for k, v in result.torch.items()}}.items())
    warnings = "".join(f"<li>{html.escape(w)}</li>" for w in result.warnings)
    try:
        script = build_graph(result.spec).to_script()
    except UnsupportedGraphError as e:  # pooling: no frontend graph, so no script; say why
        script = f"# No standalone script: {e}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="note">Measured {html.escape(str(result.created))} on {html.escape(str(result.device.get('gpu')))}
(driver {html.escape(str(result.device.get('driver')))}, CUDA {html.escape(str(result.device.get('cuda')))},
cuDNN {html.escape(str(result.device.get('cudnn_backend')))}, frontend
{html.escape(str(result.device.get('cudnn_frontend')))}); report written by cudnn_lab {__version__}.</p>
<pre>{html.escape(result.summary())}</pre>
{f"<ul>{warnings}</ul>" if warnings else ""}
<h2>Graph</h2><div class="graph">{graph_svg(result)}</div>
<h2>Figures</h2>{fig_html}
<h2>Plans</h2>{table.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}")}
{anatomy_html(result)}
<h2>Device</h2><table>{device_rows}</table>
<h2>Spec</h2><pre>{html.escape(json.dumps(result.spec.to_dict(), indent=1))}</pre>
<h2>Settings</h2><pre>{html.escape(json.dumps(result.settings, indent=1))}</pre>
<h2>Repro script</h2><p class="note">Rebuilds and runs this graph with cudnn and torch only.</p>
<pre>{html.escape(script)}</pre>
</body></html>
"""


def save_report(result: RunResult, path: str | Path, *, title: str | None = None) -> Path:
    """Write :func:`report_html` to ``path`` and return it; the path is checked before the report is made."""
    path = check_output_path(path, what="report")
    return write_text(path, report_html(result, title=title), what="report")
