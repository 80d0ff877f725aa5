"""Batched matrix multiplication C[b] = A[b] @ B[b], optionally with transposed operands and an epilogue."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

from .base import DTYPE_BYTES, DTYPES, Spec, check_bool, check_choice, check_int
from .epilogue import check_epilogue
from .layout import packed_strides


@dataclasses.dataclass(frozen=True)
class MatmulSpec(Spec):
    """A batched GEMM: A [batch, m, k] times B [batch, k, n] gives C [batch, m, n].

    ``transpose_a``/``transpose_b`` store an operand column-major (its strides swap), as BLAS's 'T' does;
    the logical dims cuDNN sees stay [batch, m, k] and [batch, k, n].
    """

    op: ClassVar[str] = "matmul"
    title: ClassVar[str] = "matmul"
    description: ClassVar[str] = "matrix multiplication: MatmulSpec (batched, fused epilogue)"
    #: compute_dtype is left out: it has one allowed value (fp32), so a form shows no control for it.
    field_order: ClassVar[tuple[str, ...]] = ("batch", "m", "n", "k", "transpose_a", "transpose_b", "dtype",
                                              "epilogue")

    batch: int = 1
    m: int = 1024
    n: int = 1024
    k: int = 512
    dtype: str = "fp16"
    compute_dtype: str = "fp32"
    transpose_a: bool = False
    transpose_b: bool = False
    epilogue: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name = type(self).__name__
        for f in ("batch", "m", "n", "k"):
            self._set(f, check_int(name, f, getattr(self, f)))
        self._set("dtype", check_choice(name, "dtype", self.dtype, DTYPES))
        self._set("compute_dtype", check_choice(name, "compute_dtype", self.compute_dtype, ("fp32",)))
        self._set("transpose_a", check_bool(name, "transpose_a", self.transpose_a))
        self._set("transpose_b", check_bool(name, "transpose_b", self.transpose_b))
        self._set("epilogue", check_epilogue(name, self.epilogue))
        out = ("batch", "m", "n")
        self.check_elements({"A": ("batch", "m", "k"), "B": ("batch", "k", "n"), "C": out, "residual": out,
                             "bias": ("n",), "scale": ("n",)})

    @classmethod
    def field_choices(cls) -> dict[str, tuple[Any, ...]]:
        return {"dtype": DTYPES, "compute_dtype": ("fp32",)}

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
        if "bias" in self.epilogue:
            shapes["bias"] = (1, 1, self.n)
        if "scale" in self.epilogue:
            shapes["scale"] = (1, 1, self.n)
        if "add" in self.epilogue:
            shapes["residual"] = (self.batch, self.m, self.n)
        return shapes

    def io_names(self) -> tuple[tuple[str, ...], str]:
        return ("A", "B"), "C"

    def flops(self) -> int:
        return 2 * self.batch * self.m * self.n * self.k

    def min_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype] * sum(math.prod(d) for d in self.tensor_shapes().values())

    def label(self) -> str:
        t = ("T" if self.transpose_a else "N") + ("T" if self.transpose_b else "N")
        extra = "".join(f"+{e}" for e in self.epilogue)
        b = f"{self.batch}x" if self.batch > 1 else ""
        return f"matmul {t} {self.dtype} {b}{self.m}x{self.n}x{self.k}{extra}"
