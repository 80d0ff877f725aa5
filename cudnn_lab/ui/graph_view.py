"""The Graph and Code views: a spec's drawing (``cudnn_lab.graph.drawing``, any family) and its standalone script.

The drawing is dot's SVG in one anywidget (:class:`~.graph_widget.GraphDrawing`): wheel zoom about the pointer,
drag to pan, *fit* (the default: the whole graph in its box, at whatever scale that takes), *100%* (dot's natural
size), −/+, a click on a tensor or operation shows its details (``inspect()``), and SVG export. :meth:`GraphView.step`
steps through :data:`ZOOMS` from Python; :func:`sized_svg` (a drawing sized in CSS alone) is kept for static HTML.
Without the ``dot`` program the drawing is made in the browser by graphviz-anywidget where it is
installed, else the DOT text is shown. A family without a frontend graph (pooling in frontend 1.32) has no script:
the Code view shows the graph layer's own explanation. A drawing that ``dot`` rejects says so in one sentence (in the
view, and through ``guard`` in the status line and the Log), its DOT source folded under it; the script still shows.
"""

from __future__ import annotations

import functools
import html
import re
import shutil
from collections.abc import Callable
from typing import Any

from ..errors import OptionError, UnsupportedGraphError
from ..graph import drawing
from ..graph.labgraph import viewed_graph
from ..graph.render import DOT_INSTALL_HINT, DrawingError, fallback_bundle
from ..specs import Spec
from .figures import dot_details_html, drawing_html, error_html
from .graph_widget import GraphDrawing, node_details

__all__ = ["FIT", "GraphView", "MIN_FIT_ZOOM", "ZOOMS", "code_html", "dot_source", "sized_svg", "svg_size"]

#: Zoom steps of the − and + buttons (1.0: dot's natural size, 10 pt node text at about 13 px).
ZOOMS: tuple[float, ...] = (0.25, 0.33, 0.5, 0.67, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)
#: The fit zoom never goes below this (node text about 10 px): a wider drawing scrolls instead.
MIN_FIT_ZOOM = 0.75
FIT = "fit"
_PT_TO_PX = 4 / 3
_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.S)


@functools.lru_cache(maxsize=256)
def dot_source(spec: Spec) -> str:
    """DOT text of any spec's drawing (memoized: the Graph view redraws at every change)."""
    return drawing(spec).source


@functools.lru_cache(maxsize=64)
def code_html(spec: Spec) -> str:
    """The Code view: the standalone script that rebuilds the graph, or why the family has none."""
    try:
        script = viewed_graph(spec).to_script()
    except UnsupportedGraphError as e:
        return (f"<div class='cl-code-note'><p><b>No standalone script for {html.escape(spec.label())}.</b> "
                f"{html.escape(str(e))}</p></div>")
    return (f"<div class='cl-hint'>A standalone script that rebuilds, runs and checks this "
            f"graph with cudnn and torch only (for bug reports).</div>"
            f"<pre class='cl-code-text'>{html.escape(script)}</pre>")


def svg_size(svg: str) -> tuple[float, float]:
    """dot's natural size of an SVG drawing in CSS px (from its ``width``/``height`` in pt, else its viewBox)."""
    tag = _SVG_TAG.search(svg)
    head = tag.group(0) if tag else ""

    def attr(name: str) -> float | None:
        m = re.search(rf'\b{name}="([0-9.]+)(pt|px)?"', head)
        if not m:
            return None
        return float(m.group(1)) * (_PT_TO_PX if m.group(2) in (None, "pt") else 1.0)

    w, h = attr("width"), attr("height")
    if w is None or h is None:
        box = re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"', head)
        if box is None:
            return 600.0, 400.0
        w, h = float(box.group(1)) * _PT_TO_PX, float(box.group(2)) * _PT_TO_PX
    return w, h


def sized_svg(svg: str, zoom: float | str) -> str:
    """The drawing in its scrolling box at ``zoom`` (a factor of the natural size, or :data:`FIT`)."""
    width, _ = svg_size(svg)
    tag = _SVG_TAG.search(svg)
    if tag is None:
        return svg
    head = re.sub(r'\s(width|height)="[^"]*"', "", tag.group(0))
    head = head[:-1].rstrip() + ' width="100%" style="display:block;height:auto">'
    body = svg[:tag.start()] + head + svg[tag.end():]
    if zoom == FIT:
        size = f"width:clamp({width * MIN_FIT_ZOOM:.0f}px, 100%, {width:.0f}px)"
    else:
        size = f"width:{width * float(zoom):.0f}px"
    return (f"<div class='cl-graph-scroll'><div class='cl-graph-drawing' data-natural-width='{width:.0f}' "
            f"style='{size}'>{body}</div></div>")


