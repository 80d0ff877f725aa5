"""The PyTorch side of attention (:class:`~cudnn_lab.specs.SdpaSpec`): inputs in the real layout, NaN-poisoned
outputs, the float64 reference (O, Stats = logsumexp, or dQ/dK/dV by autograd) and PyTorch's own SDPA.

Plain attention is handled here; variants (lengths, ragged packing, bias, ALiBi, dropout, bottom-right diagonal)
and FP8 in :mod:`.sdpa_variants`, which the functions below hand such specs to.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..specs.sdpa import SdpaSpec
from . import sdpa_variants as variants
from .common import CPU_FLOP_LIMIT, check_cpu_work, check_inputs, empty, expect, poisoned, uniform
from .families import REFERENCES, Reference

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["make_inputs", "make_outputs", "reference_outputs", "torch_op", "attention", "SDPA_BACKENDS",
           "backend_ops"]

#: The float64 reference works on chunks of heads whose score matrices hold at most this many elements.
_CHUNK_ELEMENTS = 1 << 25


def _check_spec(spec: object) -> SdpaSpec:
    return expect(spec, SdpaSpec, "attention")


def input_names(spec: SdpaSpec) -> tuple[str, ...]:
    """Q, K, V (and for the backward O, dO, Stats), then the variants' lengths, offsets, bias, dropout tensors and
    FP8 scalars."""
    return spec.io_names()[0]


def _random(spec: SdpaSpec, name: str, seed: int, device: torch.device) -> torch.Tensor:
    """Uniform [-1, 1] values (seeded by ``seed`` and the name) with the graph's strides, on ``device``."""
    return uniform(name, spec.tensor_shapes()[name], spec.tensor_strides()[name], spec.tensor_dtypes()[name],
                   seed, device=device).to(device)


def _empty(spec: SdpaSpec, name: str, device: torch.device) -> torch.Tensor:
    return empty(spec.tensor_shapes()[name], spec.tensor_strides()[name], spec.tensor_dtypes()[name], device)


def _keep_mask(spec: SdpaSpec, device: torch.device) -> torch.Tensor | None:
    """[seq_q, seq_kv] booleans, True where the mask keeps the score (None when nothing is masked)."""
    import torch

    if not spec.causal:
        return None
    i = torch.arange(spec.seq_q, device=device).view(-1, 1)
    j = torch.arange(spec.seq_kv, device=device).view(1, -1)
    keep = j <= i  # top-left aligned causal diagonal
    if spec.sliding_window:
        keep &= j > i - spec.sliding_window
    return keep


