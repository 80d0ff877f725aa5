"""Blackwell block-scaled formats (MXFP8, NVFP4) as a what-if for a Hopper user: the error they would bring to a
matmul or convolution, emulated in float64 on any machine, and cuDNN's own answer to which engines would run the
block-scaled graph on a compute capability 10.x target.

``block_format_whatif(spec, fmt)`` quantizes the problem's float inputs in blocks along the reduction axis (K of a
matmul; C of an NHWC convolution, whose C*R*S reduction runs over those blocks), computes the product from the
dequantized values in float64, and sets it beside the float64 product of the unquantized data and beside per-tensor
FP8. Everything it returns is **emulated**: no Blackwell kernel ran; what a real kernel adds (its accumulation
order) is not in these figures, except ``accumulate_rel_l2``, an FP32 accumulation emulated on the CPU.

``block_scale_plans(spec, fmt, target)`` asks cuDNN's heuristics (its deviceless API, in a process of its own,
because cuDNN 9.19 has crashed answering CC 10.x convolutions) about the block-scaled graph
(block_scale_dequantize of both operands, then matmul or conv_fprop); without the NVIDIA driver it reads the answers
recorded on the kit's GPU rounds (``data/whatif/block_scale/``), labelled with device, date and cuDNN version. On
2026-11-26 (H200, cuDNN 9.19.0) the GEMM got plans for sm100 and sm120 targets; the conv's 4-D block size was
refused at the graph on every target (docs/FINDINGS.md).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from ..errors import OptionError, shorten
from ..reference.block_formats import BlockFormat, block_format
from ..specs import Spec
from ..specs.fp8 import FP8_DTYPES
from ..reference.block_formats import block_dequantize, block_quantization_error, block_quantize
from ..reference.common import CPU_FLOP_LIMIT, check_cpu_work
from ..reference.families import BLOCK_PRODUCTS, BlockProduct
from ..reference.fp8 import float_inputs
from ..reference.quantize import dequantize, quantization_error, quantize
from ..results.loading import spec_from_data
from ..results.labels import EMULATED_LABEL
from . import checks

if TYPE_CHECKING:  # pragma: no cover
    import torch

from .block_answers import (ASK_TIMEOUT_S, BLOCK_SCALE_DIR, FORMAT, MAX_BYTES, RECORD_PROBLEMS,  # noqa: F401
                            RECORD_TARGETS, RECORDING, BlockScaleAnswer, _check_spec, answer, ask,
                            ask_block_scaled, block_scale_plans, block_scaled_graph, load_block_scale_answers,
                            record_block_scale, recorded_block_scale_answers)

__all__ = ["ask", "BlockWhatIf", "block_format_whatif", "EMULATED_LABEL", "BlockScaleAnswer", "block_scaled_graph",
           "block_scale_plans", "recorded_block_scale_answers", "BLOCK_SCALE_DIR", "ask_block_scaled",
           "record_block_scale", "RECORD_PROBLEMS", "RECORD_TARGETS"]

#: Four float64/float32 products are formed (exact, block, per-tensor, FP32 accumulation): a quarter of the
#: reference's CPU limit each.
PRODUCTS = 4


# ------------------------------------------------------------------------------------------------ numerics

@dataclasses.dataclass(frozen=True)
class BlockWhatIf:
    """The error a block-scaled format would bring to ``spec``'s main product (epilogue left out), emulated.

    ``operands``: per input, its BlockQuantError dict (the quantization error alone); ``output_rel_l2``: relative L2
    of the product of the dequantized operands against the float64 product of the float data (what a perfect
    kernel would still show); ``accumulate_rel_l2``: what an FP32-accumulating kernel adds on top (emulated with a
    float32 product on the CPU); ``per_tensor``: the same for per-tensor FP8 (``per_tensor_dtype``, the kit's
    power-of-two scale from the amax) for comparison. ``bulk_*``: the output error over the elements no outlier row
    reaches (with outliers, what one scale per tensor costs the ordinary values; equal to the whole without)."""

    spec: Spec
    fmt: BlockFormat
    reduction_axis: str
    operands: dict[str, dict[str, Any]]
    output_rel_l2: float
    accumulate_rel_l2: float
    per_tensor_dtype: str
    per_tensor: dict[str, dict[str, Any]]
    per_tensor_output_rel_l2: float
    bulk_rel_l2: float
    per_tensor_bulk_rel_l2: float
    outliers: float
    outlier_factor: float
    seed: int
    label: str = EMULATED_LABEL

    @property
    def ratio_to_per_tensor(self) -> float:
        """output_rel_l2 / per_tensor_output_rel_l2: below 1 where block scaling is the more accurate."""
        p = self.per_tensor_output_rel_l2
        return self.output_rel_l2 / p if p > 0 else (1.0 if self.output_rel_l2 == 0 else math.inf)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (read back by :meth:`from_dict`); a non-finite error stays a float (NaN: no element left)."""
        return {"spec": self.spec.to_dict(), "fmt": self.fmt.to_dict(), "reduction_axis": self.reduction_axis,
                "operands": {k: dict(v) for k, v in self.operands.items()}, "output_rel_l2": self.output_rel_l2,
                "accumulate_rel_l2": self.accumulate_rel_l2, "per_tensor_dtype": self.per_tensor_dtype,
                "per_tensor": {k: dict(v) for k, v in self.per_tensor.items()},
                "per_tensor_output_rel_l2": self.per_tensor_output_rel_l2, "bulk_rel_l2": self.bulk_rel_l2,
                "per_tensor_bulk_rel_l2": self.per_tensor_bulk_rel_l2, "outliers": self.outliers,
                "outlier_factor": self.outlier_factor, "seed": self.seed, "label": self.label}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "block-format what-if") -> BlockWhatIf:
        """Inverse of :meth:`to_dict`: every field checked by meaning (DataError naming ``source`` and the field)."""
        data = checks.record(source, data, "block-format what-if", BLOCK_WHATIF_FIELDS,
                             [k for k in BLOCK_WHATIF_FIELDS if k != "label"])
        fmt = data["fmt"]
        if not isinstance(fmt, dict) or set(fmt) != {f.name for f in dataclasses.fields(BlockFormat)}:
            raise checks.fail(source, "fmt", f"must be a block format's fields, not {shorten(fmt, 60)}")
        try:
            block = BlockFormat(**fmt)
        except (TypeError, ValueError) as e:
            raise checks.fail(source, "fmt", shorten(str(e), 200)) from None
        if data["per_tensor_dtype"] not in FP8_DTYPES:
            raise checks.fail(source, "per_tensor_dtype", f"must be one of {', '.join(FP8_DTYPES)}")
        return cls(spec=spec_from_data(data["spec"], source, "spec"), fmt=block,
                   reduction_axis=checks.text(source, "reduction_axis", data["reduction_axis"], limit=8, empty=False),
                   operands=_errors(source, "operands", data["operands"]),
                   output_rel_l2=_number(source, "output_rel_l2", data["output_rel_l2"]),
                   accumulate_rel_l2=_number(source, "accumulate_rel_l2", data["accumulate_rel_l2"]),
                   per_tensor_dtype=data["per_tensor_dtype"],
                   per_tensor=_errors(source, "per_tensor", data["per_tensor"]),
                   per_tensor_output_rel_l2=_number(source, "per_tensor_output_rel_l2",
                                                    data["per_tensor_output_rel_l2"]),
                   bulk_rel_l2=_number(source, "bulk_rel_l2", data["bulk_rel_l2"]),
                   per_tensor_bulk_rel_l2=_number(source, "per_tensor_bulk_rel_l2", data["per_tensor_bulk_rel_l2"]),
                   outliers=_number(source, "outliers", data["outliers"]),
                   outlier_factor=_number(source, "outlier_factor", data["outlier_factor"]),
                   seed=checks.whole(source, "seed", data["seed"], 0, 2**63 - 1),
                   label=checks.text(source, "label", data.get("label", EMULATED_LABEL), limit=300, empty=False))

    def frame(self) -> Any:
        """:meth:`rows` as a table: one row per format (block, per-tensor FP8)."""
        import pandas as pd

        return pd.DataFrame(self.rows())

    def rows(self) -> list[dict[str, Any]]:
        """One row per format (block, per-tensor FP8): output error and each operand's quantization error."""
        names = list(self.operands)
        block = {"format": f"{self.fmt.name} (blocks of {self.fmt.block_size} along {self.reduction_axis})",
                 "bits per element": self.fmt.bits_per_element, "output rel L2": self.output_rel_l2,
                 "output rel L2 without outlier rows": self.bulk_rel_l2,
                 **{f"{n} rel L2": self.operands[n]["rel_l2"] for n in names},
                 "clipped": sum(self.operands[n]["saturated"] for n in names),
                 "flushed to 0": sum(self.operands[n]["flushed"] for n in names)}
        per = {"format": f"per-tensor {self.per_tensor_dtype}", "bits per element": 8.0,
               "output rel L2": self.per_tensor_output_rel_l2,
               "output rel L2 without outlier rows": self.per_tensor_bulk_rel_l2,
               **{f"{n} rel L2": self.per_tensor[n]["rel_l2"] for n in names},
               "clipped": sum(self.per_tensor[n]["saturated"] for n in names),
               "flushed to 0": sum(self.per_tensor[n]["flushed"] for n in names)}
        return [block, per]

    def summary(self) -> str:
        """One sentence, labelled emulated."""
        if not self.outliers:
            out = "no outliers"
            bulk = ""
        else:
            out = f"{self.outliers:g} of the first operand's rows x{self.outlier_factor:g}"
            bulk = (f"; away from the outlier rows {self.bulk_rel_l2:.2e} vs {self.per_tensor_bulk_rel_l2:.2e}")
        return (f"{self.fmt.name} on {self.spec.label()} ({out}): output rel L2 {self.output_rel_l2:.2e} vs "
                f"{self.per_tensor_output_rel_l2:.2e} for per-tensor {self.per_tensor_dtype} "
                f"({self.ratio_to_per_tensor:.2f}x){bulk}; FP32 accumulation adds {self.accumulate_rel_l2:.1e} "
                f"({self.label}).")


