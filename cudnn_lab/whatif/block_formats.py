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
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataError, NoGPUError, OptionError, WorkerError, shorten
from ..reference.block_formats import BLOCK_FORMATS, BlockFormat, block_format
from ..specs import ConvSpec, MatmulSpec, Spec, spec_from_dict
from ..specs.fp8 import FP8_DTYPES
from ..reference.block_formats import block_dequantize, block_quantization_error, block_quantize
from ..reference.common import CPU_FLOP_LIMIT, check_cpu_work
from ..reference.families import BLOCK_PRODUCTS, BlockProduct
from ..reference.fp8 import float_inputs
from ..reference.quantize import dequantize, quantization_error, quantize
from ..results.loading import parse_json, read_text, spec_from_data
from .devices import as_target, check_description, today
from ..results.datasets import dataset_prefix
from ..results.paths import check_output_path, write_text
from ..gpu.workers import call_once
from ..graph.block_scale import block_scaled_graph as graph_block_scaled
from ..provenance import cudnn_version_text
from ..results import recordings
from ..results.labels import ANSWER_LABEL, EMULATED_LABEL, recorded_label
from . import checks

if TYPE_CHECKING:  # pragma: no cover
    import torch

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
        if not isinstance(data, dict):
            raise DataError(source, f"a block-format what-if must be an object, not {shorten(data, 40)}")
        checks.known_fields(source, data, BLOCK_WHATIF_FIELDS, "a block-format what-if")
        missing = [k for k in BLOCK_WHATIF_FIELDS if k not in data and k != "label"]
        if missing:
            raise checks.fail(source, missing[0], "is missing from the block-format what-if")
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


def _check_spec(spec: Any, where: str) -> Spec:
    """``spec`` if it is a spec with a block-scaled product (a matmul or an fprop conv); OptionError naming ``spec``
    otherwise (None included: no AttributeError)."""
    if not isinstance(spec, Spec) or getattr(spec, "block_scale_axis", None) is None:
        raise OptionError("spec", spec, "a cl.MatmulSpec or a cl.ConvSpec (fprop): block formats scale the "
                          "reduction axis of a GEMM-like product", where=where)
    spec.check_block_scale()
    return spec


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

BLOCK_SCALE_DIR = Path(__file__).resolve().parents[1] / "data" / "whatif" / "block_scale"
FORMAT = "cudnn-lab block-scale what-if"
#: Largest recorded file the kit reads (a few answers: well under 1 MB).
MAX_BYTES = 4 * 2**20
#: Seconds one question may take before its process is ended (a refusal "timeout").
ASK_TIMEOUT_S = 60.0


def block_scaled_graph(spec: Spec, fmt: Any = "mxfp8_e4m3", *, description: dict[str, Any] | None = None,
                       handle: Any = None) -> Any:
    """The real cudnn.pygraph of ``spec``'s product in block format ``fmt`` (a name or a BlockFormat), built by the
    graph layer (:func:`cudnn_lab.graph.block_scale.block_scaled_graph`, each family's own product); ``description``:
    a target's device description (deviceless). Builds without a GPU up to ``inspect()``; NoGPUError where the
    cuDNN library cannot be loaded (a description is read by the library itself)."""
    _check_spec(spec, "block_scaled_graph")
    f = block_format(fmt)
    if description is not None:
        check_description(description, "description")
        _cudnn_loaded("block_scaled_graph(description=...)")
    return graph_block_scaled(spec, f, description=description, handle=handle)


def _cudnn_loaded(what: str) -> None:
    """NoGPUError unless the cuDNN library loads here (the frontend raises a raw RuntimeError without it)."""
    import cudnn

    try:
        cudnn.backend_version()
    except Exception as e:  # noqa: BLE001 - the frontend's own error for a missing library, in one line
        first = (str(e).splitlines() or [type(e).__name__])[0][:200]
        raise NoGPUError(f"{what} needs the cuDNN library, which cannot be loaded on this machine ({first}); "
                         "cl.block_scale_plans reads the answers recorded on the kit's GPU rounds") from None


