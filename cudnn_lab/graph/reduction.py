"""A standalone reduction as a recipe: one ``reduction`` node from X to R, the reduced axes given by R's dims (the
frontend reads them from the output's shape), the mode a ``cudnn.reduction_mode`` member. Builds, validates and
draws without a GPU; whether an engine runs it is cuDNN's answer on the GPU (``cl.run`` says its per-engine
reasons where none does). Pure: no cudnn import here.
"""

from __future__ import annotations

from ..specs.reduction import ReductionSpec
from .families import RECIPES, REFERENCE_CODE
from .recipe import Enum, OpDecl, Recipe, TensorDecl, data_type

#: PyTorch's float64 expression of each mode over ``{d}`` (the reduced dims), as the exported script writes it;
#: products go dim by dim (``{prod}``: torch.prod takes one dim at a time).
TORCH_CODE: dict[str, str] = {
    "add": "x.sum(dim={d}, keepdim=True)",
    "mul": "x{prod}",
    "min": "x.amin(dim={d}, keepdim=True)",
    "max": "x.amax(dim={d}, keepdim=True)",
    "amax": "x.abs().amax(dim={d}, keepdim=True)",
    "avg": "x.mean(dim={d}, keepdim=True)",
    "norm1": "x.abs().sum(dim={d}, keepdim=True)",
    "norm2": "x.square().sum(dim={d}, keepdim=True).sqrt()",
    "mul_no_zeros": "torch.where(x == 0, torch.ones_like(x), x){prod}",
}


def torch_expression(spec: ReductionSpec) -> str:
    """The float64 PyTorch expression of ``spec``'s reduction of a tensor named ``x``."""
    prod = "".join(f".prod(dim={d}, keepdim=True)" for d in spec.reduced)
    return TORCH_CODE[spec.mode].format(d=spec.reduced, prod=prod)


@RECIPES.register(ReductionSpec)
def recipe(spec: ReductionSpec) -> Recipe:
    """X (``layout``, ``dtype``) -> reduction(mode, compute float32) -> R (float32, reduced dims 1)."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    tensors = (TensorDecl("X", shapes["X"], strides["X"], dtypes["X"], "input"),
               TensorDecl("R", shapes["R"], strides["R"], dtypes["R"], "output"))
    op = OpDecl("reduction", "reduction", (("input", "X"),),
                (("mode", Enum(f"reduction_mode.{spec.mode.upper()}")), ("compute_data_type", data_type("fp32"))),
                "R")
    return Recipe(spec.dtype, "fp32", "fp32", tensors, (op,))


@REFERENCE_CODE.register(ReductionSpec)
def reference_code(spec: ReductionSpec) -> list[str]:
    """R in float64 from PyTorch's own reduction over the same dims."""
    return ["x = inputs['X'].double()", f"y = {torch_expression(spec)}", "return y"]
