"""FP8 formats and per-tensor scaling: the numbers and rules every FP8 problem shares.

An FP8 input is stored as ``q = fp8(clamp(x * scale, -max, max))`` and read back as ``q * descale`` with
``descale = 1 / scale``: cuDNN's FP8 graphs take the descale factors as float tensors and multiply them into the
accumulated result. A scale of ``None`` means "from the data": the largest power of two ``s`` with
``amax(x) * s <= max``, cuDNN's suggestion (max / amax rounded down to a power of two), so nothing saturates and a
power-of-two scale adds no rounding of its own.

Pure: no torch, cudnn or widgets here (``reference/quantize.py`` does the tensor work).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from ..errors import SpecError

__all__ = ["Fp8Format", "FP8_FORMATS", "FP8_DTYPES", "DTYPE_BYTES_FP8", "SCALE_MIN", "SCALE_MAX", "is_fp8",
           "fp8_format", "check_fp8_dtype", "check_scale", "recommended_scale", "descale_of", "saturates",
           "GpuRequirement", "unmet", "FP8_TENSOR_CORES", "SDPA_FP8", "SDPA_FP8_HALF_OUT", "SDPA_FP8_BOTTOM_RIGHT",
           "SDPA_FP8_BWD_HEAD_DIM", "SDPA_FP8_BWD_RAGGED", "FP8_GEMM_OUT_DTYPES", "check_amax", "Fp8Operands"]


@dataclasses.dataclass(frozen=True)
class Fp8Format:
    """One 8-bit float format: its bit split and the numbers that follow from it (OCP FP8, as Hopper runs it)."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    #: largest finite value; anything larger saturates to it when quantizing
    max: float
    #: smallest normal value; below it the spacing is fixed (subnormals) and relative error grows
    min_normal: float
    #: smallest nonzero value; half of it and less becomes 0 (flushed)
    min_subnormal: float
    has_inf: bool
    torch_name: str
    cudnn_name: str

    @property
    def unit_roundoff(self) -> float:
        """Largest relative rounding error of a normal value: half a step, 2**-(mantissa_bits + 1)."""
        return 2.0 ** -(self.mantissa_bits + 1)

    @property
    def dynamic_range(self) -> float:
        """max / min_subnormal: how many binary orders of magnitude one scale can cover, as a ratio."""
        return self.max / self.min_subnormal

    def describe(self) -> str:
        """One line for tooltips: bits, range, precision."""
        return (f"{self.name}: 1 sign, {self.exponent_bits} exponent, {self.mantissa_bits} mantissa bits; "
                f"max {self.max:g}, smallest normal {self.min_normal:g}, smallest subnormal {self.min_subnormal:g}; "
                f"relative rounding error up to {self.unit_roundoff:g}")


#: e4m3 (no infinities: its all-ones exponent still holds numbers, so max is 448) for weights and activations;
#: e5m2 (IEEE-like, with inf) trades a mantissa bit for range, for gradients.
FP8_FORMATS: dict[str, Fp8Format] = {
    "fp8_e4m3": Fp8Format("fp8_e4m3", 4, 3, 7, 448.0, 2.0**-6, 2.0**-9, False, "float8_e4m3fn", "FP8_E4M3"),
    "fp8_e5m2": Fp8Format("fp8_e5m2", 5, 2, 15, 57344.0, 2.0**-14, 2.0**-16, True, "float8_e5m2", "FP8_E5M2"),
}
FP8_DTYPES: tuple[str, ...] = tuple(FP8_FORMATS)
DTYPE_BYTES_FP8: dict[str, int] = {name: 1 for name in FP8_FORMATS}

#: Scales outside this range are refused: cuDNN reads the descale 1/scale as a float32, and scales this extreme
#: only ever come from a typo (an fp8 tensor spans 2**17 (e4m3) or 2**32 (e5m2) in magnitude).
SCALE_MIN = 2.0**-64
SCALE_MAX = 2.0**64


def is_fp8(dtype: Any) -> TypeGuard[str]:
    """True for the kit's FP8 dtype names ('fp8_e4m3', 'fp8_e5m2')."""
    return isinstance(dtype, str) and dtype in FP8_FORMATS


def fp8_format(dtype: str) -> Fp8Format:
    """The format of an FP8 dtype name; SpecError naming 'dtype' for anything else."""
    if not is_fp8(dtype):
        raise SpecError("dtype", dtype, f"must be an FP8 dtype: one of {', '.join(FP8_DTYPES)}")
    return FP8_FORMATS[dtype]


def check_fp8_dtype(spec: str, field: str, value: Any) -> str:
    """``value`` if it is an FP8 dtype name, else SpecError naming ``field``."""
    if not is_fp8(value):
        raise SpecError(field, value, f"must be one of {', '.join(FP8_DTYPES)}", spec=spec)
    return value


