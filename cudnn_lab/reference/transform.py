"""The PyTorch side of tensor transforms (:class:`~cudnn_lab.specs.TransformSpec`): x (and X2) in their layout, a
NaN-poisoned y in its own layout and dtype, y in float64 (a conversion's reference is x rounded by PyTorch to the
output dtype, so a correct conversion matches it exactly), and PyTorch's own copy for the baseline.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.transform import TransformSpec
from .common import CPU_FLOP_LIMIT, checked_device, expecting, poisoned, torch_dtype, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "transform"]


_check_spec = expecting(TransformSpec, "tensor transform")


def input_names(spec: TransformSpec) -> tuple[str, ...]:
    return _check_spec(spec).input_names()


def make_inputs(spec: TransformSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """X (and X2) uniform in [-4, 4] (beyond fp16's and bf16's exact integers, so rounding shows) in the spec's dtype
    and layout."""
    import torch

    spec = _check_spec(spec)
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    return {n: uniform(n, shapes[n], strides[n], spec.dtype, seed, -4.0, 4.0, device=device).to(torch.device(device))
            for n in spec.input_names()}


def make_outputs(spec: TransformSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Y in its layout and dtype, NaN-filled."""
    return poisoned(_check_spec(spec), ("Y",), device)


def transform(spec: TransformSpec, t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """The transform of PyTorch tensors ``t`` in their own dtype (convert: to the output dtype): the logical result;
    the output's memory layout is the caller's (strides do not change values)."""
    import torch

    x = t["X"]
    if spec.kind == "convert":
        return x.to(torch_dtype(spec.out_dtype))
    if spec.kind == "transpose":
        return x.permute(*spec.perm)
    if spec.kind == "reshape":
        return x.reshape(spec.reshaped_dims)
    if spec.kind == "slice":
        return x[tuple(slice(a, b) for a, b in spec.slices)]
    return torch.cat([x, t["X2"]], dim=spec.axis)


def reference_outputs(spec: TransformSpec, inputs: Mapping[str, torch.Tensor], *,
                      cpu_flop_limit: float = CPU_FLOP_LIMIT) -> dict[str, torch.Tensor]:
    """Y in float64: the same values PyTorch's transform gives (a conversion rounded to the output dtype first)."""
    spec = _check_spec(spec)
    checked_device(spec, inputs, cpu_flop_limit, what="element copies")
    return {"Y": transform(spec, inputs).double()}


def torch_op(spec: TransformSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """PyTorch writing y in the output's layout: ``x.to(dtype, memory_format)`` for a conversion, ``contiguous``
    after a permute/reshape/slice, ``torch.cat``."""
    import torch

    spec = _check_spec(spec)
    checked_device(spec, inputs, cpu_flop_limit, what="element copies")
    if spec.kind == "convert":
        fmt = torch.channels_last if spec.out_layout == "NHWC" else torch.contiguous_format
        dtype = torch_dtype(spec.out_dtype)
        return lambda: inputs["X"].to(dtype=dtype, memory_format=fmt, copy=True)
    if spec.kind in ("slice", "concatenate"):
        fmt = torch.channels_last if spec.layout == "NHWC" else torch.contiguous_format
        return lambda: transform(spec, inputs).contiguous(memory_format=fmt)
    return lambda: transform(spec, inputs).contiguous()


REFERENCES.add(TransformSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
