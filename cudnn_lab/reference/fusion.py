"""The PyTorch side of the fusion specs (:class:`~cudnn_lab.specs.ConvGenstatsSpec`,
:class:`~cudnn_lab.specs.ConvPrologueSpec`, ``ConvReductionSpec``, ``ConvConcatSpec``, ``ConvDgradReluSpec``):
NHWC inputs, NaN-poisoned outputs, float64 references and the same
sequence of ops in PyTorch eager (what ``torch.compile`` can fuse, for ``benchmarks/fusion.py``).

Inputs: x in [0, 1] for genstats (post-ReLU activations), in [-1, 1] under the prologue (its ReLU then zeroes part
of it), and a filter in [0, 2/fan_in]. The filter is nonnegative so every channel's mean is clearly positive: the
per-channel SUM is then far from zero and its relative error means something (with zero-mean data a SUM near 0 would
fail any relative band through cancellation alone, as the frontend's own test, which uses atol 0.5, shows). The same
holds for a fused reduction's sum; conv + concatenate's y0 is in [-1, 1]; the dgrad's dy is in [0, 1] with a
nonnegative filter (fan-in k * r * s) so dx is clearly nonzero, and x in [-1, 1] so the ReLU mask drops about half.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.base import pair
from ..specs.fusion import ConvConcatSpec, ConvDgradReluSpec, ConvGenstatsSpec, ConvPrologueSpec, ConvReductionSpec
from . import reduction as _reduction  # noqa: F401 - registers the standalone reduction family (reference/reduction.py)
from .common import CPU_FLOP_LIMIT, checked_device, expect, poisoned, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "compute"]

Fusion = ConvGenstatsSpec | ConvPrologueSpec | ConvReductionSpec | ConvConcatSpec | ConvDgradReluSpec
_OTHERS = (ConvPrologueSpec, ConvReductionSpec, ConvConcatSpec, ConvDgradReluSpec)


def _check_spec(spec: object) -> Fusion:
    if isinstance(spec, _OTHERS):
        return spec
    return expect(spec, ConvGenstatsSpec, "fusion")


def input_names(spec: Fusion) -> tuple[str, ...]:
    return _check_spec(spec).input_names()


def _range(spec: Fusion, name: str) -> tuple[float, float]:
    fan_in = (spec.k if isinstance(spec, ConvDgradReluSpec) else spec.c) * spec.r * spec.s
    signed = isinstance(spec, (ConvPrologueSpec, ConvDgradReluSpec))
    return {"X": (-1.0, 1.0) if signed else (0.0, 1.0), "W": (0.0, 2.0 / fan_in), "scale": (0.5, 1.5),
            "bias": (-0.25, 0.5), "Y0": (-1.0, 1.0), "DY": (0.0, 1.0)}[name]


def make_inputs(spec: Fusion, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    import torch

    spec = _check_spec(spec)
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    dev = torch.device(device)
    return {n: uniform(n, shapes[n], strides[n], dtypes[n], seed, *_range(spec, n), device=dev).to(dev)
            for n in spec.input_names()}


def make_outputs(spec: Fusion, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    spec = _check_spec(spec)
    return poisoned(spec, spec.output_names(), device)


def compute(spec: Fusion, t: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every output from tensors ``t`` in their own dtype (the statistics and reductions in float32 at least, as
    cuDNN writes them): the prologue, the convolution, then SUM and SQ_SUM over n, p, q as [1, k, 1, 1]; a fused
    reduction of y; y written into its channels of the concatenation; or the dgrad masked by x > 0."""
    import torch
    import torch.nn.functional as F

    geo = dict(stride=pair(spec.stride), padding=pair(spec.padding), dilation=pair(spec.dilation))
    if isinstance(spec, ConvDgradReluSpec):
        dx = torch.nn.grad.conv2d_input(list(spec.conv.x_dims), t["W"], t["DY"], **geo)
        return {"DX": dx * (t["X"] > 0).to(dx.dtype)}
    x = t["X"]
    if isinstance(spec, ConvPrologueSpec):
        x = torch.relu(x * t["scale"].to(x.dtype) + t["bias"].to(x.dtype))
    y = F.conv2d(x, t["W"], **geo)
    if isinstance(spec, ConvReductionSpec):
        acc = y.float() if y.dtype in (torch.float16, torch.bfloat16) else y
        dims = (1,) if spec.axes == "c" else (0, 2, 3)
        return {"R": acc.sum(dim=dims, keepdim=True) if spec.mode == "add" else acc.amax(dim=dims, keepdim=True)}
    if isinstance(spec, ConvConcatSpec):
        return {"Y1": torch.cat([y, t["Y0"].to(y.dtype)], dim=1)}
    out = {"Y": y}
    if "SUM" in spec.output_names():
        acc = y.float() if y.dtype in (torch.float16, torch.bfloat16) else y
        out["SUM"] = acc.sum(dim=(0, 2, 3), keepdim=True)
        out["SQ_SUM"] = (acc * acc).sum(dim=(0, 2, 3), keepdim=True)
    return out


def reference_outputs(spec: Fusion, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Every output in float64."""
    spec = _check_spec(spec)
    checked_device(spec, inputs, cpu_flop_limit)
    return compute(spec, {n: inputs[n].double() for n in spec.input_names()})


def torch_op(spec: Fusion, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """The same ops in PyTorch eager, native dtype: one kernel (or more) per op, the statistics too; returns the
    main output."""
    spec = _check_spec(spec)
    checked_device(spec, inputs, cpu_flop_limit)
    t = {n: inputs[n] for n in spec.input_names()}
    main = spec.output_names()[0]
    return lambda: compute(spec, t)[main]


def comparable(spec: Fusion, outputs: Mapping[str, torch.Tensor], inputs: Mapping[str, torch.Tensor]
               ) -> dict[str, torch.Tensor] | None:
    """Conv + concatenate in place: y1's channels k.. are the in-place input's (``in_place_index=1``), which in real
    use already lies there and which cuDNN does not write (its NaN poison stayed, every element of it, H200 with
    cuDNN 9.19, 2026-11-26). Those elements still NaN are given y0's values, as the caller's buffer holds them; any
    value cuDNN did write there is kept and checked. None (the outputs as they are) for the other fusions."""
    import torch

    if not isinstance(spec, ConvConcatSpec):
        return None
    y1 = outputs["Y1"].clone()
    part = y1[:, spec.k:]
    part.copy_(torch.where(torch.isnan(part), inputs["Y0"].to(device=part.device, dtype=part.dtype), part))
    return {**outputs, "Y1": y1}


for _cls in (ConvGenstatsSpec, ConvPrologueSpec, ConvReductionSpec, ConvConcatSpec, ConvDgradReluSpec):
    REFERENCES.add(_cls, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op,
                                   comparable=comparable))
