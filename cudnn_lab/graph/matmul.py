"""Matrix multiplications as recipes: one ``matmul`` call (a transposed operand is column-major strides), then the
pointwise epilogue chain. Pure: no cudnn import here."""

from __future__ import annotations

from ..specs import MatmulSpec
from .epilogue import epilogue_code, with_epilogue
from .families import RECIPES, REFERENCE_CODE
from .fp8 import scaled_recipe, scaled_reference_code
from .recipe import OpDecl, Recipe, TensorDecl, data_type


@RECIPES.register(MatmulSpec)
def recipe(spec: MatmulSpec) -> Recipe:
    """A and B with their strides, the matmul call, then the epilogue (FP8: the descale multiplies, and Amax)."""
    shapes, strides = spec.tensor_shapes(), spec.tensor_strides()
    main = OpDecl("matmul", "matmul", (("A", "A"), ("B", "B")),
                  (("compute_data_type", data_type(spec.compute_dtype)),), "C")
    if spec.fp8:
        return scaled_recipe(spec, main, ("A", "B"))
    tensors = [TensorDecl(n, shapes[n], strides[n], spec.dtype, "input") for n in ("A", "B")]
    return with_epilogue(spec, tensors, main)


@REFERENCE_CODE.register(MatmulSpec)
def reference_code(spec: MatmulSpec) -> list[str]:
    """The script's float64 reference: ``torch.matmul`` (the transposes live in the inputs' strides), the epilogue;
    FP8: on the descaled operands."""
    if spec.fp8:
        return scaled_reference_code("torch.matmul(a, b)", ("A", "B"))
    return ["y = torch.matmul(inputs['A'].double(), inputs['B'].double())", *epilogue_code(spec.epilogue),
            "return y"]
