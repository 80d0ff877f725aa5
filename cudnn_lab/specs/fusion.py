"""Fusion beyond epilogues: graphs where cuDNN fuses work before a convolution or a reduction after it.

- :class:`ConvGenstatsSpec`: y = conv_fprop(x, w), and in the same graph ``genstats``: the per-channel SUM and
  SQ_SUM of y that batch-norm training needs (fp16 only: cuDNN 9.19 has no engine for it in bf16).
- :class:`ConvPrologueSpec`: y = conv_fprop(relu(x * scale + bias), w), the BN-ReLU-conv of ResNet training with
  the batch norm folded into a per-channel scale and bias applied as x is loaded, optionally with ``genstats`` of y
  too (the frontend's "SBRCS" sample: scale-bias-relu-conv-genstats; fp16 data and fp16 scale/bias only on 9.19).
- :class:`ConvReductionSpec`: r = reduce(conv_fprop(x, w)) with y never stored: a sum or max over the output
  channels (r [n, 1, p, q]) or per output channel over n, p, q (r [1, k, 1, 1]), in float32.
- :class:`ConvConcatSpec`: y1 = concatenate([conv_fprop(x, w), y0], channels) with y0 in place (the frontend's
  sample "Convolution fprop concatenate", cuDNN 9.8.0+): the conv writes its channels of y1 directly, no copy of y0.
- :class:`ConvDgradReluSpec`: dx = conv_dgrad(dy, w) * (x > 0), the backward of conv -> relu in one graph (the
  legacy "DgradDrelu" sample).

cuDNN runs these with its runtime-fusion engines, which take channels-last (NHWC) fp16/bf16 tensors whose channel
counts are multiples of 8 (16-byte vectors). What 9.19 ran and refused (H100, 2026-11-22): docs/FINDINGS.md.
Pure: no torch or cudnn here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, MAX_DIM, Spec, check_bool, check_choice, check_int
from .conv import ConvSpec
from .layout import InLayout

#: The data types cuDNN's runtime-fusion conv engines take (fp32 data has no tensor-core fusion engine).
FUSION_DTYPES: tuple[str, ...] = ("fp16", "bf16")
#: Channel counts must be multiples of this (16 bytes of fp16/bf16): the fusion engines load 16-byte vectors.
CHANNEL_MULTIPLE = 8
#: conv_fprop + genstats: cuDNN 9.19's engine for it (engine 2) takes fp16 only; bf16 found no engine (H100).
GENSTATS_DTYPES: tuple[str, ...] = ("fp16",)
#: The prologue's scale and bias: float32 or the data's own type (both measured to run on 9.19 without genstats).
PARAM_DTYPES: tuple[str, ...] = ("fp32", "fp16", "bf16")
#: Why 9.19 refuses the other types with genstats (measured on an H100, 2026-11-22; docs/FINDINGS.md).
_NO_BF16_GENSTATS = ("cuDNN 9.19 has no engine for conv_fprop + genstats in bf16 (its runtime-fusion engine 2 takes "
                     "fp16 only; measured on an H100)")
_CONV_FIELDS = ("n", "c", "h", "w", "k", "r", "s", "padding", "stride", "dilation")
#: The reductions the kit fuses after a conv (cuDNN's ``reduction_mode`` ADD and MAX, lower-cased).
CONV_REDUCTION_MODES: tuple[str, ...] = ("add", "max")
#: What a fused reduction reduces: 'c' over the output channels (r [n, 1, p, q]), 'nhw' over n, p, q per output
#: channel (r [1, k, 1, 1], the column reduction of batch statistics). Both modes on both ran on 9.19 (H200,
#: 2026-11-26: 14 plans each, engines 2, 4, 7, every one inside cuDNN's band; fp16 and bf16).
CONV_REDUCTION_AXES: tuple[str, ...] = ("c", "nhw")


@dataclasses.dataclass(frozen=True)
class _ConvFusionSpec(InLayout, Spec):
    """Base (no ``op``): a forward conv x [n, c, h, w] (*) w [k, c, r, s] -> y [n, k, p, q], all NHWC."""

    field_order: ClassVar[tuple[str, ...]] = (*_CONV_FIELDS, "dtype")

    n: int = 32
    c: int = 64
    h: int = 56
    w: int = 56
    k: int = 64
    r: int = 3
    s: int = 3
    padding: int | tuple[int, int] = 1
    stride: int | tuple[int, int] = 1
    dilation: int | tuple[int, int] = 1
    dtype: str = "fp16"

    layout: ClassVar[str] = "NHWC"
    #: the graph's inputs in the frontend call's order, and its outputs (main first); each family names its own
    input_tensors: ClassVar[tuple[str, ...]] = ("X", "W")
    output_tensors: ClassVar[tuple[str, ...]] = ("Y",)

    def input_names(self) -> tuple[str, ...]:
        return self.input_tensors

    def output_names(self) -> tuple[str, ...]:
        return self.output_tensors

    def _check_conv(self) -> None:
        name = type(self).__name__
        self._set("dtype", check_choice(name, "dtype", self.dtype, FUSION_DTYPES))
        if self.dtype not in GENSTATS_DTYPES and self._has_genstats():
            raise SpecError("dtype", self.dtype, f"must be fp16 with genstats: {_NO_BF16_GENSTATS}", spec=name)
        try:
            conv = ConvSpec(**{f: getattr(self, f) for f in _CONV_FIELDS}, layout="NHWC", dtype=self.dtype)
        except SpecError as e:
            raise SpecError(e.field, e.value, e.allowed, spec=name) from None
        for f in _CONV_FIELDS:
            self._set(f, getattr(conv, f))
        self._check_channel_multiple("c", "k")

    def _check_channel_multiple(self, *fields: str) -> None:
        """Each of ``fields`` (channel counts) a multiple of :data:`CHANNEL_MULTIPLE`, the one rule of every
        runtime-fusion pattern's channels."""
        for f in fields:
            if getattr(self, f) % CHANNEL_MULTIPLE:
                raise SpecError(f, getattr(self, f), f"must be a multiple of {CHANNEL_MULTIPLE}: cuDNN's runtime-"
                                f"fusion engines (the ones that run this pattern, 9.19) load {self.dtype} channels "
                                "in 16-byte vectors", spec=type(self).__name__)

    def _has_genstats(self) -> bool:
        """Whether the graph holds a genstats node (whose 9.19 engine takes fp16 only): it writes SUM."""
        return "SUM" in self.output_names()

    @property
    def conv(self) -> ConvSpec:
        """The convolution alone (no fusion): the same geometry as a :class:`ConvSpec`."""
        return ConvSpec(**{f: getattr(self, f) for f in _CONV_FIELDS}, layout="NHWC", dtype=self.dtype)

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": FUSION_DTYPES}

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        return {f: lim for f, lim in ConvSpec.field_limits(values).items() if f in _CONV_FIELDS}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        return {"c": f"mult. of {CHANNEL_MULTIPLE}", "k": f"mult. of {CHANNEL_MULTIPLE}"}

    def _conv_shapes(self) -> dict[str, tuple[int, ...]]:
        conv = self.conv
        return {"X": conv.x_dims, "W": conv.w_dims, "Y": conv.y_dims}

    def _stats_shapes(self) -> dict[str, tuple[int, ...]]:
        return {"SUM": (1, self.k, 1, 1), "SQ_SUM": (1, self.k, 1, 1)}

    def tensor_dtypes(self) -> dict[str, str]:
        """Data in ``dtype``; the statistics in float32."""
        return {n: "fp32" if n in ("SUM", "SQ_SUM") else self.dtype for n in self.tensor_shapes()}

    def flops(self) -> int:
        """The convolution's FLOPs (the fused pointwise work and the reductions are not counted)."""
        return self.conv.flops()

    def min_bytes(self) -> int:
        shapes, dtypes = self.tensor_shapes(), self.tensor_dtypes()
        return sum(math.prod(shapes[n]) * DTYPE_BYTES[dtypes[n]] for n in shapes)

    def _conv_label(self) -> str:
        pad = self.padding if isinstance(self.padding, int) else "x".join(map(str, self.padding))
        return (f"NHWC {self.dtype} n{self.n} c{self.c} {self.h}x{self.w} k{self.k} {self.r}x{self.s} pad{pad} "
                f"str{self.stride}")


