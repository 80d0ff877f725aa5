"""The PyTorch side of the MoE grouped GEMM (:class:`~cudnn_lab.specs.moe.MoeSpec`): tokens, per-expert weights and
the offsets the spec's routing gives; the float64 reference and the eager op as a loop of one matmul per expert,
and the baselines that show what the imbalance costs (one dense GEMM of the same FLOPs, ``torch._grouped_mm``).

The tolerance bands are the GEMM's (``numerics.tolerance_bands``' defaults, as for :class:`MatmulSpec`): each
output element is one dot product of length ``hidden_in`` accumulated in fp32. torch is imported inside the
functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..specs.moe import MoeSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, expect, poisoned, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["input_names", "make_inputs", "make_outputs", "reference_outputs", "torch_op", "extra_baselines",
           "expert_loop", "grouped_mm_available"]


def _check_spec(spec: object) -> MoeSpec:
    return expect(spec, MoeSpec, "MoE grouped GEMM")


def input_names(spec: MoeSpec) -> tuple[str, ...]:
    """X, W, offsets: the order of the frontend call's ``token``, ``weight``, ``first_token_offset``."""
    return _check_spec(spec).io_names()[0]


def make_inputs(spec: MoeSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """X uniform in [-1, 1]; W in +-1/sqrt(hidden_in), column-major per expert (outputs stay O(1)); the offsets
    of the spec's routing as int32 (computed from the spec, not drawn: they define the problem)."""
    import torch

    spec = _check_spec(spec)
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    f = 1.0 / math.sqrt(spec.hidden_in)
    dev = torch.device(device)
    return {"X": uniform("X", shapes["X"], strides["X"], spec.dtype, seed, device=dev).to(dev),
            "W": uniform("W", shapes["W"], strides["W"], spec.dtype, seed, -f, f, device=dev).to(dev),
            "offsets": torch.tensor(spec.offsets(), dtype=torch.int32).reshape(shapes["offsets"]).to(dev)}


def make_outputs(spec: MoeSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Y, NaN-filled: a row no expert's GEMM writes shows."""
    return poisoned(_check_spec(spec), ("Y",), device)


def _bounds(spec: MoeSpec, offsets: torch.Tensor) -> list[tuple[int, int]]:
    """Each expert's (first, end) token rows, read from the offsets tensor (checked against the spec's routing)."""
    values = tuple(int(v) for v in offsets.flatten().tolist())
    if values != spec.offsets():
        raise SpecError("inputs['offsets']", list(values), f"must be the spec's offsets {list(spec.offsets())}")
    ends = (*values[1:], spec.tokens)
    return list(zip(values, ends))


def expert_loop(x: torch.Tensor, w: torch.Tensor, bounds: list[tuple[int, int]], y: torch.Tensor) -> torch.Tensor:
    """y[0, a:b] = x[0, a:b] @ w[e] for each expert e with tokens: what a PyTorch MoE layer without a grouped kernel
    runs (one matmul launch per expert)."""
    import torch

    for e, (a, b) in enumerate(bounds):
        if b > a:
            torch.matmul(x[0, a:b], w[e], out=y[0, a:b])
    return y


def _check(spec: MoeSpec, inputs: Mapping[str, torch.Tensor], flop_limit: float) -> list[tuple[int, int]]:
    device = check_inputs(spec, inputs, input_names(spec))
    check_cpu_work(spec, device, "tokens", flop_limit=flop_limit)
    return _bounds(spec, inputs["offsets"])


def reference_outputs(spec: MoeSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Y in float64: the per-expert loop on float64 copies (every row belongs to exactly one expert)."""
    import torch

    spec = _check_spec(spec)
    bounds = _check(spec, inputs, cpu_flop_limit)
    x, w = inputs["X"].double(), inputs["W"].double()
    y = torch.empty(spec.tensor_shapes()["Y"], dtype=torch.float64, device=x.device)
    return {"Y": expert_loop(x, w, bounds, y)}


def torch_op(spec: MoeSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """The eager loop of one matmul per expert in the native dtype, into one preallocated Y (the offsets are read
    on the host once, before timing, as a layer that knows its routing would)."""
    spec = _check_spec(spec)
    bounds = _check(spec, inputs, cpu_flop_limit)
    x, w = inputs["X"], inputs["W"]
    y = make_outputs(spec, device=x.device)["Y"]
    return lambda: expert_loop(x, w, bounds, y)


def grouped_mm_available() -> bool:
    """Whether this PyTorch has ``torch._grouped_mm`` (a private op of PyTorch 2.8+; its kernels need Hopper+)."""
    import torch

    return hasattr(torch, "_grouped_mm")


def extra_baselines(spec: MoeSpec, inputs: Mapping[str, torch.Tensor]) -> dict[str, Callable[[], Any]]:
    """The baselines beside the loop that show what the routing costs, by name:

    - ``dense_gemm``: one dense ``torch.matmul`` of the same FLOPs ([tokens, hidden_in] x [hidden_in, hidden_out],
      expert 0's weight for all tokens): what the grouped GEMM would take with no grouping at all;
    - ``grouped_mm``: ``torch._grouped_mm`` over the same tokens, weights and offsets, where this PyTorch has it.
    """
    import torch

    spec = _check_spec(spec)
    check_inputs(spec, inputs, input_names(spec))
    x, w = inputs["X"][0], inputs["W"]
    m, n, _ = spec.dense_equivalent()
    dense_out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    ops: dict[str, Callable[[], Any]] = {"dense_gemm": lambda: torch.matmul(x, w[0], out=dense_out)}
    if grouped_mm_available():
        ends = torch.tensor(spec.boundaries()[1:], dtype=torch.int32, device=x.device)  # each group's end
        ops["grouped_mm"] = lambda: torch._grouped_mm(x, w, offs=ends)
    return ops


REFERENCES.add(MoeSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
