"""The Graph view's drawing as one anywidget: dot's SVG with wheel zoom (about the pointer), drag to pan, fit (any
graph fits its box, at any scale), 100%, −/+, a click on a tensor or an operation shows its details (from the graph's
``inspect()``: dims, strides, dtype, virtual, uid; an operation's type, inputs, outputs and params), and an SVG
export button. Content that is not an SVG drawing (an error, the DOT text without ``dot``) is shown as it is.

``value``: the HTML shown (the SVG drawing, or text); ``details``: dot node id ('t0', 'op0') -> what a click shows;
``zoom``: 0 (fit) or a factor of dot's natural size, set from Python or by the browser (wheel, buttons);
``selected_node``: the node id clicked last ('' none).
"""

from __future__ import annotations

import functools
from typing import Any

import anywidget
import traitlets as T

from ..graph.labgraph import viewed_graph

__all__ = ["GraphDrawing", "node_details"]

_ESM = r"""
const MIN = 0.02, MAX = 8;
function render({ model, el }) {
  el.classList.add("cl-graph-widget");
  const bar = document.createElement("div"); bar.className = "cl-zoom-bar cl-gw-bar";
  const mk = (text, cls, tip) => { const b = document.createElement("button"); b.textContent = text;
    b.className = cls; b.title = tip; bar.append(b); return b; };
  const out = mk("−", "cl-zoom-out", "smaller"), inn = mk("+", "cl-zoom-in", "larger");
  const fitB = mk("fit", "cl-zoom-fit", "the whole graph in the box");
  const one = mk("100%", "cl-zoom-100", "dot's natural size");
  const svgB = mk("SVG", "cl-svg-export", "download the drawing as an SVG file");
  const label = document.createElement("span"); label.className = "cl-zoom-label cl-hint";
  const hint = document.createElement("span"); hint.className = "cl-hint cl-gw-hint";
  hint.textContent = "wheel: zoom · drag: pan · click a tensor or operation: details";
  bar.append(label, hint);
  const box = document.createElement("div"); box.className = "cl-graph-scroll cl-gw-box";
  const info = document.createElement("div"); info.className = "cl-gw-details"; info.style.display = "none";
  const other = document.createElement("div"); other.className = "cl-gw-other";
  el.append(bar, box, other);
  box.append(info);
  let svg = null, vp = null, vbW = 1, vbH = 1, ratio = 1, s = 1, tx = 0, ty = 0, lastSent = null, timer = null;

  function apply() {
    if (!vp) return;
    vp.setAttribute("transform", `translate(${tx.toFixed(2)} ${ty.toFixed(2)}) scale(${s.toFixed(5)})`);
    label.textContent = Math.round(s / ratio * 100) + "%";
  }
  function report() {
    clearTimeout(timer);
    timer = setTimeout(() => {
      lastSent = +(s / ratio).toFixed(4); model.set("zoom", lastSent); model.save_changes();
    }, 150);
  }
  function fit() {
    const w = box.clientWidth || 800, h = box.clientHeight || 600;
    s = Math.min(w / vbW, h / vbH) * 0.97;
    tx = (w - vbW * s) / 2; ty = (h - vbH * s) / 2; apply();
  }
  function setZoom(z, cx, cy) {
    const w = box.clientWidth || 800, h = box.clientHeight || 600;
    if (cx === undefined) { cx = w / 2; cy = h / 2; }
    const ns = Math.min(MAX, Math.max(MIN, z * ratio));
    tx = cx - (cx - tx) * ns / s; ty = cy - (cy - ty) * ns / s; s = ns; apply();
  }
  function showZoom() {
    const z = model.get("zoom");
    if (z === lastSent) return;
    if (!z) fit(); else setZoom(z);
  }
  function draw() {
    const html = model.get("value") || "";
    info.style.display = "none";
    const isSvg = /<svg\b/.test(html) && !/cl-graph-error|cl-status-error/.test(html);
    box.style.display = bar.style.display = isSvg ? "" : "none";
    other.innerHTML = isSvg ? "" : html;
    for (const old of box.querySelectorAll("svg")) old.remove();
    svg = vp = null;
    if (!isSvg) return;
    const tmp = document.createElement("div"); tmp.innerHTML = html;
    svg = tmp.querySelector("svg");
    const vb = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
    const pt = v => {
      const m = /^([0-9.]+)(pt|px)?$/.exec(v || ""); return m ? +m[1] * (m[2] === "px" ? 1 : 4 / 3) : null;
    };
    if (vb.length === 4 && vb[2] > 0) { vbW = vb[2]; vbH = vb[3]; }
    else { vbW = pt(svg.getAttribute("width")) || 600; vbH = pt(svg.getAttribute("height")) || 400; }
    ratio = (pt(svg.getAttribute("width")) || vbW) / vbW;
    svg.removeAttribute("viewBox"); svg.setAttribute("width", "100%"); svg.setAttribute("height", "100%");
    svg.style.display = "block";
    vp = document.createElementNS("http://www.w3.org/2000/svg", "g"); vp.setAttribute("class", "cl-gw-viewport");
    while (svg.firstChild) vp.append(svg.firstChild);
    svg.append(vp); box.prepend(svg);
    const z = model.get("zoom");
    if (!z) fit(); else { s = z * ratio; tx = 8; ty = 8; apply(); }
  }
  function details(id) {
    const d = (model.get("details") || {})[id];
    if (!d) { info.style.display = "none"; return; }
    const esc = t => String(t).replace(/[&<>]/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]);
    info.innerHTML = `<div class="cl-gw-close" title="close">×</div><div class="cl-gw-kind">${esc(d.kind)}</div>`
      + `<div class="cl-gw-name">${esc(d.name)}</div><table>`
      + d.rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join("") + "</table>";
    info.style.display = "";
    info.querySelector(".cl-gw-close").addEventListener("click", (e) => {
      e.stopPropagation(); info.style.display = "none";
    });
  }
  box.addEventListener("wheel", (e) => {
    if (!vp) return;
    e.preventDefault();
    const r = box.getBoundingClientRect();
    const f = Math.exp(-(e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY) * 0.0015);
    setZoom(s / ratio * f, e.clientX - r.left, e.clientY - r.top); report();
  }, { passive: false });
  let drag = null;
  box.addEventListener("pointerdown", (e) => {
    if (!vp || e.button !== 0 || info.contains(e.target)) return;
    drag = { x: e.clientX, y: e.clientY, tx, ty, moved: false, target: e.target };
    box.setPointerCapture && box.setPointerCapture(e.pointerId);
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; box.classList.add("cl-gw-dragging"); }
    if (drag.moved) { tx = drag.tx + dx; ty = drag.ty + dy; apply(); }
  });
  box.addEventListener("pointerup", (e) => {
    if (!drag) return;
    const d = drag; drag = null; box.classList.remove("cl-gw-dragging");
    if (d.moved) return;
    const g = d.target.closest && d.target.closest("g.node");
    if (!g) { info.style.display = "none"; return; }
    const id = (g.querySelector("title") || {}).textContent || "";
    details(id); model.set("selected_node", id); model.save_changes();
  });
  out.addEventListener("click", () => { setZoom(s / ratio / 1.25); report(); });
  inn.addEventListener("click", () => { setZoom(s / ratio * 1.25); report(); });
  one.addEventListener("click", () => { setZoom(1); report(); });
  fitB.addEventListener("click", () => { fit(); lastSent = 0; model.set("zoom", 0); model.save_changes(); });
  svgB.addEventListener("click", () => {
    const src = model.get("value"), name = model.get("file_name") || "graph.svg";
    const text = src.slice(src.indexOf("<svg"), src.lastIndexOf("</svg>") + 6);
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" })); a.download = name;
    document.body.append(a); a.click(); a.remove();
  });
  model.on("change:value", draw);
  model.on("change:zoom", showZoom);
  const ro = new ResizeObserver(() => { if (vp && !model.get("zoom")) fit(); });
  ro.observe(box);
  draw();
  return () => ro.disconnect();
}
export default { render };
"""