@dataclasses.dataclass(frozen=True)
class ConvGenstatsSpec(_ConvFusionSpec):
    """y = conv_fprop(x, w) and, fused, SUM[k] = sum of y over n, p, q and SQ_SUM[k] = sum of y^2 (float32,
    [1, k, 1, 1]): the statistics a batch norm after this conv needs, without reading y again."""

    op: ClassVar[str] = "conv_genstats"
    menu_order: ClassVar[int] = 110
    title: ClassVar[str] = "conv + BN statistics"
    description: ClassVar[str] = ("fusion: ConvGenstatsSpec (conv_fprop + genstats: per-channel sum and sum of "
                                  "squares of y, for batch norm)")
    output_tensors: ClassVar[tuple[str, ...]] = ("Y", "SUM", "SQ_SUM")

    def __post_init__(self) -> None:
        self._check_conv()
        self.check_elements({"X": ("n", "c", "h", "w"), "W": ("k", "c", "r", "s"), "Y": ("n", "k", "h", "w"),
                             "SUM": ("k",), "SQ_SUM": ("k",)})

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": GENSTATS_DTYPES}

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        return {**self._conv_shapes(), **self._stats_shapes()}

    def label(self) -> str:
        return f"conv+genstats {self._conv_label()}"


@dataclasses.dataclass(frozen=True)
class ConvPrologueSpec(_ConvFusionSpec):
    """y = conv_fprop(relu(x * scale + bias), w) with per-input-channel ``scale`` and ``bias`` [1, c, 1, 1] in
    ``param_dtype`` (a folded batch norm, then ReLU, applied as the conv loads x); ``genstats`` adds y's SUM and
    SQ_SUM as in :class:`ConvGenstatsSpec` (cuDNN 9.19 runs that with fp16 data and fp16 scale and bias only)."""

    op: ClassVar[str] = "conv_prologue"
    menu_order: ClassVar[int] = 120
    title: ClassVar[str] = "BN-ReLU-conv prologue"
    description: ClassVar[str] = ("fusion: ConvPrologueSpec (relu(x*scale+bias) -> conv_fprop, the BN-ReLU-conv "
                                  "of ResNet training; optional genstats)")
    input_tensors: ClassVar[tuple[str, ...]] = ("X", "scale", "bias", "W")
    field_order: ClassVar[tuple[str, ...]] = (*_CONV_FIELDS, "dtype", "param_dtype", "genstats")

    param_dtype: str = "fp32"
    genstats: bool = False

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._set("genstats", check_bool(name, "genstats", self.genstats))
        self._check_conv()
        self._check_choices("param_dtype")
        if self.param_dtype not in ("fp32", self.dtype):
            raise SpecError("param_dtype", self.param_dtype, f"needs dtype={self.param_dtype} (scale and bias are "
                            f"fp32 or the data's own dtype, here {self.dtype})", spec=name)
        if self.genstats and self.param_dtype != self.dtype:
            raise SpecError("param_dtype", self.param_dtype, f"must be {self.dtype} with genstats=True: cuDNN 9.19 "
                            "has no engine for the scale-bias-relu-conv-genstats graph with fp32 scale and bias "
                            "(its engine 2 takes them in the data's fp16; measured on an H100)", spec=name)
        self.check_elements({"X": ("n", "c", "h", "w"), "W": ("k", "c", "r", "s"), "Y": ("n", "k", "h", "w"),
                             "scale": ("c",), "bias": ("c",), "SUM": ("k",), "SQ_SUM": ("k",)})

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": FUSION_DTYPES, "param_dtype": PARAM_DTYPES}

    def output_names(self) -> tuple[str, ...]:
        return ("Y", "SUM", "SQ_SUM") if self.genstats else ("Y",)

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        conv = self._conv_shapes()
        params = {"scale": (1, self.c, 1, 1), "bias": (1, self.c, 1, 1)}
        return {"X": conv["X"], **params, "W": conv["W"], "Y": conv["Y"],
                **(self._stats_shapes() if self.genstats else {})}

    def tensor_dtypes(self) -> dict[str, str]:
        out = super().tensor_dtypes()
        out.update(scale=self.param_dtype, bias=self.param_dtype)
        return out

    def label(self) -> str:
        stats = "+genstats" if self.genstats else ""
        return f"scale+bias+relu->conv{stats} {self._conv_label()} params {self.param_dtype}"



