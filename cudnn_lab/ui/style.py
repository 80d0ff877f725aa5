"""The Lab's look, in one place: its CSS, the labelled rows every form lays out, and the red mark of a bad value."""

from __future__ import annotations

import html
from typing import Any
from .status import error_sentence

__all__ = ["CSS", "INVALID_BORDER", "acting", "answer", "button", "cell", "clear_invalid", "hint_html", "html_style",
           "mark_invalid", "row", "section", "set_shown", "share_layout", "shared_layout", "shared_style",
           "show_answer"]

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
.cl-lab .cl-answer-ok, .cl-lab .cl-answer-error, .cl-lab .cl-answer-working { font-size: 11px; line-height: 1.35;
  white-space: normal; overflow-wrap: anywhere; }
.cl-lab .cl-answer-ok { color: #166534; }
.cl-lab .cl-answer-working { color: #1d4ed8; }
.cl-lab .cl-answer-error { color: #b91c1c; }
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
.cl-lab.cl-lab { flex-wrap: wrap; row-gap: 12px; container: cl-lab / inline-size; }
.cl-lab > .cl-left { flex: 0 0 420px; }
.cl-lab > .cl-right { flex: 1 1 560px; min-width: 0; max-width: 100%; }
/* A hint beside a control takes the room left on its line and wraps there (never cut off at the column's edge);
   a label never wraps under the control after it. */
.cl-lab .widget-hbox > .cl-hint { flex: 1 1 auto; min-width: 0; }
.cl-lab .widget-hbox > .cl-hint, .cl-lab .widget-hbox > .cl-hint .widget-html-content,
.cl-lab .widget-hbox > .cl-hint .cl-hint { white-space: normal; line-height: 1.25; overflow-wrap: anywhere; }
.cl-lab .widget-hbox > .cl-hint .widget-html-content { align-self: center; }
.cl-lab .cl-label-auto, .cl-lab .cl-label-auto .widget-html-content { white-space: nowrap; flex: 0 0 auto; }
.cl-lab .cl-flag { flex: 0 0 auto; margin-right: 6px; }
.cl-lab .cl-cell-first { margin-right: 10px; }  /* its hint never runs into the second field's label */
/* Narrow (1280 px with JupyterLab's file browser open): a compact controls column, the views beside it. */
@container cl-lab (max-width: 1000px) {
  .cl-lab > .cl-left { flex: 0 0 380px; width: 380px !important; min-width: 380px !important;
    padding-right: 8px !important; }
  .cl-lab > .cl-right { flex: 1 1 400px !important; }
  .cl-lab .cl-left .cl-op-note { width: auto !important; }
  .cl-lab .cl-left .cl-state-code { width: 100% !important; }
  .cl-lab .cl-controls .cl-pair { flex-wrap: wrap; }
  .cl-lab .cl-controls .widget-hbox > .cl-compact { flex: 0 1 auto; min-width: 0; }
  .cl-lab .cl-controls .widget-hbox:not(.cl-cell-first):not(.cl-cell-second) > .cl-hint { flex: 1 1 0;
    min-width: 64px; }
  .cl-lab .cl-controls .cl-compact .widget-toggle-buttons { flex-wrap: wrap; row-gap: 2px; }
}
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
.cl-lab .cl-whatif-table th, .cl-lab .cl-whatif-table td { padding: 2px 3px; }
.cl-lab .cl-whatif-table thead th { white-space: normal; font-size: 11px; line-height: 1.25; vertical-align: bottom; }
.cl-lab .cl-block-answers td, .cl-lab .cl-why-not-table td { white-space: normal; overflow-wrap: anywhere;
  text-align: left; }
.cl-lab .cl-block-answers td.cl-col-problem, .cl-lab .cl-block-answers td.cl-col-target,
.cl-lab .cl-block-answers td.cl-col-answer { min-width: 70px; font-size: 11px; }
.cl-lab .cl-why-not-table td.cl-col-reason { white-space: normal; text-align: left; min-width: 120px;
  max-width: 420px; overflow-wrap: anywhere; font-family: var(--jp-code-font-family, monospace); font-size: 11px; }
.cl-lab .cl-why-not-table td.cl-col-status, .cl-lab .cl-why-not-table td.cl-col-category,
.cl-lab .cl-drift-table td.cl-col-in { text-align: left; }
.cl-lab .cl-drift-table td.cl-col-plan { text-align: left; font-family: var(--jp-code-font-family, monospace);
  font-size: 11px; white-space: normal; word-break: break-all; min-width: 120px; max-width: 300px; }
.cl-lab .cl-drift-wrap { max-height: 300px; }
.cl-lab .cl-figure-options { align-items: center; flex-wrap: wrap; margin: 2px 0 4px 0; }
.cl-lab .cl-option-note, .cl-lab .cl-option-note .widget-html-content { white-space: normal; font-size: 11px;
  line-height: 1.3; overflow-wrap: anywhere; }
.cl-lab .cl-option-on { color: #166534; }
.cl-lab .cl-option-none { color: #92400e; }
.cl-lab .cl-option-error { color: #b91c1c; }
</style>
"""


#: Layouts and styles that many widgets share (a label's width, a hint's margin): one widget model each instead of
#: one per widget. Never changed after they are made (a widget that changes its layout has its own).
_SHARED: dict[str, Any] = {}


def shared_style(W: Any, key: str, make: Any) -> Any:
    """The shared layout or style ``key`` (``make()`` on first use, or after it was closed)."""
    model = _SHARED.get(key)
    if model is None or getattr(model, "comm", None) is None:
        model = _SHARED[key] = make()
    return model


def shared_layout(W: Any, **traits: Any) -> Any:
    """The one Layout with ``traits`` that many widgets share (never changed: :func:`set_shown` and
    :func:`mark_invalid` swap a widget's layout for another instead)."""
    return shared_style(W, "layout:" + repr(sorted(traits.items())), lambda: W.Layout(**traits))


def share_layout(W: Any, cls: Any, traits: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """``cls(*args, **kwargs)`` made with the shared layout of ``traits`` (kept on it, so that its look can come
    back after :func:`set_shown` or :func:`mark_invalid`)."""
    widget = cls(*args, layout=shared_layout(W, **traits), **kwargs)
    widget._cl_layout = dict(traits)
    return widget


def set_shown(widget: Any, shown: bool) -> None:
    """Show or hide ``widget``: one with a shared layout takes the shared hidden (or shown) one, else its own
    layout's ``display`` changes."""
    traits = getattr(widget, "_cl_layout", None)
    if traits is None:
        widget.layout.display = None if shown else "none"
        return
    import ipywidgets as W

    widget.layout = shared_layout(W, **traits) if shown else shared_layout(W, **traits, display="none")


def html_style(W: Any) -> Any:
    """The HTML style every label, hint and answer shares (HTMLStyle with nothing set)."""
    from ipywidgets.widgets.widget_string import HTMLStyle

    return shared_style(W, "html-style", HTMLStyle)


def _label(W: Any, text: str, width: str) -> Any:
    return W.HTML(f"<span class='cl-label'>{html.escape(text)}</span>",
                  layout=shared_layout(W, width=width, min_width=width), style=html_style(W))


def hint_html(W: Any, style: Any = None, layout: Any = None, value: str = "") -> Any:
    """A hint beside a control (empty by default), sharing its style and layout with the other hints."""
    return W.HTML(value, style=style or html_style(W), layout=layout or shared_layout(W, margin="0 0 0 6px"),
                  _dom_classes=("cl-hint",))


def row(W: Any, label: str, widget: Any, *rest: Any) -> Any:
    """One labelled line: a fixed-width label, the control, then anything after it (a hint)."""
    return share_layout(W, W.HBox, {"align_items": "center", "margin": "1px 0"},
                        [_label(W, label, "80px"), widget, *rest])


def cell(W: Any, label: str, widget: Any, hint: Any, first: bool) -> Any:
    """Half a line: label, control and hint, for two short fields side by side."""
    # The second label is as wide as its text (at least 60 px): a long one ("bidirectional") is never covered
    # by the control after it.
    name = _label(W, label, "80px") if first else W.HTML(
        f"<span class='cl-label'>{html.escape(label)}</span>", style=html_style(W),
        layout=shared_layout(W, min_width="60px", margin="0 4px 0 0"), _dom_classes=("cl-label-auto",))
    return share_layout(W, W.HBox, {"min_width": "204px" if first else "auto", "align_items": "center"},
                        [name, widget, hint], _dom_classes=("cl-cell-first" if first else "cl-cell-second",))


def section(W: Any, title: str) -> Any:
    """A section title of the panel."""
    return W.HTML(f"<div class='cl-section'>{html.escape(title)}</div>",
                  style=html_style(W), layout=shared_layout(W))


def answer(W: Any) -> Any:
    """The answer line under a button: what its click did (saved where, loaded, or why not), said where the user
    acted, not only in the status line; empty and hidden until :func:`show_answer`."""
    return W.HTML("", layout=W.Layout(display="none", margin="0 0 2px 80px", max_width="340px"),
                  style=html_style(W), _dom_classes=("cl-answer",))


def show_answer(widget: Any, text: str, *, ok: bool = True, escape: bool = True) -> None:
    """Say ``text`` (one sentence; HTML when ``escape`` is False) in an :func:`answer` line, green tick or red."""
    body = html.escape(text) if escape else text
    widget.value = f"<div class='cl-answer-{'ok' if ok else 'error'}'>{'✓ ' if ok else '✗ '}{body}</div>"
    widget.layout.display = "flex"


def show_working(widget: Any, text: str) -> None:
    """Say in an :func:`answer` line what a button is doing now (an earlier answer is replaced at once)."""
    widget.value = f"<div class='cl-answer-working'>… {html.escape(text)}</div>"
    widget.layout.display = "flex"


def acting(line: Any, fn: Any, said: Any) -> Any:
    """``fn`` that says its outcome in the answer ``line`` too: ``said(result)`` (HTML) when it works, the error's
    one sentence when it fails (then raised again, for the status line and the Log)."""
    def act(*args: Any) -> Any:
        try:
            out = fn(*args)
        except Exception as e:
            show_answer(line, error_sentence(e), ok=False)
            raise
        text = said(out)
        if text:
            show_answer(line, text, escape=False)
        return out

    return act


def button(W: Any, description: str, width: str = "110px", **kwargs: Any) -> Any:
    """A button of the panel (its layout and style shared with the buttons of its width)."""
    from ipywidgets.widgets.widget_button import ButtonStyle

    return share_layout(W, W.Button, {"width": width}, description=description,
                        style=shared_style(W, "button-style", ButtonStyle), **kwargs)


def mark_invalid(widget: Any, message: Any, text: str) -> None:
    """Mark a control red (class ``cl-invalid`` and a red border) and show ``text`` in its message widget."""
    if widget is not None:
        widget.add_class("cl-invalid")
        traits = getattr(widget, "_cl_layout", None)
        if traits is not None:  # a shared layout: the red one is the widget's own, made on its first mark
            if getattr(widget, "_cl_invalid_layout", None) is None:
                import ipywidgets as W

                widget._cl_invalid_layout = W.Layout(**traits, border=INVALID_BORDER)
            widget.layout = widget._cl_invalid_layout
        else:
            widget.layout.border = INVALID_BORDER
    message.value = f"<span class='cl-error'>{html.escape(text)}</span>"
    message.layout.display = "flex"


def clear_invalid(widget: Any, message: Any) -> None:
    """Undo :func:`mark_invalid`."""
    if widget is not None:
        if "cl-invalid" in widget._dom_classes:
            widget.remove_class("cl-invalid")
        traits = getattr(widget, "_cl_layout", None)
        if traits is not None:
            import ipywidgets as W

            widget.layout = shared_layout(W, **traits)
        else:
            widget.layout.border = None
    if message is not None:
        message.value, message.layout.display = "", "none"


def offer_run(button: Any, note: Any, gpu: bool, no_gpu_text: str) -> bool:
    """A Run button's tooltip and the note beside it: empty with a GPU, else ``no_gpu_text`` (why it will not run)."""
    gpu = bool(gpu)
    button.tooltip = "" if gpu else no_gpu_text
    note.value = "" if gpu else f"<span class='cl-hint'>{html.escape(no_gpu_text)}</span>"
    return gpu
