"""The figure host: the one place the Lab puts plotly figures and graph drawings (SVG) into its panes.

A pane is a ``Box`` named for what it shows ('latency', 'sweep', ...). :meth:`FigureHost.show` puts a new widget in
it at each redraw (a FigureWidget updated in place keeps stale annotations and shapes in the browser) and closes
the old one, so no widget comm is left behind.
"""

from __future__ import annotations

import functools
import html
from typing import Any

from .status import StatusLog

__all__ = ["FIGURE_WIDTH", "FigureHost", "drawing_html", "placeholder"]

FIGURE_WIDTH = 920
_HEIGHTS = {"placeholder": 260, "histogram": 360, "sweep": 480}
_DEFAULT_HEIGHT = 440


def placeholder(text: str) -> Any:
    """An empty figure that says ``text`` (no result yet, nothing to draw)."""
    import plotly.graph_objects as go

    fig = go.Figure(layout={"template": "plotly_white", "height": _HEIGHTS["placeholder"]})
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"size": 14})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


@functools.lru_cache(maxsize=128)
def drawing_html(dot: str) -> str:
    """A DOT text as inline SVG for the Graph pane (``cudnn_lab.graph.render.to_svg`` renders it; memoized, as the
    view redraws at every change), at its natural size in a scrolling pane so its text stays legible."""
    from ..graph.render import to_svg

    return f"<div class='cl-graph-drawing'>{to_svg(dot)}</div>"


class FigureHost:
    """Named panes of plotly figures: ``pane(name)`` is the Box shown in a view; ``figures[name]`` the figure,
    ``widgets[name]`` the widget showing it."""

    def __init__(self, W: Any, log: StatusLog) -> None:
        self._W = W
        self._log = log
        self._panes: dict[str, Any] = {}
        self.figures: dict[str, Any] = {}
        self.widgets: dict[str, Any] = {}

    def pane(self, name: str) -> Any:
        """The Box that shows figure ``name`` (made on first use)."""
        if name not in self._panes:
            self._panes[name] = self._W.Box(layout=self._W.Layout(width="100%", overflow="auto"))
        return self._panes[name]

    def show(self, name: str, fig: Any, *, empty: bool = False) -> Any:
        """Size ``fig`` for its pane and show it there; ``empty`` sizes it as a placeholder. Returns the figure."""
        height = _HEIGHTS["placeholder"] if empty else _HEIGHTS.get(name, _DEFAULT_HEIGHT)
        # An explicit width: a FigureWidget does not follow its container and would take plotly's default 700 px.
        fig.update_layout(height=height, width=FIGURE_WIDTH, margin={"t": 80, "r": 20})
        self.figures[name] = fig
        old = self.widgets.get(name)
        widget = self._widget(fig)
        widget.add_class(f"cl-figure-{name}")
        self.widgets[name] = widget
        self.pane(name).children = [widget]
        if old is not None:
            old.close()
        return fig

    def show_text(self, name: str, text: str) -> Any:
        """Show a placeholder figure saying ``text`` in pane ``name``."""
        return self.show(name, placeholder(text), empty=True)

    def _widget(self, fig: Any) -> Any:
        try:
            import plotly.graph_objects as go

            return go.FigureWidget(fig)
        except Exception as e:  # noqa: BLE001 - plotly >= 6 needs anywidget: fall back to an Output
            if not any("FigureWidget" in m for m in self._log.messages):
                self._log.warn(f"plotly FigureWidget unavailable ({e}); figures are shown as static output")
            from IPython.display import display

            out = self._W.Output()
            with out:
                display(fig)
            return out


def error_html(what: str, error: BaseException) -> str:
    """A pane's text when its content cannot be drawn."""
    return f"<p class='cl-status-error'>Cannot draw {html.escape(what)}: {html.escape(str(error))}</p>"
