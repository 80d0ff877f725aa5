"""Recurrent networks and the cuDNN graph API: no graph node, so ``build_graph`` raises
:class:`~.classic_call.ClassicOnlyError`; the drawing shows what cuDNN's classic RNN API runs instead: the stack of
cells (one per layer and direction, with its gate equations), the states, and the weight space as
``cudnnGetRNNWeightParams`` lays it out (pseudo-layer, linLayerID, gate, matrix and bias shapes, and the PyTorch
parameter rows each comes from). Pure: no cudnn or torch import here.
"""

from __future__ import annotations

from typing import Any

from ..specs.rnn import GATES, RnnSpec
from .classic_call import ClassicOnlyError
from .families import DRAWINGS, RECIPES, REFERENCE_CODE
from .recipe import Recipe
from .render import SafeDigraph, html_label, html_text

#: ``cudnnRNNMode_t``, ``cudnnRNNAlgo_t`` and ``cudnnMathType_t`` (cuDNN 9 ``cudnn_adv.h`` / ``cudnn_graph.h``).
CLASSIC_CELL_MODES: dict[str, tuple[str, int]] = {
    "rnn_relu": ("CUDNN_RNN_RELU", 0), "rnn_tanh": ("CUDNN_RNN_TANH", 1), "lstm": ("CUDNN_LSTM", 2),
    "gru": ("CUDNN_GRU", 3)}
CLASSIC_ALGOS: dict[str, tuple[str, int]] = {
    "standard": ("CUDNN_RNN_ALGO_STANDARD", 0), "persist_static": ("CUDNN_RNN_ALGO_PERSIST_STATIC", 1),
    "persist_dynamic": ("CUDNN_RNN_ALGO_PERSIST_DYNAMIC", 2),
    "persist_static_small_h": ("CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H", 3)}
CLASSIC_MATH_TYPES: dict[str, tuple[str, int]] = {
    "default": ("CUDNN_DEFAULT_MATH", 0), "tensor_op": ("CUDNN_TENSOR_OP_MATH", 1),
    "tensor_op_allow_conversion": ("CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION", 2), "fma": ("CUDNN_FMA_MATH", 3)}

#: Each cell's equations as cuDNN documents them (W: input matrices, R: recurrent, b: biases; x the layer's input).
CELL_EQUATIONS: dict[str, tuple[str, ...]] = {
    "lstm": ("i = σ(W_i x + R_i h + b_Wi + b_Ri)", "f = σ(W_f x + R_f h + b_Wf + b_Rf)",
             "g = tanh(W_g x + R_g h + b_Wg + b_Rg)", "o = σ(W_o x + R_o h + b_Wo + b_Ro)",
             "c' = f * c + i * g", "h' = o * tanh(c')"),
    "gru": ("r = σ(W_r x + R_r h + b_Wr + b_Rr)", "z = σ(W_z x + R_z h + b_Wz + b_Rz)",
            "n = tanh(W_n x + b_Wn + r * (R_n h + b_Rn))", "h' = (1 - z) * n + z * h"),
    "rnn_relu": ("h' = ReLU(W x + R h + b_W + b_R)",),
    "rnn_tanh": ("h' = tanh(W x + R h + b_W + b_R)",),
}

NO_GRAPH_SUMMARY = (
    "Recurrent networks are not in the cuDNN graph API (frontend 1.32 has no RNN node). cl.run() runs this RnnSpec "
    "through cuDNN's classic RNN API instead (cudnnSetRNNDescriptor_v8, cudnnRNNForward; for direction='bwd' also "
    "cudnnRNNBackwardData_v8 and cudnnRNNBackwardWeights_v8), one plan row per algorithm; "
    "cudnn_lab.graph.drawing(spec) draws the cells and the weight layout.")
#: Weight-space rows drawn before the table says how many more there are.
MAX_TABLE_ROWS = 32

_TENSOR = {"shape": "box", "style": "rounded,filled", "fillcolor": "#dbeafe", "color": "#1d4ed8"}
_OUTPUT = {"shape": "box", "style": "rounded,filled,bold", "fillcolor": "#dcfce7", "color": "#15803d"}
_CELL = {"shape": "box", "style": "filled", "fillcolor": "#fde68a", "color": "#b45309"}
_NOTE = {"shape": "plaintext"}


