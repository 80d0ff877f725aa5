"""The PyTorch side of every problem: real-layout random inputs, a NaN-poisoned output, the float64 reference
and the same op in PyTorch eager (for timing).

Conv and matmul live here; other op families have a module of their own in this package (``sdpa``, ``norm``,
``pool``, ...), named by their spec's ``op``, with the same four functions: ``make_inputs``, ``make_outputs``,
``reference_outputs`` and ``torch_op``.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import math
import zlib
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import SpecError
from ..specs import ConvSpec, MatmulSpec, Spec, layout_strides
from ..specs.base import pair
from ..specs.layout import packed_strides

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["CPU_FLOP_LIMIT", "check_inputs", "input_names", "tensor_strides", "make_inputs", "make_output", "make_outputs",
           "reference", "reference_outputs", "torch_op", "torch_eager"]

#: Above this many FLOPs a float64 reference on the CPU would take too long for an interactive session.
CPU_FLOP_LIMIT = 2e10

#: The tensor each operand-taking epilogue step reads.
_EPILOGUE_OPERANDS = {"bias": "bias", "scale": "scale", "add": "residual"}

_TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64"}


def family(spec: Spec) -> ModuleType | None:
    """The module of this package that handles ``spec``'s op family, or None for conv and matmul (handled here)."""
    if isinstance(spec, (ConvSpec, MatmulSpec)) or not isinstance(spec, Spec):
        return None
    try:
        return importlib.import_module(f"{__name__}.{spec.op}")
    except ModuleNotFoundError:
        raise SpecError("spec", type(spec).__name__, "has no PyTorch reference in this version") from None


def _check_spec(spec: Spec) -> ConvSpec | MatmulSpec:
    if not isinstance(spec, (ConvSpec, MatmulSpec)):
        raise SpecError("spec", type(spec).__name__, "the PyTorch reference covers ConvSpec and MatmulSpec")
    return spec


def input_names(spec: Spec) -> tuple[str, ...]:
    """Names of every tensor the graph reads: the main op's inputs, then the epilogue's operands in chain order."""
    ins, _ = _check_spec(spec).io_names()
    return (*ins, *(_EPILOGUE_OPERANDS[s] for s in spec.epilogue if s in _EPILOGUE_OPERANDS))


def tensor_strides(spec: Spec, name: str) -> tuple[int, ...]:
    """Strides of tensor ``name`` as the graph sees it: the conv layout for 4-D tensors, BLAS 'T' for matmul."""
    spec = _check_spec(spec)
    dims = spec.tensor_shapes()[name]
    if isinstance(spec, ConvSpec):
        return layout_strides(dims, spec.layout)
    if (name == "A" and spec.transpose_a) or (name == "B" and spec.transpose_b):
        return packed_strides(dims, (0, 2, 1))  # column-major matrices: [b, k, m] contiguous, seen as [b, m, k]
    return packed_strides(dims, tuple(range(len(dims))))


