"""The PyTorch side of normalizations (:class:`~cudnn_lab.specs.NormSpec`): inputs in the real layout, NaN-poisoned
outputs, the float64 reference of every output and PyTorch's own op in the spec's dtype.

Definitions (cuDNN's): mean and variance are over the normalized elements
(a row's features, a channel's n*h*w, an image-channel's h*w); the variance is the biased one (divided by the
count) and ``inv_var = 1 / sqrt(var + epsilon)``; y = (x - mean) * inv_var * scale + bias (rmsnorm: mean taken as 0,
var = mean(x^2)). Batchnorm training also writes ``next_running_mean = (1 - momentum) * running_mean + momentum *
mean`` and ``next_running_var = (1 - momentum) * running_var + momentum * var * m / (m - 1)`` (the unbiased variance,
as PyTorch's), m = n*h*w. The backward uses the saved mean and inv_var it is given:
DX = inv_var * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * scale and xhat = (x - mean) * inv_var
(rmsnorm: DX = inv_var * (g - xhat * mean(g * xhat))), DScale = sum(dy * xhat), DBias = sum(dy), both summed over
every dim but the channel.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..specs.norm import ROW_KINDS, NormSpec
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, empty, expect, poisoned, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "forward64", "backward64"]

#: Uniform range of each input; [0.5, 1.5] where a sign flip or a zero would be unnatural (scales, variances).
_RANGES = {"X": (-1.0, 1.0), "residual": (-1.0, 1.0), "DY": (-1.0, 1.0), "scale": (0.5, 1.5), "bias": (-1.0, 1.0),
           "running_mean": (-1.0, 1.0), "running_var": (0.5, 1.5), "mean": (-1.0, 1.0), "inv_var": (0.5, 1.5)}


def _check_spec(spec: object) -> NormSpec:
    return expect(spec, NormSpec, "normalization")


def input_names(spec: NormSpec) -> tuple[str, ...]:
    """Every tensor the graph reads (host scalars included), in the frontend call's order."""
    return spec.input_names()


def stat_dims(spec: NormSpec) -> tuple[int, ...]:
    """The dims a statistic (mean, inv_var) reduces over."""
    if spec.kind in ROW_KINDS:
        return (1, 2, 3)
    return (0, 2, 3) if spec.kind == "batchnorm" else (2, 3)


#: DScale and DBias sum over every dim but the channel (dim 1), for every kind.
PARAM_DIMS = (0, 2, 3)


def _random(spec: NormSpec, name: str, seed: int, device: Any = None) -> torch.Tensor:
    """Uniform values in the name's range (seeded by ``seed`` and the name), in the graph's dtype and strides."""
    lo, hi = _RANGES[name]
    return uniform(name, spec.tensor_shapes()[name], spec.tensor_strides()[name], spec.tensor_dtypes()[name], seed,
                   lo, hi, device=device)


def _empty(spec: NormSpec, name: str, device: torch.device) -> torch.Tensor:
    return empty(spec.tensor_shapes()[name], spec.tensor_strides()[name], spec.tensor_dtypes()[name], device)


