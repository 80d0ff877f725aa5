"""Matrix multiplications as recipes: one ``matmul`` call (a transposed operand is column-major strides), then the
pointwise epilogue chain. Pure: no cudnn import here."""

from __future__ import annotations

from typing import Any

from ..specs import MatmulSpec
from .block_scale import BLOCK_SCALED, BlockProduct, BlockTypes, padded
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


@BLOCK_SCALED.register(MatmulSpec)
def block_scaled_product(g: Any, spec: MatmulSpec, t: BlockTypes) -> BlockProduct:
    """A [b, m, k] and B [b, k, n] (column-major) blocked along K, their scales in the F8_128x4 layout (rows padded to
    128, scale columns to 4), dequantized, then the matmul."""
    b, m, n, k, bs = spec.batch, spec.m, spec.n, spec.k, t.block_size
    sk, mp, np_ = padded(-(-k // bs), 4), padded(m, 128), padded(n, 128)
    a = g.tensor(name="A", dim=[b, m, k], stride=[m * k, k, 1], data_type=t.element)
    bt = g.tensor(name="B", dim=[b, k, n], stride=[k * n, 1, k], data_type=t.element)
    sa = g.tensor(name="SFA", dim=[b, mp, sk], stride=[mp * sk, sk, 1], data_type=t.scale, reordering_type=t.reorder)
    sb = g.tensor(name="SFB", dim=[b, sk, np_], stride=[sk * np_, 1, sk], data_type=t.scale,
                  reordering_type=t.reorder)
    ad = g.block_scale_dequantize(a, sa, block_size=[1, bs], compute_data_type=t.compute, name="dequantize_A")
    bd = g.block_scale_dequantize(bt, sb, block_size=[bs, 1], compute_data_type=t.compute, name="dequantize_B")
    return BlockProduct(g.matmul(ad, bd, compute_data_type=t.compute, name="matmul"), (1, 1, 1), "C")
