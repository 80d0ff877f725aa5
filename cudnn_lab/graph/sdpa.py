"""SDPA as a recipe: one ``sdpa`` (forward) or ``sdpa_backward`` node with the frontend's keyword arguments.

Keywords as cuDNN frontend 1.32 names them (its pybind ``backend_graph.sdpa`` / ``sdpa_backward`` signatures):
``generate_stats`` (preferred over the deprecated ``is_inference``, its negation), ``attn_scale``, and the
"preferred masking" arguments ``diagonal_alignment`` + ``diagonal_band_right_bound=0`` for a causal mask and
``diagonal_band_left_bound`` for a sliding window (instead of the deprecated ``use_causal_mask`` /
``sliding_window_length``). Pure: no cudnn import here.
"""

from __future__ import annotations

from ..specs.sdpa import SdpaSpec
from .families import DRAWINGS, RECIPES, REFERENCE_CODE
from .labgraph import frontend_drawing
from .recipe import Enum, OpDecl, Recipe, TensorDecl

_FWD_PORTS = (("q", "Q"), ("k", "K"), ("v", "V"))
_BWD_PORTS = (*_FWD_PORTS, ("o", "O"), ("dO", "dO"), ("stats", "Stats"))


def mask_params(spec: SdpaSpec) -> tuple[tuple[str, object], ...]:
    """The masking keywords: none, causal (top-left diagonal, right bound 0), plus a left bound for a window."""
    if not spec.causal:
        return ()
    params: tuple[tuple[str, object], ...] = (("diagonal_alignment", Enum("diagonal_alignment.TOP_LEFT")),
                                              ("diagonal_band_right_bound", 0))
    if spec.sliding_window:
        params += (("diagonal_band_left_bound", spec.sliding_window),)
    return params


@RECIPES.register(SdpaSpec)
def recipe(spec: SdpaSpec) -> Recipe:
    """Q, K, V (and for the backward O, dO, Stats) with the layout's strides, one node, its outputs."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    ins, _ = spec.io_names()
    outs = spec.output_names()

    def decl(name: str, role: str) -> TensorDecl:
        return TensorDecl(name, shapes[name], strides[name], dtypes[name], role)

    tensors = [decl(n, "input") for n in ins]
    if spec.direction == "bwd":
        params = (("attn_scale", spec.scale), *mask_params(spec))
        op = OpDecl("sdpa_backward", "sdpa_backward", _BWD_PORTS, params, "dQ", extra_outputs=("dK", "dV"))
    else:
        training = spec.direction == "fwd_training"
        params = (("attn_scale", spec.scale), ("generate_stats", training), *mask_params(spec))
        # Inference still returns (O, None): the empty name keeps the script's unpacking at two results.
        op = OpDecl("sdpa", "sdpa", _FWD_PORTS, params, "O", extra_outputs=("Stats",) if training else ("",))
    tensors += [decl(n, "output") for n in outs]
    return Recipe(spec.dtype, "fp32", "fp32", tuple(tensors), (op,))


@REFERENCE_CODE.register(SdpaSpec)
def reference_code(spec: SdpaSpec) -> list[str]:
    """Body of the exported script's ``reference(inputs)``: the main output (O or dQ) in float64, explicit math.

    The backward uses the O and Stats it is given (as cuDNN does: P = exp(scale * Q K^T - Stats),
    D = rowsum(dO * O)), so the check is right even when the script feeds random O and Stats.
    """
    lines = ["q, k, v = (inputs[n].double() for n in ('Q', 'K', 'V'))"]
    if spec.group > 1:
        lines.append(f"k, v = k.repeat_interleave({spec.group}, dim=1), v.repeat_interleave({spec.group}, dim=1)"
                     "  # grouped-query attention")
    lines.append(f"s = torch.matmul(q, k.transpose(-2, -1)) * {spec.scale!r}")
    if spec.causal:
        lines += [f"i = torch.arange({spec.seq_q}, device=s.device).view(-1, 1)",
                  f"j = torch.arange({spec.seq_kv}, device=s.device).view(1, -1)"]
        keep = "j <= i" + (f") & (j > i - {spec.sliding_window}" if spec.sliding_window else "")
        comment = "causal, top-left aligned" + (f"; last {spec.sliding_window} keys" if spec.sliding_window else "")
        lines.append(f"s = s.masked_fill(~(({keep})), float('-inf'))  # {comment}")
    if spec.direction != "bwd":
        lines += ["y = torch.matmul(torch.softmax(s, dim=-1), v)", "return y"]
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


DRAWINGS.add(SdpaSpec, frontend_drawing)
