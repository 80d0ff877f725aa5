"""Draw a frontend graph: ``inspect()`` output -> a graphviz Digraph that shows safely with or without ``dot``,
and DOT -> SVG (:func:`to_svg`, the one place the kit runs ``dot``).

Tensors are nodes with their dims, strides, the layout those strides mean, dtype and role; operations are nodes with
their type and parameters. Rendering returns values; display (``_repr_mimebundle_``) is a thin layer on top.

Every HTML-like label (``<...>``) is made by :func:`html_label` from plain text, escaped there: ``dot`` finds where
such a label ends by counting ``<`` and ``>``, so one bare ``>`` (the arrow in ``cudnnRNNBackwardData_v8 -> DX``)
ends it early and makes the whole drawing invalid DOT.
"""

from __future__ import annotations

import functools
import html
import shutil
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import DrawingError, MissingDependencyError, OptionError, shorten
from ..specs import describe_layout

if TYPE_CHECKING:  # pragma: no cover
    import graphviz

    from ..specs import Spec

_ROLE_STYLE = {
    "input": {"shape": "box", "style": "rounded,filled", "fillcolor": "#dbeafe", "color": "#1d4ed8"},
    "output": {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#dcfce7", "color": "#15803d"},
    "virtual": {"shape": "box", "style": "rounded,dashed", "fillcolor": "white", "color": "#6b7280"},
}
_OP_STYLE = {"shape": "box", "style": "filled", "fillcolor": "#fde68a", "color": "#b45309"}
DOT_INSTALL_HINT = ("The graphviz 'dot' program is not installed, so this drawing is rendered in the browser "
                    "(or shown as DOT text). Install it with 'apt-get install graphviz' (Debian/Ubuntu), "
                    "'brew install graphviz' (macOS) or 'conda install graphviz'.")


def _graphviz() -> Any:
    """The graphviz package: the kit's one import of it, made at the first drawing so that importing the graph layer
    (and the GPU, what-if and UI layers above it) does not load it."""
    import graphviz

    return graphviz


def to_svg(dot: str | graphviz.Digraph | graphviz.Source, *, spec: Spec | None = None) -> str:
    """SVG text (from ``<svg`` on, no XML prologue) of a DOT source or a graphviz graph, drawn by the ``dot`` program.

    Raises :class:`MissingDependencyError` with the install hint when ``dot`` is not installed, :class:`OptionError`
    (a ``ValueError``) for something that is not DOT text or a graph (or text ``dot`` rejects), and
    :class:`DrawingError` when ``dot`` rejects the drawing of ``spec``: one sentence naming it and what to do.
    """
    if not shutil.which("dot"):
        raise MissingDependencyError("The graphviz 'dot' program", DOT_INSTALL_HINT)
    graphviz = _graphviz()
    if isinstance(dot, (graphviz.Digraph, graphviz.Graph, graphviz.Source)):
        source = dot.source
    elif isinstance(dot, str):
        source = dot
    else:
        raise OptionError("dot", type(dot).__name__, "must be DOT text or a graphviz graph", where="to_svg")
    try:
        svg = graphviz.Source(source).pipe(format="svg", encoding="utf-8", quiet=True)
    except graphviz.CalledProcessError as e:
        stderr = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else str(e.stderr or "")
        if spec is None:  # DOT text the caller wrote: the caller's input to fix
            raise OptionError("dot", source, f"must be valid DOT text; dot said: {shorten(stderr.strip(), 200)}",
                              where="to_svg") from None
        raise DrawingError(source, stderr.strip(), spec) from None
    return svg[svg.find("<svg"):]


def html_text(value: Any) -> str:
    """Plain text made safe inside an HTML-like label: ``&``, ``<``, ``>`` and quotes become entities."""
    return html.escape(str(value))


def html_label(title: Any, *lines: Any, small: Iterable[Any] = ()) -> str:
    """An HTML-like label from plain text: ``title`` in bold, each of ``lines`` under it, then ``small`` in 9 pt;
    every piece is escaped here (see the module's docstring for why a bare ``>`` breaks the whole drawing)."""
    body = f"<b>{html_text(title)}</b>" + "".join(f"<br/>{html_text(line)}" for line in lines)
    fine = [html_text(line) for line in small]
    if fine:
        body += "<br/><font point-size='9'>" + "<br/>".join(fine) + "</font>"
    return f"<{body}>"


def dtype_name(raw: str) -> str:
    """'data_type.HALF' -> 'fp16'; the frontend's 'None' (unset) stays None."""
    names = {"FLOAT": "fp32", "HALF": "fp16", "BFLOAT16": "bf16", "DOUBLE": "fp64", "INT32": "int32",
             "INT64": "int64", "INT8": "int8", "BOOLEAN": "bool", "FP8_E4M3": "fp8_e4m3", "FP8_E5M2": "fp8_e5m2"}
    key = raw.rsplit(".", 1)[-1]
    return names.get(key, key.lower()) if key not in ("None", "NOT_SET") else "None"


def tensor_rows(name: str, info: dict[str, Any], role: str, intermediate: str, axes: str | None = None) -> list[str]:
    """Lines describing one tensor, as drawn and as listed in text views (``axes``: see describe_layout)."""
    dims, strides = info["dim"], info["stride"]
    dtype = dtype_name(info["dtype"])
    if dtype == "None":
        dtype = f"{intermediate} (intermediate)"
    return [name, f"dims {dims}", f"strides {strides}", f"layout {describe_layout(dims, strides, axes)}",
            f"{dtype} · {role}"]


@functools.cache
def _safe_digraph() -> type:
    """:class:`SafeDigraph`'s real class, a ``graphviz.Digraph`` subclass, made when the first drawing is."""

    class SafeDigraph(_graphviz().Digraph):  # type: ignore[misc]  # graphviz has no type information
        __doc__ = _SafeDigraphType.__doc__

        def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict[str, Any]:
            if shutil.which("dot"):
                return dict(super()._repr_mimebundle_(include, exclude, **kwargs))
            return fallback_bundle(self.source)

    SafeDigraph.__module__, SafeDigraph.__qualname__ = __name__, "SafeDigraph"
    return SafeDigraph


class _SafeDigraphType(type):
    """A Digraph that displays as SVG when ``dot`` exists and still displays (in-browser or as text) when not.

    ``SafeDigraph(...)`` makes a ``graphviz.Digraph`` of the real class and ``isinstance`` tests against it, so that
    the name can be imported (and annotated with) without importing graphviz."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _safe_digraph()(*args, **kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _safe_digraph())

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _safe_digraph())


if TYPE_CHECKING:
    SafeDigraph: TypeAlias = graphviz.Digraph
else:
    class SafeDigraph(metaclass=_SafeDigraphType):
        """A Digraph that displays as SVG when ``dot`` exists and still displays (in-browser or as text) when not:
        see :class:`_SafeDigraphType`."""


def fallback_bundle(source: str) -> dict[str, Any]:
    """What Jupyter shows without ``dot``: an in-browser Graphviz widget where available, the DOT text otherwise."""
    text = f"{DOT_INSTALL_HINT}\n\n{source}"
    bundle: dict[str, Any] = {
        "text/plain": text,
        "text/html": f"<p><b>{html.escape(DOT_INSTALL_HINT)}</b></p><pre>{html.escape(source)}</pre>",
    }
    try:
        from graphviz_anywidget import GraphvizAnyWidget

        widget = GraphvizAnyWidget(dot_source=source)
        shown = widget._repr_mimebundle_()  # (data, metadata) or None without a widget frontend
        data = shown[0] if isinstance(shown, tuple) else shown
        if data and "application/vnd.jupyter.widget-view+json" in data:
            bundle["application/vnd.jupyter.widget-view+json"] = data["application/vnd.jupyter.widget-view+json"]
    except Exception:  # noqa: BLE001 - no widget frontend: the HTML/text above is the display
        pass
    return bundle


def to_dot(info: dict[str, Any], roles: dict[str, str], title: str = "", axes: str | None = None) -> SafeDigraph:
    """Build the drawing from ``inspect()`` output; ``roles`` maps tensor names to input/output/virtual; ``axes``
    names the logical dims of 4-D tensors that are not images (attention: 'BHSD')."""
    intermediate = "fp32"
    ctx = info.get("context", {})
    if "intermediate_data_type" in ctx:
        intermediate = dtype_name(ctx["intermediate_data_type"])
    dot = SafeDigraph(name="cudnn_graph", graph_attr={"rankdir": "TB", "fontname": "Helvetica", "labelloc": "t",
                                                      "label": title, "fontsize": "12"},
                      node_attr={"fontname": "Helvetica", "fontsize": "10"},
                      edge_attr={"fontname": "Helvetica", "fontsize": "9", "color": "#374151"})
    ids = {name: f"t{i}" for i, name in enumerate(info["tensors"])}
    for name, tinfo in info["tensors"].items():
        role = roles.get(name, "virtual" if tinfo.get("is_virtual") else "input")
        rows = tensor_rows(name, tinfo, role, intermediate, axes)
        dot.node(ids[name], label=html_label(*rows), **_ROLE_STYLE[role])
    for j, node in enumerate(info["nodes"]):
        op_id = f"op{j}"
        params = _param_lines([f"{k}={_fmt(v)}" for k, v in node.get("params", {}).items()])
        dot.node(op_id, label=html_label(node["name"], node["type"], small=params), **_OP_STYLE)
        for kw, tname in node.get("inputs", {}).items():
            if tname in ids:
                dot.edge(ids[tname], op_id, label=kw)
        for kw, tname in node.get("outputs", {}).items():
            if tname in ids:
                dot.edge(op_id, ids[tname], label=kw)
    return dot


#: Longest line of an operation's parameters in a drawing: attention's (scale, stats, alignment, bound) on one
#: line made its box about 800 px wide, and a drawing fitted to a narrow pane unreadably small.
_PARAM_LINE = 56


def _param_lines(items: list[str]) -> list[str]:
    """``k=v`` items joined by ', ' into lines of at most :data:`_PARAM_LINE` characters (an item is never cut)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= _PARAM_LINE:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    return lines


def _fmt(v: Any) -> str:
    return "x".join(map(str, v)) if isinstance(v, list) else str(v)
