"""The Lab's look, in one place: its CSS, the labelled rows every form lays out, and the red mark of a bad value."""

from __future__ import annotations

import html
from typing import Any

__all__ = ["CSS", "INVALID_BORDER", "cell", "clear_invalid", "mark_invalid", "row", "section"]

INVALID_BORDER = "2px solid #dc2626"

CSS = """
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
.cl-lab .cl-table-wrap { max-height: 560px; overflow: auto; max-width: 100%; }
.cl-lab .cl-plan-table { border-collapse: collapse; font-size: 12px; line-height: 1.35; }
.cl-lab .cl-plan-table th { text-align: left; border-bottom: 2px solid #9ca3af; padding: 3px 6px;
  position: sticky; top: 0; background: white; white-space: nowrap; font-weight: 600; }
.cl-lab .cl-plan-table td { border-bottom: 1px solid #e5e7eb; padding: 2px 6px; white-space: nowrap;
  font-variant-numeric: tabular-nums; vertical-align: top; }
.cl-lab .cl-plan-table tr.cl-selected { background: #fef3c7; }
.cl-lab .cl-plan-table tr.cl-failed { color: #9ca3af; }
.cl-lab .cl-plan-table td.cl-col-knobs { white-space: normal; font-family: var(--jp-code-font-family, monospace);
  font-size: 11px; min-width: 90px; max-width: 280px; word-break: break-word; }
.cl-lab .cl-plan-table caption { caption-side: top; text-align: left; font-size: 11px; color: #6b7280;
  padding: 2px 0 4px 0; }
.cl-lab .cl-plan-table td.cl-col-median, .cl-lab .cl-plan-table td.cl-col-iqr,
.cl-lab .cl-plan-table td.cl-col-rel-l2, .cl-lab .cl-plan-table td.cl-col-workspace,
.cl-lab .cl-plan-table td.cl-col-rank, .cl-lab .cl-plan-table td.cl-col-engine { text-align: right; }
.cl-lab .cl-plan-table-full td { font-size: 11px; }
.cl-lab .cl-plan-table-full td.cl-col-plan, .cl-lab .cl-plan-table-full td.cl-col-knobs { font-size: 11px;
  font-family: var(--jp-code-font-family, monospace); }
.cl-lab .cl-plan-table-full td.cl-col-error, .cl-lab .cl-plan-table-full td.cl-col-behavior_notes {
  white-space: normal; min-width: 120px; max-width: 260px; }
.cl-lab .cl-all-columns summary { cursor: pointer; font-size: 12px; color: #1d4ed8; margin: 6px 0; }
.cl-lab .cl-provenance b { letter-spacing: 0.04em; }
.cl-lab .cl-log-error { font-size: 12px; color: #991b1b; margin: 2px 0; }
.cl-lab .cl-log-error summary { cursor: pointer; color: #6b7280; }
.cl-lab .cl-traceback { font-size: 11px; white-space: pre-wrap; color: #374151; }
.cl-lab .cl-op .widget-toggle-button { padding-left: 6px; padding-right: 6px; }
.cl-lab .cl-op .widget-toggle-buttons { flex-wrap: wrap; row-gap: 2px; }
.cl-lab .cl-state-code textarea { font-family: var(--jp-code-font-family, monospace); font-size: 11px; }
.cl-lab .cl-code, .cl-lab .cl-code > .widget-html-content, .cl-lab .cl-plans-table,
.cl-lab .cl-plans-table > .widget-html-content, .cl-lab .cl-graph-svg > .widget-html-content,
.cl-lab .cl-kernels-view, .cl-lab .cl-kernels-view > .widget-html-content, .cl-lab .cl-engines-note,
.cl-lab .cl-engines-note > .widget-html-content {
  max-width: 100%; min-width: 0; }
.cl-lab .cl-code-text { max-width: 100%; box-sizing: border-box; max-height: 600px; overflow: auto;
  font-size: 12px; background: #f9fafb;
  border: 1px solid #e5e7eb; padding: 8px; margin: 0; white-space: pre; line-height: 1.4; }
.cl-lab .cl-graph-svg { width: 100%; min-width: 0; }
.cl-lab .cl-graph-scroll { overflow: auto; max-height: 78vh; max-width: 100%; border: 1px solid #e5e7eb;
  background: white; }
.cl-lab .cl-graph-drawing { margin: 0; }
.cl-lab.cl-lab { flex-wrap: wrap; row-gap: 12px; }
.cl-lab > .cl-left { flex: 0 0 420px; }
.cl-lab > .cl-right { flex: 1 1 560px; min-width: 0; max-width: 100%; }
.cl-lab .widget-tab > .lm-TabBar .lm-TabBar-content { flex-wrap: wrap; }
.cl-lab .widget-tab > .lm-TabBar .lm-TabBar-tab { flex: 0 0 auto; min-width: 0; }
.cl-lab .cl-figure { width: 100%; min-width: 0; overflow: hidden; }
.cl-lab .cl-figure .jp-OutputArea-output { width: 100%; min-width: 0; }
.cl-lab .cl-empty { color: #6b7280; font-style: italic; }
.cl-lab .cl-op-note-text { font-size: 11px; white-space: normal; }
.cl-lab .cl-compact .widget-toggle-button { padding-left: 2px; padding-right: 2px; }
.cl-lab .cl-code-note { font-size: 13px; line-height: 1.45; max-width: 820px; }
.cl-lab .cl-anatomy-note { font-size: 12px; white-space: normal; overflow-wrap: anywhere; margin: 4px 0;
  max-width: 100%; }
.cl-lab .cl-kernel-table { border-collapse: collapse; font-size: 11px; margin: 0 0 8px 0;
  font-variant-numeric: tabular-nums; }
.cl-lab .cl-kernel-table caption { caption-side: top; text-align: left; padding: 2px 0; white-space: normal;
  overflow-wrap: anywhere; }
.cl-lab .cl-kernel-table td, .cl-lab .cl-kernel-table th { border-bottom: 1px solid #e5e7eb; padding: 1px 6px;
  text-align: right; white-space: nowrap; }
.cl-lab .cl-kernel-table td:first-child, .cl-lab .cl-kernel-table th:first-child { text-align: left; }
.cl-lab .cl-kernel-table td:first-child { white-space: normal; overflow-wrap: anywhere; word-break: break-all;
  font-family: var(--jp-code-font-family, monospace); }
.cl-lab .cl-kernel-table { table-layout: auto; width: 100%; }
.cl-lab .cl-sweep-report-path { max-width: 100%; }
.cl-lab .cl-whatif, .cl-lab .cl-whatif .widget-html, .cl-lab .cl-whatif .widget-html-content {
  max-width: 100%; min-width: 0; }
.cl-lab .cl-whatif-label, .cl-lab .cl-whatif-note, .cl-lab .cl-whatif-refused { font-size: 12px;
  white-space: normal; overflow-wrap: anywhere; line-height: 1.4; margin: 4px 0; }
.cl-lab .cl-whatif-label { background: #eff6ff; border-left: 3px solid #3b82f6; padding: 4px 8px; }
.cl-lab .cl-whatif-none { max-width: 900px; }
.cl-lab .cl-whatif-problem { white-space: nowrap; font-family: var(--jp-code-font-family, monospace); font-size: 11px; }
.cl-lab .cl-whatif-hint { font-size: 11px; color: #6b7280; white-space: normal; max-width: 760px; margin: 2px 0 6px 0;
  line-height: 1.35; }
.cl-lab .cl-whatif-refused { padding-left: 18px; }
.cl-lab .cl-whatif-targets .widget-toggle-button { padding: 0 6px; }
.cl-lab .cl-whatif-targets .widget-toggle-button.mod-active { background: #dbeafe; color: #1e3a8a;
  box-shadow: inset 0 0 0 1px #3b82f6; }
.cl-lab .cl-whatif-targets .widget-toggle-button.mod-active::before { content: "✓ "; }
.cl-lab .cl-whatif-table th { position: static; text-align: right; }
.cl-lab .cl-whatif-table th:first-child { text-align: left; }
.cl-lab .cl-whatif-table thead tr:first-child th { border-bottom: 1px solid #d1d5db; text-align: center; }
.cl-lab .cl-whatif-table th.cl-measured { white-space: normal; max-width: 110px; }
.cl-lab .cl-whatif-table td { text-align: right; }
.cl-lab .cl-whatif-table .cl-synthetic { background: #f5f3ff; }
.cl-lab .cl-whatif-table th.cl-synthetic { color: #5b21b6; font-style: italic; }
.cl-lab .cl-whatif-table .cl-measured { background: #f0fdf4; }
.cl-lab .cl-whatif-table caption { white-space: normal; max-width: 760px; }
.cl-lab .cl-why-not-table td.cl-col-reason { white-space: normal; text-align: left; min-width: 200px;
  max-width: 420px; overflow-wrap: anywhere; font-family: var(--jp-code-font-family, monospace); font-size: 11px; }
.cl-lab .cl-why-not-table td.cl-col-status, .cl-lab .cl-why-not-table td.cl-col-category,
.cl-lab .cl-drift-table td.cl-col-in { text-align: left; }
.cl-lab .cl-drift-table td.cl-col-plan { text-align: left; font-family: var(--jp-code-font-family, monospace);
  font-size: 11px; white-space: normal; word-break: break-all; min-width: 120px; max-width: 300px; }
.cl-lab .cl-drift-wrap { max-height: 300px; }
</style>
"""


