"""The PyTorch side of recurrent networks (:class:`~cudnn_lab.specs.RnnSpec`): inputs and weights by PyTorch's
parameter names, NaN-poisoned outputs, a float64 reference written out cell by cell from cuDNN's equations (checked
against ``torch.nn.LSTM``/``GRU``/``RNN`` by the tests), its gradients by autograd, and PyTorch's own module for the
baseline.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.rnn import RnnSpec
from .common import CPU_FLOP_LIMIT, checked_device, expect, poisoned, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "forward", "module"]

#: PyTorch's module and nonlinearity for each cell.
_MODULES = {"lstm": ("LSTM", None), "gru": ("GRU", None), "rnn_relu": ("RNN", "relu"), "rnn_tanh": ("RNN", "tanh")}


def _check_spec(spec: object) -> RnnSpec:
    return expect(spec, RnnSpec, "RNN")


def input_names(spec: RnnSpec) -> tuple[str, ...]:
    return _check_spec(spec).input_names()


def _range(spec: RnnSpec, name: str) -> tuple[float, float]:
    """Weights as PyTorch initializes them (uniform within 1/sqrt(hidden)); data in [-1, 1]; states in [-0.5, 0.5]."""
    if name.startswith(("weight", "bias")):
        k = 1.0 / math.sqrt(spec.hidden_size)
        return -k, k
    if name in ("Hx", "Cx"):
        return -0.5, 0.5
    return -1.0, 1.0


def make_inputs(spec: RnnSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Every input (x, the initial states, each weight by PyTorch's name, and for bwd the output gradients) in the
    spec's dtype, packed row-major, from a CPU generator seeded by ``seed`` and the tensor's name."""
    import torch

    spec = _check_spec(spec)
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    dev = torch.device(device)
    return {n: uniform(n, shapes[n], strides[n], spec.dtype, seed, *_range(spec, n), device=dev).to(dev)
            for n in spec.input_names()}


def make_outputs(spec: RnnSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Every output (main first), NaN-filled so any element cuDNN never writes shows up."""
    spec = _check_spec(spec)
    return poisoned(spec, spec.output_names(), device)


def _cell(spec: RnnSpec, gx: torch.Tensor, h: torch.Tensor, c: torch.Tensor | None, r: torch.Tensor,
          b_r: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One time step of one layer and direction: ``gx`` = W x + b_W (all gates), h and c the previous states."""
    import torch

    gh = h @ r.T + b_r
    if spec.cell == "lstm":
        i, f, g, o = (gx + gh).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c
    if spec.cell == "gru":
        xr, xz, xn = gx.chunk(3, dim=-1)
        hr, hz, hn = gh.chunk(3, dim=-1)
        rg, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
        n = torch.tanh(xn + rg * hn)
        return (1 - z) * n + z * h, None
    act = torch.relu if spec.cell == "rnn_relu" else torch.tanh
    return act(gx + gh), None


def forward(spec: RnnSpec, t: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(y, hy, cy) of the whole stack from tensors ``t`` (by the spec's names), in their own dtype: cuDNN's cell
    equations, layer by layer; the backward direction reads the sequence reversed and its outputs are concatenated
    after the forward one's."""
    import torch

    layer_in = t["X"]
    hys, cys = [], []
    for layer in range(spec.layers):
        outs = []
        for d in range(spec.directions):
            idx, sfx = layer * spec.directions + d, f"_l{layer}" + ("_reverse" if d else "")
            h = t["Hx"][idx]
            c = t["Cx"][idx] if spec.has_cell_state else None
            gx = layer_in @ t[f"weight_ih{sfx}"].T + t[f"bias_ih{sfx}"]  # every step's input GEMM at once
            steps: list[torch.Tensor | None] = [None] * spec.seq_len
            order = range(spec.seq_len - 1, -1, -1) if d else range(spec.seq_len)
            for s in order:
                h, c = _cell(spec, gx[s], h, c, t[f"weight_hh{sfx}"], t[f"bias_hh{sfx}"])
                steps[s] = h
            outs.append(torch.stack(steps))
            hys.append(h)
            if c is not None:
                cys.append(c)
        layer_in = torch.cat(outs, dim=-1)
    return layer_in, torch.stack(hys), (torch.stack(cys) if cys else None)


def reference_outputs(spec: RnnSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Every output in float64 on the inputs' device: fwd Y, Hy (Cy); bwd the gradients of
    sum(Y * DY) + sum(Hy * DHy) (+ sum(Cy * DCy)) with respect to X, Hx (Cx) and every weight."""
    import torch

    spec = _check_spec(spec)
    checked_device(spec, inputs, cpu_flop_limit, field="batch")
    names = ("X", *spec.state_names(), *spec.param_names())
    if spec.direction == "fwd":
        with torch.no_grad():
            y, hy, cy = forward(spec, {n: inputs[n].double() for n in names})
        return dict(zip(spec.output_names(), (y, hy, cy)))
    leaves = {n: inputs[n].double().requires_grad_(True) for n in names}
    with torch.enable_grad():
        y, hy, cy = forward(spec, leaves)
        loss = (y * inputs["DY"].double()).sum() + (hy * inputs["DHy"].double()).sum()
        if cy is not None:
            loss = loss + (cy * inputs["DCy"].double()).sum()
        grads = torch.autograd.grad(loss, [leaves[n] for n in names])
    by_input = dict(zip(names, grads))
    out = {f"D{n}": by_input[n] for n in ("X", *spec.state_names())}
    out.update({f"d{p}": by_input[p] for p in spec.param_names()})
    return {n: out[n].detach() for n in spec.output_names()}


def module(spec: RnnSpec, inputs: Mapping[str, torch.Tensor]) -> torch.nn.Module:
    """PyTorch's own ``nn.LSTM``/``GRU``/``RNN`` with the spec's weights, in the inputs' dtype and device."""
    import torch

    spec = _check_spec(spec)
    name, nonlinearity = _MODULES[spec.cell]
    kwargs = {"nonlinearity": nonlinearity} if nonlinearity else {}
    x = inputs["X"]
    m = getattr(torch.nn, name)(spec.input_size, spec.hidden_size, spec.layers, bidirectional=spec.bidirectional,
                                **kwargs).to(device=x.device, dtype=x.dtype)
    with torch.no_grad():
        for pname, p in m.named_parameters():
            p.copy_(inputs[pname])
    if x.device.type == "cuda":
        m.flatten_parameters()
    return m


def torch_op(spec: RnnSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """PyTorch eager with the same weights, native dtype: the module's forward (no grad), or for bwd a forward and
    ``autograd.backward`` with the same output gradients (parameter gradients accumulate, as in training)."""
    import torch

    spec = _check_spec(spec)
    checked_device(spec, inputs, cpu_flop_limit, field="batch")
    m = module(spec, inputs)
    state = tuple(inputs[s] for s in spec.state_names())
    hx: Any = state if spec.has_cell_state else state[0]
    if spec.direction == "fwd":
        def run() -> torch.Tensor:
            with torch.no_grad():
                return m(inputs["X"], hx)[0]
        return run
    x = inputs["X"].detach().clone().requires_grad_(True)
    grads = [inputs[g] for g in ("DY", "DHy", "DCy")[: 2 + spec.has_cell_state]]

    def step() -> torch.Tensor:
        y, hn = m(x, hx)
        outs = [y, *(hn if spec.has_cell_state else (hn,))]
        torch.autograd.backward(outs, grads)
        return x.grad
    return step


REFERENCES.add(RnnSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
