"""The Graph and Code views: a spec's drawing (``cudnn_lab.graph.drawing``, any family) and its standalone script.

Without the ``dot`` program the drawing is made in the browser by graphviz-anywidget where it is installed, else the
DOT text is shown. A family without a frontend graph (pooling in frontend 1.32) has no script: the Code view shows
the graph layer's own explanation.
"""

from __future__ import annotations

import functools
import html
import shutil
from typing import Any

from ..errors import UnsupportedGraphError
from ..specs import Spec
from .figures import drawing_html, error_html

__all__ = ["GraphView", "code_html", "dot_source"]


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


class GraphView:
    """``graph_box`` (the Graph view, ``graph_html`` inside) and ``code_html`` (the Code view); :meth:`redraw`."""

    def __init__(self, W: Any) -> None:
        self.dot_path: str | None = shutil.which("dot")
        self.graph_html = W.HTML("").add_class("cl-graph-svg")
        self.graph_box = W.VBox([self.graph_html]).add_class("cl-graph")
        self.code_html = W.HTML("").add_class("cl-code")
        self._wasm: Any = None  # GraphvizAnyWidget once made, False where it cannot be

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

    def redraw(self, spec: Spec) -> None:
        """Draw ``spec`` and show its script; a drawing that fails says why in the view and raises."""
        from ..graph.render import DOT_INSTALL_HINT, fallback_bundle

        try:
            source = dot_source(spec)
            if self.dot_path:
                self.graph_html.value = drawing_html(source)
            elif (wasm := self.browser_graph()) is not None:  # Graphviz compiled to WebAssembly draws it
                wasm.dot_source = source
                self.graph_html.value = (f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div><details>"
                                         f"<summary class='cl-hint'>DOT source</summary><pre>{html.escape(source)}"
                                         "</pre></details>")
            else:
                self.graph_html.value = fallback_bundle(source)["text/html"]
            code = code_html(spec)
        except Exception as e:
            self.graph_html.value = error_html(spec.label(), e)
            raise
        if not self.dot_path:
            code += f"<div class='cl-hint'>{html.escape(DOT_INSTALL_HINT)}</div>"
        self.code_html.value = code
