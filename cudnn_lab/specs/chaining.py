"""Free chaining: ``chain("matmul", "add", "relu", m=..., n=..., k=...)`` -> a spec, checked before cuDNN sees it.

What cuDNN's graph API fuses, and what the kit offers of it:
- one compute op (a convolution or a matrix multiplication) followed by pointwise steps: ConvSpec/MatmulSpec with
  ``epilogue=...`` (``chain("conv", "bias", "relu")``);
- a pointwise prologue before a convolution: scale, bias, relu before conv_fprop (``chain("scale", "bias", "relu",
  "conv")``: ConvPrologueSpec, the BN-ReLU-conv of ResNet training);
- batch-norm statistics after a convolution: ``chain("conv", "genstats")`` (ConvGenstatsSpec), and both at once
  (``chain("scale", "bias", "relu", "conv", "genstats")``);
- fixed multi-op patterns with nodes of their own: attention (SdpaSpec), normalizations with a residual add before
  them (NormSpec(residual=True)).
Everything else is explained in plain words, with what cuDNN can do apart from what the kit builds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import SpecError, shorten
from .base import Spec
from .conv import ConvSpec
from .epilogue import EPILOGUES
from .fusion import ConvGenstatsSpec, ConvPrologueSpec
from .matmul import MatmulSpec

#: Compute operations that can head a chain, and the spec each becomes.
HEADS: dict[str, type[Spec]] = {"conv": ConvSpec, "matmul": MatmulSpec}
#: The pointwise prologue the kit fuses before a convolution (ConvPrologueSpec), in order.
PROLOGUE: tuple[str, ...] = ("scale", "bias", "relu")
#: Batch-norm statistics (cuDNN's genstats node: per-channel sum and sum of squares).
GENSTATS = "genstats"
#: Operations that are graphs (or classic calls) of their own: where each lives and what cuDNN fuses with it.
STANDALONE: dict[str, str] = {
    "layernorm": "NormSpec(kind='layernorm')", "rmsnorm": "NormSpec(kind='rmsnorm')",
    "batchnorm": "NormSpec(kind='batchnorm')", "instancenorm": "NormSpec(kind='instancenorm')",
    "sdpa": "SdpaSpec", "attention": "SdpaSpec", "pool": "PoolSpec", "maxpool": "PoolSpec", "avgpool": "PoolSpec",
    "softmax": "SoftmaxSpec (cudnnSoftmaxForward); cuDNN fuses a softmax only inside attention (SdpaSpec)",
    "rnn": "RnnSpec (cuDNN's classic RNN API; no graph node)", "lstm": "RnnSpec(cell='lstm')",
    "gru": "RnnSpec(cell='gru')",
    "transpose": "TransformSpec(kind='transpose'), which cuDNN runs alone from 9.22.0",
    "reshape": "TransformSpec(kind='reshape'), which cuDNN runs alone from 9.22.0 (before, only next to a matmul or "
               "conv)",
    "slice": "TransformSpec(kind='slice'), which cuDNN runs alone from 9.22.0",
    "concatenate": "TransformSpec(kind='concatenate'), which cuDNN runs alone from 9.22.0; from 9.8.0 it fuses a "
                   "concatenate after a conv_fprop that writes in place, which the kit does not build",
}
_OFFERED = ("conv/matmul + pointwise epilogue, scale+bias+relu before conv (ConvPrologueSpec), conv + genstats "
            "(ConvGenstatsSpec)")


def chain(*steps: str, **fields: Any) -> Spec:
    """A spec for a chain of operations: one compute op then pointwise steps, or one of the fusion patterns above."""
    if not steps or not all(isinstance(s, str) for s in steps):
        raise SpecError("chain", steps, f"must start with one of {', '.join(HEADS)} followed by pointwise steps "
                        f"({', '.join(EPILOGUES)}), or be a fusion pattern: {_OFFERED}")
    if "epilogue" in fields:
        raise SpecError("epilogue", fields["epilogue"], "is given by the chain's steps; do not pass it too")
    fused = _fusion(steps, fields)
    if fused is not None:
        return fused
    head, rest = steps[0], steps[1:]
    if head not in HEADS:
        raise SpecError("chain", steps, _bad_head(head))
    for i, step in enumerate(rest, 1):
        if step == GENSTATS:
            raise SpecError("chain", steps, f"step {i} (genstats) after pointwise steps: cuDNN's graph API takes "
                            "genstats of an epilogue's result as one graph (whether an engine runs it on this GPU: "
                            "scripts/probe_fusions.py), but the kit builds genstats right after the convolution "
                            "only: chain('conv', 'genstats') or chain('scale', 'bias', 'relu', 'conv', 'genstats')")
        if step in HEADS or step in STANDALONE:
            raise SpecError("chain", steps, _second_op(i, step, head))
        if step not in EPILOGUES:
            raise SpecError("chain", steps, f"step {i} ({shorten(step, 40)}) is not a pointwise step; choose from "
                            f"{', '.join(EPILOGUES)}")
    return _build(HEADS[head], fields, epilogue=rest)


def _fusion(steps: tuple[str, ...], fields: dict[str, Any]) -> Spec | None:
    """The fusion spec the steps name, None when they are not a fusion pattern the kit builds."""
    if steps == ("conv", GENSTATS):
        return _build(ConvGenstatsSpec, fields)
    n = len(PROLOGUE)
    if steps[:n] == PROLOGUE and steps[n:n + 1] == ("conv",) and steps[n + 1:] in ((), (GENSTATS,)):
        if "genstats" in fields:
            raise SpecError("genstats", fields["genstats"], "is given by the chain's steps; do not pass it too")
        return _build(ConvPrologueSpec, fields, genstats=steps[n + 1:] == (GENSTATS,))
    return None


#: Unknown fields named in one message, at most (each cut to 40 characters).
MAX_NAMED = 5


def _build(cls: type[Spec], fields: dict[str, Any], **given: Any) -> Spec:
    """``cls(**fields, **given)``; a field ``cls`` does not have is a SpecError naming it and the fields it has."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in given]
    unknown = [k for k in fields if k not in names]
    if unknown:
        shown = ", ".join(shorten(k, 40) for k in unknown[:MAX_NAMED]) + (
            f" and {len(unknown) - MAX_NAMED} more" if len(unknown) > MAX_NAMED else "")
        key = unknown[0] if len(unknown[0]) <= 40 else shorten(unknown[0], 40)
        raise SpecError(key, fields[unknown[0]], f"is not a field of {cls.__name__} (unknown: {shown}); its fields "
                        f"are {', '.join(names)}", spec="chain")
    return cls(**fields, **given)