def _label(W: Any, text: str, width: str) -> Any:
    return W.HTML(f"<span class='cl-label'>{html.escape(text)}</span>", layout=W.Layout(width=width, min_width=width))


def row(W: Any, label: str, widget: Any, *rest: Any) -> Any:
    """One labelled line: a fixed-width label, the control, then anything after it (a hint)."""
    return W.HBox([_label(W, label, "80px"), widget, *rest], layout=W.Layout(align_items="center", margin="1px 0"))


def cell(W: Any, label: str, widget: Any, hint: Any, first: bool) -> Any:
    """Half a line: label, control and hint, for two short fields side by side."""
    return W.HBox([_label(W, label, "80px" if first else "60px"), widget, hint],
                  layout=W.Layout(min_width="204px" if first else "auto", align_items="center"))


def section(W: Any, title: str) -> Any:
    """A section title of the panel."""
    return W.HTML(f"<div class='cl-section'>{html.escape(title)}</div>")


def mark_invalid(widget: Any, message: Any, text: str) -> None:
    """Mark a control red (class ``cl-invalid`` and a red border) and show ``text`` in its message widget."""
    if widget is not None:
        widget.add_class("cl-invalid")
        widget.layout.border = INVALID_BORDER
    message.value = f"<span class='cl-error'>{html.escape(text)}</span>"
    message.layout.display = "flex"


def clear_invalid(widget: Any, message: Any) -> None:
    """Undo :func:`mark_invalid`."""
    if widget is not None:
        if "cl-invalid" in widget._dom_classes:
            widget.remove_class("cl-invalid")
        widget.layout.border = None
    message.value, message.layout.display = "", "none"


def offer_run(button: Any, note: Any, gpu: bool, no_gpu_text: str) -> bool:
    """A Run button's tooltip and the note beside it: empty with a GPU, else ``no_gpu_text`` (why it will not run)."""
    gpu = bool(gpu)
    button.tooltip = "" if gpu else no_gpu_text
    note.value = "" if gpu else f"<span class='cl-hint'>{html.escape(no_gpu_text)}</span>"
    return gpu
