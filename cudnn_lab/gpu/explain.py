"""Turn the backend's raw error text into one readable sentence (the raw text stays as detail)."""

from __future__ import annotations

import re

from ..specs import ConvSpec, MatmulSpec, Spec
from ..specs.moe import MoeSpec

_RULES: tuple[tuple[str, str], ...] = (
    (r"CUDNN_ATTR_TENSOR_DATA_TYPE", "A tensor's data type was left unset or is not allowed here; every tensor "
     "and the graph's io/intermediate/compute types must be set."),
    (r"wDimA\[1\]|filter.*channel|channels", "The filter's input channels do not match the image's channels "
     "(c/groups)."),
    (r"no engine|No valid engine|NOT_SUPPORTED|cudnnGraphNotSupportedError|GRAPH_NOT_SUPPORTED",
     "No cuDNN engine on this GPU supports this combination of operation, layout, data type and sizes."),
    (r"ALIGNMENT|alignment|aligned", "A tensor's size or stride is not aligned as the engines require (try "
     "channel counts that are multiples of 8 for fp16/bf16)."),
    (r"out of memory|OUT_OF_MEMORY|ALLOC_FAILED", "The GPU ran out of memory."),
    (r"BAD_PARAM|INVALID_VALUE", "cuDNN rejected a parameter of the graph as invalid."),
)


def explain(message: str, spec: Spec | None = None) -> str:
    """One sentence for a backend error, plus a hint about the spec where one is known."""
    sentence = next((text for pattern, text in _RULES if re.search(pattern, message)),
                    "cuDNN could not build this graph.")
    hint = _hint(spec) if "No cuDNN engine" in sentence else ""
    return f"{sentence} {hint}".strip()


def _hint(spec: Spec | None) -> str:
    if getattr(spec, "op", None) == "norm":  # NormSpec: which shapes cuDNN's norm engines take
        return spec.support_hint()  # type: ignore[union-attr]
    if callable(getattr(spec, "support_hint", None)):  # a family that says what ran (ReductionSpec)
        return spec.support_hint()  # type: ignore[union-attr]
    if isinstance(spec, ConvSpec):
        if spec.dtype in ("fp16", "bf16") and (spec.c % 8 or spec.k % 8):
            return f"Channel counts c={spec.c}, k={spec.k} that are not multiples of 8 rule out tensor-core engines."
        if spec.groups > 1:
            return "Grouped convolutions have fewer engines; try groups=1 or depthwise (groups=c)."
        if spec.epilogue:
            return "Fused epilogues narrow the choice of engines; try without the epilogue."
    if isinstance(spec, MatmulSpec) and spec.epilogue:
        return "Fused epilogues narrow the choice of engines; try without the epilogue."
    if isinstance(spec, MoeSpec):  # on 9.19 it ran hidden sizes of 1020 too: sizes are not the usual cause
        return "cuDNN's MoE grouped GEMM needs cuDNN 9.15 or later (moe_grouped_matmul, fp16/bf16 tokens)."
    return ""


def first_line(message: str, limit: int = 300) -> str:
    """The backend's message shortened to one line, for tables."""
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
