"""FP8 GEMM and convolution as recipes: the main op on FP8 operands, then cuDNN's FP8 composition (its
``matmul_fp8`` node): a multiply by each operand's descale, and with ``amax`` a reduction AMAX of the result beside
a multiply by the output scale (fed 1.0: the output here is bf16/fp16/fp32, not FP8). Pure: no cudnn import here.
"""

from __future__ import annotations

from typing import Any

from .recipe import Enum, OpDecl, Recipe, TensorDecl, data_type

__all__ = ["scaled_recipe", "scaled_reference_code"]


def scaled_recipe(spec: Any, main: OpDecl, operands: tuple[str, str]) -> Recipe:
    """``main`` (writing the spec's main output) on FP8 ``operands``, then ``out = main * descale_<a> * descale_<b>``
    (and Amax = max |out| when ``spec.amax``). Tensor dims, strides and dtypes come from the spec."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    _, out = spec.io_names()

    def decl(name: str, role: str, dtype: str | None = None) -> TensorDecl:
        return TensorDecl(name, shapes[name], strides[name], dtype or dtypes[name], role)

    def virtual(name: str) -> TensorDecl:
        return TensorDecl(name, shapes[out], strides[out], None, "virtual")

    fp32 = (("compute_data_type", data_type("fp32")),)
    descales = tuple(f"descale_{n}" for n in operands)
    tensors = [decl(n, "input") for n in (*operands, *descales)]
    acc, scaled = f"{main.name}::{main.output}", f"{descales[0].lower()}::OUT"
    ops = [OpDecl(main.method, main.name, main.inputs, main.params, acc),
           OpDecl("mul", descales[0].lower(), (("a", acc), ("b", descales[0])), fp32, scaled)]
    tensors += [virtual(acc), virtual(scaled)]
    if not spec.amax:
        ops.append(OpDecl("mul", descales[1].lower(), (("a", scaled), ("b", descales[1])), fp32, out))
        tensors.append(decl(out, "output"))
        return Recipe(dtypes[out], "fp32", "fp32", tuple(tensors), tuple(ops))
    scale = next(n for n in shapes if n.startswith("scale_"))
    both = f"{descales[1].lower()}::OUT"
    ops += [OpDecl("mul", descales[1].lower(), (("a", scaled), ("b", descales[1])), fp32, both),
            OpDecl("reduction", "amax", (("input", both),), (("mode", Enum("reduction_mode.AMAX")), *fp32), "Amax"),
            OpDecl("mul", scale.lower(), (("a", both), ("b", scale)), fp32, out)]
    tensors += [virtual(both), decl(scale, "input"), decl("Amax", "output"), decl(out, "output")]
    return Recipe(dtypes[out], "fp32", "fp32", tuple(tensors), tuple(ops))


def scaled_reference_code(expr: str, operands: tuple[str, str]) -> list[str]:
    """The script's reference lines: ``expr`` (written on ``a`` and ``b``) on the descaled FP8 operands."""
    a, b = operands
    return [f"a = inputs[{a!r}].double() * inputs['descale_{a}'].double().reshape(-1)[0]",
            f"b = inputs[{b!r}].double() * inputs['descale_{b}'].double().reshape(-1)[0]",
            f"y = {expr}", "return y"]
