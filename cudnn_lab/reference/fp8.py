"""The PyTorch side of FP8 GEMMs and convolutions: float data quantized with the spec's scales (the descales fed as
float tensors), the float64 reference computed from the same FP8 values, the error quantization alone causes, and
``torch._scaled_mm`` as PyTorch's FP8 GEMM (PyTorch has no FP8 convolution).

Used by ``matmul.py`` and ``conv.py`` for specs whose ``fp8`` is True. torch is imported inside the functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, poisoned, uniform
from .families import Reference
from .quantize import dequantize, quantization_error, quantize

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["fp8_family", "float_inputs", "quantization_report", "dispatch"]


def input_names(spec: Any) -> tuple[str, ...]:
    """The two FP8 operands, their descales, and the output scale when the graph writes Amax."""
    ins, _ = spec.io_names()
    extra = tuple(n for n in spec.tensor_shapes() if n.startswith("scale_"))
    return (*ins, *(f"descale_{n}" for n in ins), *extra)


def float_inputs(spec: Any, fan_in: int, *, seed: int = 0) -> dict[str, torch.Tensor]:
    """The float32 data the FP8 operands are quantized from, on the CPU: uniform [-1, 1], the second operand
    shrunk by 1/sqrt(fan_in) (outputs O(1)), in the graph's strides; the same values every call for a seed."""
    ins, _ = spec.io_names()
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    f = 1.0 / math.sqrt(fan_in)
    ranges = {ins[0]: (-1.0, 1.0), ins[1]: (-f, f)}
    return {n: uniform(n, shapes[n], strides[n], "fp32", seed, lo, hi) for n, (lo, hi) in ranges.items()}


