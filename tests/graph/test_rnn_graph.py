"""RNNs and the graph layer without a GPU: build_graph says there is no frontend graph and what runs instead; the
drawing of the cells, states and cuDNN's weight space; the script's reference code (nn.LSTM with the same weights)."""

from __future__ import annotations

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph import rnn as grnn
from cudnn_lab.graph import drawing, recipe_for
from cudnn_lab.graph.classic_call import ClassicOnlyError
from cudnn_lab.graph.render import SafeDigraph, to_svg
from cudnn_lab.reference import rnn as rrnn
from cudnn_lab.specs.rnn import RnnSpec

SPEC = RnnSpec(cell="lstm", layers=2, bidirectional=True, hidden_size=4, input_size=3, seq_len=5, batch=2,
               dtype="fp32")


def test_build_graph_says_there_is_no_graph_and_names_the_classic_calls() -> None:
    with pytest.raises(cl.UnsupportedGraphError) as info:
        cl.build_graph(SPEC)
    assert isinstance(info.value, ClassicOnlyError)
    msg = str(info.value)
    for part in ("no RNN node", "cudnnRNNForward", "cudnnSetRNNDescriptor_v8", "one plan row per algorithm",
                 SPEC.label()):
        assert part in msg
    assert "heuristic mode" not in msg
    with pytest.raises(ClassicOnlyError):
        recipe_for(SPEC)


def test_drawing_shows_every_cell_both_directions_the_states_and_says_no_graph() -> None:
    dot = drawing(SPEC)
    assert isinstance(dot, SafeDigraph)
    src = dot.source
    assert "no frontend graph: cuDNN's classic RNN API" in src
    for cell in ("L0D0", "L0D1", "L1D0", "L1D1"):
        assert f"\t{cell} [" in src
    assert "pseudo-layer 3" in src and "reversed time" in src and "concat fwd | bwd -> 8" in src
    assert "Hx[3]" in src and "Cy[2]" in src and "c&#x27; = f * c + i * g" in src
    assert "32 matrices" in src  # 2 layers x 2 directions x 8 (W_i..W_o, R_i..R_o)
    assert src.count("<tr>") == 2 + 32  # title, header, one row per matrix
    assert to_svg(dot).startswith("<svg")


def test_weight_table_rows_say_where_each_gate_comes_from() -> None:
    rows = grnn.weight_table(SPEC)
    assert rows[0] == ("0", "0 fwd", "0", "W_i", "4x3", "weight_ih_l0[0:4]", "bias_ih_l0[0:4]")
    assert rows[7] == ("0", "0 fwd", "7", "R_o", "4x4", "weight_hh_l0[12:16]", "bias_hh_l0[12:16]")
    assert rows[16][:5] == ("2", "1 fwd", "0", "W_i", "4x8")  # layer 1 reads both directions' outputs
    gru = grnn.weight_table(RnnSpec(cell="gru", hidden_size=4, input_size=3))
    assert [r[3] for r in gru] == ["W_r", "W_z", "W_n", "R_r", "R_z", "R_n"]


def test_large_stacks_cut_the_table_and_backward_shows_the_gradient_calls() -> None:
    big = RnnSpec(cell="lstm", layers=8, bidirectional=True, direction="bwd")
    src = drawing(big).source
    assert f"... {8 * 2 * 8 - grnn.MAX_TABLE_ROWS} more rows" in src
    assert "cudnnRNNBackwardData_v8" in src and "cudnnRNNBackwardWeights_v8" in src


def test_classic_params_say_what_the_descriptor_gets() -> None:
    p = grnn.classic_params(SPEC.replace(algo="persist_dynamic", math_type="fma"))
    assert p["cellMode"] == "CUDNN_LSTM" and p["dirMode"] == "CUDNN_BIDIRECTIONAL"
    assert p["algo"] == "CUDNN_RNN_ALGO_PERSIST_DYNAMIC" and p["mathType"] == "CUDNN_FMA_MATH"
    assert grnn.algorithms(SPEC) == ("standard", "persist_static", "persist_dynamic", "persist_static_small_h")
    assert grnn.algorithms(SPEC.replace(algo="standard")) == ("standard",)


def test_script_reference_code_reproduces_the_reference() -> None:
    inputs = rrnn.make_inputs(SPEC, seed=3)
    namespace: dict = {"torch": torch}
    body = "\n".join(f"    {line}" for line in grnn.reference_code(SPEC))
    exec(f"def reference(inputs):\n{body}\n", namespace)  # noqa: S102 - the kit's own generated code
    got = namespace["reference"](inputs)
    want = rrnn.reference_outputs(SPEC, inputs)["Y"]
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