def check_scale(spec: str, field: str, value: Any) -> float | None:
    """A quantization scale: None (from the data's amax) or a positive finite number from SCALE_MIN to SCALE_MAX.

    0, NaN, inf, negatives, bools and text are refused with a SpecError naming ``field`` and saying why.
    """
    allowed = ("must be a positive finite number from 2**-64 to 2**64, or None (a power of two from the data's "
               "amax: max / amax rounded down)")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(field, value, allowed, spec=spec)
    try:
        v = float(value)
    except OverflowError:  # an int such as 10**400
        raise SpecError(field, value, allowed + " (this one does not fit in a float)", spec=spec) from None
    if math.isnan(v):
        raise SpecError(field, value, allowed + " (NaN would make every quantized value NaN)", spec=spec)
    if math.isinf(v):
        raise SpecError(field, value, allowed + " (an infinite scale saturates every nonzero value and its "
                        "descale 1/scale is 0)", spec=spec)
    if v == 0:
        raise SpecError(field, value, allowed + " (0 turns every input into 0 and its descale 1/0 is infinite)",
                        spec=spec)
    if v < 0:
        raise SpecError(field, value, allowed + " (a negative scale flips every sign)", spec=spec)
    if not SCALE_MIN <= v <= SCALE_MAX:
        raise SpecError(field, value, allowed, spec=spec)
    return v


def recommended_scale(amax: float, dtype: str, margin: int = 0) -> float:
    """The largest power of two ``s`` with ``amax * s <= max`` of ``dtype``, divided by ``2**margin``.

    cuDNN's documentation suggests max / amax rounded down to a power of two (448 / amax for e4m3, 57344 / amax for
    e5m2); ``margin`` leaves head room for later data. An amax of 0 or one that is not finite gives 1.0.
    """
    fmt = fp8_format(dtype)
    if not (isinstance(margin, int) and not isinstance(margin, bool) and 0 <= margin <= 64):
        raise SpecError("margin", margin, "must be an integer from 0 to 64 (powers of two of head room)")
    if not isinstance(amax, (int, float)) or isinstance(amax, bool) or not math.isfinite(amax) or amax <= 0:
        return 1.0
    exponent = math.floor(math.log2(fmt.max / amax))
    # log2 of a ratio can land one ulp on the wrong side of an integer: step down until it fits.
    while amax * 2.0**exponent > fmt.max:
        exponent -= 1
    exponent = max(min(exponent - margin, 64), -64)
    return 2.0**exponent


def descale_of(scale: float) -> float:
    """The factor cuDNN multiplies back in: 1 / scale."""
    return 1.0 / scale


def saturates(amax: float, scale: float, dtype: str) -> bool:
    """True when the largest magnitude times the scale exceeds the format's max (those values get clipped)."""
    return amax * scale > fp8_format(dtype).max


@dataclasses.dataclass(frozen=True)
class GpuRequirement:
    """What a feature needs from the GPU and cuDNN, with where that rule comes from.

    ``min_cc``: lowest compute capability (major, minor), None for any; ``min_cudnn``: lowest cuDNN backend version
    as cuDNN numbers it (9.19.0 is 91900), None for any; ``source``: the document or test the rule comes from.
    """

    feature: str
    min_cc: tuple[int, int] | None = None
    min_cudnn: int | None = None
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["min_cc"] = list(self.min_cc) if self.min_cc else None
        return out


def _version_text(v: int) -> str:
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"


def unmet(req: GpuRequirement, cc: tuple[int, int], cudnn_version: int) -> str | None:
    """Why this GPU (compute capability ``cc``) and cuDNN (e.g. 91900) cannot run ``req``, or None if they can."""
    cc_short = req.min_cc is not None and tuple(cc) < tuple(req.min_cc)
    cudnn_short = req.min_cudnn is not None and cudnn_version < req.min_cudnn
    if not (cc_short or cudnn_short):
        return None
    # the whole requirement is named, the part this setup meets marked as met (a GPU upgrade alone may not do)
    reasons = []
    if req.min_cc is not None:
        reasons.append(f"compute capability {req.min_cc[0]}.{req.min_cc[1]} or newer (this GPU is "
                       f"{cc[0]}.{cc[1]}{'' if cc_short else ', met'})")
    if req.min_cudnn is not None:
        reasons.append(f"cuDNN {_version_text(req.min_cudnn)} or newer (this is {_version_text(cudnn_version)}"
                       f"{'' if cudnn_short else ', met'})")
    where = f" [{req.source}]" if req.source else ""
    return f"{req.feature} needs {' and '.join(reasons)}{where}"


# --- what the FP8 problems need from the GPU (checked before a run; the Lab shows them as hints) ---------------

_SUPPORT = "cudnn-frontend include/cudnn_frontend/node/sdpa_support_surface.h"
#: FP8 tensor cores: Ada (8.9) and Hopper (9.0) on; cuDNN's FP8 GEMM/conv samples gate on Hopper.
FP8_TENSOR_CORES = GpuRequirement("FP8 matmul and convolution", min_cc=(8, 9),
                                  source="FP8 tensor cores exist from compute capability 8.9 (Ada) on")