#: The fields of a block-format what-if (its to_dict keys).
BLOCK_WHATIF_FIELDS = tuple(f.name for f in dataclasses.fields(BlockWhatIf))
#: The fields of one operand's quantization error (reference.block_formats.BlockQuantError's, or per-tensor FP8's).
_ERROR_NUMBERS = ("rel_l2", "max_abs", "amax", "saturated", "flushed", "scale_clipped", "blocks", "numel", "scale",
                  "max_rel_normal")


def _number(source: Any, field: str, value: Any) -> float:
    """A real number (NaN and infinity allowed: an error over no element, a ratio over zero); DataError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise checks.fail(source, field, f"must be a number, not {shorten(value, 40)}")
    return float(value)


def _errors(source: Any, field: str, value: Any) -> dict[str, dict[str, Any]]:
    """Per operand name, its quantization error dict (numbers by name, the format's name as text)."""
    if not isinstance(value, dict) or not value or len(value) > 8:
        raise checks.fail(source, field, f"must be an object of 1-8 operands, not {shorten(value, 40)}")
    out: dict[str, dict[str, Any]] = {}
    for name, err in value.items():
        where = f"{field}.{str(name)[:40]}"
        if not isinstance(err, dict):
            raise checks.fail(source, where, f"must be an object, not {shorten(err, 40)}")
        for key, v in err.items():
            if key in _ERROR_NUMBERS:
                _number(source, f"{where}.{key}", v)
            elif key in ("fmt", "dtype"):
                checks.text(source, f"{where}.{key}", v, limit=64)
            else:
                raise checks.fail(source, f"{where}.{str(key)[:40]}", "is no field of a quantization error")
        out[checks.text(source, field, name, limit=64, empty=False)] = dict(err)
    return out


def _block_product(spec: Spec) -> BlockProduct:
    """The family's block-scaled product on the CPU (reference/families.BLOCK_PRODUCTS, registered by the family's
    reference module), once the spec passed :func:`_check_spec`."""
    return BLOCK_PRODUCTS[_check_spec(spec, "block_format_whatif")](spec)


def _rel_l2(x: torch.Tensor, ref: torch.Tensor) -> float:
    import torch

    r = float(torch.linalg.vector_norm(ref.to(torch.float64)))
    e = float(torch.linalg.vector_norm(x.to(torch.float64) - ref.to(torch.float64)))
    return e / r if r > 0 else (0.0 if e == 0 else math.inf)


def _check_outliers(outliers: Any, factor: Any) -> tuple[float, float]:
    if isinstance(outliers, bool) or not isinstance(outliers, (int, float)) or not 0 <= outliers <= 0.5:
        raise OptionError("outliers", outliers, "a share of the first operand's rows from 0 to 0.5",
                          where="block_format_whatif")
    if (isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor)
            or not 1 <= factor <= 1e6):
        raise OptionError("outlier_factor", factor, "a number from 1 to 1e6 (how much larger an outlier is)",
                          where="block_format_whatif")
    return float(outliers), float(factor)


