"""What conv and matmul share in PyTorch: two main operands, then the pointwise epilogue chain (its operands and
the chain itself), and the inputs and outputs of such a fused graph."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..specs.conv import ConvSpec
from ..specs.conv3d import Conv3dSpec
from ..specs.matmul import MatmulSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, poisoned, uniform

if TYPE_CHECKING:  # pragma: no cover
    import torch

#: The tensor each operand-taking step reads.
OPERANDS = {"bias": "bias", "scale": "scale", "add": "residual"}


def input_names(spec: ConvSpec | Conv3dSpec | MatmulSpec) -> tuple[str, ...]:
    """The main op's inputs, then the epilogue's operands in chain order."""
    ins, _ = spec.io_names()
    return (*ins, *(OPERANDS[s] for s in spec.epilogue if s in OPERANDS))


def make_inputs(spec: ConvSpec | Conv3dSpec | MatmulSpec, fan_in: int, *, device: Any = "cpu", seed: int = 0
                ) -> dict[str, torch.Tensor]:
    """Uniform [-1, 1] inputs (never zeros) in the graph's strides; the main op's second operand shrunk by
    1/sqrt(fan_in) so outputs stay O(1); a scale in [0.5, 1.5] like a folded batchnorm (no sign flips, no zeros)."""
    import torch

    ins, _ = spec.io_names()
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    f = 1.0 / math.sqrt(fan_in)
    ranges = {name: (-1.0, 1.0) for name in input_names(spec)}
    ranges[ins[1]] = (-f, f)
    if "scale" in ranges:
        ranges["scale"] = (0.5, 1.5)
    # .to(device) keeps a dense tensor's strides (preserve_format)
    dev = torch.device(device)
    return {name: uniform(name, shapes[name], strides[name], spec.dtype, seed, lo, hi, device=dev).to(dev)
            for name, (lo, hi) in ranges.items()}


def make_outputs(spec: ConvSpec | Conv3dSpec | MatmulSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """The one output with the graph's strides, NaN-filled."""
    _, name = spec.io_names()
    return poisoned(spec, (name,), device)


def apply_epilogue(spec: ConvSpec | Conv3dSpec | MatmulSpec, y: torch.Tensor, t: Mapping[str, torch.Tensor]
                   ) -> torch.Tensor:
    """Apply the chain left to right, as the fused graph does."""
    import torch
    import torch.nn.functional as F

    steps = {"bias": lambda v: v + t["bias"], "scale": lambda v: v * t["scale"], "add": lambda v: v + t["residual"],
             "relu": torch.relu, "gelu": lambda v: F.gelu(v, approximate="none"), "sigmoid": torch.sigmoid,
             "tanh": torch.tanh}
    for step in spec.epilogue:
        y = steps[step](y)
    return y


def functions(compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor], size_field: str
              ) -> tuple[Callable[..., dict[str, torch.Tensor]], Callable[..., Callable[[], torch.Tensor]]]:
    """``reference_outputs`` and ``torch_op`` of a fused family from ``compute(spec, tensors)`` (the op and its
    epilogue in the tensors' own dtype): one code path for the float64 reference and for eager."""
    def reference_outputs(spec: Any, inputs: Mapping[str, torch.Tensor], *,
                          cpu_flop_limit: float = CPU_FLOP_LIMIT) -> dict[str, torch.Tensor]:
        names = input_names(spec)
        check_cpu_work(spec, check_inputs(spec, inputs, names), size_field, flop_limit=cpu_flop_limit)
        return {spec.io_names()[1]: compute(spec, {n: inputs[n].double() for n in names})}

    def torch_op(spec: Any, inputs: Mapping[str, torch.Tensor], *,
                 cpu_flop_limit: float = CPU_FLOP_LIMIT) -> Callable[[], torch.Tensor]:
        names = input_names(spec)
        check_cpu_work(spec, check_inputs(spec, inputs, names), size_field, flop_limit=cpu_flop_limit)
        t = {n: inputs[n] for n in names}
        return lambda: compute(spec, t)

    return reference_outputs, torch_op
