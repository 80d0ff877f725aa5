"""Pointwise epilogues fused after a conv or matmul, and the rules for chaining them."""

from __future__ import annotations

from typing import Any

from ..errors import SpecError

#: Each epilogue and what it does to the main op's output ``y``; ``bias``/``scale`` are per output channel.
EPILOGUES: dict[str, str] = {
    "bias": "y + bias (one value per output channel)",
    "scale": "y * scale (one value per output channel, e.g. a folded batchnorm)",
    "add": "y + residual (a tensor of the output's shape)",
    "relu": "max(y, 0)",
    "gelu": "y * Phi(y) (exact, erf-based)",
    "sigmoid": "1 / (1 + exp(-y))",
    "tanh": "tanh(y)",
}
#: The tensor each operand-taking epilogue brings into the graph.
OPERAND_TENSORS: dict[str, str] = {"bias": "bias", "scale": "scale", "add": "residual"}
#: Epilogues that bring a tensor of their own into the graph.
WITH_OPERAND = tuple(OPERAND_TENSORS)
#: What a fused epilogue costs in engines (a family's support hint when cuDNN has none for the problem).
EPILOGUE_HINT = "Fused epilogues narrow the choice of engines; try without the epilogue."


def epilogue_shapes(epilogue: tuple[str, ...], per_channel: tuple[int, ...],
                    out: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
    """The tensors ``epilogue`` brings, in the order bias, scale, residual: bias and scale one value per output
    channel (``per_channel``), the residual the output's dims (``out``)."""
    dims = {"bias": per_channel, "scale": per_channel, "add": out}
    return {OPERAND_TENSORS[step]: dims[step] for step in WITH_OPERAND if step in epilogue}


def check_epilogue(spec: str, value: Any) -> tuple[str, ...]:
    """Validate an epilogue chain (applied left to right); each operand-taking step may appear once."""
    if isinstance(value, str):
        value = (value,) if value else ()
    if not isinstance(value, (list, tuple)):
        raise SpecError("epilogue", value, f"must be a sequence of {', '.join(EPILOGUES)}", spec=spec)
    out = tuple(value)
    for step in out:
        if not isinstance(step, str) or step not in EPILOGUES:
            raise SpecError("epilogue", step, f"is not an epilogue; choose from {', '.join(EPILOGUES)}", spec=spec)
    for step in WITH_OPERAND:
        if out.count(step) > 1:
            raise SpecError("epilogue", out, f"{step!r} may appear once (it brings its own tensor)", spec=spec)
    if len(out) > 6:
        raise SpecError("epilogue", out, "at most 6 steps", spec=spec)
    return out
