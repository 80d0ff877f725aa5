"""Self-contained HTML reports: one file that opens offline. A run's report holds the graph, the figures, the plan
table, the device record, the spec and the repro script (what people attach to a bug report or hand to students); a
sweep's report holds its roofline, each operation's latency along its sizes, the errors per dtype and one row per
point with the heuristic's pick, the best plan and the regret. Figures fill the page's width; a banner says where
the numbers come from (RECORDED or MEASURED HERE, :mod:`cudnn_lab.provenance`).

The report draws what it is given and reads no recording and builds no graph: a run's graph (drawn), repro script
and what-if answers come in a :class:`ReportAnswers` its caller gathers (the Lab's Save report and ``cudnn-lab
report``: :func:`cudnn_lab.cli.report_answers`); every figure and table is drawn by its entry of
:mod:`cudnn_lab.plots.registry`, the views the Lab shows.

A table of contents opens the page and every section folds (``<details open>``, no script). Numbers are formatted by
:mod:`cudnn_lab.plots.tables`, one format per column. plotly.js is embedded once, gzipped and base64-encoded
(:data:`PLOTLY_BUNDLE`, plotly's cartesian bundle, about 0.66 MB where the full bundle would be 4.8 MB), and the
browser unpacks it (``DecompressionStream``); each figure is then its JSON and one ``Plotly.newPlot`` call.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import gzip
import html
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ._version import __version__
from .errors import OptionError
from .plots.registry import RUN_FIGURES, ViewEntry, entries
from .plots.tables import _bytes, frame_table_html, plan_table_html, sig3, us_text
from .provenance import Provenance, cudnn_version_text, provenance
from .results import anatomy, metrics
from .results.metrics import cell_text, point_key, row_gbps, row_tflops
from .results.paths import check_output_path, write_text
from .results.run import RunResult
from .results.result_checks import check_result
from .results.schema import point_column
from .results.sweep_checks import check_sweep_frame

__all__ = ["TABLE_COLUMNS", "ReportAnswers", "REPORT_SOURCES", "report_html", "save_report", "save_sweep_report",
           "sweep_report_html", "whatif_html"]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1200px;
color:#111827;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #e5e7eb;padding-bottom:.25rem}
table{border-collapse:collapse;font-size:.8rem}td,th{border:1px solid #e5e7eb;padding:.2rem .4rem;text-align:right}
th{background:#f3f4f6}td:first-child,th:first-child{text-align:left}
pre{background:#f9fafb;border:1px solid #e5e7eb;padding:.75rem;overflow:auto;font-size:.75rem}
.graph{overflow:auto;border:1px solid #e5e7eb}.graph svg{max-width:100%;height:auto}
.note{color:#6b7280;font-size:.85rem}
.wrap{overflow-x:auto;max-width:100%}.cl-table-wrap{overflow:auto;max-width:100%}
.cl-kernels td{white-space:nowrap;font-size:11px}
.cl-kernels td:nth-child(1),.cl-kernels td:nth-child(3),.cl-kernels td:nth-child(5){white-space:normal;
overflow-wrap:anywhere;text-align:left;font-family:monospace;min-width:9rem}
.cl-plan-table{border-collapse:collapse;font-size:.8rem;font-variant-numeric:tabular-nums}
.cl-plan-table td,.cl-plan-table th{white-space:nowrap;text-align:right;vertical-align:top}
.cl-plan-table td.cl-col-knobs,.cl-plan-table td.cl-col-knob_names{white-space:normal;text-align:left;
font-family:ui-monospace,monospace;font-size:.72rem;min-width:9rem;max-width:36rem}
.cl-plan-table td.cl-col-passes,.cl-plan-table td.cl-col-plan,.cl-plan-table td.cl-col-error,
.cl-plan-table td.cl-col-behavior_notes,.cl-plan-table th.cl-col-knobs,.cl-plan-table th.cl-col-passes{text-align:left}
.cl-plan-table-full td.cl-col-error,.cl-plan-table-full td.cl-col-behavior_notes{white-space:normal;min-width:8rem}
.cl-plan-table tr.cl-failed{color:#9ca3af}.cl-plan-table caption{caption-side:bottom;text-align:left;
font-size:.75rem;color:#6b7280;padding-top:.3rem}
details.cl-all-columns summary{cursor:pointer;color:#1d4ed8;margin:.5rem 0}
.figure{margin:1rem 0}
.cl-whatif-label{background:#eff6ff;border-left:3px solid #3b82f6;padding:.3rem .6rem;font-size:.85rem}
.cl-whatif-table thead tr:first-child th{text-align:center}.cl-whatif-table th.cl-measured{white-space:normal}
.cl-whatif-table .cl-synthetic{background:#f5f3ff}.cl-whatif-table th.cl-synthetic{color:#5b21b6;font-style:italic}
.cl-whatif-table .cl-measured{background:#f0fdf4}.cl-whatif-refused,.cl-drift-summary{font-size:.85rem}
.cl-whatif-hint{font-size:.75rem;color:#6b7280;margin:.3rem 0}
nav.cl-toc{border:1px solid #e5e7eb;background:#f9fafb;padding:.5rem 1rem;margin:1rem 0;font-size:.9rem}
nav.cl-toc>ol{columns:2 18rem;column-gap:2rem;margin:.3rem 0;padding-left:1.4rem}
nav.cl-toc li{break-inside:avoid;margin:.1rem 0}nav.cl-toc ol ol{font-size:.85em;padding-left:1.2rem;margin:0}
nav.cl-toc a{color:#1d4ed8;text-decoration:none}nav.cl-toc a:hover{text-decoration:underline}
details.cl-section>summary{cursor:pointer;list-style:none}
details.cl-section>summary::-webkit-details-marker{display:none}
details.cl-section>summary h2::before{content:"\\25BE";display:inline-block;width:1.1em;color:#6b7280}
details.cl-section:not([open])>summary h2::before{content:"\\25B8"}
.cl-plot-missing{color:#b91c1c;font-size:.85rem}
pre.cl-summary{white-space:pre-wrap;overflow-wrap:anywhere}
.cl-kernels td,.cl-kernels th{text-align:left}
.cl-kernels .cl-col-engine-id,.cl-kernels .cl-col-count,.cl-kernels .cl-col-us,.cl-kernels .cl-col-total-us{
text-align:right}
.cl-device td{text-align:left}
.cl-points td{white-space:nowrap}.cl-points .cl-text,.cl-points .cl-plan{text-align:left}
.cl-points td.cl-problem{white-space:normal;min-width:13rem}
.cl-points td.cl-plan{white-space:normal;overflow-wrap:anywhere;text-align:left;font-family:ui-monospace,monospace;
font-size:.72rem;max-width:15rem}
.cl-plan-table-full td.cl-col-knob_names{white-space:nowrap;max-width:none}
.cl-plan-table-full td.cl-col-behavior_notes,.cl-plan-table-full td.cl-col-error{max-width:24rem;
overflow-wrap:anywhere}
details.cl-section>.cl-table-wrap:not(.cl-whatif-wrap),details.cl-all-columns>.cl-table-wrap{max-height:80vh;
overflow:auto}
details.cl-section>.cl-table-wrap:not(.cl-whatif-wrap) thead th,details.cl-all-columns>.cl-table-wrap thead th{
position:sticky;top:-1px;z-index:1;box-shadow:inset 0 -1px #d1d5db,inset 0 1px #e5e7eb}
"""
#: A run figure its caller drew already, by name, else made: ``drawn(name, make)`` (the Lab's kept drawings).
Drawn = Callable[[str, Callable[[], Any]], Any]
#: plotly's config in reports: resize with the page, no logo.
_PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}
#: plotly's cartesian bundle, gzipped: what every report embeds (source, version, checksum:
#: cudnn_lab/data/plotly/README.md).
PLOTLY_BUNDLE = Path(__file__).resolve().parent / "data" / "plotly" / "plotly-cartesian.min.js.gz"
#: The trace types :data:`PLOTLY_BUNDLE` draws; a figure with another gets the full bundle.
BUNDLE_TRACES = frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
                           "image", "pie", "scatter", "scatterternary", "violin"})