_CSS = r"""
.cl-graph-widget { width: 100%; box-sizing: border-box; }
.cl-gw-bar { display: flex; gap: 4px; align-items: center; margin: 2px 0 4px; flex-wrap: wrap; }
.cl-gw-bar button { min-width: 32px; padding: 1px 8px; cursor: pointer; }
.cl-gw-bar .cl-zoom-label { min-width: 44px; text-align: right; margin: 0 6px; }
.cl-gw-bar .cl-hint { color: #6b7280; font-size: 11px; }
.cl-gw-box { position: relative; height: 70vh; min-height: 360px; max-height: 900px; width: 100%;
             max-width: 100%; overflow: hidden; border: 1px solid #e5e7eb; cursor: grab; background: white;
             touch-action: none; box-sizing: border-box; }
.cl-gw-box.cl-gw-dragging { cursor: grabbing; }
.cl-gw-box g.node { cursor: pointer; }
.cl-gw-details { position: absolute; top: 8px; right: 8px; max-width: 46%; max-height: calc(100% - 16px);
                 overflow: auto; background: rgba(255,255,255,0.97); border: 1px solid #d1d5db; border-radius: 6px;
                 padding: 6px 10px; font-size: 12px; box-shadow: 0 2px 8px rgba(0,0,0,0.12); cursor: default; }
.cl-gw-details table { border-collapse: collapse; }
.cl-gw-details th { text-align: left; padding: 1px 8px 1px 0; color: #4b5563; font-weight: 600;
                    vertical-align: top; white-space: nowrap; }
.cl-gw-details td { padding: 1px 0; font-family: monospace; word-break: break-all; }
.cl-gw-kind { color: #6b7280; font-size: 10px; text-transform: uppercase; }
.cl-gw-name { font-weight: 700; margin-bottom: 4px; }
.cl-gw-close { float: right; cursor: pointer; font-size: 16px; line-height: 14px; color: #6b7280; }
"""


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


