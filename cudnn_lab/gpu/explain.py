"""Turn the backend's raw error text into one readable sentence (the raw text stays as detail)."""

from __future__ import annotations

import re

from ..specs import Spec

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
    """One sentence for a backend error, plus the spec's own hint (``Spec.support_hint``) when no engine ran."""
    sentence = next((text for pattern, text in _RULES if re.search(pattern, message)),
                    "cuDNN could not build this graph.")
    hint = spec.support_hint() if spec is not None and "No cuDNN engine" in sentence else ""
    return f"{sentence} {hint}".strip()


def first_line(message: str, limit: int = 300) -> str:
    """The backend's message shortened to one line, for tables."""
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
