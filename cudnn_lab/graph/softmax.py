"""Softmax and the cuDNN graph API: no graph node (cuDNN fuses a softmax only inside SDPA), so ``build_graph``
raises :class:`~.classic_call.ClassicOnlyError` and the drawing shows the classic ``cudnnSoftmaxForward`` that
``cl.run`` times instead (``gpu/classic/ops.py``). Pure: no cudnn or torch import here.
"""

from __future__ import annotations

from typing import Any

from ..specs.softmax import SoftmaxSpec
from .classic_call import classic_family
from .families import REFERENCE_CODE

CLASSIC_CALL = "cudnnSoftmaxForward"
#: ``cudnnSoftmaxAlgorithm_t`` and ``cudnnSoftmaxMode_t`` (cuDNN 9 ``cudnn_ops.h``).
CLASSIC_SOFTMAX_ALGOS: dict[str, tuple[str, int]] = {
    "fast": ("CUDNN_SOFTMAX_FAST", 0), "accurate": ("CUDNN_SOFTMAX_ACCURATE", 1), "log": ("CUDNN_SOFTMAX_LOG", 2)}
CLASSIC_SOFTMAX_MODES: dict[str, tuple[str, int]] = {
    "instance": ("CUDNN_SOFTMAX_MODE_INSTANCE", 0), "channel": ("CUDNN_SOFTMAX_MODE_CHANNEL", 1)}

NO_GRAPH_SUMMARY = (
    "Softmax is not a node of the cuDNN graph API (cuDNN fuses a softmax only inside its SDPA node). cl.run() runs "
    "this SoftmaxSpec through cuDNN's classic cudnnSoftmaxForward instead (one plan row, 'classic "
    "cudnnSoftmaxForward'); cudnn_lab.graph.drawing(spec) draws it.")


def classic_params(spec: SoftmaxSpec) -> dict[str, Any]:
    """The call's arguments by name, as the kit passes them."""
    return {"algo": CLASSIC_SOFTMAX_ALGOS[spec.algo][0], "mode": CLASSIC_SOFTMAX_MODES[spec.mode][0],
            "alpha": 1.0, "beta": 0.0}


describe = classic_family(SoftmaxSpec, CLASSIC_CALL, NO_GRAPH_SUMMARY, classic_params)


@REFERENCE_CODE.register(SoftmaxSpec)
def reference_code(spec: SoftmaxSpec) -> list[str]:
    """Y in float64: (log_)softmax over the mode's dims (instance: c, h, w flattened)."""
    fn = "log_softmax" if spec.algo == "log" else "softmax"
    if spec.mode == "channel":
        return [f"y = torch.{fn}(inputs['X'].double(), dim=1)", "return y"]
    return ["x = inputs['X'].double()", f"y = torch.{fn}(x.flatten(1), dim=1).view_as(x)", "return y"]
