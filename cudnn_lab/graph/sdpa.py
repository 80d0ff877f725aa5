"""SDPA as a recipe: one ``sdpa`` (forward) or ``sdpa_backward`` node with the frontend's keyword arguments.

Keywords as cuDNN frontend 1.32 names them (its pybind ``backend_graph.sdpa`` / ``sdpa_backward`` signatures):
``generate_stats`` (preferred over the deprecated ``is_inference``, its negation), ``attn_scale``, and the
"preferred masking" arguments ``diagonal_alignment`` + ``diagonal_band_right_bound=0`` for a causal mask and
``diagonal_band_left_bound`` for a sliding window (instead of the deprecated ``use_causal_mask`` /
``sliding_window_length``). Variants add the frontend's ``use_padding_mask`` with ``seq_len_q``/``seq_len_kv``,
ragged offsets on packed tensors (``max_total_seq_len_*`` for the backward), ``bias`` or ``use_alibi_mask``, and
``dropout`` as (mask, scale[, scale_inv]), a paged cache's block tables ``paged_attention_k_table`` /
``paged_attention_v_table`` with ``paged_attention_max_seq_len_kv`` (K and V are then the page pools), and the
``sink_token`` logits. FP8 uses ``sdpa_fp8`` / ``sdpa_fp8_backward``, whose masking keywords are
``left_bound`` / ``right_bound``, with their descale/scale scalars and amax outputs. Pure: no cudnn import here.
"""

from __future__ import annotations

from ..specs.attention_masks import alibi_slopes, packed_tokens
from ..specs.sdpa import SdpaSpec
from .families import RECIPES, REFERENCE_CODE
from .recipe import Enum, OpDecl, Recipe, TensorDecl

_FWD_PORTS = (("q", "Q"), ("k", "K"), ("v", "V"))
_BWD_PORTS = (*_FWD_PORTS, ("o", "O"), ("dO", "dO"), ("stats", "Stats"))


def mask_params(spec: SdpaSpec) -> tuple[tuple[str, object], ...]:
    """The masking keywords: none, causal (right bound 0 on a top-left or bottom-right diagonal), plus a left
    bound for a window; FP8's nodes call the bounds ``right_bound`` / ``left_bound``."""
    if not spec.causal:
        return ()
    right, left = ("right_bound", "left_bound") if spec.fp8 else ("diagonal_band_right_bound",
                                                                    "diagonal_band_left_bound")
    align = "BOTTOM_RIGHT" if spec.bottom_right else "TOP_LEFT"
    params: tuple[tuple[str, object], ...] = (("diagonal_alignment", Enum(f"diagonal_alignment.{align}")),
                                              (right, 0))
    if spec.sliding_window:
        params += ((left, spec.sliding_window),)
    return params


def variant_ports(spec: SdpaSpec) -> tuple[tuple[str, str], ...]:
    """The tensor keywords of the variants: FP8 scalars, lengths, block tables, sink logits, bias, dropout's
    (mask, scale[, scale_inv])."""
    ins, _ = spec.io_names()
    # descale_Q -> descale_q, scale_S -> scale_s; gradients keep their case (descale_dO, scale_dQ), as cuDNN names them
    ports = [(f"{n.split('_')[0]}_{n.split('_')[1].lower() if len(n.split('_')[1]) == 1 else n.split('_')[1]}", n)
             for n in ins if n.startswith(("descale_", "scale_"))]
    if spec.padded:
        ports += [("seq_len_q", "seq_len_q"), ("seq_len_kv", "seq_len_kv")]
    if spec.paged:
        ports += [("paged_attention_k_table", "Page_table_K"), ("paged_attention_v_table", "Page_table_V")]
    if spec.sink:
        ports.append(("sink_token", "Sink"))
    if spec.bias == "tensor":
        ports.append(("bias", "Bias"))
    ports += [("dropout[]", n) for n in ins if n.startswith("Dropout_")]
    return tuple(ports)


def variant_params(spec: SdpaSpec) -> tuple[tuple[str, object], ...]:
    """The scalar keywords of the variants: the padding mask, a paged cache's longest sequence, ALiBi, the packed
    totals of a ragged backward."""
    params: list[tuple[str, object]] = []
    if spec.padded:
        params.append(("use_padding_mask", True))
    if spec.paged:
        params.append(("paged_attention_max_seq_len_kv", spec.seq_kv))
    if spec.bias == "alibi":
        params.append(("use_alibi_mask", True))
    if spec.ragged and spec.direction == "bwd":
        params += [("max_total_seq_len_q", packed_tokens(spec.lens_q)),
                   ("max_total_seq_len_kv", packed_tokens(spec.lens_kv))]
    return tuple(params)


