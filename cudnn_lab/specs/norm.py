"""Normalization problems: layer norm, RMS norm, batch norm and instance norm; forward (training or inference) and
backward, with the tensor shapes, dtypes and strides cuDNN's norm nodes take.

- layernorm / rmsnorm: x is [rows, features, 1, 1] stored channels-last (rows = batch * sequence), scale and bias
  [1, features, 1, 1] in x's dtype, mean and inv_var [rows, 1, 1, 1] in float32; a residual add can be fused
  before the norm (y = norm(x + r)) in training and inference.
- batchnorm: x [n, c, h, w] in NHWC or NCHW; scale, bias, running and saved statistics [1, c, 1, 1] in float32.
  Training and backward need 16 bytes of channels (c a multiple of 8 in fp16/bf16, of 4 in fp32); inference is
  built as the pointwise chain y = (x - mean) * inv_var * scale + bias, NHWC only.
- instancenorm: x [n, c, h, w] in NHWC or NCHW, scale and bias [1, c, 1, 1] in x's dtype, mean and inv_var
  [n, c, 1, 1] in float32; any c.
- epsilon and momentum travel by value: host-side float32 [1, 1, 1, 1] tensors.

Why these rules: see docs/FINDINGS.md (what cuDNN 9.19 runs, measured on an H200).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, DTYPES, LAYOUTS, MAX_DIM, Spec, check_bool, check_float, check_int
from .layout import layout_strides

KINDS: tuple[str, ...] = ("layernorm", "rmsnorm", "batchnorm", "instancenorm")
PHASES: tuple[str, ...] = ("training", "inference", "backward")
#: Kinds whose sizes are ``rows`` x ``features`` (a transformer's tokens x hidden size).
ROW_KINDS: tuple[str, ...] = ("layernorm", "rmsnorm")
#: Kinds whose sizes are an image batch ``n, c, h, w`` in a ``layout``.
IMAGE_KINDS: tuple[str, ...] = ("batchnorm", "instancenorm")
#: Batchnorm training and backward engines need c * (bytes of x's dtype) to be a multiple of this: c a multiple of
#: 8 in fp16/bf16, of 4 in fp32 (docs/FINDINGS.md).
BN_CHANNEL_BYTES = 16
#: Tensors that are always float32, whatever the spec's dtype: statistics and host scalars.
_FLOAT_TENSORS = frozenset({"mean", "inv_var", "running_mean", "running_var", "next_running_mean",
                            "next_running_var", "epsilon", "momentum"})
#: Tensors with x's shape.
_X_LIKE = frozenset({"X", "Y", "DY", "DX", "residual"})
#: Per-channel (per-feature) parameters and their gradients.
_PARAMS = frozenset({"scale", "bias", "DScale", "DBias"})

#: Estimated floating-point operations per element of x (see :meth:`NormSpec.flops`).
FLOPS_PER_ELEMENT: dict[tuple[str, str], int] = {
    ("layernorm", "training"): 8, ("layernorm", "inference"): 8, ("layernorm", "backward"): 12,
    ("rmsnorm", "training"): 5, ("rmsnorm", "inference"): 5, ("rmsnorm", "backward"): 10,
    ("batchnorm", "training"): 8, ("batchnorm", "inference"): 4, ("batchnorm", "backward"): 12,
    ("instancenorm", "training"): 8, ("instancenorm", "inference"): 8, ("instancenorm", "backward"): 12,
}


@dataclasses.dataclass(frozen=True)
class NormSpec(Spec):
    """A normalization: ``kind`` (layernorm, rmsnorm, batchnorm, instancenorm) in one ``phase``.

    Sizes: layernorm and rmsnorm normalize each of ``rows`` tokens over its ``features`` (x is [rows, features]);
    batchnorm normalizes each channel over n, h, w and instancenorm each (image, channel) over h, w of an
    [n, c, h, w] x stored in ``layout``. The sizes a kind does not use are ignored (and left as given).

    ``phase``: 'training' writes y and the statistics (mean, inv_var = 1/sqrt(var + epsilon); batchnorm also the
    next running mean and variance, with ``momentum``), 'inference' writes y only (batchnorm reads saved mean and
    inv_var), 'backward' reads dy, x, scale and the saved statistics and writes DX, DScale and DBias.
    ``residual`` (layernorm and rmsnorm forward) fuses an add before the norm: y = norm(x + residual).
    """

    op: ClassVar[str] = "norm"
    menu_order: ClassVar[int] = 40
    sweep_axes: ClassVar[tuple[str, ...]] = ("rows", "dtype")
    title: ClassVar[str] = "norm"
    description: ClassVar[str] = "normalization: NormSpec (layer, RMS, batch and instance norm)"
    field_order: ClassVar[tuple[str, ...]] = (
        "kind", "phase", "rows", "features", "n", "c", "h", "w", "epsilon", "momentum", "residual", "layout", "dtype")

    kind: str = "layernorm"
    phase: str = "training"
    rows: int = 2048
    features: int = 768
    n: int = 16
    c: int = 64
    h: int = 56
    w: int = 56
    layout: str = "NHWC"
    dtype: str = "fp16"
    epsilon: float = 1e-5
    momentum: float = 0.1
    residual: bool = False

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._check_choices("kind", "phase")
        for f in ("rows", "features", "n", "c", "h", "w"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._check_choices("layout", "dtype")
        self._set("epsilon", check_float(name, "epsilon", self.epsilon, 0.0, 1.0, lo_open=True))
        self._set("momentum", check_float(name, "momentum", self.momentum, 0.0, 1.0))
        self._set("residual", check_bool(name, "residual", self.residual))
        self._check_support(name)
        sizes = ("rows", "features") if self.kind in ROW_KINDS else ("n", "c", "h", "w")
        self.check_elements({t: sizes for t in self.tensor_shapes()})

    # --- rules a form shows ------------------------------------------------------------------------------------

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"kind": KINDS, "phase": PHASES, "layout": LAYOUTS, "dtype": DTYPES}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        return {f: (1, MAX_DIM) for f in ("rows", "features", "n", "c", "h", "w")}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """Layer and RMS norm take ``rows x features``, batch and instance norm ``n, c, h, w`` in a ``layout``;
        ``momentum`` is batchnorm training's only, ``epsilon`` the forward passes' (batchnorm inference reads saved
        statistics), ``residual`` the row norms'."""
        kind, phase = values.get("kind"), values.get("phase")
        hidden: set[str] = set()
        if kind in ROW_KINDS:
            hidden |= {"n", "c", "h", "w", "layout"}
        elif kind in IMAGE_KINDS:
            hidden |= {"rows", "features", "residual"}
        if not (kind == "batchnorm" and phase == "training"):
            hidden.add("momentum")
        if phase == "backward" or (kind == "batchnorm" and phase == "inference"):
            hidden.add("epsilon")
        return frozenset(hidden)

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        """Batchnorm training and backward: c a multiple of 16 bytes of x's dtype."""
        if values.get("kind") == "batchnorm" and values.get("phase") in ("training", "backward"):
            dtype = values.get("dtype")
            size = DTYPE_BYTES.get(dtype, 2) if isinstance(dtype, str) else 2
            return {"c": f"mult. of {BN_CHANNEL_BYTES // size}"}
        return {}

    def _check_support(self, name: str) -> None:
        """Combinations cuDNN has no engine for (docs/FINDINGS.md), refused with what IS supported."""
        if self.residual and self.kind not in ROW_KINDS:
            raise SpecError("residual", True, f"a fused residual add is built for layernorm and rmsnorm only, not "
                            f"{self.kind}; set residual=False", spec=name)
        if self.residual and self.phase == "backward":
            raise SpecError("residual", True, "a fused residual add is part of the forward pass (training or "
                            "inference); the backward of x + residual is the norm's DX for both, so set "
                            "residual=False for phase='backward'", spec=name)
        if self.kind == "instancenorm" and self.h * self.w < 2:
            raise SpecError("h", self.h, f"instancenorm normalizes each image's channel over h*w elements; h*w = "
                            f"{self.h * self.w} leaves nothing to normalize (x - mean = 0): make h*w at least 2",
                            spec=name)
        if self.kind != "batchnorm":
            return
        if self.phase == "training" and self.n * self.h * self.w < 2:
            raise SpecError("n", self.n, "batchnorm training normalizes each channel over n*h*w elements and needs "
                            "at least 2 of them (the running variance divides by n*h*w - 1)", spec=name)
        multiple = self.bn_channel_multiple
        if self.phase in ("training", "backward") and self.c % multiple:
            raise SpecError("c", self.c, f"batchnorm {self.phase} in {self.dtype} needs c to be a multiple of "
                            f"{multiple} ({BN_CHANNEL_BYTES} bytes of channels: 8 in fp16/bf16, 4 in fp32; cuDNN's "
                            f"batchnorm engines found none otherwise); pad the channels to "
                            f"{self.c + (-self.c) % multiple}, or use instancenorm, which takes any c", spec=name)
        if self.phase == "inference" and self.layout != "NHWC":
            raise SpecError("layout", self.layout, "batchnorm inference needs NHWC: cuDNN has no engine for the "
                            "batchnorm_inference node on its own, so it is built as the pointwise chain "
                            "(x - mean) * inv_var * scale + bias with float32 [1, c, 1, 1] parameters, which "
                            "cuDNN's runtime-fusion engine runs for NHWC x only. Batchnorm training and backward "
                            "take NCHW too", spec=name)

    # --- sizes -----------------------------------------------------------------------------------------------

    @property
    def channels(self) -> int:
        """The size of the per-channel parameters: features (layernorm, rmsnorm) or c."""
        return self.features if self.kind in ROW_KINDS else self.c

    @property
    def bn_channel_multiple(self) -> int:
        """What batchnorm training and backward need c to be a multiple of: 16 bytes of x's dtype."""
        return BN_CHANNEL_BYTES // DTYPE_BYTES[self.dtype]

    @property
    def x_dims(self) -> tuple[int, int, int, int]:
        """x as cuDNN sees it: [rows, features, 1, 1] or [n, c, h, w]."""
        if self.kind in ROW_KINDS:
            return (self.rows, self.features, 1, 1)
        return (self.n, self.c, self.h, self.w)

    @property
    def storage_layout(self) -> str:
        """How 4-D tensors are stored: layernorm and rmsnorm rows are channels-last (NHWC), as the samples do."""
        return "NHWC" if self.kind in ROW_KINDS else self.layout

    @property
    def stats_dims(self) -> tuple[int, int, int, int]:
        """Shape of mean and inv_var: one per row, per channel (batchnorm) or per image and channel."""
        if self.kind in ROW_KINDS:
            return (self.rows, 1, 1, 1)
        if self.kind == "batchnorm":
            return (1, self.c, 1, 1)
        return (self.n, self.c, 1, 1)

    @property
    def reduced_elements(self) -> int:
        """How many elements of x each statistic summarizes."""
        if self.kind in ROW_KINDS:
            return self.features
        if self.kind == "batchnorm":
            return self.n * self.h * self.w
        return self.h * self.w

    def io_names(self) -> tuple[tuple[str, ...], str]:
        """Names of the graph's inputs (in the frontend call's order) and of its main output."""
        return self.input_names(), self.output_names()[0]

    def input_names(self) -> tuple[str, ...]:
        """Every tensor the graph reads, scalars passed by value included."""
        k, p = self.kind, self.phase
        if p == "backward":
            return ("DY", "X", "scale", "inv_var") if k == "rmsnorm" else ("DY", "X", "scale", "mean", "inv_var")
        if k == "batchnorm":
            if p == "inference":
                return ("X", "mean", "inv_var", "scale", "bias")
            return ("X", "scale", "bias", "running_mean", "running_var", "epsilon", "momentum")
        return ("X", *(("residual",) if self.residual else ()), "scale", "bias", "epsilon")

    def output_names(self) -> tuple[str, ...]:
        """Every tensor the graph writes, the main output first."""
        if self.phase == "backward":
            return ("DX", "DScale", "DBias")
        if self.phase == "inference":
            return ("Y",)
        if self.kind == "rmsnorm":
            return ("Y", "inv_var")
        if self.kind == "batchnorm":
            return ("Y", "mean", "inv_var", "next_running_mean", "next_running_var")
        return ("Y", "mean", "inv_var")

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        shapes: dict[str, tuple[int, ...]] = {}
        for name in (*self.input_names(), *self.output_names()):
            if name in _X_LIKE:
                shapes[name] = self.x_dims
            elif name in _PARAMS or name in ("running_mean", "running_var", "next_running_mean",
                                             "next_running_var"):
                shapes[name] = (1, self.channels, 1, 1)
            elif name in ("mean", "inv_var"):
                shapes[name] = self.stats_dims
            else:  # epsilon, momentum
                shapes[name] = (1, 1, 1, 1)
        return shapes

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Strides of every tensor: the storage layout for 4-D tensors (size-1 dims as channels-last does)."""
        return {name: layout_strides(dims, self.storage_layout) for name, dims in self.tensor_shapes().items()}

    def tensor_dtypes(self) -> dict[str, str]:
        """The dtype of every tensor: statistics, scalars and batchnorm's parameters are float32, the rest x's."""
        out = {}
        for name in self.tensor_shapes():
            is_float = name in _FLOAT_TENSORS or (self.kind == "batchnorm" and name in _PARAMS)
            out[name] = "fp32" if is_float else self.dtype
        return out

    def scalars(self) -> dict[str, float]:
        """The host-side scalars the graph takes by value (epsilon, momentum), with their values."""
        values = {"epsilon": self.epsilon, "momentum": self.momentum}
        return {n: values[n] for n in self.input_names() if n in values}

    # --- throughput model -----------------------------------------------------------------------------------

    def flops(self) -> int:
        """An estimate: FLOPS_PER_ELEMENT[kind, phase] per element of x, plus one per element for a residual.

        Layernorm forward: mean (1 add), variance (sub, mul, add), normalize (sub, mul), scale and bias (mul, add)
        = 8; rmsnorm forward: square and add, then mul, mul, add = 5; batchnorm inference is the pointwise chain
        sub, mul, mul, add = 4; backward passes about 10-12 (two reductions, then DX). Per-row or per-channel work
        (rsqrt, running statistics) is small beside these and not counted.
        """
        per = FLOPS_PER_ELEMENT[(self.kind, self.phase)] + (1 if self.residual else 0)
        return per * math.prod(self.x_dims)

    def min_bytes(self) -> int:
        """Every tensor in GPU memory read or written once, each in its own dtype; by-value scalars not counted."""
        dtypes, scalars = self.tensor_dtypes(), self.scalars()
        return sum(DTYPE_BYTES[dtypes[n]] * math.prod(d) for n, d in self.tensor_shapes().items() if n not in scalars)

    def label(self) -> str:
        if self.kind in ROW_KINDS:
            size = f"{self.rows}x{self.features}"
        else:
            size = f"{self.layout} n{self.n} c{self.c} {self.h}x{self.w}"
        extra = " +residual" if self.residual else ""
        mom = f" mom{self.momentum:g}" if self.kind == "batchnorm" and self.phase == "training" else ""
        eps = f" eps{self.epsilon:g}" if "epsilon" in self.input_names() else ""
        return f"{self.kind} {self.phase} {self.dtype} {size}{extra}{eps}{mom}"

    def support_hint(self) -> str:
        """One or two sentences on the shapes cuDNN supports for this kind (for errors about missing engines)."""
        common = "epsilon (and momentum) by value as host float32 [1,1,1,1] tensors"
        if self.kind in ROW_KINDS:
            return (f"{self.kind} runs with x as [rows, features, 1, 1] channels-last, scale and bias "
                    f"[1, features, 1, 1] in x's dtype, mean/inv_var [rows, 1, 1, 1] float32 and {common}; "
                    "features that are not a multiple of 8 leave a single generic engine.")
        if self.kind == "batchnorm":
            return ("batchnorm training and backward run with x [n, c, h, w] (NHWC or NCHW; c a multiple of 8 in "
                    "fp16/bf16, of 4 in fp32), "
                    f"float32 [1, c, 1, 1] scale, bias and statistics and {common}; the batchnorm_inference node has "
                    "no engine on its own, so inference is built as pointwise ops, NHWC only.")
        return (f"instancenorm runs with x [n, c, h, w] (NHWC or NCHW), scale and bias [1, c, 1, 1] in x's dtype, "
                f"mean/inv_var [n, c, 1, 1] float32 and {common}.")