@dataclasses.dataclass(frozen=True)
class ConvReductionSpec(_ConvFusionSpec):
    """r = reduce(conv_fprop(x, w)) with the conv's y kept on chip (never stored): ``mode`` 'add' (a sum) or 'max';
    ``axes`` 'c' reduces over the k output channels (r [n, 1, p, q]), 'nhw' over n, p, q for each output channel
    (r [1, k, 1, 1]); r in float32."""

    op: ClassVar[str] = "conv_reduction"
    menu_order: ClassVar[int] = 130
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "axes")
    title: ClassVar[str] = "conv + reduction"
    description: ClassVar[str] = ("fusion: ConvReductionSpec (conv_fprop + a sum or max of y over its channels or "
                                  "per channel; y never stored)")
    output_tensors: ClassVar[tuple[str, ...]] = ("R",)
    field_order: ClassVar[tuple[str, ...]] = (*_CONV_FIELDS, "dtype", "mode", "axes")

    mode: str = "add"
    axes: str = "c"

    def __post_init__(self) -> None:
        self._check_conv()
        self._check_choices("mode", "axes")
        self.check_elements({"X": ("n", "c", "h", "w"), "W": ("k", "c", "r", "s"), "R": ("n", "h", "w", "k")})

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": FUSION_DTYPES, "mode": CONV_REDUCTION_MODES, "axes": CONV_REDUCTION_AXES}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        return {**super().field_hints(values), "axes": "c: over channels; nhw: per channel"}

    @property
    def r_dims(self) -> tuple[int, int, int, int]:
        """The reduction's output: y's dims with the reduced ones set to 1."""
        n, k, p, q = self.conv.y_dims
        return (n, 1, p, q) if self.axes == "c" else (1, k, 1, 1)

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        conv = self._conv_shapes()
        return {"X": conv["X"], "W": conv["W"], "R": self.r_dims}

    def tensor_dtypes(self) -> dict[str, str]:
        """x and w in ``dtype``; r in float32 (the reduction accumulates and writes float)."""
        return {"X": self.dtype, "W": self.dtype, "R": "fp32"}

    def label(self) -> str:
        what = "over channels" if self.axes == "c" else "per channel"
        return f"conv+reduction({self.mode} {what}) {self._conv_label()}"


