"""The PyTorch side of FP8 GEMMs and convolutions: float data quantized with the spec's scales (the descales fed as
float tensors), the float64 reference computed from the same FP8 values, the error quantization alone causes, and
``torch._scaled_mm`` as PyTorch's FP8 GEMM (PyTorch has no FP8 convolution).

Used by ``matmul.py`` and ``conv.py`` for specs whose ``fp8`` is True. torch is imported inside the functions.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, poisoned, uniform
from .families import Reference
from .quantize import CHUNK_ELEMENTS, Quantized, chunks, dequantize, quantization_error, quantize

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["fp8_family", "float_inputs", "quantization_report", "dispatch", "kept_report", "keep_report",
           "forget_reports", "MAX_REPORTS", "output_rel_l2"]

#: Quantization reports kept in this process (the oldest goes first): each is what one (spec, seed) costs to quantize,
#: computed once (seconds for a large problem) and returned again by every later run of it.
MAX_REPORTS = 16
_REPORTS: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
_REPORTS_LOCK = threading.Lock()


def _report_key(spec: Any, seed: int) -> tuple[str, int]:
    """The spec as its dict says it, and the seed: what an FP8 problem's inputs (and so its report) depend on."""
    return json.dumps(spec.to_dict(), sort_keys=True, default=str), int(seed)


def kept_report(spec: Any, seed: int) -> dict[str, Any] | None:
    """A copy of the report kept for ``spec`` and ``seed`` in this process, or None."""
    key = _report_key(spec, seed)
    with _REPORTS_LOCK:
        found = _REPORTS.get(key)
        if found is not None:
            _REPORTS.move_to_end(key)
    return copy.deepcopy(found) if found is not None else None


def keep_report(spec: Any, seed: int, report: dict[str, Any]) -> None:
    """Keep ``report`` for ``spec`` and ``seed`` (at most :data:`MAX_REPORTS`, the least recently used dropped)."""
    key = _report_key(spec, seed)
    with _REPORTS_LOCK:
        _REPORTS[key] = copy.deepcopy(report)
        _REPORTS.move_to_end(key)
        while len(_REPORTS) > MAX_REPORTS:
            _REPORTS.popitem(last=False)


def forget_reports() -> None:
    """Drop every kept report (tests; a process that wants them computed again)."""
    with _REPORTS_LOCK:
        _REPORTS.clear()


def input_names(spec: Any) -> tuple[str, ...]:
    """The two FP8 operands, their descales, and the output scale when the graph writes Amax."""
    ins, _ = spec.io_names()
    extra = tuple(n for n in spec.tensor_shapes() if n.startswith("scale_"))
    return (*ins, *(f"descale_{n}" for n in ins), *extra)


def float_inputs(spec: Any, fan_in: int, *, seed: int = 0, device: Any = None) -> dict[str, torch.Tensor]:
    """The float32 data the FP8 operands are quantized from: uniform [-1, 1], the second operand shrunk by
    1/sqrt(fan_in) (outputs O(1)), in the graph's strides; the same values every call for a seed (drawn as
    ``common.uniform`` draws for ``device``: on the host, or a large operand on the GPU it is for)."""
    ins, _ = spec.io_names()
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    f = 1.0 / math.sqrt(fan_in)
    ranges = {ins[0]: (-1.0, 1.0), ins[1]: (-f, f)}
    return {n: uniform(n, shapes[n], strides[n], "fp32", seed, lo, hi, device=device) for n, (lo, hi) in ranges.items()}


def _quantized(spec: Any, floats: Mapping[str, torch.Tensor]) -> dict[str, Quantized]:
    """Each float operand quantized with the spec's scale, on the float data's device."""
    dtypes, scales = spec.tensor_dtypes(), spec.scales()
    return {n: quantize(x, dtypes[n], scales[n]) for n, x in floats.items()}


def _assemble(spec: Any, quantized: Mapping[str, Quantized], dev: Any) -> dict[str, torch.Tensor]:
    """The FP8 operands, their descales as [1, ...] float32 tensors and the output scale (1.0) when there is one."""
    import torch

    shapes = spec.tensor_shapes()
    out: dict[str, torch.Tensor] = {}
    for name, q in quantized.items():
        out[name] = q.data.to(dev)
        out[f"descale_{name}"] = torch.full(shapes[f"descale_{name}"], q.descale, dtype=torch.float32, device=dev)
    for n in input_names(spec):
        if n.startswith("scale_"):
            out[n] = torch.ones(shapes[n], dtype=torch.float32, device=dev)
    return out