def make_inputs(spec: Any, fan_in: int, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """The FP8 operands (quantized from :func:`float_inputs` with the spec's scales), their descales as
    [1, ...] float32 tensors, and the output scale (1.0) when the graph has one."""
    import torch

    dev = torch.device(device)
    shapes, dtypes = spec.tensor_shapes(), spec.tensor_dtypes()
    out: dict[str, torch.Tensor] = {}
    for name, x in float_inputs(spec, fan_in, seed=seed).items():
        q = quantize(x, dtypes[name], spec.scales()[name])
        out[name] = q.data.to(dev)
        out[f"descale_{name}"] = torch.full(shapes[f"descale_{name}"], q.descale, dtype=torch.float32, device=dev)
    for n in input_names(spec):
        if n.startswith("scale_"):
            out[n] = torch.ones(shapes[n], dtype=torch.float32, device=dev)
    return out


def make_outputs(spec: Any, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """The output (and Amax) with the graph's strides and dtypes, NaN-filled."""
    return poisoned(spec, spec.output_names(), device)


def _dequantized(spec: Any, inputs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    ins, _ = spec.io_names()
    return {n: dequantize(inputs[n], float(inputs[f"descale_{n}"].reshape(-1)[0])) for n in ins}


def functions(compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor], size_field: str
              ) -> tuple[Callable[..., dict[str, torch.Tensor]], Callable[..., Callable[[], torch.Tensor]]]:
    """``reference_outputs`` (float64 from the FP8 values times their descales; Amax = max |output|) and
    ``torch_op`` (torch._scaled_mm for a 2-D GEMM PyTorch offers; otherwise a callable that says why not)."""

    def reference_outputs(spec: Any, inputs: Mapping[str, torch.Tensor], *,
                          cpu_flop_limit: float = CPU_FLOP_LIMIT) -> dict[str, torch.Tensor]:
        import torch

        check_cpu_work(spec, check_inputs(spec, inputs, input_names(spec)), size_field, flop_limit=cpu_flop_limit)
        _, name = spec.io_names()
        y = compute(spec, _dequantized(spec, inputs))
        out = {name: y}
        if "Amax" in spec.output_names():
            out["Amax"] = y.abs().max().reshape(spec.tensor_shapes()["Amax"]).to(torch.float64)
        return out

    def torch_op(spec: Any, inputs: Mapping[str, torch.Tensor], *,
                 cpu_flop_limit: float = CPU_FLOP_LIMIT) -> Callable[[], torch.Tensor]:
        import torch

        check_cpu_work(spec, check_inputs(spec, inputs, input_names(spec)), size_field, flop_limit=cpu_flop_limit)
        why = _no_scaled_mm(spec)
        if why:
            def unavailable() -> torch.Tensor:
                raise SpecError("dtype", spec.dtype, why)
            return unavailable
        a, b = inputs["A"][0], inputs["B"][0]  # [m, k] row-major, [k, n] column-major
        sa, sb = inputs["descale_A"].reshape(()), inputs["descale_B"].reshape(())
        out_dtype = getattr(torch, {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}[spec.c_dtype])
        return lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=out_dtype).unsqueeze(0)

    return reference_outputs, torch_op


def _no_scaled_mm(spec: Any) -> str:
    """Why PyTorch has no FP8 op for this problem ('' when torch._scaled_mm runs it)."""
    if spec.op != "matmul":
        return "has no PyTorch baseline: PyTorch has no FP8 convolution"
    if spec.batch != 1:
        return "has no PyTorch baseline for batch > 1: torch._scaled_mm multiplies 2-D matrices only"
    if spec.dtype == "fp8_e5m2" and spec.b_fp8_dtype == "fp8_e5m2":
        return "has no PyTorch baseline: torch._scaled_mm (cuBLASLt) has no e5m2 x e5m2 GEMM"
    if spec.transpose_a or not spec.transpose_b:
        return ("has no PyTorch baseline for this layout: torch._scaled_mm takes A row-major and B column-major "
                "only (transpose_a=False, transpose_b=True)")
    if spec.m % 16 or spec.n % 16 or spec.k % 16:
        return "has no PyTorch baseline: torch._scaled_mm needs m, n and k multiples of 16"
    return ""


def quantization_report(spec: Any, compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor], fan_in: int,
                        inputs: Mapping[str, torch.Tensor], *, seed: int = 0) -> dict[str, Any]:
    """What quantizing alone did: per FP8 input, its QuantError (scale, amax, rel L2, clipped, flushed); and
    ``output_rel_l2``, the relative L2 distance between the float64 results from the FP8 values and from the
    unquantized float data (the error a perfect FP8 kernel would still show against the float problem)."""
    import torch

    floats = float_inputs(spec, fan_in, seed=seed)
    deq = _dequantized(spec, inputs)
    report: dict[str, Any] = {}
    for n, x in floats.items():
        q = quantize(x, spec.tensor_dtypes()[n], spec.scales()[n])
        report[n] = quantization_error(x, q).to_dict()
    dev = next(iter(deq.values())).device
    exact = compute(spec, {n: x.to(device=dev, dtype=torch.float64) for n, x in floats.items()})
    from_fp8 = compute(spec, deq)
    ref = float(torch.linalg.vector_norm(exact))
    report["output_rel_l2"] = float(torch.linalg.vector_norm(from_fp8 - exact)) / ref if ref > 0 else 0.0
    return report


def fp8_family(compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor], fan_in: Callable[[Any], int],
               size_field: str) -> Reference:
    """The FP8 Reference of a GEMM-like family from its ``compute(spec, tensors)`` and ``fan_in(spec)``."""
    reference_outputs, torch_op = functions(compute, size_field)

    def make(spec: Any, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
        return make_inputs(spec, fan_in(spec), device=device, seed=seed)

    def quantization(spec: Any, inputs: Mapping[str, torch.Tensor], *, seed: int = 0) -> dict[str, Any]:
        return quantization_report(spec, compute, fan_in(spec), inputs, seed=seed)

    return Reference(input_names, make, make_outputs, reference_outputs, torch_op, quantization=quantization)


_FIELDS = ("input_names", "make_inputs", "make_outputs", "reference_outputs", "torch_op", "comparable",
           "quantization")


def dispatch(plain: Reference, fp8: Reference) -> Reference:
    """One Reference that uses ``fp8``'s functions for FP8 specs and ``plain``'s otherwise (an optional function
    one side lacks is None there: the caller's default applies)."""
    def pick(field: str) -> Callable[..., Any] | None:
        if getattr(plain, field) is None and getattr(fp8, field) is None:
            return None

        def call(spec: Any, *args: Any, **kwargs: Any) -> Any:
            fn = getattr(fp8 if getattr(spec, "fp8", False) else plain, field)
            return fn(spec, *args, **kwargs) if fn is not None else None
        call.__name__ = field
        return call

    return Reference(*(pick(f) for f in _FIELDS))