#: Unpacks the embedded bundle (#cl-plotlyjs) once; each figure's script waits for it (clPlot).
_PLOTLY_LOADER = """<script>window.PlotlyConfig = {MathJaxConfig: 'local'};
window.clPlotly = (async function () {
  var text = atob(document.getElementById("cl-plotlyjs").textContent.trim());
  var bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  var code = await new Response(stream).text();
  var script = document.createElement("script");
  script.textContent = code;
  document.head.appendChild(script);
  return window.Plotly;
})();
function clPlot(id, draw) {
  window.clPlotly.then(draw).catch(function (e) {
    var div = document.getElementById(id);
    div.style.height = "auto";
    div.className = "cl-plot-missing";
    div.textContent = "This figure needs a browser that unpacks gzip (DecompressionStream: Chrome 80, Firefox 113, "
      + "Safari 16.4 or later): " + e;
  });
}
</script>"""
TABLE_COLUMNS = ["heuristic_rank", "plan", "engine_id", "knob_names", "behavior_notes", "numeric_notes",
                 "workspace_bytes", "build_ms", "status", "median_ms", "iqr_ms", "samples", "timing_mode", "kernel_ms",
                 "kernel_count", "launch_gap_ms", "tflops", "pct_of_ceiling", "rel_l2", "max_abs", "pass_torch",
                 "pass_cudnn", "deterministic", "proposed", "origin", "error"]


