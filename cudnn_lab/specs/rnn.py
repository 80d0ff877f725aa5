"""Recurrent networks: LSTM, GRU and plain RNNs (ReLU or tanh) as cuDNN's classic RNN API runs them.

cuDNN's graph API (frontend 1.32) has no recurrent node; ``cudnnRNNForward`` (with ``cudnnSetRNNDescriptor_v8``,
``cudnnBuildRNNDynamic`` for the persistent-dynamic algorithm) and ``cudnnRNNBackwardData_v8`` /
``cudnnRNNBackwardWeights_v8`` do (``gpu/classic/rnn.py``). Data is sequence-major, as PyTorch's default: x
[seq_len, batch, input_size], y [seq_len, batch, directions * hidden_size], the states h (and the LSTM cell c)
[layers * directions, batch, hidden_size]. The weights are PyTorch's parameters by name (``weight_ih_l0``,
``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``..._reverse`` for the backward direction), gates stacked in
PyTorch's order, which is cuDNN's: LSTM i, f, g, o; GRU r, z, n. The GPU layer copies each gate's matrix and bias to
the place ``cudnnGetRNNWeightParams`` gives for it in cuDNN's weight space. Pure: no torch or cudnn here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, DTYPES, MAX_DIM, Spec, check_bool, check_int

CELLS: tuple[str, ...] = ("lstm", "gru", "rnn_relu", "rnn_tanh")
#: Each cell's gates, in the order PyTorch stacks them in a weight and cuDNN numbers them (linLayerID).
GATES: dict[str, tuple[str, ...]] = {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n"), "rnn_relu": ("h",),
                                     "rnn_tanh": ("h",)}
#: cuDNN's RNN algorithms (``cudnnRNNAlgo_t``). Which apply: every algorithm takes every cell type, fp16 and fp32
#: and both directions; the persistent ones keep the recurrent weights on chip, so cuDNN refuses them (a plan row
#: whose build failed, with cuDNN's status) when the hidden size, the batch or the layer count do not fit the GPU;
#: persist_dynamic compiles its kernel at build time (cudnnBuildRNNDynamic, NVRTC); persist_static_small_h is for
#: hidden sizes up to about 128. bf16 RNNs are whatever the installed cuDNN accepts: the run says.
ALGOS: tuple[str, ...] = ("standard", "persist_static", "persist_dynamic", "persist_static_small_h")
#: ``algo``: one algorithm, or ``all``: one plan row per algorithm (timed like the plans of a graph).
ALGO_CHOICES: tuple[str, ...] = ("all", *ALGOS)
#: ``cudnnMathType_t``: default (cuDNN picks; fp32 may use TF32 tensor cores), tensor_op (tensor cores where the
#: data type has them), tensor_op_allow_conversion (fp32 data converted down for tensor cores), fma (no tensor
#: cores: true fp32).
MATH_TYPES: tuple[str, ...] = ("default", "tensor_op", "tensor_op_allow_conversion", "fma")
#: ``fwd``: inference forward (y, hy, cy). ``bwd``: one training step of the layer: forward in training mode, then
#: backward data (dx, dhx, dcx) and backward weights (a gradient for every weight), all in one timed call.
RNN_DIRECTIONS: tuple[str, ...] = ("fwd", "bwd")
#: The classic calls per direction of the spec (cuDNN's RNN API has no frontend graph).
CLASSIC_CALLS: dict[str, tuple[str, ...]] = {
    "fwd": ("cudnnRNNForward",),
    "bwd": ("cudnnRNNForward", "cudnnRNNBackwardData_v8", "cudnnRNNBackwardWeights_v8"),
}
#: Layers cuDNN stacks; far past what networks use, and the weight list grows with it.
MAX_LAYERS = 64
#: cuDNN's RNN API takes 32-bit sizes.
_INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class WeightSlot:
    """Where one gate's matrix (or bias) of one PyTorch parameter lives in cuDNN's weight space.

    ``param`` rows ``rows[0]:rows[1]`` are the matrix ``cudnnGetRNNWeightParams(pseudo_layer, lin_layer_id)`` returns
    (``bias``: its bias vector); pseudo-layer = layer * directions + direction.
    """

    param: str
    rows: tuple[int, int]
    pseudo_layer: int
    lin_layer_id: int
    gate: str
    recurrent: bool
    bias: bool


@dataclasses.dataclass(frozen=True)
class RnnSpec(Spec):
    """A stack of ``layers`` recurrent layers of ``cell`` with ``hidden_size`` units over a sequence.

    x [seq_len, batch, input_size]; layer l > 0 reads the previous layer's output (directions * hidden_size wide).
    ``bidirectional`` runs a second direction over the reversed sequence and concatenates both outputs. The
    computation is in float32 (cuDNN's mathPrec) for fp16, bf16 and fp32 data; ``math_type`` says whether tensor
    cores may be used. ``algo='all'`` times every algorithm as one plan row each.
    """

    op: ClassVar[str] = "rnn"
    menu_order: ClassVar[int] = 100
    title: ClassVar[str] = "RNN / LSTM / GRU"
    description: ClassVar[str] = ("recurrent networks: RnnSpec (LSTM, GRU, RNN ReLU/tanh; cuDNN's classic "
                                  "cudnnRNNForward, no graph API node)")
    field_order: ClassVar[tuple[str, ...]] = ("cell", "direction", "layers", "hidden_size", "input_size", "seq_len",
                                              "batch", "bidirectional", "algo", "math_type", "dtype")

    cell: str = "lstm"
    layers: int = 1
    hidden_size: int = 256
    input_size: int = 256
    seq_len: int = 32
    batch: int = 16
    bidirectional: bool = False
    dtype: str = "fp16"
    algo: str = "all"
    math_type: str = "default"
    direction: str = "fwd"

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._check_choices("cell")
        self._set("layers", check_int(name, "layers", self.layers, 1, MAX_LAYERS))
        for f in ("hidden_size", "input_size", "seq_len", "batch"):
            self._set(f, check_int(name, f, getattr(self, f), 1, MAX_DIM))
        self._set("bidirectional", check_bool(name, "bidirectional", self.bidirectional))
        self._check_choices("dtype", "algo", "math_type", "direction")
        self.check_elements({n: self._size_fields(n) for n in self.tensor_shapes()})
        widest = max(self.input_size, self.directions * self.hidden_size)
        if self.gates * self.hidden_size * widest > _INT32_MAX:
            field = "hidden_size" if self.hidden_size >= self.input_size else "input_size"
            raise SpecError(field, getattr(self, field), f"makes a weight of {self.gates * self.hidden_size} x "
                            f"{widest} elements, more than cuDNN's RNN API addresses (32-bit sizes)", spec=name)

    def _size_fields(self, tensor: str) -> tuple[str, ...]:
        """The fields a tensor's size comes from (to name in an error): the largest one is blamed."""
        if tensor in ("X", "DX"):
            return ("seq_len", "batch", "input_size")
        if tensor in ("Y", "DY"):
            return ("seq_len", "batch", "hidden_size")
        if tensor.startswith(("weight", "dweight", "bias", "dbias")):
            return ("hidden_size", "input_size", "layers")
        return ("layers", "batch", "hidden_size")

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"cell": CELLS, "direction": RNN_DIRECTIONS, "algo": ALGO_CHOICES, "math_type": MATH_TYPES,
                "dtype": DTYPES}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        return {"layers": (1, MAX_LAYERS), "hidden_size": (1, MAX_DIM), "input_size": (1, MAX_DIM),
                "seq_len": (1, MAX_DIM), "batch": (1, MAX_DIM)}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        cell = values.get("cell", "lstm")
        gates = "/".join(GATES.get(cell, GATES["lstm"])) if isinstance(cell, str) else ""
        return {"algo": "all: one plan row per algorithm", "cell": f"gates {gates}" if gates else "",
                "math_type": "fma: no tensor cores (true fp32)", "direction": "bwd: fwd + bwd data + bwd weights"}

    # --- the problem's tensors ---------------------------------------------------------------------------------

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional else 1

    @property
    def gates(self) -> int:
        return len(GATES[self.cell])

    @property
    def has_cell_state(self) -> bool:
        return self.cell == "lstm"

    def layer_input_size(self, layer: int) -> int:
        """Width of layer ``layer``'s input: input_size for the first, directions * hidden_size above."""
        return self.input_size if layer == 0 else self.directions * self.hidden_size

    def param_names(self) -> tuple[str, ...]:
        """PyTorch's parameter names, in its order: per layer, per direction: weight_ih, weight_hh, bias_ih, bias_hh."""
        out = []
        for layer in range(self.layers):
            for d in range(self.directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                out += [f"weight_ih{sfx}", f"weight_hh{sfx}", f"bias_ih{sfx}", f"bias_hh{sfx}"]
        return tuple(out)

    def param_shapes(self) -> dict[str, tuple[int, ...]]:
        gh = self.gates * self.hidden_size
        shapes: dict[str, tuple[int, ...]] = {}
        for layer in range(self.layers):
            for d in range(self.directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes[f"weight_ih{sfx}"] = (gh, self.layer_input_size(layer))
                shapes[f"weight_hh{sfx}"] = (gh, self.hidden_size)
                shapes[f"bias_ih{sfx}"] = (gh,)
                shapes[f"bias_hh{sfx}"] = (gh,)
        return shapes

    def weight_slots(self) -> tuple[WeightSlot, ...]:
        """Every gate matrix and bias: which PyTorch parameter rows go to which (pseudo-layer, linLayerID).

        cuDNN numbers the input-side (W) matrices 0 .. gates-1 and the recurrent (R) ones gates .. 2*gates-1, each
        with its own bias (``CUDNN_RNN_DOUBLE_BIAS``, PyTorch's bias_ih and bias_hh).
        """
        h, g, out = self.hidden_size, self.gates, []
        for layer in range(self.layers):
            for d in range(self.directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                pseudo = layer * self.directions + d
                for recurrent, (w, b) in enumerate(((f"weight_ih{sfx}", f"bias_ih{sfx}"),
                                                    (f"weight_hh{sfx}", f"bias_hh{sfx}"))):
                    for k, gate in enumerate(GATES[self.cell]):
                        lin = k + g * recurrent
                        rows = (k * h, (k + 1) * h)
                        out.append(WeightSlot(w, rows, pseudo, lin, gate, bool(recurrent), False))
                        out.append(WeightSlot(b, rows, pseudo, lin, gate, bool(recurrent), True))
        return tuple(out)

    def state_names(self) -> tuple[str, ...]:
        return ("Hx", "Cx") if self.has_cell_state else ("Hx",)

    def input_names(self) -> tuple[str, ...]:
        """Every tensor the call reads: X, the initial states, the weights, and (bwd) the output gradients."""
        grads = ("DY", "DHy", "DCy")[: 2 + self.has_cell_state] if self.direction == "bwd" else ()
        return ("X", *self.state_names(), *self.param_names(), *grads)

    def output_names(self) -> tuple[str, ...]:
        """What the call writes, main output first: fwd Y, Hy (Cy); bwd DX, DHx (DCx) and a gradient per weight."""
        if self.direction == "fwd":
            return ("Y", "Hy", "Cy")[: 2 + self.has_cell_state]
        return (*("DX", "DHx", "DCx")[: 2 + self.has_cell_state], *(f"d{p}" for p in self.param_names()))

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        t, b, h = self.seq_len, self.batch, self.hidden_size
        x, y, state = (t, b, self.input_size), (t, b, self.directions * h), (self.layers * self.directions, b, h)
        shapes: dict[str, tuple[int, ...]] = {"X": x}
        for s in self.state_names():
            shapes[s] = state
        shapes.update(self.param_shapes())
        if self.direction == "fwd":
            shapes.update({"Y": y, "Hy": state, **({"Cy": state} if self.has_cell_state else {})})
        else:
            shapes.update({"DY": y, "DHy": state, "DX": x, "DHx": state})
            if self.has_cell_state:
                shapes.update({"DCy": state, "DCx": state})
            shapes.update({f"d{p}": dims for p, dims in self.param_shapes().items()})
        return shapes

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Every tensor is packed row-major (sequence-major data, as cuDNN's SEQ_MAJOR_PACKED layout with equal
        lengths)."""
        out = {}
        for name, dims in self.tensor_shapes().items():
            strides, step = [], 1
            for d in reversed(dims):
                strides.append(step)
                step *= d
            out[name] = tuple(reversed(strides))
        return out

    def forward_flops(self) -> int:
        """The GEMMs of one forward pass: per step, layer and direction 2 * gates * hidden * (input + hidden)."""
        per_step = sum(2 * self.gates * self.hidden_size * (self.layer_input_size(layer) + self.hidden_size)
                       for layer in range(self.layers)) * self.directions
        return self.seq_len * self.batch * per_step

    def flops(self) -> int:
        """Forward GEMMs; bwd (forward, backward data, backward weights): three times as many. Gates not counted."""
        return self.forward_flops() * (3 if self.direction == "bwd" else 1)

    def min_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype] * sum(math.prod(d) for d in self.tensor_shapes().values())

    def classic_calls(self) -> tuple[str, ...]:
        """The RNN API's calls of the spec's direction, in order."""
        return CLASSIC_CALLS.get(str(self.direction), CLASSIC_CALLS["fwd"])

    def label(self) -> str:
        bi = " bidir" if self.bidirectional else ""
        return (f"rnn {self.cell} {self.direction}{bi} {self.dtype} L{self.layers} H{self.hidden_size} "
                f"I{self.input_size} T{self.seq_len} B{self.batch} algo {self.algo} math {self.math_type}")
