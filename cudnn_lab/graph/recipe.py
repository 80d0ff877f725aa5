"""A spec as a recipe: the exact list of tensors and cuDNN frontend calls its graph is made of.

One recipe feeds both the live builder (``build.py``) and the script exporter (``script.py``), so the graph a user
sees and the script attached to a bug report cannot drift apart. Pure: no cudnn import here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..specs import ConvSpec, MatmulSpec, Spec, layout_strides
from ..specs.base import pair
from ..specs.layout import packed_strides

#: The kit's dtype names and cuDNN's ``data_type`` members.
CUDNN_DTYPES = {"fp32": "FLOAT", "fp16": "HALF", "bf16": "BFLOAT16", "fp64": "DOUBLE"}


@dataclasses.dataclass(frozen=True)
class Enum:
    """A cudnn enum member named by path (``data_type.FLOAT``), resolved only when the graph is built."""

    path: str

    def __repr__(self) -> str:
        return f"cudnn.{self.path}"


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


@dataclasses.dataclass(frozen=True)
class Recipe:
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


def recipe_for(spec: Spec) -> Recipe:
    """The tensors and calls that make up ``spec``'s cuDNN graph.

    Conv and matmul are here; other families have a module in this package named by their spec's ``op``
    (``graph/sdpa.py``, ...) with ``recipe(spec)`` and ``reference_code(spec)`` (the exported script's reference).
    """
    if isinstance(spec, ConvSpec):
        return _conv_recipe(spec)
    if isinstance(spec, MatmulSpec):
        return _matmul_recipe(spec)
    return family_module(spec).recipe(spec)


def family_module(spec: Spec) -> Any:
    """The graph module of a spec's op family."""
    import importlib

    from ..errors import SpecError

    if not isinstance(spec, Spec):
        raise SpecError("spec", type(spec).__name__, "must be a cudnn_lab spec such as ConvSpec or MatmulSpec")
    try:
        return importlib.import_module(f"{__package__}.{spec.op}")
    except ModuleNotFoundError:
        raise SpecError("spec", type(spec).__name__, "has no cuDNN graph in this version") from None


def _dt(name: str) -> Enum:
    return Enum(f"data_type.{CUDNN_DTYPES[name]}")


def _conv_recipe(spec: ConvSpec) -> Recipe:
    shapes = spec.tensor_shapes()
    ins, out = spec.io_names()
    tensors = [TensorDecl(n, shapes[n], layout_strides(shapes[n], spec.layout), spec.dtype, "input") for n in ins]
    (ph, pw), (sh, sw), (dh, dw) = (pair(spec.padding), pair(spec.stride), pair(spec.dilation))
    params = (("padding", [ph, pw]), ("stride", [sh, sw]), ("dilation", [dh, dw]),
              ("compute_data_type", _dt(spec.compute_dtype)))
    kw = {"fprop": ("image", "weight"), "dgrad": ("loss", "filter"), "wgrad": ("image", "loss")}[spec.direction]
    main = OpDecl(f"conv_{spec.direction}", f"conv_{spec.direction}", tuple(zip(kw, ins)), params, out)
    out_dims = shapes[out]
    operand_dims = {"bias": (1, spec.k, 1, 1), "scale": (1, spec.k, 1, 1), "residual": out_dims}
    return _with_epilogue(spec.epilogue, spec.dtype, spec.compute_dtype, tensors, main, out_dims,
                          layout_strides(out_dims, spec.layout), operand_dims,
                          lambda dims: layout_strides(dims, spec.layout))


def _matmul_recipe(spec: MatmulSpec) -> Recipe:
    shapes = spec.tensor_shapes()
    a, b = shapes["A"], shapes["B"]
    # A transposed operand is stored column-major: its last two dims swap places in memory.
    a_strides = packed_strides(a, (0, 2, 1)) if spec.transpose_a else packed_strides(a, (0, 1, 2))
    b_strides = packed_strides(b, (0, 2, 1)) if spec.transpose_b else packed_strides(b, (0, 1, 2))
    tensors = [TensorDecl("A", a, a_strides, spec.dtype, "input"), TensorDecl("B", b, b_strides, spec.dtype, "input")]
    main = OpDecl("matmul", "matmul", (("A", "A"), ("B", "B")),
                  (("compute_data_type", _dt(spec.compute_dtype)),), "C")
    out_dims = shapes["C"]
    operand_dims = {"bias": (1, 1, spec.n), "scale": (1, 1, spec.n), "residual": out_dims}
    return _with_epilogue(spec.epilogue, spec.dtype, spec.compute_dtype, tensors, main, out_dims,
                          packed_strides(out_dims, (0, 1, 2)), operand_dims,
                          lambda dims: packed_strides(dims, tuple(range(len(dims)))))


def _with_epilogue(epilogue: tuple[str, ...], dtype: str, compute: str, tensors: list[TensorDecl], main: OpDecl,
                   out_dims: tuple[int, ...], out_strides: tuple[int, ...], operand_dims: dict[str, tuple[int, ...]],
                   strides_of: Any) -> Recipe:
    """Chain the epilogue after the main op: every step but the last writes a virtual tensor."""
    ops = [main]
    steps = list(epilogue)
    final = main.output
    current = f"{main.name}::{main.output}" if steps else final
    ops[0] = dataclasses.replace(main, output=current)
    tensors.append(TensorDecl(current, out_dims, out_strides, None if steps else dtype,
                              "virtual" if steps else "output"))
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        op_name = step if steps.count(step) == 1 else f"{step}_{i}"
        result = final if last else f"{op_name}::OUT"
        if step in ("bias", "scale"):
            tensors.append(TensorDecl(step, operand_dims[step], strides_of(operand_dims[step]), dtype, "input"))
            inputs: tuple[tuple[str, str], ...] = (("input", current), (step, step))
        elif step == "add":
            tensors.append(TensorDecl("residual", out_dims, out_strides, dtype, "input"))
            inputs = (("a", current), ("b", "residual"))
        else:
            inputs = (("input", current),)
        ops.append(OpDecl(step, op_name, inputs, (("compute_data_type", _dt(compute)),), result))
        tensors.append(TensorDecl(result, out_dims, out_strides, dtype if last else None,
                                  "output" if last else "virtual"))
        current = result
    return Recipe(dtype, "fp32", compute, tuple(tensors), tuple(ops))

