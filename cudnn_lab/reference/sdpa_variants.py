"""The PyTorch side of attention variants and FP8 attention (:class:`~cudnn_lab.specs.SdpaSpec` with per-batch
lengths, ragged packing, a bias or ALiBi, dropout, a bottom-right diagonal, FP8 Q/K/V, a paged K/V cache or sink
tokens).

A paged K and V are random pools of pages into which the contiguous cache's real pages are written through block
tables over random page permutations (:mod:`.sdpa_paged`); the reference and PyTorch's SDPA read the cache gathered
back through the tables. Sink logits are folded into the float64 softmax; PyTorch's path for them is explicit math.

Inputs are built from float data: FP8 tensors quantized with the spec's scales (the scalars cuDNN needs derived
from them), ragged tensors packed token-major (THD). References are float64 on the logical [b, h, s, d] tensors the
kernel sees (FP8 values times their descales, packed tensors unpacked), with cuDNN's semantics from
:mod:`.masks`; the dropout mask is the one the kit draws from ``dropout_seed`` and feeds cuDNN. Outputs are compared
where defined: rows past a batch element's length are zeroed on both sides, FP8 outputs dequantized.
torch is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SpecError
from ..specs.attention_masks import packed_tokens
from ..specs.fp8 import FP8_FORMATS, recommended_scale
from ..specs.sdpa import SdpaSpec
from .common import check_cpu_work, torch_dtype, uniform
from .masks import alibi_bias, attention, keep_mask, pack_ragged, ragged_offsets, unpack_ragged, valid_rows
from .quantize import amax, dequantize, quantization_error, quantize
from .sdpa_paged import block_table, fold_sink, gather_pages, sink_logits, write_pages

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["is_plain", "storage", "make_inputs", "make_outputs", "logical", "reference_outputs", "comparable",
           "quantization", "torch_op", "check_buffers", "forward64", "backward64"]

#: Score-matrix elements one chunk of the float64 reference may hold.
_CHUNK_ELEMENTS = 1 << 25
_GRADS = ("dQ", "dK", "dV")


def is_plain(spec: SdpaSpec) -> bool:
    """True for attention with none of the variants (the family's plain path handles it)."""
    return not (spec.fp8 or spec.padded or spec.bias != "none" or spec.dropout or spec.bottom_right or spec.sink)


def _lens(spec: SdpaSpec, name: str) -> tuple[int, ...]:
    return spec.lens_kv if name in ("K", "V", "dK", "dV") else spec.lens_q


def storage(spec: SdpaSpec, name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(shape, strides) of the buffer tensor ``name`` lives in: packed [tokens, heads, dim] for a ragged tensor,
    else its logical dims and strides."""
    dims, strides = spec.tensor_shapes()[name], spec.tensor_strides()[name]
    if name in spec.ragged_tensors():
        rows, h, d = packed_tokens(_lens(spec, name)), dims[1], dims[3]
        return (rows, h, d), (h * d, d, 1)
    return dims, strides


def _contiguous(spec: SdpaSpec) -> SdpaSpec:
    """The same problem with a contiguous K/V cache (itself when not paged)."""
    return spec.replace(page_size=0, num_pages=None) if spec.paged else spec


def _float(spec: SdpaSpec, name: str, seed: int) -> torch.Tensor:
    """Logical float32 data of a Q/K/V/dO-like tensor: uniform [-1, 1], seeded by name, in the layout's strides
    (a paged K/V: its contiguous cache [b, kv_heads, seq_kv, d])."""
    flat = _contiguous(spec)
    return uniform(name, flat.tensor_shapes()[name], flat.tensor_strides()[name], "fp32", seed)


def _store(spec: SdpaSpec, name: str, x: torch.Tensor, device: Any) -> torch.Tensor:
    """A logical tensor as its buffer, on ``device``: packed when ragged, else with the graph's strides (cuDNN reads
    the pointer with the declared strides, whatever strides the torch tensor has: a contiguous [b, h, s, d] O fed to
    a BSHD backward is read transposed)."""
    import torch

    if name in spec.ragged_tensors():
        return pack_ragged(x, _lens(spec, name)).to(device)
    if spec.paged and name in ("K", "V"):
        raise SpecError(name, "paged", "is stored by _store_pages (a pool of pages), not as a contiguous buffer")
    dims, strides = storage(spec, name)
    return torch.empty_strided(dims, strides, dtype=x.dtype, device=device).copy_(x)


def _scalar(value: float, device: Any) -> torch.Tensor:
    import torch

    return torch.full((1, 1, 1, 1), float(value), dtype=torch.float32, device=device)


def _out_scale(spec: SdpaSpec, v_amax: float) -> float:
    """scale_O: the spec's, else a power of two from amax(V) / (1 - dropout), which bounds |O| (O is a convex
    combination of V's rows, rescaled by dropout); 1 for an fp16/bf16 O."""
    if spec.scale_o is not None:
        return spec.scale_o
    if spec.out_dtype not in FP8_FORMATS:
        return 1.0
    return recommended_scale(v_amax / (1.0 - spec.dropout), spec.out_dtype)


def make_inputs(spec: SdpaSpec, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
    """Every input the graph reads, in its dtype and buffer layout (see the module docstring)."""
    import torch

    dev = torch.device(device)
    floats = {n: _float(spec, n, seed) for n in ("Q", "K", "V", "dO") if n in spec.tensor_shapes()}
    out: dict[str, torch.Tensor] = {}
    logical: dict[str, torch.Tensor] = {}
    for n, x in floats.items():
        if spec.fp8:
            q = quantize(x, spec.dtype, spec.scales()[n])
            out[f"descale_{n}"] = _scalar(q.descale, dev)
            logical[n], out[n] = dequantize(q), _store(spec, n, q.data, dev)
        elif spec.paged and n in ("K", "V"):
            t = x.to(torch_dtype(spec.dtype))
            logical[n], out[n] = t.double(), None  # written into its pool below, once the tables exist
        else:
            t = x.to(torch_dtype(spec.dtype))
            logical[n], out[n] = t.double(), _store(spec, n, t, dev)
    out.update(_aux(spec, dev, seed))
    if spec.paged:
        for n in ("K", "V"):
            out[n] = _store_pages(spec, n, floats[n].to(torch_dtype(spec.dtype)), out[f"Page_table_{n}"], seed, dev)
    if spec.fp8:
        s_scale = recommended_scale(1.0 / (1.0 - spec.dropout), spec.dtype)  # softmax weights are at most 1
        out["scale_S"], out["descale_S"] = _scalar(s_scale, dev), _scalar(1.0 / s_scale, dev)
        out["scale_O"] = _scalar(_out_scale(spec, amax(logical["V"])), dev)
    if spec.direction == "bwd":
        _backward_inputs(spec, out, logical, dev)
    return {n: out[n] for n in spec.io_names()[0]}


def _store_pages(spec: SdpaSpec, name: str, x: torch.Tensor, table: torch.Tensor, seed: int, dev: Any
                 ) -> torch.Tensor:
    """A paged K or V: a pool of random pages (values uniform [-1, 1], never zeros) in the layout's in-page order,
    with the contiguous cache ``x``'s real pages written where ``table`` says."""
    import torch

    dims, strides = spec.tensor_shapes()[name], spec.tensor_strides()[name]
    pool = write_pages(uniform(f"{name}_pool", dims, strides, spec.dtype, seed), x, table.cpu(), spec.lens_kv)
    return torch.empty_strided(dims, strides, dtype=pool.dtype, device=dev).copy_(pool)


def _aux(spec: SdpaSpec, dev: Any, seed: int = 0) -> dict[str, torch.Tensor]:
    """Lengths, block tables (fresh page permutations from ``seed``), sink logits, ragged offsets, bias and dropout
    mask/scales."""
    import torch

    out: dict[str, torch.Tensor] = {}
    if spec.padded:
        for side, lens in (("q", spec.lens_q), ("kv", spec.lens_kv)):
            out[f"seq_len_{side}"] = torch.tensor(lens, dtype=torch.int32, device=dev).view(-1, 1, 1, 1)
    if spec.paged:
        for n in ("Page_table_K", "Page_table_V"):
            out[n] = block_table(spec.lens_kv, spec.page_size, spec.pages_per_seq, spec.cache_pages, seed=seed,
                                 name=n).to(dev)
    if spec.sink:
        out["Sink"] = sink_logits(spec.heads, spec.seq_kv, seed=seed).to(dev)
    for n in spec.ragged_tensors():
        dims = spec.tensor_shapes()[n]
        out[f"{n}_offset"] = ragged_offsets(_lens(spec, n), dims[1] * dims[3], device=dev)
    if spec.bias == "tensor":
        shape, strides = spec.tensor_shapes()["Bias"], spec.tensor_strides()["Bias"]
        out["Bias"] = uniform("Bias", shape, strides, spec.dtype, 0).to(dev)
    if spec.dropout:
        gen = torch.Generator(device="cpu").manual_seed(spec.dropout_seed)
        keep = torch.rand(spec.tensor_shapes()["Dropout_mask"], generator=gen) >= spec.dropout
        out["Dropout_mask"] = keep.to(torch_dtype(spec.dtype)).to(dev)
        out["Dropout_scale"] = _scalar(1.0 / (1.0 - spec.dropout), dev)
        out["Dropout_scale_inv"] = _scalar(1.0 - spec.dropout, dev)
    return out


def _backward_inputs(spec: SdpaSpec, out: dict[str, torch.Tensor], logical: dict[str, torch.Tensor],
                     dev: Any) -> None:
    """O and Stats from the float64 forward on these inputs (as a training step hands them over), in the graph's
    dtypes; for FP8 also O's and the gradients' scales (the latter from the float64 gradients' amax)."""
    import torch

    q, k, v = (logical[n].to(dev) for n in ("Q", "K", "V"))
    o, stats = forward64(spec, q, k, v, out)
    stats = torch.where(torch.isfinite(stats), stats, torch.zeros_like(stats))  # padded rows: no key, Stats 0
    if spec.fp8:
        fp8_out = spec.out_dtype in FP8_FORMATS
        if fp8_out:
            qo = quantize(o.float(), spec.out_dtype, float(out["scale_O"].reshape(-1)[0]))
            out["descale_O"], o_store = _scalar(qo.descale, dev), qo.data
        else:  # an fp16/bf16 O (Blackwell): no scaling
            out["descale_O"], o_store = _scalar(1.0, dev), o.to(torch_dtype(spec.out_dtype))
        grads, dp_amax = backward64(spec, q, k, v, logical["dO"].to(dev), out, with_dp=True)
        for n in _GRADS:
            scale = recommended_scale(amax(grads[n]), spec.out_dtype) if fp8_out else 1.0
            out[f"scale_{n}"] = _scalar(scale, dev)
        dp_scale = recommended_scale(dp_amax, spec.dtype)
        out["scale_dP"], out["descale_dP"] = _scalar(dp_scale, dev), _scalar(1.0 / dp_scale, dev)
    else:
        o_store = o.to(torch_dtype(spec.dtype))
    out["O"] = _store(spec, "O", o_store, dev)
    st = stats.float()
    out["Stats"] = (pack_ragged(st, spec.lens_q) if "Stats" in spec.ragged_tensors()
                    else torch.empty_strided(st.shape, spec.tensor_strides()["Stats"], dtype=torch.float32,
                                             device=dev).copy_(st))


def make_outputs(spec: SdpaSpec, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
    """Every output in its buffer layout and dtype, NaN-filled."""
    import torch

    dtypes, out = spec.tensor_dtypes(), {}
    for n in spec.output_names():
        shape, strides = storage(spec, n)
        out[n] = torch.empty_strided(shape, strides, dtype=torch_dtype(dtypes[n]),
                                     device=torch.device(device)).fill_(float("nan"))
    return out


def _descale(inputs: Mapping[str, torch.Tensor], name: str) -> float:
    return float(inputs[name].reshape(-1)[0])


def logical(spec: SdpaSpec, inputs: Mapping[str, torch.Tensor], name: str) -> torch.Tensor:
    """The float64 logical [b, h, s, d] values the kernel reads for input ``name`` (unpacked, dequantized)."""
    t = inputs[name]
    if name in spec.ragged_tensors():
        t = unpack_ragged(t, _lens(spec, name), spec.tensor_shapes()[name][2])
    if spec.paged and name in ("K", "V"):
        t = gather_pages(t, inputs[f"Page_table_{name}"], spec.seq_kv)
    if spec.fp8 and f"descale_{name}" in inputs:
        return dequantize(t, _descale(inputs, f"descale_{name}"))
    return t.double()


def _chunks(spec: SdpaSpec) -> list[tuple[int, slice, slice]]:
    per_kv_head = spec.group * spec.seq_q * spec.seq_kv
    step = max(1, _CHUNK_ELEMENTS // per_kv_head)
    return [(b, slice(g * spec.group, min(spec.h_kv, g + step) * spec.group), slice(g, min(spec.h_kv, g + step)))
            for b in range(spec.batch) for g in range(0, spec.h_kv, step)]


def _chunk_args(spec: SdpaSpec, inputs: Mapping[str, torch.Tensor], b: int, hq: slice, device: Any
                ) -> dict[str, Any]:
    """Mask, bias and dropout mask of one (batch element, query heads) chunk."""
    keep = keep_mask(1, spec.seq_q, spec.seq_kv, lens_q=spec.lens_q[b:b + 1], lens_kv=spec.lens_kv[b:b + 1],
                     causal=spec.causal, alignment=spec.diagonal_alignment if spec.causal else "top_left",
                     left_bound=spec.sliding_window if spec.causal else 0, device=device)
    bias = None
    if spec.bias == "tensor":
        bias = inputs["Bias"][:, hq].double()
    elif spec.bias == "alibi":
        bias = alibi_bias(spec.heads, spec.seq_q, spec.seq_kv, device=device)[:, hq]
    mask = inputs["Dropout_mask"][b:b + 1, hq] if spec.dropout else None
    return {"scale": spec.scale, "keep": keep, "bias": bias, "dropout": spec.dropout, "dropout_mask": mask}


def forward64(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              inputs: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(O, Stats) in float64 for logical q, k, v, chunk by chunk (Stats -inf and O 0 on rows with no key; with a
    sink, its logit joins every row)."""
    import torch

    o = torch.zeros(spec.o_dims, dtype=torch.float64, device=q.device)
    stats = torch.empty(spec.stats_dims, dtype=torch.float64, device=q.device)
    for b, hq, hk in _chunks(spec):
        args = _chunk_args(spec, inputs, b, hq, q.device)
        o_c, s_c = attention(q[b:b + 1, hq], k[b:b + 1, hk], v[b:b + 1, hk], **args)
        if spec.sink:
            o_c, s_c = fold_sink(o_c, s_c, inputs["Sink"][:, hq].double())
        o[b:b + 1, hq], stats[b:b + 1, hq] = o_c, s_c
    return o, stats


def backward64(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, do: torch.Tensor,
               inputs: Mapping[str, torch.Tensor], *, with_dp: bool = False) -> tuple[dict[str, torch.Tensor], float]:
    """(dQ, dK, dV in float64 by autograd through the forward with dO upstream; the largest |dP|, the gradient of
    the scaled scores, when ``with_dp``)."""
    import torch

    grads = {n: torch.zeros(spec.tensor_shapes()[n], dtype=torch.float64, device=q.device) for n in _GRADS}
    dp_amax = 0.0
    with torch.enable_grad():
        for b, hq, hk in _chunks(spec):
            leaves = [t[b:b + 1, h].detach().double().requires_grad_(True) for t, h in ((q, hq), (k, hk), (v, hk))]
            args = _chunk_args(spec, inputs, b, hq, q.device)
            o, _ = attention(*leaves, **args)
            gq, gk, gv = torch.autograd.grad(o, leaves, do[b:b + 1, hq].double())
            grads["dQ"][b:b + 1, hq], grads["dK"][b:b + 1, hk], grads["dV"][b:b + 1, hk] = gq, gk, gv
            if with_dp:  # dP = P * (dO V^T - rowsum(dO * O)), before the softmax scale
                with torch.no_grad():
                    o64, stats = attention(*(t.detach() for t in leaves), **args)
                    kk = leaves[1].detach().repeat_interleave(spec.group, dim=1)
                    vv = leaves[2].detach().repeat_interleave(spec.group, dim=1)
                    s = torch.matmul(leaves[0].detach(), kk.transpose(-2, -1)) * spec.scale
                    p = torch.exp(s - torch.where(torch.isfinite(stats), stats, torch.zeros_like(stats)))
                    p = torch.where(args["keep"], p, torch.zeros_like(p))
                    dob = do[b:b + 1, hq].double()
                    dp = p * (torch.matmul(dob, vv.transpose(-2, -1)) - (dob * o64).sum(-1, keepdim=True))
                    dp_amax = max(dp_amax, amax(dp))
    return grads, dp_amax


def _zero_undefined(spec: SdpaSpec, name: str, t: torch.Tensor) -> torch.Tensor:
    """``t`` (a buffer of output ``name``) with rows past each element's length set to 0: cuDNN leaves them."""
    import torch

    if name not in ("O", "Stats", *_GRADS) or not spec.padded:
        return t
    if name in spec.ragged_tensors():
        keep = torch.arange(t.shape[0], device=t.device) < sum(_lens(spec, name))
        return torch.where(keep.view(-1, 1, 1), t, torch.zeros((), dtype=t.dtype, device=t.device))
    side = _lens(spec, name)
    rows = valid_rows(spec.batch, t.shape[2], side, device=t.device)
    return torch.where(rows, t, torch.zeros((), dtype=t.dtype, device=t.device))


def reference_outputs(spec: SdpaSpec, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float
                      ) -> dict[str, torch.Tensor]:
    """O (and Stats), or dQ, dK, dV, in float64, in the outputs' buffer layout, undefined rows zeroed."""
    dev = check_buffers(spec, inputs)
    check_cpu_work(spec, dev, "batch", flop_limit=cpu_flop_limit)
    q, k, v = (logical(spec, inputs, n) for n in ("Q", "K", "V"))
    if spec.direction == "bwd":
        grads, _ = backward64(spec, q, k, v, logical(spec, inputs, "dO"), inputs)
        return {n: _zero_undefined(spec, n, _pack(spec, n, g)) for n, g in grads.items()}
    o, stats = forward64(spec, q, k, v, inputs)
    out = {"O": _zero_undefined(spec, "O", _pack(spec, "O", o))}
    if spec.direction == "fwd_training":
        out["Stats"] = _zero_undefined(spec, "Stats", _pack(spec, "Stats", stats))
    return out


def check_buffers(spec: SdpaSpec, inputs: Mapping[str, torch.Tensor]) -> torch.device:
    """Every input is there in its buffer shape (packed for ragged ones), all on one device: that device."""
    if not isinstance(inputs, Mapping):
        raise SpecError("inputs", type(inputs).__name__, "must be a dict of tensors: pass make_inputs(spec)")
    names = spec.io_names()[0]
    missing = [n for n in names if n not in inputs]
    if missing:
        raise SpecError("inputs", sorted(map(str, inputs)), f"lacks {', '.join(missing)}: pass make_inputs(spec)")
    for n in names:
        shape, _ = storage(spec, n)
        if tuple(getattr(inputs[n], "shape", ())) != tuple(shape):
            raise SpecError(f"inputs[{n!r}]", list(getattr(inputs[n], "shape", ())), f"must have shape {list(shape)}")
    devices = {inputs[n].device for n in names}
    if len(devices) > 1:
        raise SpecError("inputs", sorted(map(str, devices)), "must all be on one device")
    return devices.pop()


def _pack(spec: SdpaSpec, name: str, t: torch.Tensor) -> torch.Tensor:
    return pack_ragged(t, _lens(spec, name)) if name in spec.ragged_tensors() else t


def comparable(spec: SdpaSpec, outputs: Mapping[str, torch.Tensor], inputs: Mapping[str, torch.Tensor]
               ) -> dict[str, torch.Tensor]:
    """The outputs the reference states, as it states them: FP8 ones dequantized (O * 1/scale_O, dQ * 1/scale_dQ,
    ...), undefined rows zeroed; the amax outputs are left out (reported, not checked)."""
    out = {}
    for n, t in outputs.items():
        if n.startswith("Amax"):
            continue
        if spec.fp8 and n != "Stats":
            t = dequantize(t, 1.0 / _descale(inputs, f"scale_{n}"))
        out[n] = _zero_undefined(spec, n, t.double())
    return out


def quantization(spec: SdpaSpec, inputs: Mapping[str, torch.Tensor], *, seed: int = 0) -> dict[str, Any] | None:
    """Per FP8 input, what quantizing cost; and ``output_rel_l2`` of the float64 forward from the FP8 values vs from
    the float data (forward directions)."""
    import torch

    if not spec.fp8:
        return None
    report: dict[str, Any] = {}
    floats: dict[str, torch.Tensor] = {}
    for n, scale in spec.scales().items():
        if n == "O":
            continue
        x = _float(spec, n, seed)
        floats[n] = x
        report[n] = quantization_error(x, quantize(x, spec.dtype, scale)).to_dict()
    if spec.direction != "bwd":
        dev = inputs["Q"].device
        fq, fk, fv = (floats[n].to(dev).double() for n in ("Q", "K", "V"))
        exact, _ = forward64(spec, fq, fk, fv, inputs)
        lq, lk, lv = (logical(spec, inputs, n) for n in ("Q", "K", "V"))
        fp8, _ = forward64(spec, lq, lk, lv, inputs)
        ref = float(torch.linalg.vector_norm(exact))
        report["output_rel_l2"] = float(torch.linalg.vector_norm(fp8 - exact)) / ref if ref > 0 else 0.0
    return report


def torch_op(spec: SdpaSpec, inputs: Mapping[str, torch.Tensor], sdpa: Callable[..., torch.Tensor]
             ) -> Callable[[], torch.Tensor]:
    """PyTorch's SDPA on the padded logical tensors with the same mask (boolean), bias/ALiBi (float mask) and
    dropout probability (its own random mask: a timing baseline); a paged K/V gathered once into a contiguous cache
    beforehand (the gather is not timed: benchmarks/paged_decode.py times it apart); with sink tokens, explicit
    eager math; FP8: none (PyTorch has no FP8 attention)."""
    if spec.fp8:
        def unavailable() -> torch.Tensor:
            raise SpecError("dtype", spec.dtype, "has no PyTorch baseline: PyTorch has no FP8 attention")
        return unavailable
    dev = inputs["Q"].device
    dt = torch_dtype(spec.dtype)
    q, k, v = (logical(spec, inputs, n).to(dt) for n in ("Q", "K", "V"))
    keep = keep_mask(spec.batch, spec.seq_q, spec.seq_kv, lens_q=spec.lens_q, lens_kv=spec.lens_kv,
                     causal=spec.causal, alignment=spec.diagonal_alignment if spec.causal else "top_left",
                     left_bound=spec.sliding_window if spec.causal else 0, device=dev)
    mask: torch.Tensor = keep
    if spec.bias != "none":
        bias = inputs["Bias"] if spec.bias == "tensor" else alibi_bias(spec.heads, spec.seq_q, spec.seq_kv,
                                                                        dtype=dt, device=dev)
        mask = bias.to(dt).masked_fill(~keep, float("-inf"))
    if spec.sink:
        return lambda: _sink_attention(spec, q, k, v, keep, inputs["Sink"])
    return sdpa(q, k, v, mask, spec.dropout)


def _sink_attention(spec: SdpaSpec, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor,
                    sink: torch.Tensor) -> torch.Tensor:
    """PyTorch eager attention with sink logits (its SDPA has no sink): scores, mask, the sink column, softmax,
    the sink dropped, times V, in the inputs' dtype (as gpt-oss's reference does)."""
    import torch

    if spec.group > 1:
        k, v = k.repeat_interleave(spec.group, dim=1), v.repeat_interleave(spec.group, dim=1)
    s = torch.matmul(q, k.transpose(-2, -1)) * spec.scale
    s = s.masked_fill(~keep, float("-inf"))
    s = torch.cat([s, sink.to(s.dtype).expand(*s.shape[:-1], 1)], dim=-1)
    return torch.matmul(torch.softmax(s, dim=-1)[..., :-1], v)
