"""The PyTorch side of pooling (:class:`~cudnn_lab.specs.PoolSpec`): X in the real layout, a NaN-poisoned Y,
the float64 reference and PyTorch's own pooling.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import SpecError
from ..specs.base import pair
from ..specs.pool import PoolSpec

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "pool"]

_TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}


def _dtype(name: str) -> torch.dtype:
    import torch

    return getattr(torch, _TORCH_DTYPES[name])


def _check_spec(spec: object) -> PoolSpec:
    if not isinstance(spec, PoolSpec):
        raise SpecError("spec", type(spec).__name__, "must be a PoolSpec for the pooling reference")
    return spec


def make_inputs(spec: PoolSpec, *, device: str | torch.device = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """X uniform in [-1, 1], never zeros, in the spec's dtype and layout (NHWC: channels_last strides), from a CPU
    generator seeded by ``seed``. Negative values catch a max that treats the padding as zeros."""
    import torch

    spec = _check_spec(spec)
    dims, strides = spec.x_dims, spec.tensor_strides()["X"]
    gen = torch.Generator(device="cpu").manual_seed((seed * 1_000_003 + zlib.crc32(b"X")) % 2**63)
    flat = torch.rand(math.prod(dims), generator=gen, dtype=torch.float32) * 2 - 1
    x = flat.to(_dtype(spec.dtype)).as_strided(dims, strides)
    return {"X": x.to(torch.device(device))}  # preserve_format: a dense tensor keeps its strides


def make_outputs(spec: PoolSpec, *, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Y with the layout's strides, filled with NaN so any element cuDNN never writes shows up."""
    import torch

    spec = _check_spec(spec)
    y = torch.empty_strided(spec.y_dims, spec.tensor_strides()["Y"], dtype=_dtype(spec.dtype),
                            device=torch.device(device))
    return {"Y": y.fill_(math.nan)}


def pool(spec: PoolSpec, x: torch.Tensor) -> torch.Tensor:
    """The spec's pooling of ``x`` with PyTorch, in ``x``'s own dtype and device."""
    import torch.nn.functional as F

    geo = dict(kernel_size=pair(spec.window), stride=pair(spec.stride), padding=pair(spec.padding))
    if spec.mode == "max":
        return F.max_pool2d(x, **geo)
    return F.avg_pool2d(x, **geo, count_include_pad=spec.mode == "avg")


def _check_inputs(spec: PoolSpec, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    if "X" not in inputs:
        raise SpecError("inputs", sorted(inputs), "lacks X: pass make_inputs(spec)")
    x = inputs["X"]
    if tuple(x.shape) != spec.x_dims:
        raise SpecError("inputs['X']", list(x.shape), f"must have shape {list(spec.x_dims)}")
    return x


def _check_cpu_size(spec: PoolSpec, x: torch.Tensor) -> None:
    from . import CPU_FLOP_LIMIT

    if x.device.type == "cpu" and spec.flops() > CPU_FLOP_LIMIT:
        raise SpecError("n", spec.n, f"makes {spec.flops():.3g} window operations, more than the CPU limit of "
                        f"{CPU_FLOP_LIMIT:.3g}: the PyTorch reference on the CPU would take too long; shrink the "
                        "sizes (batch first) or use a GPU", spec=type(spec).__name__)


def reference_outputs(spec: PoolSpec, inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Y in float64 on X's device: max_pool2d, or avg_pool2d with count_include_pad as the mode says."""
    spec = _check_spec(spec)
    x = _check_inputs(spec, inputs)
    _check_cpu_size(spec, x)
    return {"Y": pool(spec, x.double())}


def torch_op(spec: PoolSpec, inputs: dict[str, torch.Tensor]) -> Callable[[], torch.Tensor]:
    """A zero-argument callable running the same pooling in PyTorch eager, native dtype, on X's device."""
    spec = _check_spec(spec)
    x = _check_inputs(spec, inputs)
    _check_cpu_size(spec, x)
    return lambda: pool(spec, x)
