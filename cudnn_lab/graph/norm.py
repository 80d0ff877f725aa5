"""Normalizations as recipes: one frontend norm node (``layernorm``, ``rmsnorm``, ``batchnorm``, ``instancenorm`` or
their ``*_backward``), a fused residual ``add`` before a layernorm/rmsnorm, or, for batchnorm inference, the
pointwise chain that cuDNN runs instead of its ``batchnorm_inference`` node.

Keywords as cuDNN frontend 1.32's pybind signatures name them (``python/pygraph/norm.cpp``): ``norm_forward_phase``,
``input``, ``scale``, ``bias``, ``epsilon``, ``in_running_mean``/``in_running_var``/``momentum`` (batchnorm),
``grad``/``mean``/``inv_variance`` (backward) and ``has_dbias`` (rmsnorm backward). Pure: no cudnn import here.
"""

from __future__ import annotations

from ..specs.norm import NormSpec
from .families import RECIPES, REFERENCE_CODE
from .recipe import Enum, OpDecl, Recipe, TensorDecl

_FLOAT = (("compute_data_type", Enum("data_type.FLOAT")),)


@RECIPES.register(NormSpec)
def recipe(spec: NormSpec) -> Recipe:
    """The spec's tensors (each with its own dtype; epsilon/momentum passed by value) and frontend calls."""
    shapes, strides, dtypes, scalars = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes(), spec.scalars()

    def decl(name: str, role: str, dtype: str | None = "") -> TensorDecl:
        return TensorDecl(name, shapes[name], strides[name], dtypes[name] if dtype == "" else dtype, role,
                          value=scalars.get(name))

    tensors = [decl(n, "input") for n in spec.input_names()]
    ops: list[OpDecl] = []
    k = spec.kind
    if spec.phase == "backward":
        ports: tuple[tuple[str, str], ...] = (("grad", "DY"), ("input", "X"), ("scale", "scale"))
        ports += (("inv_variance", "inv_var"),) if k == "rmsnorm" else (("mean", "mean"), ("inv_variance", "inv_var"))
        params = (("has_dbias", True), *_FLOAT) if k == "rmsnorm" else _FLOAT
        ops.append(OpDecl(f"{k}_backward", f"{k}_backward", ports, params, "DX",
                          extra_outputs=("DScale", "DBias")))
    elif k == "batchnorm" and spec.phase == "inference":
        ops += _batchnorm_inference_chain(spec, tensors)
    elif k == "batchnorm":
        ports = (("input", "X"), ("scale", "scale"), ("bias", "bias"), ("in_running_mean", "running_mean"),
                 ("in_running_var", "running_var"), ("epsilon", "epsilon"), ("momentum", "momentum"))
        ops.append(OpDecl("batchnorm", "batchnorm", ports, _FLOAT, "Y",
                          extra_outputs=("mean", "inv_var", "next_running_mean", "next_running_var")))
    else:
        source = "X"
        if spec.residual:
            # x + residual in the graph's intermediate type (float32), never rounded to x's dtype.
            source = "add::Y"
            tensors.append(TensorDecl(source, shapes["X"], strides["X"], None, "virtual"))
            ops.append(OpDecl("add", "add", (("a", "X"), ("b", "residual")), _FLOAT, source))
        training = spec.phase == "training"
        phase = Enum(f"norm_forward_phase.{'TRAINING' if training else 'INFERENCE'}")
        ports = (("input", source), ("scale", "scale"), ("bias", "bias"), ("epsilon", "epsilon"))
        # Inference still returns (Y, None[, None]): empty names keep the script's unpacking at the node's arity.
        stats = spec.output_names()[1:] if training else ("",) * (1 if k == "rmsnorm" else 2)
        ops.append(OpDecl(k, k, ports, (("norm_forward_phase", phase), *_FLOAT), "Y", extra_outputs=stats))
    tensors += [decl(n, "output") for n in spec.output_names()]
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), tuple(ops))


def _batchnorm_inference_chain(spec: NormSpec, tensors: list[TensorDecl]) -> list[OpDecl]:
    """y = (x - mean) * inv_var * scale + bias as four pointwise nodes over broadcast [1, c, 1, 1] operands.

    Built instead of the ``batchnorm_inference`` node, which found no engine on its own (docs/FINDINGS.md); cuDNN's
    runtime-fusion engine runs this chain for NHWC x.
    """
    dims, strides = spec.x_dims, spec.tensor_strides()["X"]
    steps = (("sub", "mean"), ("mul", "inv_var"), ("mul", "scale"), ("add", "bias"))
    ops, current = [], "X"
    for i, (method, operand) in enumerate(steps):
        last = i == len(steps) - 1
        name = f"{method}_{operand}"
        result = "Y" if last else f"{name}::Y"
        if not last:
            tensors.append(TensorDecl(result, dims, strides, None, "virtual"))
        ops.append(OpDecl(method, name, (("a", current), ("b", operand)), _FLOAT, result))
        current = result
    return ops


@REFERENCE_CODE.register(NormSpec)
def reference_code(spec: NormSpec) -> list[str]:
    """Body of the exported script's ``reference(inputs)``: the main output (Y or DX) in float64, explicit math.

    The backward uses the mean and inv_var it is given, as cuDNN does, so the check holds for any statistics fed.
    """
    dims = {"layernorm": "(1,)", "rmsnorm": "(1,)", "batchnorm": "(0, 2, 3)", "instancenorm": "(2, 3)"}[spec.kind]
    k = spec.kind
    if spec.phase == "backward":
        lines = ["x, dy = inputs['X'].double(), inputs['DY'].double()",
                 "g = dy * inputs['scale'].double()  # the gradient reaching the normalized x"]
        if k == "rmsnorm":
            lines += ["inv_var = inputs['inv_var'].double()",
                      "xhat = x * inv_var",
                      f"y = inv_var * (g - xhat * (g * xhat).mean(dim={dims}, keepdim=True))  # DX"]
        else:
            lines += ["mean, inv_var = inputs['mean'].double(), inputs['inv_var'].double()",
                      "xhat = (x - mean) * inv_var",
                      f"y = inv_var * (g - g.mean(dim={dims}, keepdim=True) "
                      f"- xhat * (g * xhat).mean(dim={dims}, keepdim=True))  # DX"]
        return lines + ["return y"]
    if k == "batchnorm" and spec.phase == "inference":
        return ["x = inputs['X'].double()",
                "y = (x - inputs['mean'].double()) * inputs['inv_var'].double() * inputs['scale'].double() "
                "+ inputs['bias'].double()",
                "return y"]
    lines = ["x = inputs['X'].double()"]
    if spec.residual:
        lines.append("x = x + inputs['residual'].double()  # the fused residual add")
    if k == "rmsnorm":
        lines.append(f"inv_var = torch.rsqrt(x.pow(2).mean(dim={dims}, keepdim=True) + {spec.epsilon!r})")
        lines.append("xhat = x * inv_var")
    else:
        lines += [f"mean = x.mean(dim={dims}, keepdim=True)",
                  f"var = (x - mean).pow(2).mean(dim={dims}, keepdim=True)  # biased, as the norm uses",
                  f"xhat = (x - mean) * torch.rsqrt(var + {spec.epsilon!r})"]
    lines += ["y = xhat * inputs['scale'].double() + inputs['bias'].double()", "return y"]
    return lines
