"""RnnSpec's plan source: cuDNN's classic RNN API through ctypes, one plan row per algorithm.

Per algorithm (``build_plan_at_index``): a dropout descriptor with no dropout (as PyTorch makes it), the RNN
descriptor (``cudnnSetRNNDescriptor_v8``: cell, double bias, direction, linear input, data type, float32 math
precision, math type, sizes), ``cudnnBuildRNNDynamic`` for the persistent-dynamic algorithm, sequence-major packed
data descriptors (all sequences full length), 3-D state descriptors, the weight space (``cudnnGetRNNWeightSpaceSize``)
and the work and reserve sizes (``cudnnGetRNNTempSpaceSizes``). Every gate's matrix and bias is then located with
``cudnnGetRNNWeightParams`` (pseudo-layer, linLayerID; its shape checked against the PyTorch parameter rows it is
copied from). A failure at any step is that algorithm's build failure, with cuDNN's status in the row.

Executing copies the PyTorch weights into the weight space once per set of weight tensors (never while timing), then
calls ``cudnnRNNForward`` (inference); for direction 'bwd' one call is a training step: ``cudnnRNNForward``
(training, filling the reserve space), ``cudnnRNNBackwardData_v8``, a zeroed weight-gradient space and
``cudnnRNNBackwardWeights_v8`` (which adds into it), and the gradient copied out per PyTorch parameter (those copies
and the zeroing are part of the timed call).
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from ctypes import c_size_t
from typing import Any

from ...graph import rnn as rnn_graph
from ...graph.classic_call import CLASSIC_DATA_TYPES
from ...specs.rnn import RnnSpec, WeightSlot
from . import loader as classic
from .base import (ENGINE_ID, ClassicLab, c_int, c_void_p, check, create, destroy, entry, one_plan, pointer,
                   tensor_descriptor, tensor_dims, whole_gpu_only)
from ..plans import PLAN_SOURCES, PlanEntry
from ...errors import PlanError
from ...reference.common import torch_dtype

CUDNN_RNN_DOUBLE_BIAS = 2
CUDNN_UNIDIRECTIONAL, CUDNN_BIDIRECTIONAL = 0, 1
CUDNN_LINEAR_INPUT = 0
CUDNN_DATA_FLOAT = 0
CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED = 1
CUDNN_RNN_PADDED_IO_DISABLED = 0
CUDNN_FWD_MODE_INFERENCE, CUDNN_FWD_MODE_TRAINING = 0, 1
CUDNN_WGRAD_MODE_ADD = 0

_V, _P, _i32, _u32 = c_void_p, ctypes.POINTER, ctypes.c_int32, ctypes.c_uint32
_SIGS: dict[str, tuple[Any, ...]] = {
    "cudnnSetDropoutDescriptor": (_V, _V, ctypes.c_float, _V, c_size_t, ctypes.c_ulonglong),
    "cudnnSetRNNDescriptor_v8": (_V, c_int, c_int, c_int, c_int, c_int, c_int, c_int, c_int, _i32, _i32, _i32, _i32,
                                 _V, _u32),
    "cudnnBuildRNNDynamic": (_V, _V, c_int),
    "cudnnSetRNNDataDescriptor": (_V, c_int, c_int, c_int, c_int, c_int, _P(c_int), _V),
    "cudnnGetRNNWeightSpaceSize": (_V, _V, _P(c_size_t)),
    "cudnnGetRNNTempSpaceSizes": (_V, _V, c_int, _V, _P(c_size_t), _P(c_size_t)),
    "cudnnGetRNNWeightParams": (_V, _V, _i32, c_size_t, _V, _i32, _V, _P(_V), _V, _P(_V)),
    "cudnnRNNForward": (_V, _V, c_int, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, c_size_t, _V, c_size_t, _V,
                        c_size_t, _V),
    "cudnnRNNBackwardData_v8": (_V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, _V, c_size_t, _V,
                                c_size_t, _V, c_size_t, _V),
    "cudnnRNNBackwardWeights_v8": (_V, _V, c_int, _V, _V, _V, _V, _V, _V, _V, c_size_t, _V, c_size_t, _V, c_size_t,
                                   _V),
}


def fn(name: str) -> Any:
    """The typed RNN entry point ``name`` (cuDNN 9 ``cudnn_adv.h`` signatures)."""
    return entry(name, _SIGS[name])


def plan_name(spec: RnnSpec, algo: str) -> str:
    what = "cudnnRNNForward" if spec.direction == "fwd" else "RNN fwd+bwd data+bwd weights"
    return f"classic {what} {algo}"


class RnnPlan:
    """One algorithm's descriptors and buffers (made by :meth:`build_plan_at_index`), run by
    :meth:`execute_plan_at_index`; the method names mirror a frontend graph's."""

    def __init__(self, spec: RnnSpec, algo: str, handle: Any) -> None:
        self.spec, self.algo, self.handle = spec, algo, handle
        self.built = False
        self._desc: dict[str, Any] = {}
        self._buffers: dict[str, Any] = {}
        self._views: list[tuple[WeightSlot, Any, Any]] = []  # (slot, weight view, gradient view or None)
        self._packed: tuple[int, ...] = ()
        self.sizes = {"weights": 0, "work": 0, "reserve": 0}

    # --- build -------------------------------------------------------------------------------------------------

    def build_plan_at_index(self, index: int = 0) -> RnnPlan:
        one_plan(index, plan_name(self.spec, self.algo))
        if self.built:
            return self
        try:
            self._build()
        except Exception:
            self.release()
            raise
        self.built = True
        return self

    def _build(self) -> None:
        import torch

        spec, h = self.spec, classic.backend_handle(self.handle, "cudnnRNNForward")
        dt = CLASSIC_DATA_TYPES[spec.dtype][1]
        d = self._desc
        d["dropout"] = create("Dropout")
        # No dropout: no states are needed (PyTorch's set_no_dropout passes NULL and 0 too).
        check(fn("cudnnSetDropoutDescriptor")(d["dropout"], h, 0.0, None, 0, 0), "cudnnSetDropoutDescriptor")
        d["rnn"] = create("RNN")
        check(fn("cudnnSetRNNDescriptor_v8")(
            d["rnn"], rnn_graph.CLASSIC_ALGOS[self.algo][1], rnn_graph.CLASSIC_CELL_MODES[spec.cell][1],
            CUDNN_RNN_DOUBLE_BIAS, CUDNN_BIDIRECTIONAL if spec.bidirectional else CUDNN_UNIDIRECTIONAL,
            CUDNN_LINEAR_INPUT, dt, CUDNN_DATA_FLOAT, rnn_graph.CLASSIC_MATH_TYPES[spec.math_type][1],
            spec.input_size, spec.hidden_size, spec.hidden_size, spec.layers, d["dropout"],
            CUDNN_RNN_PADDED_IO_DISABLED), f"cudnnSetRNNDescriptor_v8({self.algo})")
        if self.algo == "persist_dynamic":
            check(fn("cudnnBuildRNNDynamic")(h, d["rnn"], spec.batch), "cudnnBuildRNNDynamic")
        lengths = (c_int * spec.batch)(*([spec.seq_len] * spec.batch))
        for name, width in (("x", spec.input_size), ("y", spec.directions * spec.hidden_size)):
            d[name] = create("RNNData")
            check(fn("cudnnSetRNNDataDescriptor")(d[name], dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, spec.seq_len,
                                                  spec.batch, width, lengths, None),
                  f"cudnnSetRNNDataDescriptor({name})")
        state = spec.tensor_shapes()["Hx"]
        d["h"] = tensor_descriptor(dt, state, spec.tensor_strides()["Hx"], "h")
        size, work, reserve = c_size_t(), c_size_t(), c_size_t()
        check(fn("cudnnGetRNNWeightSpaceSize")(h, d["rnn"], ctypes.byref(size)), "cudnnGetRNNWeightSpaceSize")
        mode = CUDNN_FWD_MODE_INFERENCE if spec.direction == "fwd" else CUDNN_FWD_MODE_TRAINING
        check(fn("cudnnGetRNNTempSpaceSizes")(h, d["rnn"], mode, d["x"], ctypes.byref(work), ctypes.byref(reserve)),
              "cudnnGetRNNTempSpaceSizes")
        self.sizes = {"weights": size.value, "work": work.value, "reserve": reserve.value}
        device = torch.device("cuda", torch.cuda.current_device())
        b = self._buffers
        b["weights"] = torch.zeros(size.value, dtype=torch.uint8, device=device)
        b["seq_lengths"] = torch.full((spec.batch,), spec.seq_len, dtype=torch.int32, device=device)
        if spec.direction == "bwd":
            b["dweights"] = torch.zeros(size.value, dtype=torch.uint8, device=device)
            b["reserve"] = torch.empty(max(reserve.value, 1), dtype=torch.uint8, device=device)
            b["y"] = torch.empty(spec.seq_len * spec.batch * spec.directions * spec.hidden_size,
                                 dtype=_torch_dtype(spec.dtype), device=device)
        self._locate_weights(h)
        torch.cuda.synchronize(device)  # the buffers' fills ran on the current stream, not the session's

    def _locate_weights(self, h: int) -> None:
        """A view into the weight space (and the gradient space) for every gate matrix and bias."""
        spec, b = self.spec, self._buffers
        elem = _torch_dtype(spec.dtype).itemsize
        flat = b["weights"].view(_torch_dtype(spec.dtype))
        dflat = b["dweights"].view(_torch_dtype(spec.dtype)) if "dweights" in b else None
        base = b["weights"].data_ptr()
        mdesc, bdesc = create("Tensor"), create("Tensor")
        try:
            for slot in spec.weight_slots():
                if slot.bias:
                    continue
                maddr, baddr = c_void_p(), c_void_p()
                check(fn("cudnnGetRNNWeightParams")(h, self._desc["rnn"], slot.pseudo_layer, self.sizes["weights"],
                                                    base, slot.lin_layer_id, mdesc, ctypes.byref(maddr), bdesc,
                                                    ctypes.byref(baddr)),
                      f"cudnnGetRNNWeightParams(pseudo-layer {slot.pseudo_layer}, linLayerID {slot.lin_layer_id})")
                rows = slot.rows[1] - slot.rows[0]
                cols = spec.param_shapes()[slot.param][1]
                for desc, addr, shape, param in ((mdesc, maddr, (rows, cols), slot.param),
                                                 (bdesc, baddr, (rows,), slot.param.replace("weight", "bias"))):
                    got = tensor_dims(desc, "weight params")
                    numel = 1
                    for g in got:
                        numel *= g
                    if numel != rows * (cols if len(shape) == 2 else 1) or not addr.value:
                        raise classic_error(slot, got, shape)
                    offset, rem = divmod(addr.value - base, elem)
                    if rem:
                        raise classic_error(slot, got, shape)
                    count = rows * (cols if len(shape) == 2 else 1)
                    view = flat[offset:offset + count].view(shape)
                    dview = dflat[offset:offset + count].view(shape) if dflat is not None else None
                    kind = WeightSlot(param, slot.rows, slot.pseudo_layer, slot.lin_layer_id, slot.gate,
                                      slot.recurrent, len(shape) == 1)
                    self._views.append((kind, view, dview))
        finally:
            destroy("Tensor", mdesc)
            destroy("Tensor", bdesc)

    def get_workspace_size_plan_at_index(self, index: int = 0) -> int:
        return self.sizes["work"]

    # --- execute -----------------------------------------------------------------------------------------------

    def _pack(self, t: dict[str, Any]) -> None:
        """Copy the PyTorch weights into cuDNN's weight space, once per set of weight tensors (by address)."""
        key = tuple(pointer(t[p]) for p in self.spec.param_names())
        if key == self._packed:
            return
        for slot, view, _ in self._views:
            view.copy_(t[slot.param][slot.rows[0]:slot.rows[1]])
        self._packed = key

    def execute_plan_at_index(self, tensor_dict: dict[Any, Any], workspace: Any = None, index: int = 0,
                              handle: Any = None) -> None:
        """Run the spec's direction on ``handle``'s stream with the named tensors of ``tensor_dict``."""
        h = classic.backend_handle(handle, "cudnnRNNForward")
        if not self.built:
            self.build_plan_at_index(index)
        t, spec, d, b = tensor_dict, self.spec, self._desc, self._buffers
        self._pack(t)
        ws, wsize = pointer(workspace) if self.sizes["work"] else None, self.sizes["work"]
        weights, seq = b["weights"].data_ptr(), b["seq_lengths"].data_ptr()
        cx, lstm = pointer(t.get("Cx")), spec.has_cell_state
        if spec.direction == "fwd":
            check(fn("cudnnRNNForward")(h, d["rnn"], CUDNN_FWD_MODE_INFERENCE, seq, d["x"], pointer(t["X"]), d["y"],
                                        pointer(t["Y"]), d["h"], pointer(t["Hx"]), pointer(t["Hy"]), d["h"], cx,
                                        pointer(t.get("Cy")), self.sizes["weights"], weights, wsize, ws, 0, None),
                  "cudnnRNNForward")
            return
        y, reserve, rsize = b["y"].data_ptr(), b["reserve"].data_ptr(), self.sizes["reserve"]
        check(fn("cudnnRNNForward")(h, d["rnn"], CUDNN_FWD_MODE_TRAINING, seq, d["x"], pointer(t["X"]), d["y"], y,
                                    d["h"], pointer(t["Hx"]), None, d["h"], cx, None, self.sizes["weights"], weights,
                                    wsize, ws, rsize, reserve), "cudnnRNNForward(training)")
        check(fn("cudnnRNNBackwardData_v8")(h, d["rnn"], seq, d["y"], y, pointer(t["DY"]), d["x"], pointer(t["DX"]),
                                            d["h"], pointer(t["Hx"]), pointer(t["DHy"]), pointer(t["DHx"]), d["h"],
                                            cx, pointer(t.get("DCy")) if lstm else None,
                                            pointer(t.get("DCx")) if lstm else None, self.sizes["weights"], weights,
                                            wsize, ws, rsize, reserve), "cudnnRNNBackwardData_v8")
        b["dweights"].zero_()  # CUDNN_WGRAD_MODE_ADD adds into it
        check(fn("cudnnRNNBackwardWeights_v8")(h, d["rnn"], CUDNN_WGRAD_MODE_ADD, seq, d["x"], pointer(t["X"]),
                                               d["h"], pointer(t["Hx"]), d["y"], y, self.sizes["weights"],
                                               b["dweights"].data_ptr(), wsize, ws, rsize, reserve),
              "cudnnRNNBackwardWeights_v8")
        for slot, _, dview in self._views:
            t[f"d{slot.param}"][slot.rows[0]:slot.rows[1]].copy_(dview)

    def release(self) -> None:
        """Destroy the descriptors and drop the buffers (safe to call twice)."""
        d = self._desc
        for key, kind in (("x", "RNNData"), ("y", "RNNData"), ("h", "Tensor"), ("rnn", "RNN"), ("dropout", "Dropout")):
            destroy(kind, d.pop(key, None))
        self._buffers.clear()
        self._views.clear()
        self._packed = ()
        self.built = False

    def __del__(self) -> None:
        self.release()