@dataclasses.dataclass(frozen=True)
class BlockScaleAnswer:
    """cuDNN's heuristics' answer for the block-scaled graph of ``spec`` in ``fmt`` on ``target``: how many plans
    (``plan_count``) of which engines (``engine_ids``) with which behaviour notes (``notes``, of the plans kept), or
    ``refused`` ("declined", "crashed", "timeout") with cuDNN's message and reasons (``detail``). ``proposals`` holds
    the plan dicts (as :class:`~cudnn_lab.whatif.WhatIf`'s) where they were kept; a recording made from a round's
    log keeps counts, engines and notes only. ``source`` says where and when it was asked (or recorded)."""

    spec: Spec
    fmt: str
    target: str
    target_label: str
    cudnn_version: int
    source: str
    plan_count: int = 0
    engine_ids: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    proposals: tuple[dict[str, Any], ...] = ()
    refused: str = ""
    message: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def engines(self) -> list[int]:
        return list(self.engine_ids)

    def summary(self) -> str:
        """One sentence: what cuDNN answered, for which target and cuDNN, and that it is not a measurement."""
        where = f"{self.target_label}, cuDNN {cudnn_version_text(self.cudnn_version)}"
        if self.ok:
            return (f"{self.fmt} {self.spec.op}: {self.plan_count} plans of engine"
                    f"{'s' * (len(self.engine_ids) > 1)} {', '.join(map(str, self.engine_ids))} on {where} "
                    f"({ANSWER_LABEL}; {self.source}).")
        first = (self.message.splitlines() or [""])[0][:200]
        return f"{self.fmt} {self.spec.op}: no plan on {where}, {self.refused}: {first} ({self.source})."

    def frame(self) -> Any:
        """One row per plan kept: engine, knobs, behaviour notes, runtime-compiled or not (empty where only counts
        were recorded, or cuDNN refused)."""
        import pandas as pd

        rows = [{"plan": p["plan"], "engine_id": int(p["engine_id"]),
                 "knobs": ", ".join(f"{k}={v}" for k, v in p.get("knobs", {}).items()),
                 "behavior_notes": ", ".join(p.get("behavior_notes", [])),
                 "runtime_compiled": "RUNTIME_COMPILATION" in p.get("behavior_notes", [])} for p in self.proposals]
        return pd.DataFrame(rows, columns=["plan", "engine_id", "knobs", "behavior_notes", "runtime_compiled"])

    def row(self) -> dict[str, Any]:
        """One table row: problem, format, target, cuDNN, plans, engines, notes or refusal, source."""
        return {"problem": self.spec.label(), "format": self.fmt, "target": self.target_label,
                "cuDNN": cudnn_version_text(self.cudnn_version), "plans": self.plan_count,
                "engines": ", ".join(map(str, self.engine_ids)),
                "answer": (", ".join(self.notes) or "proposed") if self.ok else
                f"{self.refused}: {(self.message.splitlines() or [''])[0][:160]}",
                "source": self.source}

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["spec"] = self.spec.to_dict()
        d["engine_ids"], d["notes"] = list(self.engine_ids), list(self.notes)
        d["proposals"] = [dict(p) for p in self.proposals]
        return d

    @classmethod
    def from_dict(cls, data: Any, source: Any = "block-scale answer") -> BlockScaleAnswer:
        """Inverse of :meth:`to_dict`: every field checked by meaning (DataError naming ``source`` and the field;
        no raw error for a damaged answer)."""
        if not isinstance(data, dict):
            raise DataError(source, f"a block-scale answer must be an object, not {shorten(data, 40)}")
        checks.known_fields(source, data, BLOCK_ANSWER_FIELDS, "a block-scale answer")
        missing = [k for k in ("spec", "fmt", "target", "target_label", "cudnn_version", "source") if k not in data]
        if missing:
            raise checks.fail(source, missing[0], "is missing from the block-scale answer")
        fmt = data["fmt"]
        if not isinstance(fmt, str) or fmt not in BLOCK_FORMATS:
            raise checks.fail(source, "fmt", f"must be one of {', '.join(BLOCK_FORMATS)}, not {shorten(fmt, 40)}")
        refused = data.get("refused", "")
        if refused != "" and refused not in checks.REFUSALS:
            raise checks.fail(source, "refused", f"must be empty or one of {', '.join(checks.REFUSALS)}, not "
                                                 f"{shorten(refused, 40)}")
        engines, notes, proposals = (data.get(k, []) for k in ("engine_ids", "notes", "proposals"))
        for key, value, most in (("engine_ids", engines, 1000), ("notes", notes, 32), ("proposals", proposals, 10_000)):
            if not isinstance(value, list) or len(value) > most:
                raise checks.fail(source, key, f"must be a list of at most {most} entries, not {shorten(value, 40)}")
        count = checks.whole(source, "plan_count", data.get("plan_count", 0), 0, 99_999)
        if refused and (count or engines or proposals):
            raise checks.fail(source, "plan_count", f"an answer refused ({refused}) holds no plans")
        plans = tuple(checks.proposal(p, source, f"proposals[{i}]") for i, p in enumerate(proposals))
        if plans and count != len(plans):
            raise checks.fail(source, "plan_count", f"must count the {len(plans)} proposals kept, not {count}")
        return cls(spec=spec_from_data(data["spec"], source, "spec"), fmt=fmt,
                   target=checks.text(source, "target", data["target"], limit=64, empty=False),
                   target_label=checks.text(source, "target_label", data["target_label"], limit=300, empty=False),
                   cudnn_version=checks.cudnn_version(source, "cudnn_version", data["cudnn_version"],
                                                      unknown=refused in ("crashed", "timeout")),
                   source=checks.text(source, "source", data["source"], limit=300), plan_count=count,
                   engine_ids=tuple(checks.whole(source, f"engine_ids[{i}]", e, 0, checks.MAX_ENGINE_ID)
                                    for i, e in enumerate(engines)),
                   notes=tuple(checks.text(source, f"notes[{i}]", n, limit=80, empty=False)
                               for i, n in enumerate(notes)),
                   proposals=plans, refused=str(refused),
                   message=checks.text(source, "message", data.get("message", ""), limit=4000),
                   detail=checks.text(source, "detail", data.get("detail", ""), limit=200_000))


