"""What-if answers as tables a reader scans, for the Lab's What-if view and the HTML report (one definition for both):
the targets side by side by engine (:func:`cudnn_lab.whatif.compare`), the refusals in one line each, cuDNN's
reasons per engine (:mod:`cudnn_lab.gpu.reasons`) and the drift between two cuDNN versions. Each is labelled
"cuDNN's heuristics' answer, not a measurement" with where the answers were recorded (or asked). Pure: frames and
answers in, HTML strings out; numbers formatted by :func:`~cudnn_lab.plots.tables.frame_table_html`.
"""

from __future__ import annotations

import html
from typing import Any

from ..provenance import cudnn_version_text
from .tables import frame_table_html, us_text
from ..gpu.reasons import summarize
from ..results.labels import ANSWER_LABEL, DEVICELESS_LIMIT, LIVE_SUFFIX
from ..whatif.gpu_facts import target_class

__all__ = ["REASON_COLUMNS", "answer_label_html", "compare_table_html", "drift_html", "drift_table",
           "reasons_html", "refusals_html", "sources_text", "block_formats_html", "block_scale_answers_html",
           "block_answers_asked_html", "drift_summary_html", "run_drift_html"]

#: The why-not table's columns (``WhatIf.reasons()``), headers in words.
REASON_COLUMNS: dict[str, str] = {"engine_id": "engine", "status": "status", "reason": "reason",
                                  "category": "category", "configs": "configs"}
_COMPARE_CAPTION = ("Per target: <b>plans</b>, how many of the engine's plans (knob settings) cuDNN's heuristics "
                    "proposed; <b>rank</b>, the best place of those plans in any heuristic mode (0: cuDNN's first "
                    "choice). Blank: not proposed for that target. Hover a target for its description.")


def sources_text(answers: Any) -> str:
    """Where the answers come from, once each: 'recorded on NVIDIA H200, 2026-11-26 with cuDNN 9.19.0'."""
    seen: dict[str, list[str]] = {}
    for w in answers:
        versions = seen.setdefault(str(w.source), [])
        if cudnn_version_text(w.cudnn_version) not in versions:
            versions.append(cudnn_version_text(w.cudnn_version))
    return "; ".join(f"{src} with cuDNN {' and '.join(v)}" for src, v in seen.items())


def answer_label_html(answers: Any) -> str:
    """The label every what-if table carries: not a measurement, and where the answers were recorded (or asked)."""
    where = sources_text(answers)
    synthetic = any(w.synthetic for w in answers)
    return (f"<p class='cl-whatif-label'><b>{html.escape(ANSWER_LABEL)}</b>"
            + (f" ({html.escape(where)})" if where else "") + "."
            + (" A synthetic target is a recorded GPU's description with only its compute capability changed;"
               " its GPU class names a card of that compute capability."
               if synthetic else "")
            + (f" {html.escape(DEVICELESS_LIMIT)}" if any(w.target != "this GPU" and w.ok for w in answers) else "")
            + "</p>")


def compare_table_html(frame: Any) -> str:
    """The side-by-side table of :func:`cudnn_lab.whatif.compare`: one row per engine, per target its plans and
    their best rank under the target's name (synthetic targets marked so), a target that got no plan left out (its
    line is in :func:`refusals_html`); measured best times (µs) next to the engines when the frame has them."""
    labels: dict[str, str] = frame.attrs.get("labels", {})
    refused = set(frame.attrs.get("refused", {}))
    answers = {w.target: w for w in frame.attrs.get("answers", [])}
    shown = [t for t in labels if t not in refused]
    if not shown:
        return "<p class='cl-empty'>No target got a plan (see below).</p>"
    measured = [c for c in frame.columns if str(c).startswith("measured on ")]
    cols = ["engine_id", *measured, *(f"{t} {k}" for t in shown for k in ("plans", "rank"))]
    table = frame[cols]
    titles = {"engine_id": "engine", **{c: "best (µs)" for c in measured}}
    classes: dict[str, str] = {}
    groups = [("", 1 + len(measured), "", "")]
    for t in shown:
        titles[f"{t} plans"], titles[f"{t} rank"] = "plans", "rank"
        synthetic = bool(answers.get(t) and answers[t].synthetic)
        cls = "cl-synthetic" if synthetic else "cl-recorded-target"
        classes[f"{t} plans"] = classes[f"{t} rank"] = cls
        name = t if t != "this GPU" or labels.get(t, "").endswith(LIVE_SUFFIX) else labels[t]  # a recorded card named
        gpu = target_class(t) if synthetic else None
        title = f"{name} ({gpu}-class, synthetic)" if gpu else f"{name} (synthetic)" if synthetic else name
        groups.append((title, 2, labels.get(t, t), cls))
    if measured:
        groups[0] = ("", 1, "", "")
        for i, c in enumerate(measured):  # a column per GPU measured: its name above
            groups.insert(1 + i, (c.removesuffix(": best ms"), 1,
                                  "the best time of the engine's plans in the run shown", "cl-measured"))
            classes[c] = "cl-measured"
    return ("<div class='cl-table-wrap cl-whatif-wrap'>"
            + frame_table_html(table, titles, formats={c: us_text for c in measured}, groups=groups,
                               column_classes=classes, classes="cl-plan-table-full cl-whatif-table")
            + f"</div><p class='cl-whatif-hint'>{_COMPARE_CAPTION}</p>")


