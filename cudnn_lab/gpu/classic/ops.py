"""Plan sources for the single-tensor classic ops: ``cudnnSoftmaxForward`` (SoftmaxSpec),
``cudnnActivationForward`` (ActivationSpec) and ``cudnnTransformTensor`` (TransformSpec kind 'convert'); and the
version gate of TransformSpec's graph kinds, which otherwise go to the frontend graph source.

Each classic op is one plan row (engine id -1, no knobs, no workspace), built (descriptors made), checked against
the float64 reference and timed like a frontend plan, on the frontend handle and its stream: y = 1 * op(x) + 0 * y.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from typing import Any

from ...errors import UnsupportedGraphError
from ...graph import activation as activation_graph
from ...graph import softmax as softmax_graph
from ...graph import transform as transform_graph
from ...specs.activation import ActivationSpec
from ...specs.softmax import SoftmaxSpec
from ...specs.transform import TransformSpec
from ..frontend import graph_plans
from ..plans import PLAN_SOURCES, PlanEntry
from .base import ClassicCall, c_int, c_void_p, check, entry, one_row, whole_gpu_only
#: ``cudnnNanPropagation_t``: NaN in, NaN out, as PyTorch's activations do.
CUDNN_PROPAGATE_NAN = 1
_V = c_void_p


class SoftmaxCall(ClassicCall):
    """``cudnnSoftmaxForward(handle, algo, mode, &1, xDesc, x, &0, yDesc, y)``."""

    call = softmax_graph.CLASSIC_CALL

    def _run(self, handle: int, x: int, y: int) -> int:
        fn = entry("cudnnSoftmaxForward", (_V, c_int, c_int, _V, _V, _V, _V, _V, _V))
        spec = self.spec
        return fn(handle, softmax_graph.CLASSIC_SOFTMAX_ALGOS[spec.algo][1],
                  softmax_graph.CLASSIC_SOFTMAX_MODES[spec.mode][1], ctypes.byref(self._alpha), self._x, x,
                  ctypes.byref(self._beta), self._y, y)


class ActivationCall(ClassicCall):
    """``cudnnActivationForward(handle, activationDesc, &1, xDesc, x, &0, yDesc, y)``; the descriptor says the mode
    and coefficient (``cudnnSetActivationDescriptor``; swish's beta: ``cudnnSetActivationDescriptorSwishBeta``)."""

    call = activation_graph.CLASSIC_CALL
    op_descriptor = "Activation"

    def _build_extra(self) -> None:
        spec = self.spec
        # coef: clipped ReLU's ceiling, ELU's alpha; 0 for the rest (swish takes its beta below).
        coef = spec.coef if spec.mode in ("clipped_relu", "elu") else 0.0
        fn = entry("cudnnSetActivationDescriptor", (_V, c_int, c_int, ctypes.c_double))
        check(fn(self._op, activation_graph.CLASSIC_ACTIVATION_MODES[spec.mode][1], CUDNN_PROPAGATE_NAN, coef),
              "cudnnSetActivationDescriptor")
        if spec.mode == "swish":
            beta = entry("cudnnSetActivationDescriptorSwishBeta", (_V, ctypes.c_double))
            check(beta(self._op, spec.coef), "cudnnSetActivationDescriptorSwishBeta")

    def _run(self, handle: int, x: int, y: int) -> int:
        fn = entry("cudnnActivationForward", (_V, _V, _V, _V, _V, _V, _V, _V))
        return fn(handle, self._op, ctypes.byref(self._alpha), self._x, x, ctypes.byref(self._beta), self._y, y)


class TransformCall(ClassicCall):
    """``cudnnTransformTensor(handle, &1, xDesc, x, &0, yDesc, y)``: y's descriptor has x's dims in the output
    layout's strides and the output dtype."""

    call = transform_graph.CLASSIC_CALL

    def _run(self, handle: int, x: int, y: int) -> int:
        fn = entry("cudnnTransformTensor", (_V, _V, _V, _V, _V, _V, _V))
        return fn(handle, ctypes.byref(self._alpha), self._x, x, ctypes.byref(self._beta), self._y, y)


@PLAN_SOURCES.register(SoftmaxSpec)
def softmax_plans(spec: SoftmaxSpec, handle: Any = None, modes: tuple[str, ...] = (), where: str = "",
                  cudnn_version: str = "", *,
                  graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]:
    """A SoftmaxSpec's plan list: one row for ``cudnnSoftmaxForward`` (heuristic modes do not apply)."""
    whole_gpu_only(graph_options, "SoftmaxSpec")
    entry("cudnnSoftmaxForward", (_V, c_int, c_int, _V, _V, _V, _V, _V, _V))  # fail here when it is not reachable
    return one_row(spec, SoftmaxCall(spec), softmax_graph.describe)


@PLAN_SOURCES.register(ActivationSpec)
def activation_plans(spec: ActivationSpec, handle: Any = None, modes: tuple[str, ...] = (), where: str = "",
                     cudnn_version: str = "", *,
                     graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]:
    """An ActivationSpec's plan list: one row for ``cudnnActivationForward``."""
    whole_gpu_only(graph_options, "ActivationSpec")
    entry("cudnnActivationForward", (_V, _V, _V, _V, _V, _V, _V, _V))
    return one_row(spec, ActivationCall(spec), activation_graph.describe)


class NeedsNewerCudnnError(UnsupportedGraphError):
    """A graph kind that the installed cuDNN does not run alone: names the version that does."""


def check_graph_kind(spec: TransformSpec, backend: int, where: str = "", cudnn_version: str = "") -> None:
    """NeedsNewerCudnnError when ``backend`` (``cudnn.backend_version()``, e.g. 91900) is below the version from
    which cuDNN runs ``spec.kind`` as a graph of its own."""
    need = transform_graph.needs(spec)
    if need is None or backend >= need[0]:
        return
    have = f"{backend // 10000}.{backend // 100 % 100}.{backend % 100}"
    raise NeedsNewerCudnnError(
        f"A {spec.kind} graph on its own needs cuDNN {need[1]} or newer; this is cuDNN {have} ({need[2]}). The kit "
        f"draws it (cudnn_lab.graph.drawing(spec)) and exports its script, and runs it where cuDNN {need[1]}+ is "
        "installed.",
        device=where, cudnn_version=cudnn_version, hint="")


@PLAN_SOURCES.register(TransformSpec)
def transform_plans(spec: TransformSpec, handle: Any, modes: tuple[str, ...], where: str,
                    cudnn_version: str, *, graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]:
    """'convert': one row for ``cudnnTransformTensor``; a graph kind: the frontend graph's plans, from the cuDNN
    version that runs it alone (NeedsNewerCudnnError before). ``graph_options`` (an SM carve-out) go to a graph
    kind's ``cudnn.pygraph``; 'convert', a classic call, runs on the whole GPU and refuses them."""
    if spec.kind == "convert":
        whole_gpu_only(graph_options, "TransformSpec kind 'convert'")
        entry("cudnnTransformTensor", (_V, _V, _V, _V, _V, _V, _V))
        return one_row(spec, TransformCall(spec), transform_graph.describe)
    import cudnn

    check_graph_kind(spec, int(cudnn.backend_version()), where, cudnn_version)
    return graph_plans(spec, handle, modes, where, cudnn_version, graph_options=graph_options)


def _transform_takes_carve_out(spec: TransformSpec) -> bool:
    """Whether this TransformSpec runs as a frontend graph (its graph kinds), which takes an SM carve-out."""
    return spec.kind != "convert"


transform_plans.takes_carve_out = _transform_takes_carve_out  # type: ignore[attr-defined]