#: The fields of a block-scale answer (its to_dict keys).
BLOCK_ANSWER_FIELDS = tuple(f.name for f in dataclasses.fields(BlockScaleAnswer))


def load_block_scale_answers(path: Path) -> tuple[BlockScaleAnswer, ...]:
    """The answers of one recorded block-scale file, every field checked (DataError naming the file and field)."""
    _, text = read_text(path, "recorded block-scale what-if JSON", limit=MAX_BYTES)
    data = parse_json(text, path, "recorded block-scale what-if JSON")
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("answers"), list):
        raise DataError(path, f"not a recorded block-scale what-if file (format {FORMAT!r} with a list of answers)")
    answers = (BlockScaleAnswer.from_dict(a, path) for a in data["answers"])  # the card named, not 'this GPU'
    return tuple(dataclasses.replace(a, target_label=recorded_label(a.target_label)) for a in answers)


#: cuDNN's recorded answers for block-scaled graphs, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="block_scale", folder=BLOCK_SCALE_DIR, suffix=".json", max_bytes=MAX_BYTES, load=load_block_scale_answers,
    title="recorded block-scale what-if JSON"))


def recorded_block_scale_answers() -> list[BlockScaleAnswer]:
    """Every block-scale answer recorded on the kit's GPU rounds (``data/whatif/block_scale/*.json``), checked."""
    return [a for answers in recordings.read(RECORDING.name, BLOCK_SCALE_DIR) for a in answers]


