"""Standalone activations and the cuDNN graph API: the graph API has them only as pointwise nodes fused after a
conv or matmul (the kit's epilogues), so ``build_graph`` raises :class:`~.classic_call.ClassicOnlyError` and the
drawing shows the classic ``cudnnActivationForward`` that ``cl.run`` times instead (``gpu/classic/ops.py``).
Pure: no cudnn or torch import here.
"""

from __future__ import annotations

from typing import Any

from ..specs.activation import ActivationSpec
from .classic_call import classic_family
from .families import REFERENCE_CODE

CLASSIC_CALL = "cudnnActivationForward"
#: ``cudnnActivationMode_t`` (cuDNN 9 ``cudnn_graph.h``).
CLASSIC_ACTIVATION_MODES: dict[str, tuple[str, int]] = {
    "sigmoid": ("CUDNN_ACTIVATION_SIGMOID", 0), "relu": ("CUDNN_ACTIVATION_RELU", 1),
    "tanh": ("CUDNN_ACTIVATION_TANH", 2), "clipped_relu": ("CUDNN_ACTIVATION_CLIPPED_RELU", 3),
    "elu": ("CUDNN_ACTIVATION_ELU", 4), "swish": ("CUDNN_ACTIVATION_SWISH", 6)}

NO_GRAPH_SUMMARY = (
    "A standalone activation is not a graph of the cuDNN graph API here: its pointwise nodes fuse after a conv or "
    "matmul (ConvSpec/MatmulSpec epilogue=...). cl.run() runs this ActivationSpec through cuDNN's classic "
    "cudnnActivationForward instead (one plan row, 'classic cudnnActivationForward'); "
    "cudnn_lab.graph.drawing(spec) draws it.")


def classic_params(spec: ActivationSpec) -> dict[str, Any]:
    """The descriptor's settings by name (cudnnSetActivationDescriptor, and the swish beta), as the kit sets them."""
    params: dict[str, Any] = {"mode": CLASSIC_ACTIVATION_MODES[spec.mode][0], "reluNanOpt": "CUDNN_PROPAGATE_NAN"}
    if spec.mode in ("clipped_relu", "elu"):
        params["coef"] = spec.coef
    if spec.mode == "swish":
        params["swish_beta"] = spec.coef
    return params


describe = classic_family(ActivationSpec, CLASSIC_CALL, NO_GRAPH_SUMMARY, classic_params)


#: Each mode as the script's float64 reference line (``c`` is the coefficient).
_CODE = {"relu": "torch.relu(x)", "sigmoid": "torch.sigmoid(x)", "tanh": "torch.tanh(x)",
         "clipped_relu": "x.clamp(0, {c!r})", "elu": "torch.nn.functional.elu(x, alpha={c!r})",
         "swish": "x * torch.sigmoid({c!r} * x)"}


@REFERENCE_CODE.register(ActivationSpec)
def reference_code(spec: ActivationSpec) -> list[str]:
    return ["x = inputs['X'].double()", f"y = {_CODE[spec.mode].format(c=spec.coef)}", "return y"]