#: Columns of a plan or kernel frame that count things: shown as integers even where a missing value made them float.
_COUNT_COLUMNS = ("heuristic_rank", "engine_id", "rank_A", "rank_B", "rank_FALLBACK", "calls_per_sample", "samples",
                  "nan_count", "inf_count", "kernel_count", "count")
#: The anatomy's kernel table: headers in words (its times are in µs already).
_KERNEL_TITLES = {"plan": "plan", "engine_id": "engine", "kernel": "kernel", "kind": "kind",
                  "reading": "what the name tells", "tile": "tile", "count": "launches per call",
                  "us": "per launch (µs)", "total_us": "per call (µs)"}


def _counts_as_integers(frame: Any) -> Any:
    """``frame`` with each count column (:data:`_COUNT_COLUMNS`) whose values are whole numbers as nullable
    integers, so the kit's formatters write '2', not '2.00'; other columns as they are."""
    import pandas as pd

    out = frame.copy()
    for c in _COUNT_COLUMNS:
        if c not in out.columns or pd.api.types.is_integer_dtype(out[c]):
            continue
        values = pd.to_numeric(out[c], errors="coerce")
        present = values.dropna()
        if out[c].notna().sum() == len(present) and (present == present.round()).all():
            out[c] = values.astype("Int64")
    return out


def _anatomy_body(result: RunResult) -> str:
    parts = []
    if result.exploration["explored"] or result.engine_space.get("engines"):
        engines = result.engine_space.get("engines", [])
        runnable = sum(1 for e in engines if e.get("runnable"))
        parts.append(f"<p>{html.escape(anatomy.answer_text(result.exploration))} The graph has {len(engines)} "
                     f"engines, {runnable} of them runnable here.</p>")
    kernels = anatomy.kernels_table(result.plans)
    if not kernels.empty:
        table = frame_table_html(_counts_as_integers(kernels), _KERNEL_TITLES, formats={"us": sig3, "total_us": sig3},
                                 classes="cl-kernels")
        parts.append(f"<div class='cl-table-wrap'>{table}</div>")
    return "".join(parts)


#: The answers a run's report draws beside the result (plots/registry.py's sources the report has a section for).
REPORT_SOURCES: tuple[str, ...] = tuple(dict.fromkeys(e.source for e in entries() if e.in_report
                                                      and e.source not in ("run", "sweep", "sweep pair")))
#: The report's sections that hold what-if answers: (id, title).
_ANSWER_SECTIONS = (("what-if", "What-if: other GPUs and cuDNN versions"),
                    ("block-formats", "Blackwell block formats (MXFP8, NVFP4): cuDNN's answers"))


