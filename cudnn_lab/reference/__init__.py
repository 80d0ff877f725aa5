"""The PyTorch side of every problem: real-layout random inputs, NaN-poisoned outputs, the float64 reference and
the same op in PyTorch eager (for timing).

Each op family has a module here (``conv``, ``matmul``, ``sdpa``, ``norm``, ``pool``, ``softmax``, ``activation``,
``transform``, ``rnn``, ``fusion``) that registers its functions in :data:`~.families.REFERENCES`; the functions
below dispatch by the spec's class and guard the host's memory before anything is allocated. torch is imported
inside the functions that need it, so importing this package stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..specs import Spec
# Each registers its family.
from . import activation, conv, fusion, matmul, norm, pool, rnn, sdpa, softmax, transform  # noqa: F401
from . import moe  # noqa: F401 - the MoE grouped GEMM family
from . import conv3d  # noqa: F401 - 3-D convolutions
from .common import CPU_FLOP_LIMIT, HOST_MEMORY_SHARE, check_host_memory, check_inputs, host_bytes
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["CPU_FLOP_LIMIT", "HOST_MEMORY_SHARE", "REFERENCES", "Reference", "check_inputs", "input_names",
           "make_inputs", "make_output", "make_outputs", "reference", "reference_outputs", "tensor_strides",
           "torch_eager", "torch_op", "comparable_outputs", "quantization_report"]


def _family(spec: Any) -> Reference:
    if not isinstance(spec, Spec):
        raise SpecError("spec", getattr(spec, "__name__", type(spec).__name__),
                        "must be a cudnn_lab spec such as ConvSpec(...) or MatmulSpec(...)")
    return REFERENCES[spec]


def _is_cpu(device: Any) -> bool:
    return str(device).split(":")[0] == "cpu"


def input_names(spec: Spec) -> tuple[str, ...]:
    """Names of every tensor the graph reads (host scalars included), in the frontend call's order."""
    return _family(spec).input_names(spec)


def tensor_strides(spec: Spec, name: str) -> tuple[int, ...]:
    """Strides of tensor ``name`` as the graph sees it: a layout for 4-D tensors, BLAS 'T' for a matmul operand."""
    return spec.tensor_strides()[name]


def make_inputs(spec: Spec, *, device: str | torch.device = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Fresh uniform random inputs (never zeros, outputs O(1)) in the spec's dtypes and real memory layout.

    Each tensor has the strides the graph declares: NHWC tensors are channels_last, a transposed matmul operand is
    a column-major matrix. Values come from a CPU generator seeded from ``seed`` and the tensor's name, so they are
    reproducible on every device and do not change when an epilogue is added. They are drawn on the host whatever
    the device: a problem whose inputs would not fit in host memory is refused first (ResourceError).
    """
    fam = _family(spec)
    names = fam.input_names(spec)
    check_host_memory(host_bytes(spec, names, 4), f"the inputs of {spec.label()}")  # + a float32 draw each
    return fam.make_inputs(spec, device=device, seed=seed)


def make_outputs(spec: Spec, *, device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Every tensor the graph writes, by name, NaN-poisoned (the first is the main output)."""
    fam = _family(spec)
    if _is_cpu(device):
        outs = [n for n in spec.tensor_shapes() if n not in fam.input_names(spec)]
        check_host_memory(host_bytes(spec, outs), f"the outputs of {spec.label()}")
    return fam.make_outputs(spec, device=device)


def make_output(spec: Spec, *, device: str | torch.device = "cpu") -> torch.Tensor:
    """The main output tensor with the graph's strides, filled with NaN so any element a plan never writes shows."""
    return next(iter(make_outputs(spec, device=device).values()))


def reference_outputs(spec: Spec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """The float64 reference of every output :func:`make_outputs` names, on the inputs' device.

    On the CPU, a problem over ``cpu_flop_limit`` FLOPs is refused (SpecError naming the size to shrink), and one
    whose float64 reference would take more than HOST_MEMORY_SHARE of the available memory too (ResourceError).
    """
    return _family(spec).reference_outputs(spec, inputs, cpu_flop_limit=cpu_flop_limit)


def reference(spec: Spec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
              ) -> torch.Tensor:
    """The main output computed in float64 on the inputs' device (float64 never uses TF32), for
    ``numerics.compare``."""
    return next(iter(reference_outputs(spec, inputs, cpu_flop_limit=cpu_flop_limit).values()))


def torch_op(spec: Spec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """A zero-argument callable running the same op in PyTorch eager, native dtype, on the inputs' device; it
    returns the main output."""
    return _family(spec).torch_op(spec, inputs, cpu_flop_limit=cpu_flop_limit)


def torch_eager(spec: Spec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                ) -> torch.Tensor:
    """The op's main result in PyTorch eager, native dtype: what a PyTorch user would get."""
    return torch_op(spec, inputs, cpu_flop_limit=cpu_flop_limit)()


def comparable_outputs(spec: Spec, outputs: Mapping[str, torch.Tensor], inputs: Mapping[str, torch.Tensor]
                       ) -> Mapping[str, torch.Tensor]:
    """The outputs as :func:`reference_outputs` states them: FP8 outputs dequantized, rows a padding mask leaves
    undefined zeroed; the outputs themselves for families that need no such step."""
    fn = _family(spec).comparable
    out = fn(spec, outputs, inputs) if fn is not None else None
    return outputs if out is None else out


def quantization_report(spec: Spec, inputs: Mapping[str, torch.Tensor], *, seed: int = 0) -> dict[str, Any] | None:
    """For an FP8 problem: what quantizing its inputs cost, per input (scale, amax, rel L2, clipped, flushed) and in
    the output (``output_rel_l2``: float64 from the FP8 values vs from the float data); None otherwise."""
    fn = _family(spec).quantization
    return fn(spec, inputs, seed=seed) if fn is not None else None
