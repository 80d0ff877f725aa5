"""What a run's report is given (issue 34: the report reads no files and builds no graphs): the graph drawn, its repro
script and the recorded what-if answers for the run's problem, gathered here for the Lab's Save report and
`cudnn-lab report` (re-exported by :mod:`cudnn_lab.cli`)."""

from __future__ import annotations

import html
from typing import Any

from . import graph
from .errors import CudnnLabError, DrawingError, MissingDependencyError, NoGPUError, UnsupportedGraphError
from .graph import build_graph
from .graph.render import DOT_INSTALL_HINT, to_svg
from .report import ReportAnswers
from .results import RunResult
from .specs import Spec
from .whatif.block_formats import recorded_block_scale_answers
from .whatif.devices import targets as known_targets
from .whatif.forecasts import forecasts_for
from .whatif.heuristics import compare, drift, recorded_whatifs, start_asking
from .whatif.scaling import recorded_scalings
from .whatif.versions import recorded_run_drifts

def graph_svg(spec: Spec) -> str:
    """The graph drawn as inline SVG (with ``dot``), or its DOT source with an install hint (without); a drawing
    ``dot`` rejects says so in one sentence, its DOT source and dot's message folded under it (the report is still
    written)."""
    dot = graph.drawing(spec)  # looked up on the graph layer each time (a test replaces it)
    try:
        return to_svg(dot, spec=spec)
    except MissingDependencyError:
        return f"<p class='note'>{html.escape(DOT_INSTALL_HINT)}</p><pre>{html.escape(dot.source)}</pre>"
    except DrawingError as e:
        said = f"<pre>{html.escape(e.stderr)}</pre>" if e.stderr else ""
        return (f"<p class='note'>{html.escape(str(e))}</p><details><summary>DOT source</summary>{said}"
                f"<pre>{html.escape(e.source)}</pre></details>")


def _heuristics_answers(result: RunResult) -> dict[str, Any]:
    """The recorded answers of cuDNN's heuristics for the result's problem: every known target side by side (with
    this run's best times) and the drift between the recorded cuDNN versions on the GPU this run measured where it
    is a recorded target, else on the first recorded one; none where no answer is recorded for it."""
    if not any(w.spec == result.spec for w in recorded_whatifs()):
        return {}
    start_asking()  # the forecasts ask cuDNN for each target's plans: its worker starts while these are gathered
    known = known_targets()
    answers: dict[str, Any] = {"compare": compare(result.spec, list(dict.fromkeys(t.name for t in known)),
                                                  measured=result, recorded=True)}
    recorded = [t for t in known if t.origin == "recorded"]
    versions = sorted({t.cudnn_version for t in recorded})
    name = next((t.name for t in recorded if t.description.get("deviceName") == result.device.get("gpu")),
                recorded[0].name if recorded else "")
    if len(versions) > 1:
        try:
            answers["drift"] = drift(result.spec, versions[0], name)
        except NoGPUError:  # no recording of the older version for this problem
            pass
    return answers


def _forecast_answers(result: RunResult) -> dict[str, Any]:
    """The forecast of the result's problem on every known target (whatif.forecasts), where a recording of it
    ships to forecast from; none otherwise."""
    if not any(w.spec == result.spec for w in recorded_whatifs()):
        return {}
    return {"forecast": forecasts_for(result.spec, list(dict.fromkeys(t.name for t in known_targets())))}


def report_answers(result: RunResult) -> ReportAnswers:
    """What a run's report draws beside the result (the Lab's Save report and `cudnn-lab report` gather them): the
    graph drawn and its repro script (the graph layer), and the recorded what-if answers for its problem (the
    whatif modules' readers: heuristics' answers and drift, runs under another cuDNN, SM scaling, block-format
    answers of the same operation). An answer that cannot be read is a note in its section, not a lost report."""
    try:
        script = build_graph(result.spec).to_script()
    except UnsupportedGraphError as e:  # pooling: no frontend graph, so no script; say why
        script = f"# No standalone script: {e}"
    answers: dict[str, Any] = {}
    notes: dict[str, str] = {}
    try:
        answers.update(_heuristics_answers(result))
    except CudnnLabError as e:  # a recorded answer that cannot be read must not cost the rest of the report
        notes["compare"] = f"The recorded what-if answers cannot be shown: {e}"
    try:
        blocks = [a for a in recorded_block_scale_answers() if a.spec.op == result.spec.op]
    except CudnnLabError as e:
        notes["block answers"] = f"The recorded block-format answers cannot be shown: {e}"
    else:
        if blocks:
            answers["block answers"] = blocks
    # read before the forecasts, which wait for cuDNN's worker to start (issue 39), and put after them as before
    later: dict[str, Any] = {}
    later_notes: dict[str, str] = {}
    for source, read in (("run drift", recorded_run_drifts), ("sm scaling", recorded_scalings)):
        try:
            found = read(result.spec)
        except CudnnLabError as e:
            later_notes[source] = f"The recorded answers ({source}) cannot be shown: {e}"
        else:
            if found:
                later[source] = found[0]
    graph_html = graph_svg(result.spec)
    try:
        answers.update(_forecast_answers(result))
    except CudnnLabError as e:
        notes["forecast"] = f"The forecasts cannot be shown: {e}"
    return ReportAnswers(graph_html=graph_html, script=script, answers={**answers, **later},
                         notes={**notes, **later_notes})