def make_inputs(spec: Any, fan_in: int, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """The FP8 operands (quantized from :func:`float_inputs` with the spec's scales), their descales as
    [1, ...] float32 tensors, and the output scale (1.0) when the graph has one. The float data is drawn on the host
    (the same values on every device) and quantized on ``device``: on a GPU the passes over it take milliseconds."""
    import torch

    dev = torch.device(device)
    floats = {n: x.to(dev) for n, x in float_inputs(spec, fan_in, seed=seed, device=dev).items()}
    return _assemble(spec, _quantized(spec, floats), dev)


def make_outputs(spec: Any, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """The output (and Amax) with the graph's strides and dtypes, NaN-filled."""
    return poisoned(spec, spec.output_names(), device)


def _descale(inputs: Mapping[str, torch.Tensor], name: str) -> float:
    """The descale fed with FP8 operand ``name``, as a number."""
    return float(inputs[f"descale_{name}"].reshape(-1)[0])


def _dequantized(spec: Any, inputs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    ins, _ = spec.io_names()
    return {n: dequantize(inputs[n], _descale(inputs, n)) for n in ins}


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


def _budget(dev: Any) -> int:
    """Float64 elements one piece of the output's error may hold: a quarter of a GPU's free memory, or
    :data:`~.quantize.CHUNK_ELEMENTS` times 8 on the host (a CPU reference is small: one piece there)."""
    import torch

    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return max(1 << 20, free // 4 // 8)
    return CHUNK_ELEMENTS * 8


def output_rel_l2(spec: Any, compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor],
                  floats: Mapping[str, torch.Tensor], inputs: Mapping[str, torch.Tensor], split_dim: int,
                  limit: int | None = None) -> float:
    """Relative L2 distance between the float64 results from the FP8 values (``inputs`` times their descales) and
    from the float data, on the
    data's device; where the float64 work would not fit in ``limit`` elements (default: :func:`_budget`) it is done in
    pieces of the first operand along ``split_dim`` (rows of A, images of X: each gives its own rows of the output).
    One piece: the single-pass figure exactly."""
    import torch

    ins, _ = spec.io_names()
    first = ins[0]
    dev = floats[first].device
    need = sum(t.numel() for t in floats.values()) * 2 + math.prod(spec.tensor_shapes()[spec.io_names()[1]]) * 3
    limit = _budget(dev) if limit is None else int(limit)
    if need <= limit:
        exact = compute(spec, {n: x.to(torch.float64) for n, x in floats.items()})
        from_fp8 = compute(spec, _dequantized(spec, inputs))
        ref = float(torch.linalg.vector_norm(exact))
        return float(torch.linalg.vector_norm(from_fp8 - exact)) / ref if ref > 0 else 0.0
    rest = {n: x.to(torch.float64) for n, x in floats.items() if n != first}
    rest_deq = {n: dequantize(inputs[n], _descale(inputs, n)) for n in ins if n != first}
    pieces = -(-need // max(1, limit))
    err_sq = ref_sq = torch.zeros((), dtype=torch.float64, device=dev)
    for _, start, length in chunks(floats[first], max(1, floats[first].numel() // pieces), split_dim):
        exact = compute(spec, {first: floats[first].narrow(split_dim, start, length).to(torch.float64), **rest})
        piece = dequantize(inputs[first].narrow(split_dim, start, length), _descale(inputs, first))
        from_fp8 = compute(spec, {first: piece, **rest_deq})
        err_sq = err_sq + ((from_fp8 - exact) ** 2).sum()
        ref_sq = ref_sq + (exact * exact).sum()
        del exact, from_fp8
    ref = float(torch.sqrt(ref_sq))
    return float(torch.sqrt(err_sq)) / ref if ref > 0 else 0.0


def quantization_report(spec: Any, compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor], fan_in: int,
                        inputs: Mapping[str, torch.Tensor], *, seed: int = 0, split_dim: int = 0,
                        limit: int | None = None, keep: bool = True) -> dict[str, Any]:
    """What quantizing alone did: per FP8 input, its QuantError (scale, amax, rel L2, clipped, flushed); and
    ``output_rel_l2``, the relative L2 distance between the float64 results from the FP8 values and from the
    unquantized float data (the error a perfect FP8 kernel would still show against the float problem).

    ``inputs`` are :func:`make_inputs`'s for ``seed``. The report is computed once per (spec, seed) in a process and
    kept (:func:`kept_report`; ``keep=False`` computes it again), on the inputs' device (a GPU does in milliseconds
    what takes seconds on the host), in float64 pieces where a whole float64 copy would not fit (``limit``)."""
    if keep and (found := kept_report(spec, seed)) is not None:
        return found
    ins, _ = spec.io_names()
    dev = inputs[ins[0]].device
    floats = {n: x.to(dev) for n, x in float_inputs(spec, fan_in, seed=seed, device=dev).items()}
    report = _report(spec, compute, floats, _quantized(spec, floats), inputs, split_dim, limit)
    if keep:
        keep_report(spec, seed, report)
    return report


def _report(spec: Any, compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor],
            floats: Mapping[str, torch.Tensor], quantized: Mapping[str, Quantized],
            inputs: Mapping[str, torch.Tensor], split_dim: int, limit: int | None = None) -> dict[str, Any]:
    """The report's figures from the float data, its quantized form and the FP8 inputs (all on one device)."""
    report: dict[str, Any] = {}
    for n, q in quantized.items():
        report[n] = quantization_error(floats[n], q, **({} if limit is None else {"limit": limit})).to_dict()
    report["output_rel_l2"] = output_rel_l2(spec, compute, floats, inputs, split_dim, limit)
    return report


def fp8_family(compute: Callable[[Any, Mapping[str, torch.Tensor]], torch.Tensor], fan_in: Callable[[Any], int],
               size_field: str, split_dim: int = 0) -> Reference:
    """The FP8 Reference of a GEMM-like family from its ``compute(spec, tensors)`` and ``fan_in(spec)``;
    ``split_dim``: the first operand's dimension whose pieces give their own pieces of the output (for the report's
    float64 work in pieces: m of a GEMM's A, n of a convolution's X)."""
    reference_outputs, torch_op = functions(compute, size_field)

    def make(spec: Any, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
        """:func:`make_inputs`; on a GPU also the quantization report, kept (:func:`keep_report`) while the float
        data drawn for the inputs is at hand (drawing it again on the host would take seconds for a large problem)."""
        import torch

        dev = torch.device(device)
        if dev.type == "cpu" or kept_report(spec, seed) is not None:
            return make_inputs(spec, fan_in(spec), device=device, seed=seed)
        floats = {n: x.to(dev) for n, x in float_inputs(spec, fan_in(spec), seed=seed, device=dev).items()}
        quantized = _quantized(spec, floats)
        inputs = _assemble(spec, quantized, dev)
        keep_report(spec, seed, _report(spec, compute, floats, quantized, inputs, split_dim))
        return inputs

    def quantization(spec: Any, inputs: Mapping[str, torch.Tensor], *, seed: int = 0) -> dict[str, Any]:
        return quantization_report(spec, compute, fan_in(spec), inputs, seed=seed, split_dim=split_dim)

    return Reference(input_names, make, make_outputs, reference_outputs, torch_op, quantization=quantization)


def dispatch(plain: Reference, fp8: Reference) -> Reference:
    """One Reference that uses ``fp8``'s functions for FP8 specs and ``plain``'s otherwise (an optional function
    one side lacks is None there: the caller's default applies)."""
    def pick(field: str) -> Callable[..., Any]:
        def call(spec: Any, *args: Any, **kwargs: Any) -> Any:
            fn = getattr(fp8 if spec.fp8 else plain, field)  # dispatch serves Fp8Operands families only
            return fn(spec, *args, **kwargs) if fn is not None else None
        call.__name__ = field
        return call

    def optional(field: str) -> Callable[..., Any] | None:
        return None if getattr(plain, field) is None and getattr(fp8, field) is None else pick(field)

    return Reference(pick("input_names"), pick("make_inputs"), pick("make_outputs"), pick("reference_outputs"),
                     pick("torch_op"), comparable=optional("comparable"), quantization=optional("quantization"))