@dataclasses.dataclass(frozen=True)
class ReportAnswers:
    """What a run's report draws beside the result, gathered by its caller (the Lab, ``cudnn-lab report``: see
    :func:`cudnn_lab.cli.report_answers`): the graph drawn (HTML: inline SVG, or its DOT source with why), the repro
    script (or why there is none), the answers by registry source (:data:`REPORT_SOURCES`: a what-if compare frame,
    a Drift, a RunDrift, a ScalingResult, a list of BlockScaleAnswer) and, per source, why its answer could not be
    gathered (``notes``, said in its section). The report reads no file and builds no graph: it draws these."""

    graph_html: str = ""
    script: str = ""
    answers: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    notes: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("graph_html", "script"):
            if not isinstance(getattr(self, name), str):
                raise OptionError(name, getattr(self, name), "must be text", where="report answers")
        for name in ("answers", "notes"):
            given = getattr(self, name)
            if not isinstance(given, Mapping):
                raise OptionError(name, given, "must be a mapping of source to answer", where="report answers")
            unknown = [k for k in given if k not in REPORT_SOURCES]
            if unknown:
                raise OptionError(name, unknown, "sources the report draws: " + ", ".join(REPORT_SOURCES),
                                  where="report answers")
        bad = [k for k, v in self.notes.items() if not isinstance(v, str)]
        if bad:
            raise OptionError("notes", bad, "each note must be text", where="report answers")


def _drawn(entry: ViewEntry, answers: ReportAnswers) -> Any:
    """``entry`` drawn from its answer, or None where none is given (or the answer has no such view)."""
    answer = answers.answers.get(entry.source)
    if answer is None or not entry.applies(answer):
        return None
    return entry.draw(answer)


def _answers_body(section: str, answers: ReportAnswers) -> str:
    """A section of what-if answers: each registry entry of the section drawn from the answer given, in the
    registry's order; a source whose answer could not be gathered says why, once."""
    parts: list[str] = []
    said: set[str] = set()
    for entry in entries(section=section):
        if entry.source in answers.notes:
            if entry.source not in said:
                said.add(entry.source)
                parts.append(f"<p class='note'>{html.escape(answers.notes[entry.source])}</p>")
            continue
        drawn = _drawn(entry, answers)
        if drawn:
            parts.append(str(drawn))
    return "".join(parts)


def whatif_html(answers: ReportAnswers) -> str:
    """The What-if section of the answers given (the recorded and synthetic targets side by side by engine, the
    targets that got no plan, the drift between the recorded cuDNN versions, runs under another cuDNN): tables only
    (:mod:`cudnn_lab.plots.whatif_tables`), labelled "cuDNN's heuristics' answer, not a measurement"; '' where
    none is given."""
    sid, title = _ANSWER_SECTIONS[0]
    body = _answers_body(sid, answers)
    return f"<h2>{html.escape(title)}</h2>" + body if body else ""


def _figures(result: RunResult, answers: ReportAnswers | None = None, drawn: Drawn | None = None) -> list[Any]:
    """The report's figures (plots/registry.py: the Lab's too): the run's, or none when no plan was timed; then
    those of the answers given (the SM-scaling figure). ``drawn(name, make)`` gives a run figure its caller drew
    already (the Lab's views), else ``make()``."""
    figs = []
    if not metrics.timed(result.plans).empty:
        keep = drawn or (lambda _name, make: make())
        figs = [keep(figure.name, functools.partial(figure.draw, result, None)) for figure in RUN_FIGURES
                if figure.in_report and figure.applies(result)]
    if answers is not None:
        figs += [f for e in entries(section="figures") if e.source in REPORT_SOURCES
                 for f in [_drawn(e, answers)] if f is not None]
    return figs


@functools.lru_cache(maxsize=1)
def bundle_version() -> str:
    """The plotly.js version of :data:`PLOTLY_BUNDLE` ('4.1.1'), read from its header."""
    with gzip.open(PLOTLY_BUNDLE, "rt", encoding="utf-8") as f:
        head = f.read(300)
    found = re.search(r"plotly\.js \(cartesian[^)]*\) v(\S+)", head)
    return found.group(1) if found else ""


@functools.lru_cache(maxsize=2)
def _bundle_gz(full: bool) -> bytes:
    """plotly.js gzipped: the shipped cartesian bundle, or (``full``) the Python package's whole bundle."""
    if not full:
        return PLOTLY_BUNDLE.read_bytes()
    from plotly.offline import get_plotlyjs

    return gzip.compress(get_plotlyjs().encode("utf-8"), compresslevel=9, mtime=0)