def _fan_in(spec: ConvSpec | MatmulSpec) -> int:
    """How many products the main op sums per output element (about): sets the scale that keeps outputs O(1)."""
    if isinstance(spec, MatmulSpec):
        return spec.k
    (sh, sw), g = pair(spec.stride), spec.groups
    p, q = spec.out_hw
    return {"fprop": spec.c // g * spec.r * spec.s,
            "dgrad": max(1, spec.k // g * math.ceil(spec.r / sh) * math.ceil(spec.s / sw)),
            "wgrad": spec.n * p * q}[spec.direction]


def _ranges(spec: ConvSpec | MatmulSpec) -> dict[str, tuple[float, float]]:
    """Uniform range of each input: [-1, 1], the main op's second operand shrunk by 1/sqrt(fan_in)."""
    ins, _ = spec.io_names()
    out = {name: (-1.0, 1.0) for name in input_names(spec)}
    f = 1.0 / math.sqrt(_fan_in(spec))
    out[ins[1]] = (-f, f)
    if "scale" in out:
        out["scale"] = (0.5, 1.5)  # like a folded batchnorm: no sign flips, no zeros
    return out


def make_inputs(spec: Spec, *, device: str | torch.device = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Fresh uniform random inputs (never zeros, outputs O(1)) in the spec's dtype and real memory layout.

    Each tensor has the strides the graph declares (``tensor_strides``): NHWC tensors are channels_last, a
    transposed matmul operand is a column-major matrix. Values come from a CPU generator seeded from ``seed`` and
    the tensor's name, so they are reproducible on every device and do not change when an epilogue is added.
    """
    if (fam := family(spec)) is not None:
        return fam.make_inputs(spec, device=device, seed=seed)
    import torch

    spec = _check_spec(spec)
    dtype = getattr(torch, _TORCH_DTYPES[spec.dtype])
    shapes = spec.tensor_shapes()
    out: dict[str, torch.Tensor] = {}
    for name, (lo, hi) in _ranges(spec).items():
        dims = shapes[name]
        gen = torch.Generator(device="cpu").manual_seed((seed * 1_000_003 + zlib.crc32(name.encode())) % 2**63)
        flat = torch.rand(math.prod(dims), generator=gen, dtype=torch.float32) * (hi - lo) + lo
        t = flat.to(dtype).as_strided(dims, tensor_strides(spec, name))
        out[name] = t.to(torch.device(device))  # preserve_format: a dense tensor keeps its strides
    return out


def make_output(spec: Spec, *, device: str | torch.device = "cpu") -> torch.Tensor:
    """The output tensor with the graph's strides, filled with NaN so any element a plan never writes shows up."""
    import torch

    spec = _check_spec(spec)
    _, name = spec.io_names()
    dtype = getattr(torch, _TORCH_DTYPES[spec.dtype])
    out = torch.empty_strided(spec.tensor_shapes()[name], tensor_strides(spec, name), dtype=dtype,
                              device=torch.device(device))
    return out.fill_(math.nan)


def check_inputs(spec: Spec, inputs: dict[str, torch.Tensor], names: tuple[str, ...] | list[str],
                 host: frozenset[str] | set[str] = frozenset()) -> torch.device:
    """Every input in ``names`` is there with its logical shape, all (but ``host`` scalars) on one device: that
    device is returned. Shared by every op family's reference."""
    missing = [n for n in names if n not in inputs]
    if missing:
        raise SpecError("inputs", sorted(inputs), f"lacks {', '.join(missing)}: pass make_inputs(spec)")
    shapes = spec.tensor_shapes()
    for n in names:
        if tuple(inputs[n].shape) != tuple(shapes[n]):
            raise SpecError(f"inputs[{n!r}]", list(inputs[n].shape), f"must have shape {list(shapes[n])}")
    devices = {inputs[n].device for n in names if n not in host}
    if len(devices) > 1:
        raise SpecError("inputs", sorted(map(str, devices)), "must all be on one device"
                        + (" (host scalars such as epsilon excepted)" if host else ""))
    return devices.pop()


def _check_inputs(spec: ConvSpec | MatmulSpec, inputs: dict[str, torch.Tensor]) -> torch.device:
    return check_inputs(spec, inputs, input_names(spec))


def _check_cpu_size(spec: ConvSpec | MatmulSpec, device: torch.device, limit: float) -> None:
    if device.type == "cpu" and spec.flops() > limit:
        field = "n" if isinstance(spec, ConvSpec) else "batch"
        raise SpecError(field, getattr(spec, field),
                        f"makes {spec.flops():.3g} FLOPs, more than the CPU limit of {limit:.3g}: the PyTorch "
                        "reference on the CPU would take too long; shrink the sizes (batch first) or use a GPU",
                        spec=type(spec).__name__)


def _epilogue(spec: ConvSpec | MatmulSpec, y: torch.Tensor, t: dict[str, torch.Tensor]) -> torch.Tensor:
    """Apply the epilogue chain left to right, as the fused graph does."""
    import torch
    import torch.nn.functional as F

    for step in spec.epilogue:
        if step == "bias":
            y = y + t["bias"]
        elif step == "scale":
            y = y * t["scale"]
        elif step == "add":
            y = y + t["residual"]
        elif step == "relu":
            y = torch.relu(y)
        elif step == "gelu":
            y = F.gelu(y, approximate="none")
        elif step == "sigmoid":
            y = torch.sigmoid(y)
        elif step == "tanh":
            y = torch.tanh(y)
        else:  # pragma: no cover - the spec validated the chain
            raise SpecError("epilogue", step, "has no PyTorch reference")
    return y


def _compute(spec: ConvSpec | MatmulSpec, t: dict[str, torch.Tensor]) -> torch.Tensor:
    """The spec's op on tensors ``t`` in their own dtype: one code path for the reference and for eager."""
    import torch

    if isinstance(spec, MatmulSpec):
        return _epilogue(spec, torch.matmul(t["A"], t["B"]), t)  # transposes live in the strides already
    geom = dict(stride=pair(spec.stride), padding=pair(spec.padding), dilation=pair(spec.dilation),
                groups=spec.groups)
    if spec.direction == "fprop":
        y = torch.nn.functional.conv2d(t["X"], t["W"], **geom)
        return _epilogue(spec, y, t)
    if spec.direction == "dgrad":
        return torch.nn.grad.conv2d_input(spec.x_dims, t["W"], t["DY"], **geom)
    return torch.nn.grad.conv2d_weight(t["X"], spec.w_dims, t["DY"], **geom)


def reference(spec: Spec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
              ) -> torch.Tensor:
    """The problem computed in float64 on the inputs' device (float64 never uses TF32), for ``numerics.compare``."""
    spec = _check_spec(spec)
    device = _check_inputs(spec, inputs)
    _check_cpu_size(spec, device, cpu_flop_limit)
    return _compute(spec, {n: inputs[n].double() for n in input_names(spec)})


def torch_op(spec: Spec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """A zero-argument callable running the same op in PyTorch eager, native dtype, on the inputs' device."""
    if (fam := family(spec)) is not None:
        return fam.torch_op(spec, inputs)
    spec = _check_spec(spec)
    device = _check_inputs(spec, inputs)
    _check_cpu_size(spec, device, cpu_flop_limit)
    t = {n: inputs[n] for n in input_names(spec)}
    return lambda: _compute(spec, t)


def torch_eager(spec: Spec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                ) -> torch.Tensor:
    """The op's result in PyTorch eager, native dtype: what a PyTorch user would get."""
    return torch_op(spec, inputs, cpu_flop_limit=cpu_flop_limit)()


def make_outputs(spec: Spec, *, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Every tensor the graph writes, by name, NaN-poisoned (the first is the main output)."""
    if (fam := family(spec)) is not None:
        return fam.make_outputs(spec, device=device)
    _, name = _check_spec(spec).io_names()
    return {name: make_output(spec, device=device)}


def reference_outputs(spec: Spec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """The float64 reference of every output :func:`make_outputs` names."""
    if (fam := family(spec)) is not None:
        return fam.reference_outputs(spec, inputs)
    _, name = _check_spec(spec).io_names()
    return {name: reference(spec, inputs, cpu_flop_limit=cpu_flop_limit)}