def refusals_html(frame: Any) -> str:
    """One line per target that got no plan, with its summary (crashed, declined with its reasons by category)."""
    refused: dict[str, str] = frame.attrs.get("refused", {})
    answers = {w.target: w for w in frame.attrs.get("answers", [])}
    if not refused:
        return ""
    items = "".join(f"<li><b>{html.escape(t)}</b> ({html.escape(answers[t].refused if t in answers else 'refused')})"
                    f": {html.escape(text)}</li>" for t, text in refused.items())
    return f"<ul class='cl-whatif-refused'>{items}</ul>"


def reasons_html(answer: Any) -> str:
    """Why cuDNN gave ``answer``'s target no plan: its per-engine reasons (engine, status, reason, category,
    configs), or one sentence where it gave none (it crashed or timed out)."""
    if answer.ok:
        return f"<p class='cl-whatif-note'>{html.escape(answer.target)} got plans: there is nothing to explain.</p>"
    reasons = answer.reasons()
    if reasons.empty:
        how = {"crashed": "cuDNN crashed answering", "timeout": "cuDNN gave no answer in time"}.get(
            answer.refused, "cuDNN named no engine")
        said = (answer.message.splitlines() or [""])[0].strip().rstrip(".")
        return (f"<p class='cl-whatif-note'>{html.escape(how)} for {html.escape(answer.target)}, so there are no "
                f"per-engine reasons" + (f": {html.escape(said)}." if said else ".") + "</p>")
    cols = [c for c in REASON_COLUMNS if c in reasons.columns]
    return (f"<p class='cl-whatif-note'>{html.escape(summarize(answer.detail))}</p>"
            "<div class='cl-table-wrap cl-whatif-wrap'>"
            + frame_table_html(reasons[cols], REASON_COLUMNS,
                               classes="cl-plan-table-full cl-whatif-table cl-why-not-table")
            + "</div>")


def drift_table(drift: Any) -> Any:
    """:meth:`Drift.frame` with what changed first: plans only one version proposes, then the largest moves in
    heuristic mode A's ranking, then the rest in the newer version's order."""
    frame = drift.frame()
    if frame.empty:
        return frame
    old, new = [c for c in frame.columns if c.startswith("rank A")]
    moved = (frame[new].astype("Float64") - frame[old].astype("Float64")).abs()
    key = (frame["in"] != "both").astype(int) * 10**6 + moved.fillna(0).astype(float)
    order = key.sort_values(ascending=False, kind="stable").index
    frame = frame.loc[order].reset_index(drop=True)
    for c in (old, new):
        frame[c] = frame[c].astype("Int64")
    return frame


def drift_html(drift: Any, *, table: bool = True) -> str:
    """The drift's summary, then (``table``) its plans, those that changed first."""
    summary = f"<p class='cl-whatif-note cl-drift-summary'>{html.escape(drift.summary())}</p>"
    if not table:
        return summary
    frame = drift_table(drift)
    if frame.empty:
        return summary
    ranks = [c for c in frame.columns if c.startswith("rank A")]
    titles = {"plan": "plan", "engine_id": "engine", "in": "proposed by",
              **{c: c.removeprefix("rank A (").removesuffix(")") for c in ranks}}
    groups = [("", len(frame.columns) - len(ranks), "", ""),
              ("rank in mode A", len(ranks), "the plan's place in heuristic mode A's list (0: cuDNN's first choice)",
               "")]
    return (summary + "<div class='cl-table-wrap cl-whatif-wrap cl-drift-wrap'>"
            + frame_table_html(frame, titles, groups=groups,
                               classes="cl-plan-table-full cl-whatif-table cl-drift-table") + "</div>")