def _needs_full_bundle(figs: list[Any]) -> bool:
    """True where the cartesian bundle cannot draw these figures: a trace type it lacks, or a ``plotly`` whose
    plotly.js is another version (its figures' JSON is written for that version)."""
    from plotly.offline import get_plotlyjs_version

    types = {str(trace.type) for fig in figs for trace in fig.data}
    return not types <= BUNDLE_TRACES or get_plotlyjs_version() != bundle_version()


def _figure_title(fig: Any) -> str:
    """A figure's title's first line as plain text ('Latency per plan')."""
    text = str(fig.layout.title.text or "")
    return html.unescape(re.sub(r"<[^>]+>", "", text.split("<br>")[0])).strip()


def _figure_entries(figs: list[Any]) -> list[tuple[str, str]]:
    """Each figure's anchor id and TOC text; a title that repeats says its second line too."""
    titles = [_figure_title(f) or f"Figure {i + 1}" for i, f in enumerate(figs)]
    out = []
    for i, (fig, t) in enumerate(zip(figs, titles)):
        if titles.count(t) > 1:
            lines = str(fig.layout.title.text or "").split("<br>")
            more = html.unescape(re.sub(r"<[^>]+>", "", lines[1])).strip() if len(lines) > 1 else str(i + 1)
            t = f"{t} ({more})"
        out.append((f"fig-{i + 1}", t))
    return out


def _figures_html(figs: list[Any]) -> str:
    """Figures that fill the page's width: plotly.js once (gzipped, base64, unpacked by the browser, so the page
    opens offline), the figures' templates once each, then per figure a div and its JSON drawn by Plotly.newPlot.
    '' without figures."""
    if not figs:
        return ""
    from plotly.io.json import to_json_plotly

    bundle = base64.b64encode(_bundle_gz(_needs_full_bundle(figs))).decode("ascii")
    templates: list[str] = []
    parts = []
    for (fid, _), fig in zip(_figure_entries(figs), figs):
        d = fig.to_dict()
        layout = dict(d.get("layout", {}))
        template = layout.pop("template", None)
        height = layout.get("height") or ((template or {}).get("layout", {}).get("height")) or 460
        t_json = to_json_plotly(template) if template is not None else None
        if t_json is not None and t_json not in templates:
            templates.append(t_json)
        with_template = (f"Object.assign({{template: JSON.parse(clTemplates[{templates.index(t_json)}])}}, "
                         f"{to_json_plotly(layout)})") if t_json is not None else to_json_plotly(layout)
        plot = f"{fid}-plot"
        parts.append(
            f"<div class='figure' id='{fid}'><div id='{plot}' class='plotly-graph-div' "
            f"style='height:{int(height)}px;width:100%'></div>\n<script>clPlot('{plot}', function (Plotly) {{ "
            f"Plotly.newPlot('{plot}', {to_json_plotly(d.get('data', []))}, {with_template}, "
            f"{json.dumps(_PLOTLY_CONFIG)}); }});</script></div>\n")
    # Templates as JSON text, parsed afresh per figure, so no two figures share (and change) one object.
    head = (f"<script id='cl-plotlyjs' type='application/gzip;base64'>{bundle}</script>\n{_PLOTLY_LOADER}\n"
            f"<script>var clTemplates = {json.dumps(templates)};</script>\n")
    return head + "".join(parts)


def _section(sid: str, title: str, body: str) -> str:
    """A section that folds (open at first): its title is the summary, ``sid`` its anchor."""
    return (f"<details class='cl-section' id='{sid}' open><summary><h2>{html.escape(title)}</h2></summary>\n{body}\n"
            "</details>")