@RECIPES.register(RnnSpec)
def recipe(spec: RnnSpec) -> Recipe:
    """No recipe: the graph API has no recurrent node."""
    raise ClassicOnlyError(spec, NO_GRAPH_SUMMARY)


def classic_params(spec: RnnSpec) -> dict[str, Any]:
    """``cudnnSetRNNDescriptor_v8``'s arguments by name, as the kit passes them (algo: each in turn for 'all')."""
    return {"cellMode": CLASSIC_CELL_MODES[spec.cell][0], "biasMode": "CUDNN_RNN_DOUBLE_BIAS",
            "dirMode": "CUDNN_BIDIRECTIONAL" if spec.bidirectional else "CUDNN_UNIDIRECTIONAL",
            "inputMode": "CUDNN_LINEAR_INPUT", "mathPrec": "CUDNN_DATA_FLOAT",
            "mathType": CLASSIC_MATH_TYPES[spec.math_type][0], "inputSize": spec.input_size,
            "hiddenSize": spec.hidden_size, "projSize": spec.hidden_size, "numLayers": spec.layers,
            "algo": "each of " + ", ".join(CLASSIC_ALGOS[a][0] for a in algorithms(spec))
            if spec.algo == "all" else CLASSIC_ALGOS[spec.algo][0],
            "dataLayout": "CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED"}


def algorithms(spec: RnnSpec) -> tuple[str, ...]:
    """The algorithms a run times, one plan row each."""
    return tuple(CLASSIC_ALGOS) if spec.algo == "all" else (spec.algo,)


def weight_table(spec: RnnSpec) -> list[tuple[str, ...]]:
    """The weight space, one row per (pseudo-layer, linLayerID): where each gate's matrix and bias come from."""
    rows: list[tuple[str, ...]] = []
    by_key: dict[tuple[int, int], dict[str, Any]] = {}
    shapes = spec.param_shapes()
    for slot in spec.weight_slots():
        entry = by_key.setdefault((slot.pseudo_layer, slot.lin_layer_id), {"slot": slot})
        entry["bias" if slot.bias else "matrix"] = slot
    for (pseudo, lin), entry in sorted(by_key.items()):
        m, b = entry["matrix"], entry["bias"]
        layer, d = divmod(pseudo, spec.directions)
        cols = shapes[m.param][1]
        matrix = f"{'R' if m.recurrent else 'W'}_{m.gate}"
        rows.append((str(pseudo), f"{layer} {'bwd' if d else 'fwd'}", str(lin), matrix, f"{spec.hidden_size}x{cols}",
                     f"{m.param}[{m.rows[0]}:{m.rows[1]}]", f"{b.param}[{b.rows[0]}:{b.rows[1]}]"))
    return rows


def _table_label(spec: RnnSpec) -> str:
    head = ("pseudo-layer", "layer", "linLayerID", "matrix", "dims", "PyTorch rows", "bias rows")
    rows = weight_table(spec)
    cells = "".join(f"<td><b>{html_text(h)}</b></td>" for h in head)
    body = [f"<tr>{cells}</tr>"]
    for row in rows[:MAX_TABLE_ROWS]:
        body.append("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>")
    if len(rows) > MAX_TABLE_ROWS:
        body.append(f'<tr><td colspan="{len(head)}">... {len(rows) - MAX_TABLE_ROWS} more rows</td></tr>')
    title = (f"cuDNN weight space (cudnnGetRNNWeightParams): {len(rows)} matrices, each with its bias "
             "(CUDNN_RNN_DOUBLE_BIAS)")
    return (f'<<table border="0" cellborder="1" cellspacing="0" cellpadding="3"><tr><td colspan="{len(head)}">'
            f"<b>{html_text(title)}</b></td></tr>{''.join(body)}</table>>")


def _tensor_label(name: str, dims: tuple[int, ...], dtype: str, role: str) -> str:
    return html_label(name, f"dims {list(dims)}", f"{dtype} · {role}")


