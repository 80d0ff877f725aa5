"""Batched matrix multiplication C[b] = A[b] @ B[b], optionally with transposed operands and an epilogue."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

from ..errors import SpecError
from .base import DTYPE_BYTES, DTYPES, MAX_ELEMENTS, Spec, check_bool, check_choice, check_int
from .epilogue import check_epilogue


@dataclasses.dataclass(frozen=True)
class MatmulSpec(Spec):
    """A batched GEMM: A [batch, m, k] times B [batch, k, n] gives C [batch, m, n].

    ``transpose_a``/``transpose_b`` store an operand column-major (its strides swap), as BLAS's 'T' does;
    the logical dims cuDNN sees stay [batch, m, k] and [batch, k, n].
    """

    op: ClassVar[str] = "matmul"

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
        for tname, dims in self.tensor_shapes().items():
            if math.prod(dims) > MAX_ELEMENTS:
                raise SpecError("batch", self.batch, f"makes tensor {tname} {list(dims)} larger than "
                                f"{MAX_ELEMENTS} elements; use smaller sizes", spec=name)

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