def _toc(entries: list[tuple[str, str, list[tuple[str, str]]]]) -> str:
    """The table of contents: a link per section (id, title), each with links to its figures (id, title)."""
    def items(pairs: list[tuple[str, str]]) -> str:
        return "".join(f"<li><a href='#{sid}'>{html.escape(t)}</a></li>" for sid, t in pairs)

    lis = "".join(f"<li><a href='#{sid}'>{html.escape(title)}</a>" + (f"<ol>{items(sub)}</ol>" if sub else "")
                  + "</li>" for sid, title, sub in entries)
    return f"<nav class='cl-toc' aria-label='Contents'><b>Contents</b><ol>{lis}</ol></nav>"


def _sections_html(sections: list[tuple[str, str, str, list[tuple[str, str]]]]) -> str:
    """The TOC, then each (id, title, body, figure entries) section; a section without a body is left out."""
    shown = [s for s in sections if s[2]]
    return (_toc([(sid, title, sub) for sid, title, _, sub in shown]) + "\n"
            + "\n".join(_section(sid, title, body) for sid, title, body, _ in shown))


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n")


def report_html(result: RunResult, answers: ReportAnswers | None = None, *, title: str | None = None,
                origin: Provenance | None = None, drawn: Drawn | None = None) -> str:
    """The whole report as one HTML string; plotly's library is embedded once, so it opens with no network. It
    draws the result and the ``answers`` it is given (:class:`ReportAnswers`: the graph, the repro script, the
    what-if answers; a section with nothing given is left out). ``origin`` says where the numbers come from
    (default: :func:`cudnn_lab.provenance.provenance` of the result); ``drawn`` hands over run figures drawn
    already (see :func:`_figures`). A sweep frame gets :func:`sweep_report_html`."""
    if _is_sweep(result):
        return sweep_report_html(result, title=title)
    if not isinstance(result, RunResult):
        raise OptionError("result", type(result).__name__, "must be a RunResult (cl.run, cl.load_results of a run) "
                          "or a sweep frame (cl.sweep, cl.load_results of a sweep or store)", where="report")
    if title is not None and not isinstance(title, str):
        raise OptionError("title", title, "must be text or None", where="report")
    answers = ReportAnswers() if answers is None else answers
    if not isinstance(answers, ReportAnswers):
        raise OptionError("answers", type(answers).__name__, "must be ReportAnswers (cudnn_lab.cli.report_answers "
                          "gathers them for a result) or None", where="report")
    _check_run(result)
    title = title or f"cudnn_lab report: {result.spec.label()}"

    figs = _figures(result, answers, drawn)
    fig_html = _figures_html(figs) or "<p class='note'>No plan ran, so there is nothing to plot.</p>"
    origin = origin or provenance(result)
    columns = [c for c in TABLE_COLUMNS if c in result.plans and (c in ("plan", "status")
                                                                  or not result.plans[c].isna().all())]
    if "knob_names" in TABLE_COLUMNS and "knob_names" not in columns:
        columns.insert(TABLE_COLUMNS.index("knob_names"), "knob_names")  # filled from the plan names
    shown = dataclasses.replace(result, plans=_counts_as_integers(result.plans))  # counts as integers
    warnings = "".join(f"<li>{html.escape(w)}</li>" for w in result.warnings)
    sections = [
        ("summary", "Summary", f"<pre class='cl-summary'>{html.escape(result.summary())}</pre>"
                               + (f"<ul>{warnings}</ul>" if warnings else ""), []),
        ("graph", "Graph", f'<div class="graph">{answers.graph_html}</div>' if answers.graph_html else "", []),
        ("figures", "Figures", fig_html, _figure_entries(figs)),
        ("plans", "Plans", plan_table_html(shown, columns=columns), []),
        ("plan-anatomy", "Plan anatomy", _anatomy_body(result), []),
        *((sid, stitle, _answers_body(sid, answers), []) for sid, stitle in _ANSWER_SECTIONS),
        ("device", "Device", f"<table class='cl-device'>{_device_rows(result)}</table>", []),
        ("spec", "Spec", f"<pre>{html.escape(json.dumps(result.spec.to_dict(), indent=1))}</pre>", []),
        ("settings", "Settings", f"<pre>{html.escape(json.dumps(result.settings, indent=1))}</pre>", []),
        ("repro-script", "Repro script", '<p class="note">Rebuilds and runs this graph with cudnn and torch only.</p>'
                                         f"<pre>{html.escape(answers.script)}</pre>" if answers.script else "", []),
    ]
    return _page(title, f"""<h1>{html.escape(title)}</h1>
{origin.to_html()}
<p class="note">Measured {html.escape(str(result.created))} on {html.escape(str(result.device.get('gpu')))}
(driver {html.escape(str(result.device.get('driver')))}, CUDA {html.escape(str(result.device.get('cuda')))},
cuDNN {html.escape(str(result.device.get('cudnn_backend')))}, frontend
{html.escape(str(result.device.get('cudnn_frontend')))}); report written by cudnn_lab {__version__}.</p>
{_sections_html(sections)}""")


