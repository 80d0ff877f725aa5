"""A spec as a recipe: the exact list of tensors and cuDNN frontend calls its graph is made of.

One recipe feeds both the live builder (``build.py``) and the script exporter (``script.py``), so the graph a user
sees and the script attached to a bug report cannot drift apart. Each op family writes its recipes in its own
module (``conv.py``, ``matmul.py``, ...) from these parts. Pure: no cudnn import here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: The kit's dtype names and cuDNN's ``data_type`` members.
CUDNN_DTYPES = {"fp32": "FLOAT", "fp16": "HALF", "bf16": "BFLOAT16", "fp64": "DOUBLE", "fp8_e4m3": "FP8_E4M3",
                "fp8_e5m2": "FP8_E5M2", "int32": "INT32", "int64": "INT64"}


@dataclasses.dataclass(frozen=True)
class Enum:
    """A cudnn enum member named by path (``data_type.FLOAT``), resolved only when the graph is built."""

    path: str

    def __repr__(self) -> str:
        return f"cudnn.{self.path}"


def data_type(name: str) -> Enum:
    """The cudnn ``data_type`` member of a kit dtype name ('fp16' -> ``cudnn.data_type.HALF``)."""
    return Enum(f"data_type.{CUDNN_DTYPES[name]}")


@dataclasses.dataclass(frozen=True)
class TensorDecl:
    """A tensor of the graph. ``role`` is 'input', 'output' or 'virtual' (an intermediate cuDNN never stores)."""

    name: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: str | None  # None: the graph's intermediate type (virtual tensors)
    role: str
    #: a host-side scalar passed by value (epsilon, momentum), with its fixed value
    value: float | None = None
    #: the tensor of cuDNN ragged offsets ([batch + 1, 1, 1, 1] int64) this one is packed by (ragged attention)
    ragged_offset: str | None = None


@dataclasses.dataclass(frozen=True)
class OpDecl:
    """One call ``graph.<method>(**inputs, **params, name=name)`` producing tensor ``output``.

    Ops with several results (SDPA's O and Stats, a norm's Y, mean and inv_var) name the rest in
    ``extra_outputs``, in the frontend's order; an empty name drops that result.
    """

    method: str
    name: str
    inputs: tuple[tuple[str, str], ...]  # (keyword, tensor name)
    params: tuple[tuple[str, Any], ...]
    output: str
    extra_outputs: tuple[str, ...] = ()

    @property
    def results(self) -> tuple[str, ...]:
        return (self.output, *self.extra_outputs)

    def arguments(self) -> list[tuple[str, str | list[str]]]:
        """The call's tensor keywords and names; a keyword written ``kw[]`` is a list port (concatenate's
        ``inputs``): its tensors, in order, go as one list under ``kw``."""
        out: dict[str, str | list[str]] = {}
        for kw, name in self.inputs:
            if kw.endswith("[]"):
                listed = out.setdefault(kw[:-2], [])
                assert isinstance(listed, list)
                listed.append(name)
            else:
                out[kw] = name
        return list(out.items())


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A whole graph: the graph-wide dtypes, every tensor and every call in order."""

    io_dtype: str
    intermediate_dtype: str
    compute_dtype: str
    tensors: tuple[TensorDecl, ...]
    ops: tuple[OpDecl, ...]

    def tensor(self, name: str) -> TensorDecl:
        return next(t for t in self.tensors if t.name == name)

    @property
    def inputs(self) -> tuple[TensorDecl, ...]:
        return tuple(t for t in self.tensors if t.role == "input")

    @property
    def outputs(self) -> tuple[TensorDecl, ...]:
        return tuple(t for t in self.tensors if t.role == "output")
