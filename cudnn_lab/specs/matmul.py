"""Batched matrix multiplication C[b] = A[b] @ B[b], optionally with transposed operands and an epilogue, or with FP8
operands scaled per tensor (Hopper's FP8 GEMM)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from .base import DTYPE_BYTES, DTYPES, Spec, check_bool, check_int
from .epilogue import EPILOGUE_HINT, check_epilogue, epilogue_shapes
from .fp8 import FP8_DTYPES, FP8_GEMM_OUT_DTYPES, Fp8Operands, is_fp8
from .layout import packed_strides

MATMUL_DTYPES: tuple[str, ...] = (*DTYPES, *FP8_DTYPES)
#: B's FP8 format: "same" as A's, or its own (training multiplies e4m3 activations by e5m2 gradients).
B_DTYPES: tuple[str, ...] = ("same", *FP8_DTYPES)
#: The fields only an FP8 matmul reads (ignored, as given, otherwise; a form hides them).
FP8_FIELDS: tuple[str, ...] = ("b_dtype", "out_dtype", "scale_a", "scale_b", "amax")


@dataclasses.dataclass(frozen=True)
class MatmulSpec(Fp8Operands, Spec):
    """A batched GEMM: A [batch, m, k] times B [batch, k, n] gives C [batch, m, n].

    ``transpose_a``/``transpose_b`` store an operand column-major (its strides swap), as BLAS's 'T' does;
    the logical dims cuDNN sees stay [batch, m, k] and [batch, k, n].

    FP8 (``dtype`` 'fp8_e4m3' or 'fp8_e5m2'): A and B hold float data quantized with ``scale_a`` / ``scale_b``
    (None: a power of two from the data's amax); the graph multiplies the product by both descales (1/scale) and
    writes C in ``out_dtype``; ``amax`` adds an output Amax = max |C|. ``b_dtype`` gives B its own format. A
    row-major and B column-major (``transpose_b=True``, labelled NT here) is the layout every FP8 GEMM library takes
    (torch._scaled_mm only that, with m, n, k multiples of 16); cuDNN also runs the others. No epilogue. These
    fields are ignored when ``dtype`` is not FP8.
    """

    op: ClassVar[str] = "matmul"
    menu_order: ClassVar[int] = 20
    sweep_axes: ClassVar[tuple[str, ...]] = ("m", "dtype")
    block_scale_axis: ClassVar[str | None] = "K"
    FP8_SCALES: ClassVar[dict[str, str]] = {"A": "scale_a", "B": "scale_b"}
    title: ClassVar[str] = "matmul"
    description: ClassVar[str] = "matrix multiplication: MatmulSpec (batched, fused epilogue)"
    #: compute_dtype is left out: it has one allowed value (fp32), so a form shows no control for it.
    field_order: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k", "transpose_a", "transpose_b", "dtype",
                                              "b_dtype", "out_dtype", "scale_a", "scale_b", "amax", "epilogue")

    batch: int = 1
    m: int = 1024
    n: int = 1024
    k: int = 512
    dtype: str = "fp16"
    compute_dtype: str = "fp32"
    transpose_a: bool = False
    transpose_b: bool = False
    epilogue: tuple[str, ...] = ()
    b_dtype: str = "same"
    out_dtype: str = "bf16"
    scale_a: float | None = None
    scale_b: float | None = None
    amax: bool = False

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("batch", "m", "n", "k"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._check_choices("dtype", "compute_dtype")
        self._set("transpose_a", check_bool(name, "transpose_a", self.transpose_a))
        self._set("transpose_b", check_bool(name, "transpose_b", self.transpose_b))
        self._set("epilogue", check_epilogue(name, self.epilogue))
        # FP8 fields are validated whatever the dtype (junk never enters), used only when it is FP8.
        self._check_choices("b_dtype", "out_dtype")
        self._check_fp8_fields(name)
        if self.fp8:
            self._check_fp8(name)
        out = ("batch", "m", "n")
        self.check_elements({"A": ("batch", "m", "k"), "B": ("batch", "k", "n"), "C": out, "residual": out,
                             "bias": ("n",), "scale": ("n",), "descale_A": ("batch",), "descale_B": ("batch",),
                             "scale_C": ("batch",), "Amax": ("batch",)})

    def _check_fp8(self, name: str) -> None:
        """What the kit's FP8 GEMM is: no epilogue. Layouts, k and the e5m2 x e5m2 pair are cuDNN's to refuse: on
        Hopper with cuDNN 9.19 it runs them all (docs/FINDINGS.md, FP8)."""
        self._refuse_fp8_epilogue(name, "GEMM")

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": MATMUL_DTYPES, "compute_dtype": ("fp32",), "b_dtype": B_DTYPES,
                "out_dtype": FP8_GEMM_OUT_DTYPES}

    @classmethod
    def hidden_fields(cls, values: Mapping[str, Any]) -> frozenset[str]:
        """The FP8 fields unless ``dtype`` is FP8; the epilogue when it is (FP8 GEMMs take none here)."""
        return frozenset({"epilogue"} if is_fp8(values.get("dtype")) else FP8_FIELDS)

    @classmethod
    def field_hints(cls, values: Mapping[str, Any]) -> dict[str, str]:
        if not is_fp8(values.get("dtype")):
            return {}
        return {"transpose_b": "FP8: on for torch",
                "scale_a": "blank: 2^n from amax", "scale_b": "blank: 2^n from amax"}

    # --- FP8 ------------------------------------------------------------------------------------------------

    @property
    def b_fp8_dtype(self) -> str:
        """B's dtype when the GEMM is FP8 (``b_dtype``, or A's for 'same')."""
        return self.dtype if self.b_dtype == "same" else self.b_dtype

    @property
    def c_dtype(self) -> str:
        """The output's dtype: ``out_dtype`` for FP8, else ``dtype``."""
        return self.out_dtype if self.fp8 else self.dtype

    def fp8_dtypes(self) -> dict[str, str]:
        """A and B in their (FP8) dtypes, C in ``c_dtype``."""
        return {"A": self.dtype, "B": self.b_fp8_dtype, "C": self.c_dtype}

    def tensor_strides(self) -> dict[str, tuple[int, ...]]:
        """Row-major strides; a transposed operand is stored column-major (its last two dims swap in memory)."""
        out = {}
        for name, dims in self.tensor_shapes().items():
            transposed = (name == "A" and self.transpose_a) or (name == "B" and self.transpose_b)
            out[name] = packed_strides(dims, (0, 2, 1) if transposed else tuple(range(len(dims))))
        return out

    def tensor_shapes(self) -> dict[str, tuple[int, ...]]:
        shapes: dict[str, tuple[int, ...]] = {
            "A": (self.batch, self.m, self.k), "B": (self.batch, self.k, self.n), "C": (self.batch, self.m, self.n)}
        if self.fp8:
            shapes.update({"descale_A": (1, 1, 1), "descale_B": (1, 1, 1)})
            if self.amax:
                shapes.update({"scale_C": (1, 1, 1), "Amax": (1, 1, 1)})
        return {**shapes, **epilogue_shapes(self.epilogue, (1, 1, self.n), (self.batch, self.m, self.n))}

    def io_names(self) -> tuple[tuple[str, ...], str]:
        return ("A", "B"), "C"

    def flops(self) -> int:
        return 2 * self.batch * self.m * self.n * self.k

    def min_bytes(self) -> int:
        dtypes = self.tensor_dtypes()
        return sum(DTYPE_BYTES[dtypes[n]] * math.prod(d) for n, d in self.tensor_shapes().items())

    def tolerance_args(self) -> dict[str, Any]:
        """A matmul's bands follow C's dtype when FP8 picks them (numerics.FP8_GEMM_BANDS)."""
        return {"dtype": self.dtype, "op": self.op, "out_dtype": self.c_dtype}

    def gemm_mn(self) -> tuple[int, int] | None:
        """The batched GEMM's rows (batch*m) by columns (n)."""
        return self.batch * self.m, self.n

    def support_hint(self) -> str:
        """A fused epilogue is what most often leaves a matmul without an engine."""
        return EPILOGUE_HINT if self.epilogue else ""

    def label(self) -> str:
        t = ("T" if self.transpose_a else "N") + ("T" if self.transpose_b else "N")
        extra = "".join(f"+{e}" for e in self.epilogue)
        b = f"{self.batch}x" if self.batch > 1 else ""
        dt = self.dtype
        if self.fp8:
            dt = (f"{self.dtype}x{self.b_fp8_dtype.removeprefix('fp8_')}" if self.b_dtype != "same" else dt)
            dt += f"->{self.out_dtype}"
            extra += "+amax" if self.amax else ""
        return f"matmul {t} {dt} {b}{self.m}x{self.n}x{self.k}{extra}"