SDPA_FP8 = GpuRequirement("FP8 attention (sdpa_fp8)", min_cc=(9, 0), min_cudnn=90100, source=_SUPPORT)
SDPA_FP8_HALF_OUT = GpuRequirement("an fp16/bf16 output of FP8 attention", min_cc=(10, 0), min_cudnn=91300,
                                   source=_SUPPORT + " and sdpa_fp8_bwd.h")
SDPA_FP8_BOTTOM_RIGHT = GpuRequirement("a bottom-right causal mask in FP8 attention", min_cc=(10, 0),
                                       min_cudnn=90700, source=_SUPPORT)
SDPA_FP8_BWD_HEAD_DIM = GpuRequirement("FP8 attention backward with head_dim other than 128", min_cc=(10, 0),
                                       source="cudnn-frontend sdpa_fp8_bwd.h (Hopper takes d_qk = d_v = 128 only)")
SDPA_FP8_BWD_RAGGED = GpuRequirement("ragged (THD) FP8 attention backward", min_cc=(10, 0), min_cudnn=92101,
                                     source="cudnn-frontend sdpa_fp8_bwd.h (not on Hopper); test_mhas_v2.py "
                                     "(cuDNN > 9.21.0)")

#: Output dtypes an FP8 GEMM or convolution may write (the input dtype is FP8, the output is not).
FP8_GEMM_OUT_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp32")


def check_amax(spec: str, value: Any) -> bool:
    """The ``amax`` switch: a bool (True adds the Amax output, max |output|, as FP8 training reads it)."""
    if not isinstance(value, bool):
        raise SpecError("amax", value, "must be True or False (True adds an Amax output: the largest |output|)",
                        spec=spec)
    return value


class Fp8Operands:
    """What an FP8-capable GEMM or convolution spec (``dtype``, ``amax``, ``io_names``) shares: whether it is FP8,
    its inputs' scales, what it needs from the GPU, its tensors' dtypes and outputs. A family names its FP8 inputs'
    scale fields (``FP8_SCALES``: tensor -> field) and the dtypes FP8 gives its main tensors (:meth:`fp8_dtypes`)."""

    FP8_SCALES: ClassVar[dict[str, str]] = {}
    if TYPE_CHECKING:  # what the family's Spec gives the mixin, named here so the mixin is checked
        dtype: str
        amax: bool
        epilogue: Any

        def tensor_shapes(self) -> dict[str, tuple[int, ...]]: ...

        def io_names(self) -> tuple[tuple[str, ...], str]: ...

        def _set(self, name: str, value: Any) -> None: ...

    def _check_fp8_fields(self, name: str) -> None:
        """Each input's scale (``FP8_SCALES``) and ``amax``, checked whatever the dtype (junk never enters; they are
        read only when it is FP8)."""
        for field in self.FP8_SCALES.values():
            self._set(field, check_scale(name, field, getattr(self, field)))
        self._set("amax", check_amax(name, self.amax))

    def _refuse_fp8_epilogue(self, name: str, product: str) -> None:
        """An FP8 ``product`` ('GEMM', 'convolution') takes no epilogue in the kit: its descale multiplies are one."""
        if self.epilogue:
            raise SpecError("epilogue", self.epilogue, "must be empty for FP8 in this version of the kit (the descale "
                            f"multiplies are the FP8 {product}'s epilogue)", spec=name)

    @property
    def fp8(self) -> bool:
        """True when the inputs are FP8."""
        return is_fp8(self.dtype)

    def scales(self) -> dict[str, float | None]:
        """Each FP8 input's quantization scale (None: from the data), by tensor name; empty when not FP8."""
        return {name: getattr(self, field) for name, field in self.FP8_SCALES.items()} if self.fp8 else {}

    def gpu_requirements(self) -> tuple[GpuRequirement, ...]:
        """What this problem needs from the GPU and cuDNN beyond the spec's own rules (checked before a run)."""
        return (FP8_TENSOR_CORES,) if self.fp8 else ()

    def fp8_dtypes(self) -> dict[str, str]:
        """The dtypes FP8 gives the inputs and the output (every other tensor of an FP8 problem is fp32)."""
        raise NotImplementedError

    def tensor_dtypes(self) -> dict[str, str]:
        """Every tensor in ``dtype``; for FP8, :meth:`fp8_dtypes` and the descales, scale and Amax in fp32."""
        shapes = self.tensor_shapes()
        if not self.fp8:
            return {n: self.dtype for n in shapes}
        return {**{n: "fp32" for n in shapes}, **self.fp8_dtypes()}

    def output_names(self) -> tuple[str, ...]:
        """Every tensor the graph writes, the main output first."""
        _, out = self.io_names()
        return (out, "Amax") if self.fp8 and self.amax else (out,)
