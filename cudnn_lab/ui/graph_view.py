"""The Graph and Code views: a spec's drawing (``cudnn_lab.graph.drawing``, any family) and its standalone script.

The drawing is dot's SVG in a scrolling box with zoom buttons: *fit* (the default) fills the pane's width but never
shrinks text below :data:`MIN_FIT_ZOOM` of its natural size (a wider drawing scrolls, so text stays legible);
−/+ step through :data:`ZOOMS`; *100%* is dot's natural size. Zooming re-sizes the SVG in CSS (no JavaScript, no
re-render by dot). Without the ``dot`` program the drawing is made in the browser by graphviz-anywidget where it is
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
from ..specs import Spec
from .figures import dot_details_html, drawing_html, error_html

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
    from ..graph import drawing

    return drawing(spec).source


@functools.lru_cache(maxsize=64)
def code_html(spec: Spec) -> str:
    """The Code view: the standalone script that rebuilds the graph, or why the family has none."""
    from ..graph import build_graph

    try:
        script = build_graph(spec).to_script()
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


def _zoom_text(zoom: float | str) -> str:
    return f"fit (≥ {MIN_FIT_ZOOM:.0%})" if zoom == FIT else f"{float(zoom):.0%}"


class GraphView:
    """``graph_box`` (the Graph view: zoom bar, ``graph_html`` inside) and ``code_html`` (the Code view);
    :meth:`redraw` draws a spec, :meth:`set_zoom` sizes the drawing."""

    def __init__(self, W: Any, *, guard: Callable[..., Any] | None = None) -> None:
        guard = guard or (lambda fn, *args: fn(*args))
        self._guard = guard
        self.dot_path: str | None = shutil.which("dot")
        self.zoom: float | str = FIT
        self._svg: str | None = None
        self.graph_html = W.HTML("").add_class("cl-graph-svg")
        button = {"layout": W.Layout(width="36px", padding="0")}
        self.zoom_out = W.Button(description="−", tooltip="smaller", **button).add_class("cl-zoom-out")
        self.zoom_in = W.Button(description="+", tooltip="larger", **button).add_class("cl-zoom-in")
        self.zoom_fit = W.Button(description="fit", tooltip="fill the pane's width (text never below "
                                 f"{MIN_FIT_ZOOM:.0%}: a wider drawing scrolls)",
                                 layout=W.Layout(width="44px", padding="0")).add_class("cl-zoom-fit")
        self.zoom_one = W.Button(description="100%", tooltip="dot's natural size",
                                 layout=W.Layout(width="52px", padding="0")).add_class("cl-zoom-100")
        self.zoom_label = W.HTML("").add_class("cl-zoom-label")
        self.zoom_bar = W.HBox([W.HTML("<span class='cl-hint'>zoom</span>", layout=W.Layout(margin="0 4px 0 0")),
                                self.zoom_out, self.zoom_in, self.zoom_fit, self.zoom_one, self.zoom_label],
                               layout=W.Layout(align_items="center")).add_class("cl-zoom-bar")
        self.graph_box = W.VBox([self.zoom_bar, self.graph_html]).add_class("cl-graph")
        self.code_html = W.HTML("").add_class("cl-code")
        self._wasm: Any = None  # GraphvizAnyWidget once made, False where it cannot be
        self.zoom_out.on_click(lambda _: guard(self.step, -1))
        self.zoom_in.on_click(lambda _: guard(self.step, +1))
        self.zoom_fit.on_click(lambda _: guard(self.set_zoom, FIT))
        self.zoom_one.on_click(lambda _: guard(self.set_zoom, 1.0))
        self._show_zoom()

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
        """Size the drawing: :data:`FIT` or a factor of its natural size (0.1 to 8)."""
        if zoom != FIT:
            try:
                zoom = float(zoom)
            except (TypeError, ValueError):
                raise OptionError("zoom", zoom, f"must be '{FIT}' or a number such as 1.5",
                                  where="Graph view") from None
            if not 0.1 <= zoom <= 8:
                raise OptionError("zoom", zoom, "must be from 0.1 to 8 (1: natural size)", where="Graph view")
        self.zoom = zoom
        if self._svg is not None:
            self.graph_html.value = sized_svg(self._svg, zoom)
        self._show_zoom()

    def step(self, direction: int) -> None:
        """One zoom step smaller (-1) or larger (+1) than the zoom shown (from fit: from 100%)."""
        now = 1.0 if self.zoom == FIT else float(self.zoom)
        if direction > 0:
            target = next((z for z in ZOOMS if z > now + 1e-9), ZOOMS[-1])
        else:
            target = next((z for z in reversed(ZOOMS) if z < now - 1e-9), ZOOMS[0])
        self.set_zoom(target)

    def redraw(self, spec: Spec) -> None:
        """Draw ``spec`` and show its script; a drawing that fails says why in the view and raises. One that ``dot``
        rejects (:class:`~cudnn_lab.graph.render.DrawingError`) still shows the script, then goes to ``guard``: the
        Lab's reports it (one sentence in the status line and the Log) and lets the caller go on (a recording still
        loads); without a guard it raises."""
        from ..graph.render import DOT_INSTALL_HINT, DrawingError, fallback_bundle

        rejected: DrawingError | None = None
        try:
            source = dot_source(spec)
            if self.dot_path:
                try:
                    self._svg = drawing_html(source, spec)
                except DrawingError as e:  # only the drawing is lost: say so, and show the script all the same
                    self._svg, rejected = None, e
                    self.graph_html.value = error_html(spec.label(), e)
                else:
                    self.graph_html.value = sized_svg(self._svg, self.zoom)
            elif (wasm := self.browser_graph()) is not None:  # Graphviz compiled to WebAssembly draws it
                self._svg = None
                wasm.dot_source = source
                self.graph_html.value = (f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div><details>"
                                         f"<summary class='cl-hint'>DOT source</summary><pre>{html.escape(source)}"
                                         "</pre></details>")
            else:
                self._svg = None
                self.graph_html.value = fallback_bundle(source)["text/html"]
            code = code_html(spec)
        except Exception as e:
            self._svg = None
            self.graph_html.value = error_html(spec.label(), e)
            raise
        finally:
            self._show_zoom()
        if not self.dot_path:
            code += f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div>"
        if rejected is not None:
            code += f"<div class='cl-status-error'>{html.escape(str(rejected))}</div>{dot_details_html(rejected)}"
        self.code_html.value = code
        if rejected is not None:
            self._guard(_raise, rejected)

    def _show_zoom(self) -> None:
        drawn = self._svg is not None
        self.zoom_bar.layout.display = "flex" if drawn else "none"
        self.zoom_label.value = f"<span class='cl-hint'>{html.escape(_zoom_text(self.zoom))}</span>"
        self.zoom_out.disabled = not drawn or (self.zoom != FIT and float(self.zoom) <= ZOOMS[0])
        self.zoom_in.disabled = not drawn or (self.zoom != FIT and float(self.zoom) >= ZOOMS[-1])


def _raise(error: BaseException) -> None:
    """Raise ``error`` (inside ``guard``, which reports it)."""
    raise error