@functools.lru_cache(maxsize=128)
def node_details(spec: Any) -> dict[str, dict[str, Any]]:
    """What a click on each node of ``spec``'s drawing shows, by dot node id ('t0' the first tensor, 'op0' the
    first operation: :func:`cudnn_lab.graph.render.to_dot`'s ids): ``kind`` ('tensor' or 'operation'), ``name`` and
    ``rows`` ([label, text] pairs) from the graph's ``inspect()``. Empty where the family has no frontend graph."""
    try:
        graph = viewed_graph(spec)
        info = graph.inspect()
        roles = graph.roles
    except Exception:  # noqa: BLE001 - no frontend graph (pooling) or no cudnn frontend: no details, the drawing shows
        return {}
    out: dict[str, dict[str, Any]] = {}
    for i, (name, t) in enumerate(info.get("tensors", {}).items()):
        role = roles.get(name, "virtual" if t.get("is_virtual") else "input")
        rows = [["role", role], ["dims", _text(t.get("dim", []))], ["strides", _text(t.get("stride", []))],
                ["dtype", str(t.get("dtype", "")).replace("data_type.", "")],
                ["virtual", "yes" if t.get("is_virtual") else "no"]]
        rows += [[k, _text(v)] for k, v in t.items() if k not in ("dim", "stride", "dtype", "is_virtual")]
        out[f"t{i}"] = {"kind": "tensor", "name": str(name), "rows": rows}
    for j, node in enumerate(info.get("nodes", [])):
        rows = [["type", str(node.get("type", ""))]]
        rows += [[f"in: {k}", str(v)] for k, v in node.get("inputs", {}).items()]
        rows += [[f"out: {k}", str(v)] for k, v in node.get("outputs", {}).items()]
        rows += [[k, _text(v)] for k, v in node.get("params", {}).items()]
        out[f"op{j}"] = {"kind": "operation", "name": str(node.get("name", "")), "rows": rows}
    return out


class GraphDrawing(anywidget.AnyWidget):
    """The drawing shown in the Graph view (see the module's text)."""

    _esm = _ESM
    _css = _CSS
    value = T.Unicode("").tag(sync=True)
    details = T.Dict().tag(sync=True)
    zoom = T.Float(0.0).tag(sync=True)
    selected_node = T.Unicode("").tag(sync=True)
    file_name = T.Unicode("graph.svg").tag(sync=True)

    def node(self, node_id: str) -> dict[str, Any] | None:
        """What a click on node ``node_id`` shows (None: nothing)."""
        return self.details.get(node_id)
