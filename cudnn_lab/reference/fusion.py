"""The PyTorch side of the fusion specs (:class:`~cudnn_lab.specs.ConvGenstatsSpec`,
:class:`~cudnn_lab.specs.ConvPrologueSpec`): NHWC inputs, NaN-poisoned outputs, float64 references and the same
sequence of ops in PyTorch eager (what ``torch.compile`` can fuse, for ``benchmarks/fusion.py``).

Inputs: x in [0, 1] for genstats (post-ReLU activations), in [-1, 1] under the prologue (its ReLU then zeroes part
of it), and a filter in [0, 2/fan_in]. The filter is nonnegative so every channel's mean is clearly positive: the
per-channel SUM is then far from zero and its relative error means something (with zero-mean data a SUM near 0 would
fail any relative band through cancellation alone, as the frontend's own test, which uses atol 0.5, shows).

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.base import pair
from ..specs.fusion import ConvGenstatsSpec, ConvPrologueSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, expect, poisoned, tensor_dtypes, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "compute"]

Fusion = ConvGenstatsSpec | ConvPrologueSpec


def _check_spec(spec: object) -> Fusion:
    if isinstance(spec, ConvPrologueSpec):
        return spec
    return expect(spec, ConvGenstatsSpec, "fusion")


def input_names(spec: Fusion) -> tuple[str, ...]:
    return _check_spec(spec).input_names()


def _range(spec: Fusion, name: str) -> tuple[float, float]:
    fan_in = spec.c * spec.r * spec.s
    return {"X": (-1.0, 1.0) if isinstance(spec, ConvPrologueSpec) else (0.0, 1.0), "W": (0.0, 2.0 / fan_in),
            "scale": (0.5, 1.5), "bias": (-0.25, 0.5)}[name]


def make_inputs(spec: Fusion, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    import torch

    spec = _check_spec(spec)
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), tensor_dtypes(spec)
    return {n: uniform(n, shapes[n], strides[n], dtypes[n], seed, *_range(spec, n)).to(torch.device(device))
            for n in spec.input_names()}


def make_outputs(spec: Fusion, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    spec = _check_spec(spec)
    return poisoned(spec, spec.output_names(), device)


def compute(spec: Fusion, t: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every output from tensors ``t`` in their own dtype (the statistics in float32 at least, as cuDNN writes them):
    the prologue, the convolution, then SUM and SQ_SUM over n, p, q as [1, k, 1, 1]."""
    import torch
    import torch.nn.functional as F

    x = t["X"]
    if isinstance(spec, ConvPrologueSpec):
        x = torch.relu(x * t["scale"].to(x.dtype) + t["bias"].to(x.dtype))
    y = F.conv2d(x, t["W"], stride=pair(spec.stride), padding=pair(spec.padding), dilation=pair(spec.dilation))
    out = {"Y": y}
    if "SUM" in spec.output_names():
        acc = y.float() if y.dtype in (torch.float16, torch.bfloat16) else y
        out["SUM"] = acc.sum(dim=(0, 2, 3), keepdim=True)
        out["SQ_SUM"] = (acc * acc).sum(dim=(0, 2, 3), keepdim=True)
    return out


def _check(spec: Fusion, inputs: Mapping[str, torch.Tensor], flop_limit: float) -> None:
    device = check_inputs(spec, inputs, spec.input_names())
    check_cpu_work(spec, device, "n", flop_limit=flop_limit)


def reference_outputs(spec: Fusion, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Every output in float64."""
    spec = _check_spec(spec)
    _check(spec, inputs, cpu_flop_limit)
    return compute(spec, {n: inputs[n].double() for n in spec.input_names()})


def torch_op(spec: Fusion, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """The same ops in PyTorch eager, native dtype: one kernel (or more) per op, the statistics too; returns y."""
    spec = _check_spec(spec)
    _check(spec, inputs, cpu_flop_limit)
    t = {n: inputs[n] for n in spec.input_names()}
    return lambda: compute(spec, t)["Y"]


for _cls in (ConvGenstatsSpec, ConvPrologueSpec):
    REFERENCES.add(_cls, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