class GraphView:
    """``graph_box`` (the Graph view: ``graph_html``, a :class:`~.graph_widget.GraphDrawing` with its own zoom bar,
    wheel zoom, pan, node details and SVG export) and ``code_html`` (the Code view); :meth:`redraw` draws a spec,
    :meth:`set_zoom` sizes the drawing (the browser's wheel and buttons set ``zoom`` too)."""

    def __init__(self, W: Any, *, guard: Callable[..., Any] | None = None) -> None:
        guard = guard or (lambda fn, *args: fn(*args))
        self._guard = guard
        self.dot_path: str | None = shutil.which("dot")
        self.zoom: float | str = FIT
        self._svg: str | None = None
        #: The drawing (``value``: dot's SVG, or text where there is none; ``details``: what a click on a node shows).
        self.graph_html = GraphDrawing().add_class("cl-graph-svg")
        self.graph_box = W.VBox([self.graph_html], _dom_classes=("cl-graph",))
        self.code_html = W.HTML("", _dom_classes=("cl-code",))
        self._wasm: Any = None  # GraphvizAnyWidget once made, False where it cannot be
        self.graph_html.observe(self._on_browser_zoom, names="zoom")

    def browser_graph(self) -> Any:
        """The in-browser Graphviz widget (made on first use), or None where it is missing."""
        if self._wasm is None:
            try:
                from graphviz_anywidget import GraphvizAnyWidget
            except Exception:  # noqa: BLE001 - neither dot nor the widget: the DOT text is the drawing
                self._wasm = False
                return None
            self._wasm = GraphvizAnyWidget(dot_source="digraph {}").add_class("cl-graph-wasm")
            self.graph_box.children = [self._wasm, self.graph_html]
        return self._wasm or None

    def set_zoom(self, zoom: float | str) -> None:
        """Size the drawing: :data:`FIT` (the whole graph in its box, at any scale) or a factor of its natural size
        (0.02 to 8)."""
        if zoom != FIT:
            try:
                zoom = float(zoom)
            except (TypeError, ValueError):
                raise OptionError("zoom", zoom, f"must be '{FIT}' or a number such as 1.5",
                                  where="Graph view") from None
            if not 0.02 <= zoom <= 8:
                raise OptionError("zoom", zoom, "must be from 0.02 to 8 (1: natural size)", where="Graph view")
        self.zoom = zoom
        self.graph_html.zoom = 0.0 if zoom == FIT else float(zoom)

    def step(self, direction: int) -> None:
        """One zoom step smaller (-1) or larger (+1) than the zoom shown (from fit: from 100%)."""
        now = 1.0 if self.zoom == FIT else float(self.zoom)
        if direction > 0:
            target = next((z for z in ZOOMS if z > now + 1e-9), ZOOMS[-1])
        else:
            target = next((z for z in reversed(ZOOMS) if z < now - 1e-9), ZOOMS[0])
        self.set_zoom(target)

    def _on_browser_zoom(self, change: dict[str, Any]) -> None:
        self.zoom = FIT if not change["new"] else float(change["new"])

    def _show(self, value: str, spec: Spec | None = None) -> None:
        details = node_details(spec) if spec is not None and self._svg is not None else {}
        name = "graph.svg" if spec is None else re.sub(r"[^A-Za-z0-9._-]+", "_", spec.label()).strip("_") + ".svg"
        with self.graph_html.hold_sync():
            self.graph_html.details, self.graph_html.file_name, self.graph_html.value = details, name, value

    def redraw(self, spec: Spec) -> None:
        """Draw ``spec`` and show its script; a drawing that fails says why in the view and raises. One that ``dot``
        rejects (:class:`~cudnn_lab.graph.render.DrawingError`) still shows the script, then goes to ``guard``: the
        Lab's reports it (one sentence in the status line and the Log) and lets the caller go on (a recording still
        loads); without a guard it raises."""
        rejected: DrawingError | None = None
        try:
            source = dot_source(spec)
            if self.dot_path:
                try:
                    self._svg = drawing_html(source, spec)
                except DrawingError as e:  # only the drawing is lost: say so, and show the script all the same
                    self._svg, rejected = None, e
                    self._show(error_html(spec.label(), e))
                else:
                    self._show(self._svg, spec)
            elif (wasm := self.browser_graph()) is not None:  # Graphviz compiled to WebAssembly draws it
                self._svg = None
                wasm.dot_source = source
                self._show(f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div><details>"
                           f"<summary class='cl-hint'>DOT source</summary><pre>{html.escape(source)}</pre></details>")
            else:
                self._svg = None
                self._show(fallback_bundle(source)["text/html"])
            code = code_html(spec)
        except Exception as e:
            self._svg = None
            self._show(error_html(spec.label(), e))
            raise
        if not self.dot_path:
            code += f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div>"
        if rejected is not None:
            code += f"<div class='cl-status-error'>{html.escape(str(rejected))}</div>{dot_details_html(rejected)}"
        self.code_html.value = code
        if rejected is not None:
            self._guard(_raise, rejected)


def _raise(error: BaseException) -> None:
    """Raise ``error`` (inside ``guard``, which reports it)."""
    raise error