@dataclasses.dataclass(frozen=True)
class ConvConcatSpec(_ConvFusionSpec):
    """y1 = concatenate([conv_fprop(x, w), y0], axis=channels) [n, k + k0, p, q] with y0 [n, k0, p, q] the input
    in place (``in_place_index=1``): the conv writes channels 0..k-1 of y1; y0's channels are the caller's (in real
    use y0 is already there, a view of y1) and cuDNN leaves them unwritten (H200, cuDNN 9.19, 2026-11-26). The
    frontend's sample "Convolution fprop concatenate" (cuDNN 9.8.0+)."""

    op: ClassVar[str] = "conv_concat"
    menu_order: ClassVar[int] = 140
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "k0")
    title: ClassVar[str] = "conv + concatenate"
    description: ClassVar[str] = ("fusion: ConvConcatSpec (conv_fprop written into its channels of a concatenated "
                                  "tensor; the other part in place)")
    input_tensors: ClassVar[tuple[str, ...]] = ("X", "W", "Y0")
    output_tensors: ClassVar[tuple[str, ...]] = ("Y1",)
    field_order: ClassVar[tuple[str, ...]] = (*_CONV_FIELDS, "k0", "dtype")

    k0: int = 64

    def __post_init__(self) -> None:
        name = type(self).__name__
        self._check_conv()
        self._set("k0", check_int(name, "k0", self.k0))
        self._check_channel_multiple("k0")
        self.check_elements({"X": ("n", "c", "h", "w"), "W": ("k", "c", "r", "s"), "Y0": ("n", "k0", "h", "w"),
                             "Y1": ("n", "k", "k0", "h", "w")})

    @classmethod
    def field_limits(cls, values: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
        return {**super().field_limits(values), "k0": (1, MAX_DIM)}

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        return {**super().field_hints(values), "k0": f"mult. of {CHANNEL_MULTIPLE}"}

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        conv = self._conv_shapes()
        n, k, p, q = conv["Y"]
        return {"X": conv["X"], "W": conv["W"], "Y0": (n, self.k0, p, q), "Y1": (n, k + self.k0, p, q)}

    def label(self) -> str:
        return f"conv+concat(k0={self.k0}) {self._conv_label()}"


@dataclasses.dataclass(frozen=True)
class ConvDgradReluSpec(_ConvFusionSpec):
    """dx = conv_dgrad(dy, w) * (x > 0): the data gradient of conv -> relu in one graph, dy [n, k, p, q], w
    [k, c, r, s], x [n, c, h, w] the relu's forward input (its mask), dx [n, c, h, w] (the legacy sample
    "DgradDrelu")."""

    op: ClassVar[str] = "conv_dgrad_relu"
    menu_order: ClassVar[int] = 150
    sweep_axes: ClassVar[tuple[str, ...]] = ("n", "dtype")
    title: ClassVar[str] = "conv dgrad + ReLU backward"
    description: ClassVar[str] = ("fusion: ConvDgradReluSpec (conv_dgrad then relu_backward: dx = dgrad(dy, w) * "
                                  "(x > 0))")
    input_tensors: ClassVar[tuple[str, ...]] = ("DY", "W", "X")
    output_tensors: ClassVar[tuple[str, ...]] = ("DX",)

    def __post_init__(self) -> None:
        self._check_conv()
        self.check_elements({"X": ("n", "c", "h", "w"), "DX": ("n", "c", "h", "w"), "W": ("k", "c", "r", "s"),
                             "DY": ("n", "k", "h", "w")})

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        conv = self._conv_shapes()
        return {"DY": conv["Y"], "W": conv["W"], "X": conv["X"], "DX": conv["X"]}

    def label(self) -> str:
        return f"conv_dgrad+relu_bwd {self._conv_label()}"