def _with_outliers(x: torch.Tensor, axis: int, share: float, factor: float, seed: int
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` (float64) with round(share * rows) of its rows along ``axis`` (a matmul's tokens, a conv's pixels: every
    index but the reduction axis), drawn by ``seed``, multiplied by ``factor``; and the rows' mask (``x``'s shape with
    ``axis`` of length 1)."""
    import torch

    moved = x.movedim(axis, -1).contiguous()
    rows = moved.reshape(-1, moved.shape[-1])
    mask = torch.zeros(rows.shape[0], dtype=torch.bool)
    count = round(share * rows.shape[0])
    if count:
        gen = torch.Generator(device="cpu").manual_seed(seed * 7919 + 17)
        mask[torch.randperm(rows.shape[0], generator=gen)[:count]] = True
        rows = torch.where(mask[:, None], rows * factor, rows)
    shape = (*moved.shape[:-1], 1)
    return rows.reshape(moved.shape).movedim(-1, axis), mask.reshape(shape).movedim(-1, axis)


def _bulk_rel_l2(x: torch.Tensor, ref: torch.Tensor, touched: torch.Tensor) -> float:
    """Relative L2 over the output elements no outlier row reaches (all of them without outliers)."""
    keep = ~touched.expand_as(ref)
    return _rel_l2(x[keep], ref[keep]) if bool(keep.any()) else math.nan


def _check_flop_limit(value: Any) -> float:
    """A CPU FLOP limit: a finite number > 0 (NaN would turn the CPU guard off); OptionError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise OptionError("cpu_flop_limit", value, "a finite number of FLOPs > 0, or None (a quarter of the "
                          "reference's CPU limit)", where="block_format_whatif")
    return float(value)


def block_format_whatif(spec: Spec, fmt: Any = "mxfp8_e4m3", *, block_size: int | None = None,
                        scale_format: str | None = None, scale_rule: str | None = None,
                        per_tensor: str | None = None, outliers: float = 0.0,
                        outlier_factor: float = 1000.0, seed: int = 0, cpu_flop_limit: float | None = None
                        ) -> BlockWhatIf:
    """The error ``fmt`` ('mxfp8_e4m3', 'mxfp8_e5m2', 'nvfp4') would bring to ``spec`` (a matmul or an fprop conv),
    emulated in float64, beside per-tensor FP8 ``per_tensor`` (default: the block format's FP8 element type, e4m3
    for NVFP4). ``outliers``: the share of the first operand's rows (a matmul's tokens, a conv's pixels) multiplied by
    ``outlier_factor`` (LLMs' massive activations: one scale per tensor must cover them, and the ordinary rows lose
    precision; ``bulk_rel_l2`` shows it). ``scale_rule``: how E8M0 scales are picked
    ("floor", OCP MX; "ceil", NVIDIA's recipe: see reference.block_formats). Refused on the CPU above a quarter of the
    reference's FLOP limit (SpecError naming the size to shrink)."""
    import torch

    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (cl.MatmulSpec or cl.ConvSpec)", where="block_format_whatif")
    f = block_format(fmt, block_size=block_size, scale_format=scale_format, scale_rule=scale_rule)
    share, factor = _check_outliers(outliers, outlier_factor)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise OptionError("seed", seed, "an integer from 0 to 2**31 - 1", where="block_format_whatif")
    pt = per_tensor or (f"fp8_{f.element}" if f.element != "e2m1" else "fp8_e4m3")
    if pt not in FP8_DTYPES:
        raise OptionError("per_tensor", per_tensor, "one of " + ", ".join(FP8_DTYPES), where="block_format_whatif")
    family = _block_product(spec)
    first, second, axes, product = family.first, family.second, family.axes, family.product
    limit = CPU_FLOP_LIMIT / PRODUCTS if cpu_flop_limit is None else _check_flop_limit(cpu_flop_limit)
    check_cpu_work(spec, torch.device("cpu"), family.size_field, flop_limit=limit)

    floats = float_inputs(spec, family.fan_in, seed=seed)
    marked, rows = _with_outliers(floats[first].to(torch.float64), axes[first], share, factor, seed)
    data = {first: marked, second: floats[second].to(torch.float64).contiguous()}
    exact = product(data[first], data[second])
    touched = family.touched(rows)
    blocked, block_errors, per, per_errors = {}, {}, {}, {}
    for name, x in data.items():
        q = block_quantize(x, f, axis=axes[name])
        blocked[name] = block_dequantize(q)
        block_errors[name] = block_quantization_error(x, q).to_dict()
        p = quantize(x, pt)
        per[name] = dequantize(p)
        per_errors[name] = quantization_error(x, p).to_dict()
    from_block = product(blocked[first], blocked[second])
    from_per = product(per[first], per[second])
    fp32 = product(blocked[first].to(torch.float32), blocked[second].to(torch.float32))
    return BlockWhatIf(spec=spec, fmt=f, reduction_axis=str(spec.block_scale_axis),
                       operands=block_errors, output_rel_l2=_rel_l2(from_block, exact),
                       accumulate_rel_l2=_rel_l2(fp32, from_block), per_tensor_dtype=pt, per_tensor=per_errors,
                       per_tensor_output_rel_l2=_rel_l2(from_per, exact),
                       bulk_rel_l2=_bulk_rel_l2(from_block, exact, touched),
                       per_tensor_bulk_rel_l2=_bulk_rel_l2(from_per, exact, touched),
                       outliers=share, outlier_factor=factor, seed=seed)


# ------------------------------------------------------------------------------------------------ cuDNN's answer

