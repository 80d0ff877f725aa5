"""MoE grouped GEMM as a recipe: one ``moe_grouped_matmul`` call in mode NONE (tokens already sorted by expert), fed
the tokens, the per-expert weights and the int32 offsets where each expert's tokens start. Pure: no cudnn import.

The call's other inputs (``token_index``, ``token_ks``, ``top_k``) belong to the GATHER, SCATTER and COMBINE modes,
which fold the router's permutation into the GEMM; the kit's MoE family is the grouped GEMM alone.
"""

from __future__ import annotations

from ..specs.moe import MoeSpec
from .families import RECIPES, REFERENCE_CODE
from .recipe import Enum, OpDecl, Recipe, TensorDecl, data_type

#: The frontend's mode for a grouped GEMM over tokens already sorted by expert.
MODE = Enum("moe_grouped_matmul_mode.NONE")


@RECIPES.register(MoeSpec)
def recipe(spec: MoeSpec) -> Recipe:
    """X, W (column-major per expert) and the int32 offsets in, Y out; fp32 accumulation."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    (x, w, offsets), out = spec.io_names()
    tensors = [TensorDecl(n, shapes[n], strides[n], dtypes[n], "input") for n in (x, w, offsets)]
    tensors.append(TensorDecl(out, shapes[out], strides[out], dtypes[out], "output"))
    op = OpDecl("moe_grouped_matmul", "moe", (("token", x), ("weight", w), ("first_token_offset", offsets)),
                (("mode", MODE), ("compute_data_type", data_type("fp32"))), out)
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (op,))


@REFERENCE_CODE.register(MoeSpec)
def reference_code(spec: MoeSpec) -> list[str]:
    """The script's float64 reference: one matmul per expert over its rows of X, as the offsets say."""
    return ["x, w = inputs['X'].double()[0], inputs['W'].double()",
            "offsets = [int(v) for v in inputs['offsets'].flatten().tolist()] + [x.shape[0]]  # starts, then the end",
            "y = torch.full((1, x.shape[0], w.shape[2]), float('nan'), dtype=torch.float64, device=x.device)",
            "for e in range(w.shape[0]):",
            "    y[0, offsets[e]:offsets[e + 1]] = x[offsets[e]:offsets[e + 1]] @ w[e]",
            "return y"]