def _ask_here(spec_json: str, fmt: str, description: dict[str, Any] | None) -> dict[str, Any]:
    """In the worker process: the heuristics' proposals per mode for the block-scaled graph, or cuDNN's refusal."""
    import cudnn

    from ..gpu.deviceless import HEURISTIC_MODES, Proposal, propose_mode  # heavy: imports graphviz
    spec = spec_from_dict(json.loads(spec_json))
    handle = None
    if description is None:
        from ..gpu.session import cudnn_handle  # heavy: imports graphviz

        handle = cudnn_handle(0)
    found: dict[str, Proposal] = {}
    declined: dict[str, str] = {}
    for mode in HEURISTIC_MODES:
        try:
            g = block_scaled_graph(spec, fmt, description=description, handle=handle)
        except Exception as e:  # noqa: BLE001 - a graph cuDNN will not describe is an answer, in its words
            declined[mode] = str(e)
            continue
        propose_mode(g, mode, found, declined)
    out: dict[str, Any] = {"cudnn_version": int(cudnn.backend_version()),
                           "proposals": [p.to_dict() for p in found.values()]}
    if not found:
        detail = "\n".join(f"heur_mode {m}: {msg}" for m, msg in declined.items())
        first = next(iter(declined.values()), "no plans").strip().splitlines()
        out.update(refused="declined", message=(first or ["no plans"])[0][:1000], detail=detail[:20000])
    if description is None:
        from ..gpu.deviceless import device_description  # heavy: imports graphviz

        out["card"] = str(device_description(0).get("deviceName", "this GPU"))
    return out


def ask_block_scaled(spec: Spec, fmt: Any = "mxfp8_e4m3", target: Any = "sm100", *,
                     timeout_s: float = ASK_TIMEOUT_S) -> BlockScaleAnswer:
    """Ask cuDNN (in a process of its own: a crash or hang becomes a refusal) which plans it proposes for the
    block-scaled graph of ``spec`` on ``target`` (a target name such as ``sm100``, a Target, or None: this GPU).
    NoGPUError where cuDNN cannot be loaded with the NVIDIA driver."""
    from ..gpu.asker import worker_env  # heavy: imports graphviz
    _check_spec(spec, "ask_block_scaled")
    f = block_format(fmt)
    tgt = as_target(target)
    query = {"spec": spec.to_json(), "fmt": f.name, "description": tgt.description if tgt else None}
    try:
        reply = call_once(f"{__name__}:answer", query, env=worker_env(None), timeout_s=timeout_s)
    except WorkerError as e:
        if e.kind == "deadline":
            return _answer(spec, f, tgt, {"refused": "timeout", "cudnn_version": 0,
                                          "message": f"cuDNN gave no answer within {timeout_s:.0f} s"})
        return _answer(spec, f, tgt, {"refused": "crashed", "cudnn_version": 0,
                                      "message": f"cuDNN crashed answering this query ({e.how or e.kind}; "
                                                 f"{shorten(e.detail or 'no message', 200)}); the kit's process "
                                                 "was not affected"})
    if "error" in reply:
        raise NoGPUError(f"cuDNN cannot be asked on this machine: {reply['error']}")
    return _answer(spec, f, tgt, reply)


def _answer(spec: Spec, f: BlockFormat, tgt: Any, reply: dict[str, Any]) -> BlockScaleAnswer:
    card = reply.get("card")
    proposals = tuple(reply.get("proposals", []))
    return BlockScaleAnswer(spec=spec, fmt=f.name, target=tgt.name if tgt else "this GPU",
                            target_label=tgt.label if tgt else f"{card or 'this GPU'} (this GPU)",
                            cudnn_version=int(reply.get("cudnn_version") or 0),
                            source=f"asked here{f', on a host with {card}' if card else ''}",
                            plan_count=len(proposals),
                            engine_ids=tuple(dict.fromkeys(int(p["engine_id"]) for p in proposals)),
                            notes=tuple(dict.fromkeys(n for p in proposals for n in p.get("behavior_notes", []))),
                            proposals=proposals, refused=str(reply.get("refused", "")),
                            message=str(reply.get("message", "")), detail=str(reply.get("detail", "")))