def drift_summary_html(drift: Any) -> str:
    """The drift in one sentence naming its target: 'Between cuDNN versions, for h100: cuDNN 9.14.0: ...'."""
    return (f"<p class='cl-drift-summary'>Between cuDNN versions, for {html.escape(str(drift.new.target))}: "
            f"{html.escape(drift.summary())}</p>")


def run_drift_html(drift: Any, *, rows: int = 20) -> str:
    """A spec measured under two cuDNN versions on one GPU: the summary, then per plan the median (µs) and whether
    it stayed in cuDNN's band under each; plans run by one version only first, then the fastest (``rows`` shown)."""
    summary = f"<p class='cl-whatif-note cl-run-drift-summary'>{html.escape(drift.summary())}</p>"
    frame = drift.frame()
    if frame.empty:
        return summary
    medians = [c for c in frame.columns if c.startswith("median_ms")]
    bands = [c for c in frame.columns if c.startswith("pass_cudnn")]
    frame = frame[["plan", "in", *medians, *bands]]
    frame = frame.assign(_both=(frame["in"] == "both"), _t=frame[medians[-1]] if medians else 0.0)
    frame = frame.sort_values(["_both", "_t", "plan"]).drop(columns=["_both", "_t"])
    shown = frame.head(rows)
    titles = {"plan": "plan", "in": "ran under",
              **{c: "median (µs) " + c.removeprefix("median_ms ") for c in medians},
              **{c: "in band " + c.removeprefix("pass_cudnn ") for c in bands}}
    formats = {**{c: (lambda v: f"{v * 1e3:.1f}") for c in medians},
               **{c: (lambda v: "yes" if bool(v) else "no") for c in bands}}
    more = (f"<p class='cl-hint'>{len(frame) - rows} more plans ran under both (slower); "
            "<code>whatif.recorded_run_drifts(spec)[0].frame()</code> has them all.</p>") if len(frame) > rows else ""
    return (summary + "<div class='cl-table-wrap cl-whatif-wrap cl-drift-wrap cl-run-drift-wrap'>"
            + frame_table_html(shown, titles, formats=formats,
                               classes="cl-plan-table-full cl-whatif-table cl-drift-table cl-run-drift-table")
            + "</div>" + more)


def _sci(v: Any) -> str:
    return f"{float(v):.2e}"


def block_formats_html(whatif: Any) -> str:
    """A :class:`~cudnn_lab.whatif.block_formats.BlockWhatIf` as a table (block format beside per-tensor FP8: output and
    operand errors, what clipped or vanished), labelled emulated, with its one-sentence summary."""
    import pandas as pd

    frame = pd.DataFrame(whatif.rows())
    rel = [c for c in frame.columns if "rel L2" in c]
    return (f"<p class='cl-whatif-note cl-block-label'><b>{html.escape(whatif.label)}</b>. "
            f"{html.escape(whatif.fmt.describe())}.</p>"
            "<div class='cl-table-wrap cl-whatif-wrap'>"
            + frame_table_html(frame, {c: c for c in frame.columns}, formats={c: _sci for c in rel},
                               classes="cl-plan-table-full cl-whatif-table cl-block-table")
            + f"</div><p class='cl-whatif-hint'>{html.escape(whatif.summary())}</p>")


def block_answers_asked_html(answers: Any) -> str:
    """The problems cuDNN's block-scale answers were asked for (not necessarily the one shown), and where the
    numerics of these formats are emulated for it; '' without answers."""
    if not answers:
        return ""
    asked = sorted({a.spec.label() for a in answers})
    return (f"<p class='note'>Asked for {html.escape('; '.join(asked))} (not necessarily this problem); the numerics "
            "of these formats for this problem: <code>cl.block_format_whatif(spec, fmt)</code> (emulated).</p>")


def block_scale_answers_html(answers: Any) -> str:
    """cuDNN's answers for block-scaled graphs (:class:`~cudnn_lab.whatif.BlockScaleAnswer`), one row each,
    labelled "cuDNN's heuristics' answer, not a measurement" with where and when they were asked."""
    import pandas as pd


    if not answers:
        return "<p class='cl-whatif-note'>No answer of cuDNN for a block-scaled graph is recorded.</p>"
    frame = pd.DataFrame([a.row() for a in answers])
    where = "; ".join(dict.fromkeys(a.source for a in answers))
    return (f"<p class='cl-whatif-note cl-block-answers-label'><b>{html.escape(ANSWER_LABEL)}</b> "
            f"({html.escape(where)}).</p>"
            "<div class='cl-table-wrap cl-whatif-wrap'>"
            + frame_table_html(frame.drop(columns=["source"]), {c: c for c in frame.columns},
                               classes="cl-plan-table-full cl-whatif-table cl-block-answers")
            + "</div>")