def _device_rows(result: RunResult) -> str:
    """The device, its ceilings and torch's settings, one row each, numbers by the kit's formatters: a time in ms
    as µs (its name says so), bytes in B/KiB/MiB/GiB, other fractions to 3 significant digits."""
    rows = []
    for key, value in {**result.device, **{f"ceiling {k}": v for k, v in result.ceilings.items()},
                       **{f"torch {k}": v for k, v in result.torch.items()}}.items():
        key, number = str(key), isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and key.endswith("_ms"):
            key, text = key.removesuffix("_ms") + " (µs)", us_text(value)
        elif number and key.endswith("_bytes"):
            text = _bytes(value)
        elif isinstance(value, float):
            text = sig3(value)
        else:
            text = str(value)
        rows.append(f"<tr><th>{html.escape(key)}</th><td>{html.escape(text)}</td></tr>")
    return "".join(rows)


def save_report(result: Any, path: str | Path, answers: ReportAnswers | None = None, *, title: str | None = None,
                origin: Provenance | None = None, drawn: Drawn | None = None) -> Path:
    """Write :func:`report_html` (a run, with the ``answers`` its caller gathered) or :func:`sweep_report_html` (a
    sweep frame) to ``path`` and return it; the path is checked before the report is made. ``origin`` says where the
    numbers come from (for a sweep, only its kind counts: recorded unless it says measured)."""
    path = check_output_path(path, what="report")
    if _is_sweep(result):
        recorded = origin is None or origin.kind == "recorded"
        return write_text(path, sweep_report_html(result, title=title, recorded=recorded), what="report")
    return write_text(path, report_html(result, answers, title=title, origin=origin, drawn=drawn), what="report")


def save_sweep_report(frame: Any, path: str | Path, *, title: str | None = None) -> Path:
    """Write :func:`sweep_report_html` to ``path`` (checked first) and return it."""
    return save_report(_require_sweep(frame), path, title=title)


# ------------------------------------------------------------------------------------------------ sweep reports

def _check_run(result: RunResult) -> None:
    """A result made or changed in memory is checked as a loaded one is (``result_checks.check_result``), so a bad value
    is a DataError naming the plan and the field, not a crash half way through the report."""
    check_result(result.to_dict(), result.loaded_from or f"the result of {result.spec.label()}")


def _check_sweep(frame: Any) -> None:
    """A sweep frame with point ids is checked as a loaded one is (``sweep_checks.check_sweep_frame``): a duplicated
    point or an impossible value is a DataError naming the row and the field, not a crash or a wrong table."""
    if "point_id" in frame.columns and not frame.empty:
        check_sweep_frame(frame, "the sweep frame")