def classic_error(slot: WeightSlot, got: tuple[int, ...], want: tuple[int, ...]) -> Exception:
    return PlanError(f"cudnnGetRNNWeightParams(pseudo-layer {slot.pseudo_layer}, linLayerID {slot.lin_layer_id}) "
                     f"gave a {'bias' if len(want) == 1 else 'matrix'} of dims {list(got)}, not the "
                     f"{list(want)} of {slot.param} rows {slot.rows[0]}:{slot.rows[1]} (gate {slot.gate})")


def _torch_dtype(name: str) -> Any:
    return torch_dtype(name)


@PLAN_SOURCES.register(RnnSpec)
def rnn_plans(spec: RnnSpec, handle: Any = None, modes: tuple[str, ...] = (), where: str = "",
              cudnn_version: str = "", *, graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]:
    """One plan row per algorithm (all four for ``algo='all'``), in cudnnRNNAlgo_t order; heuristic modes do not
    apply (the classic RNN API has no heuristics), graph options are refused (it runs on the whole GPU)."""
    whole_gpu_only(graph_options, "RnnSpec")
    fn("cudnnRNNForward")  # fail here, before inputs are made, when the RNN API is not reachable
    out = []
    for algo in rnn_graph.algorithms(spec):
        lab = ClassicLab(spec, RnnPlan(spec, algo, handle), draw=rnn_graph.to_dot)
        knobs = {"algo": rnn_graph.CLASSIC_ALGOS[algo][1], "math_type": rnn_graph.CLASSIC_MATH_TYPES[spec.math_type][1]}
        out.append(PlanEntry(name=plan_name(spec, algo), engine_id=ENGINE_ID, knobs=knobs, graph=lab, index=0))
    return out