@RECIPES.register(SdpaSpec)
def recipe(spec: SdpaSpec) -> Recipe:
    """Q, K, V (and for the backward O, dO, Stats) with the layout's strides, the variants' tensors, one node, its
    outputs; a ragged tensor names its offsets."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    ins, _ = spec.io_names()
    outs = spec.output_names()
    ragged = spec.ragged_tensors()

    def decl(name: str, role: str) -> TensorDecl:
        return TensorDecl(name, shapes[name], strides[name], dtypes[name], role,
                          ragged_offset=f"{name}_offset" if name in ragged else None)

    tensors = [decl(n, "input") for n in ins]
    fp8 = "_fp8" if spec.fp8 else ""
    ports, variants = variant_ports(spec), variant_params(spec)
    if spec.direction == "bwd":
        params = (("attn_scale", spec.scale), *mask_params(spec), *variants)
        extra = ("dK", "dV", *outs[3:])
        op = OpDecl(f"sdpa{fp8}_backward", f"sdpa{fp8}_backward", (*_BWD_PORTS, *ports), params, "dQ",
                    extra_outputs=extra)
    else:
        training = spec.direction == "fwd_training"
        params = (("attn_scale", spec.scale), ("generate_stats", training), *mask_params(spec), *variants)
        # Inference still returns (O, None): the empty name keeps the script's unpacking at two results.
        extra = ("Stats" if training else "", *(n for n in outs if n.startswith("Amax")))
        op = OpDecl(f"sdpa{fp8}", f"sdpa{fp8}", (*_FWD_PORTS, *ports), params, "O", extra_outputs=extra)
    tensors += [decl(n, "output") for n in outs]
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (op,))


@REFERENCE_CODE.register(SdpaSpec)
def reference_code(spec: SdpaSpec) -> list[str]:
    """Body of the exported script's ``reference(inputs)``: the main output (O or dQ) in float64, explicit math.

    The backward uses the O and Stats it is given (as cuDNN does: P = exp(scale * Q K^T - Stats),
    D = rowsum(dO * O)), so the check is right even when the script feeds random O and Stats.
    """
    lines = ["q, k, v = (inputs[n].double() for n in ('Q', 'K', 'V'))"]
    if spec.fp8:
        lines.append("q, k, v = (t * inputs[f'descale_{n}'].double().reshape(-1)[0] for t, n in "
                     "zip((q, k, v), 'QKV'))  # the FP8 values times their descales")
    if spec.paged:
        lines.append(f"k, v = (c.double()[t.view({spec.batch}, -1).long()].permute(0, 2, 1, 3, 4).reshape("
                     f"{spec.batch}, {spec.h_kv}, -1, c.shape[-1]) for c, t in ((inputs['K'], "
                     "inputs['Page_table_K']), (inputs['V'], inputs['Page_table_V'])))  # gather the pages")
    if spec.padded or spec.dropout:
        lines.append("# padding / ragged packing and dropout are not rebuilt here: see cudnn_lab.reference.masks")
    if spec.group > 1:
        lines.append(f"k, v = k.repeat_interleave({spec.group}, dim=1), v.repeat_interleave({spec.group}, dim=1)"
                     "  # grouped-query attention")
    lines.append(f"s = torch.matmul(q, k.transpose(-2, -1)) * {spec.scale!r}")
    if spec.bias == "tensor":
        lines.append("s = s + inputs['Bias'].double()")
    elif spec.bias == "alibi":
        lines += [f"slopes = torch.tensor({list(alibi_slopes(spec.heads))!r}, dtype=s.dtype).view(1, -1, 1, 1)",
                  f"s = s + slopes * (torch.arange({spec.seq_kv}).view(1, -1) - torch.arange({spec.seq_q})"
                  ".view(-1, 1))  # ALiBi"]
    if spec.causal:
        lines += [f"i = torch.arange({spec.seq_q}, device=s.device).view(-1, 1)",
                  f"j = torch.arange({spec.seq_kv}, device=s.device).view(1, -1)"]
        d = f" + {spec.seq_kv - spec.seq_q}" if spec.bottom_right else ""
        keep = f"j <= i{d}" + (f") & (j > i{d} - {spec.sliding_window}" if spec.sliding_window else "")
        comment = ("causal, " + ("bottom-right" if spec.bottom_right else "top-left") + " aligned"
                   + (f"; last {spec.sliding_window} keys" if spec.sliding_window else ""))
        lines.append(f"s = s.masked_fill(~(({keep})), float('-inf'))  # {comment}")
    if spec.sink:
        lines.append("s = torch.cat([s, inputs['Sink'].double().expand(*s.shape[:-1], 1)], dim=-1)  # the sink: "
                     "one more key with no value")
    if spec.direction != "bwd":
        p = "torch.softmax(s, dim=-1)" + ("[..., :-1]" if spec.sink else "")
        lines += [f"y = torch.matmul({p}, v)", "return y"]
        return lines
    lines += [
        "o, do, stats = inputs['O'].double(), inputs['dO'].double(), inputs['Stats'].double()",
        "p = torch.exp(s - stats)  # the softmax, rebuilt from the forward's logsumexp Stats",
        "dp = torch.matmul(do, v.transpose(-2, -1))",
        "ds = p * (dp - (do * o).sum(dim=-1, keepdim=True))",
        f"y = torch.matmul(ds, k) * {spec.scale!r}  # dQ",
        "return y",
    ]
    return lines
