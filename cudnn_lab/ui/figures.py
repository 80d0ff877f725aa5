"""The figure host: the one place the Lab puts plotly figures into its panes.

A pane is one ``Output`` widget per name ('latency', 'sweep', ...), made once and kept: each redraw replaces its
output with the figure as plotly's mime bundle (``application/vnd.plotly.v1+json``, drawn by JupyterLab's plotly
renderer). No widget is made or closed per redraw, so loading a recording opens no comm (a ``FigureWidget`` per
figure sent plotly.js, about 5 MB, with every new widget and left "No such comm" messages when closed). The
figure's width follows its pane (``autosize``, no fixed width; the renderer resizes it with the pane).
"""

from __future__ import annotations

import functools
import html
import json
import textwrap
from typing import Any

from ..graph.render import DrawingError, to_svg
from .status import StatusLog

__all__ = ["FIGURE_HEIGHTS", "FigureHost", "PLOTLY_MIME", "drawing_html", "fit_to_pane", "figure_bundle",
           "placeholder", "pane_height", "grown_height"]

PLOTLY_MIME = "application/vnd.plotly.v1+json"
#: Height of each pane's figure in px (its width follows the pane).
FIGURE_HEIGHTS: dict[str, int] = {"placeholder": 220, "histogram": 380, "sweep": 520, "errors": 460}
_DEFAULT_HEIGHT = 460
#: What a pane of its base height fits under and over a figure's plot (legend entries, title lines), and the px a
#: row more takes: a figure with more (the model lines of Latency and Roofline) grows instead of squeezing its plot.
FITS_LEGEND, FITS_TITLE, ROW_PX = 9, 3, 22
#: The longest line of a placeholder's text (characters; 14 px text in a pane 430 px wide at the narrowest).
PLACEHOLDER_LINE = 44
#: plotly's config for every figure: no logo, a PNG export named for the figure. Not ``responsive``: JupyterLab's
#: renderer resizes each figure with its pane (a tab shown, the file browser toggled, the window resized), and a
#: responsive figure drawn while its view was shown (a plan pick, a toggle) lost its height to 0 px when its tab was
#: shown again (plotly's resize drops the layout's height and sizes the plot at 100% of a parent without one;
#: Chromium, JupyterLab 4.6, 2026-11-29).
PLOTLY_CONFIG: dict[str, Any] = {"responsive": False, "displaylogo": False,
                                 "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def placeholder(text: str) -> Any:
    """An empty figure that says ``text`` (no result yet, nothing to draw)."""
    import plotly.graph_objects as go

    # No named template: copying plotly_white costs ~50 ms a figure, and before a result each view of the Lab shows
    # placeholders whose axes are hidden anyway (white background, a few lines of text).
    fig = go.Figure(layout={"template": {}, "height": FIGURE_HEIGHTS["placeholder"], "paper_bgcolor": "white",
                            "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}})
    # Lines of at most 44 characters: one line of 75 (No results yet: ...) was cut on both sides of a 430 px pane.
    lines = "<br>".join(textwrap.wrap(text, PLACEHOLDER_LINE)) or text
    fig.add_annotation(text=lines, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


@functools.lru_cache(maxsize=32)
def _placeholder_shown(text: str) -> tuple[Any, dict[str, Any]]:
    """The placeholder figure saying ``text``, sized as a placeholder, and its mime bundle (made once per text)."""
    fig = fit_to_pane(placeholder(text), FIGURE_HEIGHTS["placeholder"])
    return fig, figure_bundle(fig)


def pane_height(name: str) -> int:
    """The height (px) of pane ``name``'s figures."""
    return FIGURE_HEIGHTS.get(name, _DEFAULT_HEIGHT)


def grown_height(fig: Any, height: int) -> int:
    """``height`` px and a row more for each legend entry past :data:`FITS_LEGEND` and each title line past
    :data:`FITS_TITLE` (the legend under a narrow pane's plot takes a row an entry)."""
    entries = sum(1 for t in fig.data if t.name and t.showlegend is not False)
    lines = (fig.layout.title.text or "").count("<br>") + 1 if fig.layout.title.text else 0
    return height + ROW_PX * (max(0, entries - FITS_LEGEND) + max(0, lines - FITS_TITLE))


def fit_to_pane(fig: Any, height: int) -> Any:
    """Size ``fig`` for a pane of any width: no fixed width (plotly fills the pane), ``height`` px tall."""
    fig.update_layout(width=None, autosize=True, height=height)
    return fig


def figure_bundle(fig: Any) -> dict[str, Any]:
    """The output of a figure: plotly's mime bundle (data, layout, config as plain JSON) and a text line."""
    import plotly.io as pio

    data = json.loads(pio.to_json(fig, validate=False, remove_uids=False))
    data["config"] = dict(PLOTLY_CONFIG)
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else "figure"
    return {PLOTLY_MIME: data, "text/plain": f"<plotly figure: {str(title).split('<br>')[0]}>"}


@functools.lru_cache(maxsize=128)
def drawing_html(dot: str, spec: Any = None) -> str:
    """A DOT text as inline SVG (``cudnn_lab.graph.render.to_svg`` renders it; memoized, as the view redraws at
    every change). The Graph view sizes it (:mod:`.graph_view`). DOT that ``dot`` rejects raises
    :class:`~cudnn_lab.graph.render.DrawingError`: one sentence naming ``spec`` (the drawing's spec)."""
    return to_svg(dot, spec=spec)


class FigureHost:
    """Named panes of plotly figures: ``pane(name)`` is the Output shown in a view (the same one for the panel's
    life); ``figures[name]`` the figure shown there; ``widgets[name]`` the pane again (kept for callers that
    looked up the widget showing a figure)."""

    def __init__(self, W: Any, log: StatusLog) -> None:
        self._W = W
        self._log = log
        self._panes: dict[str, Any] = {}
        self.figures: dict[str, Any] = {}
        self.widgets: dict[str, Any] = {}

    def pane(self, name: str) -> Any:
        """The Output that shows figure ``name`` (made on first use)."""
        if name not in self._panes:
            out = self._W.Output(layout=self._W.Layout(width="100%", min_width="0"),
                                 _dom_classes=("cl-figure", f"cl-figure-{name}"))
            self._panes[name] = out
        return self._panes[name]

    def show(self, name: str, fig: Any, *, empty: bool = False, height: int | None = None) -> Any:
        """Size ``fig`` for its pane and show it there (replacing what it showed); ``empty`` sizes it as a
        placeholder, ``height`` (px) overrides the pane's own (a figure whose panels need the room). Returns the
        figure."""
        if height is None:
            height = FIGURE_HEIGHTS["placeholder"] if empty else pane_height(name)
        fit_to_pane(fig, height)
        self.figures[name] = fig
        pane = self.pane(name)
        pane.outputs = ({"output_type": "display_data", "data": figure_bundle(fig), "metadata": {}},)
        if pane.layout.display == "none":  # cleared before: shown again
            pane.layout.display = None
            pane.add_class("cl-figure")
        self.widgets[name] = pane
        return fig

    def show_text(self, name: str, text: str) -> Any:
        """Show a placeholder figure saying ``text`` in pane ``name`` (one figure and bundle per text, shared: the
        Lab opens with seven panes saying the same sentence)."""
        fig, bundle = _placeholder_shown(text)
        self.figures[name] = fig
        pane = self.pane(name)
        pane.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)
        if pane.layout.display == "none":  # cleared before: shown again
            pane.layout.display = None
            pane.add_class("cl-figure")
        self.widgets[name] = pane
        return fig

    def clear(self, name: str) -> None:
        """Show nothing in pane ``name``, for a view whose text already says why there is no figure: no placeholder
        box, the pane hidden (no height) and no longer a ``cl-figure`` (it holds none) until :meth:`show` fills it."""
        self.figures.pop(name, None)
        pane = self.pane(name)
        pane.outputs = ()
        pane.layout.display = "none"
        pane.remove_class("cl-figure")
        self.widgets[name] = pane

    def shown(self, name: str) -> dict[str, Any] | None:
        """The plotly JSON (data, layout, config) pane ``name`` shows now, or None (for tests and checks)."""
        pane = self._panes.get(name)
        if pane is None or not pane.outputs:
            return None
        return pane.outputs[0]["data"].get(PLOTLY_MIME)


def error_html(what: str, error: BaseException) -> str:
    """A pane's text when its content cannot be drawn; a drawing ``dot`` rejected: its one sentence, with the DOT
    source and dot's own message folded away under it (for a bug report)."""
    if isinstance(error, DrawingError):
        return f"<p class='cl-status-error'>{html.escape(str(error))}</p>" + dot_details_html(error)
    return f"<p class='cl-status-error'>Cannot draw {html.escape(what)}: {html.escape(str(error))}</p>"


def dot_details_html(error: Any) -> str:
    """A rejected drawing's DOT source and dot's message, folded (``<details>``), for a bug report."""
    said = (f"<p class='cl-hint'>dot said:</p><pre class='cl-dot-error'>{html.escape(error.stderr)}</pre>"
            if error.stderr else "")
    return (f"<details class='cl-dot-source'><summary class='cl-hint'>DOT source</summary>{said}"
            f"<pre>{html.escape(error.source)}</pre></details>")
