"""The RNN reference on the CPU: the cell-by-cell float64 computation reproduces torch.nn.LSTM, GRU and RNN with the
same weights (forward and gradients); inputs, poisoned outputs, PyTorch's eager op, and the checks on what it gets."""

from __future__ import annotations

import math

import pytest
import torch

from cudnn_lab.errors import SpecError
from cudnn_lab.reference import rnn as R
from cudnn_lab.specs.rnn import CELLS, RnnSpec

SMALL = dict(hidden_size=6, input_size=4, seq_len=5, batch=3, dtype="fp32")


def _module_outputs(spec: RnnSpec, inputs: dict) -> tuple:
    """torch.nn's module in float64 with the spec's weights: (y, hy, cy or None)."""
    m = R.module(spec, {k: v.double() for k, v in inputs.items()})
    states = tuple(inputs[s].double() for s in spec.state_names())
    y, hn = m(inputs["X"].double(), states if spec.has_cell_state else states[0])
    return (y, hn[0], hn[1]) if spec.has_cell_state else (y, hn, None)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, False), (3, True)])
def test_reference_reproduces_torch_nn_modules_with_the_same_weights(cell: str, layers: int,
                                                                      bidirectional: bool) -> None:
    spec = RnnSpec(cell=cell, layers=layers, bidirectional=bidirectional, **SMALL)
    inputs = R.make_inputs(spec, seed=7)
    got = R.reference_outputs(spec, inputs)
    y, hy, cy = _module_outputs(spec, inputs)
    assert list(got) == list(spec.output_names())
    assert all(v.dtype == torch.float64 for v in got.values())
    torch.testing.assert_close(got["Y"], y, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got["Hy"], hy, rtol=1e-12, atol=1e-12)
    if cy is not None:
        torch.testing.assert_close(got["Cy"], cy, rtol=1e-12, atol=1e-12)
    assert got["Y"].abs().max() > 0.05  # not a degenerate problem


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_backward_reference_matches_the_modules_autograd(cell: str) -> None:
    spec = RnnSpec(cell=cell, layers=2, bidirectional=True, direction="bwd", **SMALL)
    inputs = R.make_inputs(spec, seed=1)
    got = R.reference_outputs(spec, inputs)
    m = R.module(spec, {k: v.double() for k, v in inputs.items()})
    x = inputs["X"].double().requires_grad_(True)
    states = [inputs[s].double().requires_grad_(True) for s in spec.state_names()]
    y, hn = m(x, tuple(states) if spec.has_cell_state else states[0])
    outs = [y, *(hn if spec.has_cell_state else (hn,))]
    grads = [inputs[g].double() for g in ("DY", "DHy", "DCy")[: len(outs)]]
    torch.autograd.backward(outs, grads)
    torch.testing.assert_close(got["DX"], x.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(got["DHx"], states[0].grad, rtol=1e-10, atol=1e-12)
    for name, p in m.named_parameters():
        torch.testing.assert_close(got[f"d{name}"], p.grad, rtol=1e-10, atol=1e-12)


def test_inputs_are_seeded_shaped_and_pytorch_initialized() -> None:
    spec = RnnSpec(cell="lstm", layers=2, **{**SMALL, "dtype": "bf16"})
    a, b = R.make_inputs(spec, seed=0), R.make_inputs(spec, seed=0)
    assert list(a) == list(spec.input_names())
    assert all(torch.equal(a[n], b[n]) for n in a) and not torch.equal(a["X"], R.make_inputs(spec, seed=1)["X"])
    k = 1 / math.sqrt(spec.hidden_size)
    assert a["weight_hh_l1"].abs().max() <= k and a["weight_hh_l1"].dtype == torch.bfloat16
    assert all(tuple(a[n].shape) == spec.tensor_shapes()[n] and a[n].is_contiguous() for n in a)
    outs = R.make_outputs(spec)
    assert list(outs) == ["Y", "Hy", "Cy"] and all(torch.isnan(t).all() for t in outs.values())


def test_torch_op_runs_pytorchs_module_forward_and_backward() -> None:
    spec = RnnSpec(cell="gru", **SMALL)
    inputs = R.make_inputs(spec)
    torch.testing.assert_close(R.torch_op(spec, inputs)().double(), R.reference_outputs(spec, inputs)["Y"],
                               rtol=1e-5, atol=1e-6)
    bwd = spec.replace(direction="bwd")
    inputs = R.make_inputs(bwd)
    torch.testing.assert_close(R.torch_op(bwd, inputs)().double(), R.reference_outputs(bwd, inputs)["DX"],
                               rtol=1e-5, atol=1e-6)


def test_missing_or_misshapen_inputs_and_cpu_limits_are_refused() -> None:
    spec = RnnSpec(cell="lstm", **SMALL)
    inputs = R.make_inputs(spec)
    with pytest.raises(SpecError, match="Cx"):
        R.reference_outputs(spec, {k: v for k, v in inputs.items() if k != "Cx"})
    with pytest.raises(SpecError, match="weight_ih_l0"):
        R.reference_outputs(spec, {**inputs, "weight_ih_l0": inputs["weight_ih_l0"][:-1]})
    with pytest.raises(SpecError) as info:
        R.reference_outputs(spec, inputs, cpu_flop_limit=10)
    assert info.value.field == "batch" and "CPU limit" in str(info.value)
    with pytest.raises(SpecError, match="RnnSpec"):
        R.reference_outputs(object(), inputs)  # type: ignore[arg-type]