def block_scale_plans(spec: Spec, fmt: Any = "mxfp8_e4m3", target: Any = "sm100", *,
                      recorded: bool | None = None) -> BlockScaleAnswer:
    """cuDNN's answer for the block-scaled graph of ``spec`` on ``target``: asked where cuDNN can be loaded
    (``recorded=None`` or False), else the recorded answer for the same problem, format and target name."""
    _check_spec(spec, "block_scale_plans")
    f = block_format(fmt)
    if recorded not in (None, True, False):
        raise OptionError("recorded", recorded, "None (ask where cuDNN loads, else read recordings), True "
                          "(recordings only) or False (ask only)", where="block_scale_plans")
    if recorded is not True:
        try:
            return ask_block_scaled(spec, f, target)
        except NoGPUError:
            if recorded is False:
                raise
    tgt = as_target(target)
    name = tgt.name if tgt else "this GPU"
    fits = [a for a in recorded_block_scale_answers() if a.spec == spec and a.fmt == f.name and a.target == name]
    if not fits:
        have = sorted({f"{a.fmt} {a.spec.label()} on {a.target}" for a in recorded_block_scale_answers()})
        raise NoGPUError(f"cuDNN cannot be asked on this machine (its library needs the NVIDIA driver), and no "
                         f"block-scale answer for {name} was recorded for this problem; recorded: "
                         f"{shorten(have, 300)}")
    return max(fits, key=lambda a: a.cudnn_version)


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = block_scale_plans


#: The problems and targets a GPU round records (scripts/record_whatif.py --block-scale): a square GEMM and a
#: ResNet-50 3x3 conv, on this GPU and on synthetic Blackwell targets.
RECORD_PROBLEMS: tuple[tuple[Spec, tuple[str, ...]], ...] = (
    (MatmulSpec(batch=1, m=4096, n=4096, k=4096, dtype="bf16", transpose_b=True), tuple(BLOCK_FORMATS)),
    (ConvSpec(n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="bf16", out_dtype="bf16"),
     ("mxfp8_e4m3", "nvfp4")),
)
RECORD_TARGETS: tuple[str | None, ...] = ("sm100", "sm120", None)


def record_block_scale(folder: Any, *, budget_s: float = 100.0) -> Path:
    """Ask every RECORD_PROBLEMS question on every RECORD_TARGETS target (this GPU included) and write the answers
    to ``folder/<gpu>_<date>.json`` in the recorded format; questions past ``budget_s`` seconds are left out."""
    import time

    t0 = time.perf_counter()
    answers: list[BlockScaleAnswer] = []
    for spec, fmts in RECORD_PROBLEMS:
        for fmt in fmts:
            for target in RECORD_TARGETS:
                left = budget_s - (time.perf_counter() - t0)
                if left < 5:
                    break
                answers.append(ask_block_scaled(spec, fmt, target, timeout_s=min(ASK_TIMEOUT_S, left)))
                print(answers[-1].summary(), flush=True)
    card = next((a.target_label.removesuffix(" (this GPU)") for a in answers if a.target == "this GPU"), "gpu")
    date = today()
    stamped = [dataclasses.replace(a, source=f"recorded on {card}, {date}") for a in answers]
    path = check_output_path(Path(folder) / f"{dataset_prefix(card)}_{date}.json", what="block-scale what-if JSON",
                             suffixes=(".json",))
    data = {"format": FORMAT, "version": 1, "gpu": card, "created": date,
            "seconds": round(time.perf_counter() - t0, 1), "answers": [a.to_dict() for a in stamped]}
    Path(folder).mkdir(parents=True, exist_ok=True)
    return write_text(path, json.dumps(data, indent=0), what="block-scale what-if JSON")


def answer(query: dict[str, Any]) -> dict[str, Any]:
    """Worker role (gpu/workers, in a process of its own): one query's reply, or {"error": ...} where cuDNN cannot
    be loaded."""
    try:
        import cudnn

        cudnn.backend_version()
    except Exception as e:  # noqa: BLE001 - no cuDNN library here: one line, not a traceback
        return {"error": str(e).splitlines()[0][:300] if str(e) else type(e).__name__}
    try:
        return _ask_here(query["spec"], query["fmt"], query.get("description"))
    except Exception as e:  # noqa: BLE001 - every refusal goes back as data
        return {"refused": "declined", "cudnn_version": int(cudnn.backend_version()),
                "message": f"{type(e).__name__}: {str(e).splitlines()[0][:1000] if str(e) else ''}",
                "detail": str(e)[:20000]}