def _is_sweep(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns")


def _require_sweep(frame: Any) -> Any:
    if not _is_sweep(frame):
        raise OptionError("frame", type(frame).__name__, "must be a sweep frame (cl.sweep, or cl.load_results of a "
                          "sweep or store)", where="sweep report")
    return frame


def _sweep_figures(frame: Any) -> list[Any]:
    """The sweep's figures the report shows (plots/registry.py's sweep entries, the Lab's Sweep view's too), those
    drawn per operation once for each operation that ran; none when no point ran."""
    ran = metrics.sweep_ran(frame)
    if ran.empty:
        return []
    ops = [o for o in dict.fromkeys(cell_text(v) for v in ran["op"]) if o] if "op" in ran.columns else [None]
    figs = []
    for entry in entries("sweep", section="figures"):
        for rows in ([frame if op is None else frame[frame["op"].map(cell_text) == op] for op in ops]
                     if entry.per_op else [frame]):
            if entry.applies(rows):
                figs.append(entry.draw(rows))
    return figs


def _points_table(frame: Any) -> str:
    """One row per point that ran: problem, pick and best plan with their times, regret, best TFLOP/s and GB/s."""
    rows = metrics.sweep_regret(frame)
    if rows.empty:
        return "<p class='note'>No point of this sweep ran.</p>"
    heads = [point_column("op").title, point_column("label").title, "heuristic's pick", "pick (µs)", "best plan",
             "best (µs)", "regret", "TFLOP/s", "GB/s"]
    kinds = ["cl-text", "cl-text cl-problem", "cl-plan", "", "cl-plan", "", "", "", ""]  # CSS: text, plan names
    body = []
    for _, r in rows.sort_values(["op", "label"] if "label" in rows.columns else ["op"], kind="stable").iterrows():
        cells = [cell_text(r.get("op")) or "", cell_text(r.get("label")) or "", cell_text(r.get("plan")) or "",
                 us_text(r.get("median_ms")), cell_text(r.get("best_plan")) or "", us_text(r.get("best_ms")),
                 f"{float(r['regret']):.2f}x", sig3(row_tflops(r)), sig3(row_gbps(r))]
        body.append("<tr>" + "".join(f"<td class='{k}'>{html.escape(c)}</td>" if k else f"<td>{html.escape(c)}</td>"
                                     for k, c in zip(kinds, cells)) + "</tr>")
    head = "".join(f"<th class='{k}'>{h}</th>" if k else f"<th>{h}</th>" for k, h in zip(kinds, heads))
    return (f"<div class='cl-table-wrap'><table class='cl-points'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _sweep_origin(frame: Any, devices: list[str], recorded: bool) -> Provenance:
    def first(col: str) -> str:
        values = [cell_text(v) for v in frame[col]] if col in frame.columns else []
        return next((v for v in values if v), "unknown")

    dates = sorted({str(v)[:10] for v in frame["created"] if cell_text(v)}) if "created" in frame.columns else []
    date = (dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}") if dates else "undated"
    return Provenance(kind="recorded" if recorded else "measured", gpu=" and ".join(devices), driver=first("driver"),
                      cudnn=cudnn_version_text(first("cudnn")), cuda=first("cuda"), date=date)


def sweep_report_html(frame: Any, *, title: str | None = None, recorded: bool = True) -> str:
    """A sweep's report as one HTML string (opens offline): where it was measured, how many points ran, the
    roofline, each operation's best-plan latency along its size field, the errors per dtype, and one row per point
    (with the heuristic's regret). ``recorded``: the banner says RECORDED (a file) or MEASURED HERE (a live
    sweep)."""
    frame = _require_sweep(frame)
    if title is not None and not isinstance(title, str):
        raise OptionError("title", title, "must be text or None", where="report")
    _check_sweep(frame)
    key = point_key(frame) if len(frame.columns) else None
    points = frame.drop_duplicates(subset=[key]) if key in frame.columns else frame
    statuses = points["point_status"].map(cell_text).value_counts().to_dict() if "point_status" in points else {}
    ran = metrics.sweep_ran(frame)
    devices = [g for g in dict.fromkeys(cell_text(v) for v in (ran if not ran.empty else frame).get("gpu", []))
               if g] or ["unknown GPU"]
    ops = ", ".join(o for o in dict.fromkeys(cell_text(v) for v in points.get("op", [])) if o) or "none"
    title = title or f"cudnn_lab sweep report: {ops} on {' and '.join(devices)}"
    counts = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())) or f"{len(points)} points"
    figs = _sweep_figures(frame)
    return _page(title, f"""<h1>{html.escape(title)}</h1>
{_sweep_origin(frame, devices, recorded).to_html()}
<p class="note">{len(points)} points ({html.escape(counts)}); operations: {html.escape(ops)}. Report written by
cudnn_lab {__version__}.</p>
{_sections_html([
        ("figures", "Figures", _figures_html(figs) or "<p class='note'>No point ran, so there is nothing to plot.</p>",
         _figure_entries(figs)),
        ("points", "Points", _points_table(frame), [])])}""")