def attention(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, Stats) for [b, heads, s_q, d] q and [b, kv_heads, s_kv, d] k, v, in their own dtype, by explicit math.

    Stats is the logsumexp of each row of scaled, masked scores (max + log(sum(exp(s - max)))), as cuDNN writes
    it. K/V heads are repeated for grouped-query attention (query head h reads K/V head h // group).
    """
    import torch

    if spec.group > 1:
        k, v = k.repeat_interleave(spec.group, dim=1), v.repeat_interleave(spec.group, dim=1)
    s = torch.matmul(q, k.transpose(-2, -1)) * spec.scale
    keep = _keep_mask(spec, s.device)
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    stats = torch.logsumexp(s, dim=-1, keepdim=True)
    o = torch.matmul(torch.exp(s - stats), v)
    return o, stats


def _chunks(spec: SdpaSpec) -> list[tuple[int, slice, slice]]:
    """(batch index, query-head slice, kv-head slice) pieces whose score matrices stay below _CHUNK_ELEMENTS."""
    per_kv_head = spec.group * spec.seq_q * spec.seq_kv
    step = max(1, _CHUNK_ELEMENTS // per_kv_head)
    out = []
    for b in range(spec.batch):
        for g in range(0, spec.h_kv, step):
            g1 = min(spec.h_kv, g + step)
            out.append((b, slice(g * spec.group, g1 * spec.group), slice(g, g1)))
    return out


def _forward64(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, Stats) in float64, [b, h, s, d] and [b, h, s_q, 1] contiguous, computed chunk by chunk."""
    import torch

    o = torch.empty(spec.o_dims, dtype=torch.float64, device=q.device)
    stats = torch.empty(spec.stats_dims, dtype=torch.float64, device=q.device)
    for b, hq, hk in _chunks(spec):
        o_c, s_c = attention(spec, q[b:b + 1, hq].double(), k[b:b + 1, hk].double(), v[b:b + 1, hk].double())
        o[b:b + 1, hq], stats[b:b + 1, hq] = o_c, s_c
    return o, stats


def _check(spec: SdpaSpec, inputs: dict[str, torch.Tensor], flop_limit: float) -> torch.device:
    """The inputs are there on one device; on the CPU the problem is small enough. Returns the device."""
    device = check_inputs(spec, inputs, input_names(spec))
    check_cpu_work(spec, device, "batch", flop_limit=flop_limit)
    return device


def make_inputs(spec: SdpaSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Q, K, V (and dO) uniform in [-1, 1], never zeros, in the spec's dtype and real layout (BSHD: a contiguous
    [b, s, h, d] buffer seen as [b, h, s, d]).

    For the backward, O and Stats are the forward's results on these Q, K, V (computed in float64, then rounded
    to the graph's dtypes), as a training step would hand them over: random O and Stats would make the gradients
    meaningless.
    """
    import torch

    spec = _check_spec(spec)
    if not variants.is_plain(spec):
        return variants.make_inputs(spec, device=device, seed=seed)
    dev = torch.device(device)
    out = {n: _random(spec, n, seed, dev) for n in ("Q", "K", "V")}
    if spec.direction == "bwd":
        o64, stats64 = _forward64(spec, out["Q"], out["K"], out["V"])
        out["O"] = _empty(spec, "O", dev).copy_(o64)
        out["dO"] = _random(spec, "dO", seed, dev)
        out["Stats"] = _empty(spec, "Stats", dev).copy_(stats64)
    return out


def make_outputs(spec: SdpaSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Every tensor the graph writes (O [+ Stats], or dQ, dK, dV), with the graph's strides, NaN-filled."""
    spec = _check_spec(spec)
    if not variants.is_plain(spec):
        return variants.make_outputs(spec, device=device)
    return poisoned(spec, spec.output_names(), device)


def reference_outputs(spec: SdpaSpec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                      ) -> dict[str, torch.Tensor]:
    """Every output in float64 on the inputs' device: O (+ Stats = logsumexp of each scaled score row), or
    dQ, dK, dV by float64 autograd through the forward with dO as the upstream gradient."""
    import torch

    spec = _check_spec(spec)
    if not variants.is_plain(spec):
        return variants.reference_outputs(spec, inputs, cpu_flop_limit=cpu_flop_limit)
    device = _check(spec, inputs, cpu_flop_limit)
    q, k, v = (inputs[n] for n in ("Q", "K", "V"))
    if spec.direction != "bwd":
        o, stats = _forward64(spec, q, k, v)
        return {"O": o, "Stats": stats} if spec.direction == "fwd_training" else {"O": o}
    grads = {n: torch.empty(spec.tensor_shapes()[n], dtype=torch.float64, device=device) for n in ("dQ", "dK", "dV")}
    do = inputs["dO"]
    with torch.enable_grad():
        for b, hq, hk in _chunks(spec):
            leaves = [t[b:b + 1, h].detach().double().requires_grad_(True) for t, h in ((q, hq), (k, hk), (v, hk))]
            o, _ = attention(spec, *leaves)
            dq, dk, dv = torch.autograd.grad(o, leaves, do[b:b + 1, hq].double())
            grads["dQ"][b:b + 1, hq], grads["dK"][b:b + 1, hk], grads["dV"][b:b + 1, hk] = dq, dk, dv
    return grads


def _torch_sdpa(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, attn_mask: Any = None,
                dropout_p: float = 0.0) -> torch.Tensor:
    """torch.nn.functional.scaled_dot_product_attention with the spec's mask, scale and head grouping (a variant's
    ``attn_mask`` and ``dropout_p`` given)."""
    import torch.nn.functional as F

    if attn_mask is not None:
        kw: dict[str, Any] = dict(attn_mask=attn_mask, dropout_p=dropout_p, scale=spec.scale)
    else:
        keep = _keep_mask(spec, q.device) if spec.sliding_window else None
        kw = dict(attn_mask=keep, is_causal=spec.causal and keep is None, scale=spec.scale)
    if spec.group > 1:
        try:
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
        except TypeError:  # torch < 2.5 has no enable_gqa: repeat the K/V heads instead
            k, v = k.repeat_interleave(spec.group, dim=1), v.repeat_interleave(spec.group, dim=1)
    return F.scaled_dot_product_attention(q, k, v, **kw)


def torch_op(spec: SdpaSpec, inputs: dict[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
             ) -> Callable[[], torch.Tensor]:
    """A zero-argument callable running the same op in PyTorch eager (native dtype); it returns the main output.

    Forward: ``scaled_dot_product_attention`` (``is_causal`` for a causal mask, a boolean mask for a sliding
    window, ``enable_gqa`` for grouped-query attention). Backward: the forward runs once, on the first call and
    thus on the caller's stream (autograd runs a backward kernel on its forward's stream), then every call is
    ``torch.autograd.grad`` of O with dO as the upstream gradient (retain_graph), i.e. only the backward kernels;
    it returns dQ.
    """
    spec = _check_spec(spec)
    if not variants.is_plain(spec):
        check_cpu_work(spec, variants.check_buffers(spec, inputs), "batch", flop_limit=cpu_flop_limit)
        do = variants.logical(spec, inputs, "dO").to(inputs["Q"].dtype) if spec.direction == "bwd" else None
        return variants.torch_op(spec, inputs, lambda q, k, v, mask, p: _op(
            spec, q, k, v, do, lambda *t: _torch_sdpa(spec, *t, attn_mask=mask, dropout_p=p)))
    _check(spec, inputs, cpu_flop_limit)
    q, k, v = (inputs[n] for n in ("Q", "K", "V"))
    return _op(spec, q, k, v, inputs.get("dO"), lambda *t: _torch_sdpa(spec, *t))


#: PyTorch's SDPA backends the kit times one at a time (``RunOptions(backends=True)``): baseline name ->
#: ``torch.nn.attention.SDPBackend`` member.
SDPA_BACKENDS: dict[str, str] = {"sdpa_flash": "FLASH_ATTENTION", "sdpa_efficient": "EFFICIENT_ATTENTION",
                                 "sdpa_cudnn": "CUDNN_ATTENTION", "sdpa_math": "MATH"}


def _in_backend(backend: str, call: Callable[[], torch.Tensor]) -> torch.Tensor:
    """``call()`` with PyTorch's SDPA dispatch limited to one backend; a backend that cannot run the shape raises
    RuntimeError with PyTorch's own reasons (the warnings it gives before "No available kernel")."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel([getattr(SDPBackend, backend)]):
                return call()
        except RuntimeError as e:
            why = "; ".join(dict.fromkeys(" ".join(str(w.message).split()) for w in said)) or " ".join(str(e).split())
            raise RuntimeError(f"PyTorch's {backend} backend refused this shape: {why}") from None


def backend_ops(spec: SdpaSpec, inputs: dict[str, torch.Tensor]) -> dict[str, Callable[[], Any]]:
    """Each PyTorch SDPA backend (:data:`SDPA_BACKENDS`) forced alone on the same inputs, by baseline name: the
    forward, or for the backward the forward once (in that backend) then autograd's backward of it, as
    :func:`torch_op` times them. Plain attention only: variants (masks, lengths, paged K/V) have none here."""
    spec = _check_spec(spec)
    if not variants.is_plain(spec):
        return {}
    _check(spec, inputs, CPU_FLOP_LIMIT)
    q, k, v = (inputs[n] for n in ("Q", "K", "V"))
    return {name: _op(spec, q, k, v, inputs.get("dO"),
                      lambda *t, b=backend: _in_backend(b, lambda: _torch_sdpa(spec, *t)))
            for name, backend in SDPA_BACKENDS.items()}


def _op(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor | None,
        forward: Callable[..., torch.Tensor]) -> Callable[[], torch.Tensor]:
    """The forward as a callable, or for the backward: the forward once (first call), then autograd.grad each call."""
    import torch

    if spec.direction != "bwd":
        return lambda: forward(q, k, v)
    state: dict[str, object] = {}

    def backward() -> torch.Tensor:
        if "o" not in state:
            leaves = [t.detach().requires_grad_(True) for t in (q, k, v)]
            with torch.enable_grad():
                state["o"], state["leaves"] = forward(*leaves), leaves
        return torch.autograd.grad(state["o"], state["leaves"], do, retain_graph=True)[0]

    return backward


def _comparable(spec: SdpaSpec, outputs: dict[str, torch.Tensor], inputs: dict[str, torch.Tensor]
                ) -> dict[str, torch.Tensor] | None:
    return None if variants.is_plain(spec) else variants.comparable(spec, outputs, inputs)


REFERENCES.add(SdpaSpec, Reference(input_names, make_inputs, make_outputs, reference_outputs, torch_op,
                                   comparable=_comparable, quantization=variants.quantization))