def _bad_head(head: str) -> str:
    """Why a chain cannot start with ``head``, and what cuDNN and the kit do instead."""
    if head in STANDALONE:
        hint = " A norm's fusable pattern is a residual add before it: NormSpec(residual=True)." if "norm" in head \
            else ""
        return (f"{head!r} is a graph of its own here ({STANDALONE[head]}); pointwise steps fuse after "
                f"{' or '.join(HEADS)}.{hint}")
    if head in EPILOGUES:
        return (f"{head!r} before a compute op is a prologue: cuDNN fuses pointwise ops as a convolution loads its "
                "input (runtime fusion, NHWC fp16/bf16); the kit builds the batch-norm prologue scale, bias, relu: "
                "chain('scale', 'bias', 'relu', 'conv'). cuDNN's graph API takes other pointwise prologues too "
                "(whether an engine runs one depends on the pattern and the GPU); the kit does not build them")
    if head == GENSTATS:
        return "genstats reads a convolution's output: chain('conv', 'genstats')"
    return f"must start with a compute op ({', '.join(HEADS)}) or be a fusion pattern: {_OFFERED}"


def _second_op(i: int, step: str, head: str) -> str:
    """Why ``step`` cannot follow ``head`` in one graph here, naming where it lives and what cuDNN fuses."""
    where = f" ({STANDALONE[step]})" if step in STANDALONE else ""
    if step == "softmax":
        return (f"step {i} (softmax) is not a pointwise step: cuDNN fuses a softmax only inside its attention node "
                "(SdpaSpec: matmul, softmax, matmul); alone it is SoftmaxSpec. Pointwise steps that fuse after "
                f"{head!r}: {', '.join(EPILOGUES)}")
    return (f"step {i} ({step!r}) is a second compute op after {head!r}{where}: cuDNN fuses several compute ops "
            "only in fixed patterns (attention: SdpaSpec; conv then genstats: ConvGenstatsSpec; a residual add "
            "before a norm: NormSpec(residual=True)), so this is two graphs; the pointwise steps that fuse after "
            f"{head!r} are {', '.join(EPILOGUES)}")