@DRAWINGS.register(RnnSpec)
def to_dot(spec: RnnSpec) -> SafeDigraph:
    """The cells of every layer and direction wired from x to y, the states, and the weight-space table."""
    calls = ", ".join(spec.classic_calls())
    title = (f"{spec.label()}\nno frontend graph: cuDNN's classic RNN API ({calls}); data sequence-major "
             f"[seq_len, batch, features]")
    dot = SafeDigraph(name="cudnn_rnn", graph_attr={"rankdir": "TB", "fontname": "Helvetica", "labelloc": "t",
                                                    "label": title, "fontsize": "12"},
                      node_attr={"fontname": "Helvetica", "fontsize": "10"},
                      edge_attr={"fontname": "Helvetica", "fontsize": "9", "color": "#374151"})
    shapes = spec.tensor_shapes()
    state = shapes["Hx"]
    dot.node("X", _tensor_label("X", shapes["X"], spec.dtype, "input"), **_TENSOR)
    for s in spec.state_names():
        dot.node(s, _tensor_label(s, state, spec.dtype, "input (initial state)"), **_TENSOR)
    out_names = ("Y", "Hy", "Cy")[: 2 + spec.has_cell_state]
    role = "output" if spec.direction == "fwd" else "computed (its gradient is an input)"
    y_dims = (spec.seq_len, spec.batch, spec.directions * spec.hidden_size)
    for name in out_names:
        dot.node(name, _tensor_label(name, y_dims if name == "Y" else state, spec.dtype, role), **_OUTPUT)
    gates = ", ".join(GATES[spec.cell])
    source = "X"
    for layer in range(spec.layers):
        cells = []
        for d in range(spec.directions):
            cell = f"L{layer}D{d}"
            cells.append(cell)
            heading = (f"{spec.cell.upper()} layer {layer}, {'backward (reversed time)' if d else 'forward'}: "
                       f"pseudo-layer {layer * spec.directions + d}")
            dot.node(cell, html_label(heading, f"gates {gates}; input {spec.layer_input_size(layer)}, "
                                      f"hidden {spec.hidden_size}", small=CELL_EQUATIONS[spec.cell]), **_CELL)
            dot.edge(source, cell, label="x_t")
            idx = layer * spec.directions + d
            for s, out in zip(spec.state_names(), ("Hy", "Cy")):
                dot.edge(s, cell, label=f"{s}[{idx}]", style="dashed")
                dot.edge(cell, out, label=f"{out}[{idx}]", style="dashed")
        if spec.directions == 2:
            join = f"cat{layer}"
            dot.node(join, f"concat fwd | bwd -> {2 * spec.hidden_size}", **_NOTE)
            for cell in cells:
                dot.edge(cell, join, label="h_t")
            source = join
        else:
            source = cells[0]
    dot.edge(source, "Y", label="h_t of the last layer")
    if spec.direction == "bwd":
        grads = ", ".join(spec.output_names()[: 2 + spec.has_cell_state])
        dot.node("bwd", html_label("backward", f"cudnnRNNBackwardData_v8 -> {grads}",
                                   "cudnnRNNBackwardWeights_v8 -> a gradient per weight (dweight_*, dbias_*)"), **_CELL)
        dot.edge("Y", "bwd", label="DY, DHy" + (", DCy" if spec.has_cell_state else ""))
    dot.node("weights", _table_label(spec), **_NOTE)
    return dot


@REFERENCE_CODE.register(RnnSpec)
def reference_code(spec: RnnSpec) -> list[str]:
    """Y in float64 from PyTorch's module with the spec's weights (PyTorch's parameter names and gate order)."""
    module = {"lstm": "LSTM", "gru": "GRU", "rnn_relu": "RNN", "rnn_tanh": "RNN"}[spec.cell]
    extra = {"rnn_relu": ", nonlinearity='relu'", "rnn_tanh": ", nonlinearity='tanh'"}.get(spec.cell, "")
    state = "(inputs['Hx'].double(), inputs['Cx'].double())" if spec.has_cell_state else "inputs['Hx'].double()"
    return [f"m = torch.nn.{module}({spec.input_size}, {spec.hidden_size}, {spec.layers}, "
            f"bidirectional={spec.bidirectional}{extra}).double().to(inputs['X'].device)",
            "with torch.no_grad():",
            "    for name, p in m.named_parameters():",
            "        p.copy_(inputs[name].double())",
            f"    y, _ = m(inputs['X'].double(), {state})",
            "return y"]
