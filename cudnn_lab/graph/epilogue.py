"""The pointwise epilogue chain after a conv or matmul: as recipe calls, and as the script's reference lines."""

from __future__ import annotations

import dataclasses

from ..specs.conv import ConvSpec
from ..specs.conv3d import Conv3dSpec
from ..specs.matmul import MatmulSpec
from ..specs.epilogue import OPERAND_TENSORS
from .recipe import OpDecl, Recipe, TensorDecl, data_type

#: Each step in the exported script's float64 reference, applied to ``y``.
_STEP_CODE = {"bias": "y = y + inputs['bias'].double()", "scale": "y = y * inputs['scale'].double()",
              "add": "y = y + inputs['residual'].double()", "relu": "y = torch.relu(y)",
              "gelu": "y = torch.nn.functional.gelu(y)", "sigmoid": "y = torch.sigmoid(y)",
              "tanh": "y = torch.tanh(y)"}


def with_epilogue(spec: ConvSpec | Conv3dSpec | MatmulSpec, tensors: list[TensorDecl], main: OpDecl) -> Recipe:
    """The recipe of ``main`` followed by the spec's epilogue chain: every step but the last writes a virtual
    tensor; the operands (bias, scale, residual) take the spec's shapes and strides."""
    dtype, compute, steps = spec.dtype, spec.compute_dtype, list(spec.epilogue)
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    final = main.output
    out_dims, out_strides = shapes[final], strides[final]
    current = f"{main.name}::{main.output}" if steps else final
    ops = [dataclasses.replace(main, output=current)]
    tensors = [*tensors, TensorDecl(current, out_dims, out_strides, None if steps else dtype,
                                    "virtual" if steps else "output")]
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        op_name = step if steps.count(step) == 1 else f"{step}_{i}"
        result = final if last else f"{op_name}::OUT"
        if step in OPERAND_TENSORS:
            operand = OPERAND_TENSORS[step]
            tensors.append(TensorDecl(operand, shapes[operand], strides[operand], dtype, "input"))
            inputs: tuple[tuple[str, str], ...] = (
                (("a", current), ("b", operand)) if step == "add" else (("input", current), (step, operand)))
        else:
            inputs = (("input", current),)
        ops.append(OpDecl(step, op_name, inputs, (("compute_data_type", data_type(compute)),), result))
        tensors.append(TensorDecl(result, out_dims, out_strides, dtype if last else None,
                                  "output" if last else "virtual"))
        current = result
    return Recipe(dtype, "fp32", compute, tuple(tensors), tuple(ops))


def epilogue_code(epilogue: tuple[str, ...]) -> list[str]:
    """The script's reference lines for the chain, applied to ``y`` left to right."""
    return [_STEP_CODE[e] for e in epilogue]