def _statistics64(spec: NormSpec, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(mean, biased var, inv_var) of float64 ``x`` as the kind defines them (rmsnorm: mean 0, var = mean(x^2))."""
    import torch

    dims = stat_dims(spec)
    if spec.kind == "rmsnorm":
        mean = torch.zeros((), dtype=x.dtype, device=x.device)
        var = x.pow(2).mean(dim=dims, keepdim=True)
    else:
        mean = x.mean(dim=dims, keepdim=True)
        var = (x - mean).pow(2).mean(dim=dims, keepdim=True)
    return mean, var, torch.rsqrt(var + spec.epsilon)


def make_inputs(spec: NormSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Every tensor the graph reads, in its dtype and the graph's strides, on ``device``.

    x, the residual and dy are uniform in [-1, 1]; scale, running_var and batchnorm inference's inv_var in
    [0.5, 1.5]; bias and means in [-1, 1] (never all zeros). epsilon and momentum are float32 [1, 1, 1, 1] tensors
    on the CPU holding the spec's values: cuDNN takes them by value from the host. For the backward, mean and
    inv_var are x's own statistics (computed in float64, rounded to float32) as the forward pass would have saved
    them: random statistics would make the gradients meaningless.
    """
    import torch

    spec = _check_spec(spec)
    dev = torch.device(device)
    out: dict[str, torch.Tensor] = {}
    scalars = spec.scalars()
    for name in spec.input_names():
        if name in scalars:
            out[name] = torch.full((1, 1, 1, 1), scalars[name], dtype=torch.float32)
        elif spec.phase == "backward" and name in ("mean", "inv_var"):
            continue  # from x, below
        else:
            out[name] = _random(spec, name, seed, dev).to(dev)  # preserve_format keeps the strides
    if spec.phase == "backward":
        mean, _, inv_var = _statistics64(spec, out["X"].double())
        stats = {"mean": mean, "inv_var": inv_var}
        for name in ("mean", "inv_var"):
            if name in spec.input_names():
                t = _empty(spec, name, dev)
                t.copy_(stats[name].expand(t.shape))
                out[name] = t
        out = {n: out[n] for n in spec.input_names()}  # the frontend call's order
    return out


def make_outputs(spec: NormSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Every tensor the graph writes (Y or DX first), each in its dtype and strides, filled with NaN."""
    spec = _check_spec(spec)
    return poisoned(spec, spec.output_names(), device)


def _check(spec: NormSpec, inputs: dict[str, torch.Tensor], flop_limit: float) -> torch.device:
    """Every input is there with its shape; the tensors (not the host scalars) share one device, returned; on the
    CPU the problem is small enough."""
    device = check_inputs(spec, inputs, spec.input_names(), host=set(spec.scalars()))
    check_cpu_work(spec, device, "rows" if spec.kind in ROW_KINDS else "n", flop_limit=flop_limit)
    return device


def forward64(spec: NormSpec, t: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Y and the statistics a forward pass writes, from float64 inputs ``t``, by explicit math."""
    x = t["X"] + t["residual"] if spec.residual else t["X"]
    if spec.kind == "batchnorm" and spec.phase == "inference":
        return {"Y": (x - t["mean"]) * t["inv_var"] * t["scale"] + t["bias"]}
    mean, var, inv_var = _statistics64(spec, x)
    out = {"Y": (x - mean) * inv_var * t["scale"] + t["bias"], "mean": mean, "inv_var": inv_var}
    if spec.kind == "batchnorm":
        m, count = spec.momentum, spec.reduced_elements
        out["next_running_mean"] = (1 - m) * t["running_mean"] + m * mean
        out["next_running_var"] = (1 - m) * t["running_var"] + m * var * count / (count - 1)
    return {n: out[n] for n in spec.output_names()}


def backward64(spec: NormSpec, t: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """DX, DScale, DBias from float64 dy, x, scale and the saved statistics in ``t``, by the closed form."""
    import torch

    dims = stat_dims(spec)
    x, dy, inv_var = t["X"], t["DY"], t["inv_var"]
    mean = t["mean"] if "mean" in t else torch.zeros((), dtype=x.dtype, device=x.device)
    xhat = (x - mean) * inv_var
    g = dy * t["scale"]
    proj = xhat * (g * xhat).mean(dim=dims, keepdim=True)
    dx = inv_var * (g - proj) if spec.kind == "rmsnorm" else inv_var * (g - g.mean(dim=dims, keepdim=True) - proj)
    return {"DX": dx, "DScale": (dy * xhat).sum(dim=PARAM_DIMS, keepdim=True),
            "DBias": dy.sum(dim=PARAM_DIMS, keepdim=True)}


def reference_outputs(spec: NormSpec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """The float64 reference of every output :func:`make_outputs` names, on the inputs' device."""
    spec = _check_spec(spec)
    device = _check(spec, inputs, cpu_flop_limit)
    t = {n: inputs[n].to(device).double() for n in spec.input_names()}
    return backward64(spec, t) if spec.phase == "backward" else forward64(spec, t)


def torch_op(spec: NormSpec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """A zero-argument callable running the same op in PyTorch eager, in the spec's dtype; it returns Y or DX.

    Forward: ``F.layer_norm`` / ``F.rms_norm`` (+ bias) / ``F.batch_norm`` / ``F.instance_norm`` (a residual is
    added first). Batchnorm inference gets the variance back from inv_var (1 / inv_var^2 - epsilon), computed
    once, outside the callable. Backward: PyTorch's own backward kernels where it has one for the device
    (``native_layer_norm_backward``, ``native_batch_norm_backward``, CUDA's ``_fused_rms_norm_backward``), else
    autograd through the forward (which then counts the forward too).
    """
    import torch.nn.functional as F

    spec = _check_spec(spec)
    device = _check(spec, inputs, cpu_flop_limit)
    t = {n: inputs[n] for n in spec.input_names()}
    eps, c = spec.epsilon, spec.channels
    if spec.phase == "backward":
        return _torch_backward(spec, t, device)
    shape = (c, 1, 1)  # layer_norm/rms_norm normalize x's last three dims: [features, 1, 1]
    if spec.kind == "layernorm":
        w, b = t["scale"].reshape(shape), t["bias"].reshape(shape)
        if spec.residual:
            return lambda: F.layer_norm(t["X"] + t["residual"], shape, w, b, eps)
        return lambda: F.layer_norm(t["X"], shape, w, b, eps)
    if spec.kind == "rmsnorm":
        w = t["scale"].reshape(shape)
        if spec.residual:
            return lambda: F.rms_norm(t["X"] + t["residual"], shape, w, eps) + t["bias"]
        return lambda: F.rms_norm(t["X"], shape, w, eps) + t["bias"]
    w, b = t["scale"].reshape(c), t["bias"].reshape(c)
    if spec.kind == "instancenorm":
        return lambda: F.instance_norm(t["X"], weight=w, bias=b, eps=eps)
    if spec.phase == "inference":
        mean = t["mean"].reshape(c)
        var = (t["inv_var"].double().pow(-2) - eps).to(t["inv_var"].dtype).reshape(c)
        return lambda: F.batch_norm(t["X"], mean, var, w, b, False, 0.0, eps)
    running_mean, running_var = t["running_mean"].reshape(c).clone(), t["running_var"].reshape(c).clone()
    return lambda: F.batch_norm(t["X"], running_mean, running_var, w, b, True, spec.momentum, eps)


def _torch_backward(spec: NormSpec, t: dict[str, torch.Tensor], device: torch.device) -> Callable[[], torch.Tensor]:
    import torch
    import torch.nn.functional as F

    aten = torch.ops.aten
    eps, c = spec.epsilon, spec.channels
    x, dy, scale, inv_var = t["X"], t["DY"], t["scale"], t["inv_var"]
    mask3 = [True, True, True]
    if spec.kind == "layernorm":
        shape = [c, 1, 1]
        w, b = scale.reshape(shape), torch.zeros_like(scale).reshape(shape)
        # PyTorch keeps layer-norm statistics in float32 on CUDA (its accumulation type), in x's dtype on the CPU.
        sdt = torch.float32 if device.type == "cuda" else x.dtype
        mean, rstd = t["mean"].to(sdt), inv_var.to(sdt)
        return lambda: aten.native_layer_norm_backward(dy, x, shape, mean, rstd, w, b, mask3)[0]
    if spec.kind == "batchnorm":
        w, mean, rstd = scale.reshape(c), t["mean"].reshape(c), inv_var.reshape(c)
        return lambda: aten.native_batch_norm_backward(dy, x, w, None, None, mean, rstd, True, eps, mask3)[0]
    if spec.kind == "rmsnorm" and device.type == "cuda":
        shape = [c, 1, 1]
        w, rstd = scale.reshape(shape), inv_var.float()

        def rms_backward() -> torch.Tensor:
            dx, _ = aten._fused_rms_norm_backward(dy, x, shape, rstd, w, [True, True])
            dy.sum(dim=PARAM_DIMS)  # DBias: PyTorch's rms_norm has no bias, so its reduction is added here
            return dx

        return rms_backward
    # Autograd through the forward (rmsnorm on the CPU, instancenorm): counts the forward pass as well.
    xr = x.detach().clone().requires_grad_(True)
    wr = scale.detach().clone().requires_grad_(True)
    br = torch.zeros_like(scale).requires_grad_(True)
    if spec.kind == "rmsnorm":
        def forward() -> torch.Tensor:
            return F.rms_norm(xr, (c, 1, 1), wr.reshape(c, 1, 1), eps) + br
    else:
        def forward() -> torch.Tensor:
            return F.instance_norm(xr, weight=wr.reshape(c), bias=br.reshape(c), eps=eps)
    return lambda: torch.autograd.grad(forward(), (xr, wr, br), dy)[0]


REFERENCES.add(NormSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op))
