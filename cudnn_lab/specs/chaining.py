"""Free chaining: ``chain("matmul", "add", "relu", m=..., n=..., k=...)`` -> a spec, checked before cuDNN sees it.

cuDNN's graph API fuses a chain of pointwise operations after one compute operation (a convolution or a matrix
multiplication) into a single graph; the kit says in plain words what else is not allowed and what to do instead.
"""

from __future__ import annotations

from typing import Any

from ..errors import SpecError
from .base import Spec
from .conv import ConvSpec
from .epilogue import EPILOGUES
from .matmul import MatmulSpec

#: Compute operations that can head a chain, and the spec each becomes.
HEADS: dict[str, type[Spec]] = {"conv": ConvSpec, "matmul": MatmulSpec}
#: Operations that are graphs of their own in this kit: they cannot follow another compute op in one graph.
STANDALONE = {"layernorm": "NormSpec(kind='layernorm')", "rmsnorm": "NormSpec(kind='rmsnorm')",
              "batchnorm": "NormSpec(kind='batchnorm')", "instancenorm": "NormSpec(kind='instancenorm')",
              "sdpa": "SdpaSpec", "attention": "SdpaSpec", "pool": "PoolSpec", "maxpool": "PoolSpec",
              "avgpool": "PoolSpec"}


def chain(*steps: str, **fields: Any) -> Spec:
    """A spec for a chain of operations: one compute op, then pointwise steps applied left to right."""
    if not steps or not all(isinstance(s, str) for s in steps):
        raise SpecError("chain", steps, f"must start with one of {', '.join(HEADS)} followed by pointwise steps "
                        f"({', '.join(EPILOGUES)})")
    head, rest = steps[0], steps[1:]
    if head not in HEADS:
        if head in STANDALONE:
            hint = (" A norm's fusable pattern is a residual add before it: NormSpec(residual=True)."
                    if "norm" in head else "")
            raise SpecError("chain", steps, f"{head!r} is a graph of its own here ({STANDALONE[head]}); pointwise "
                            f"steps fuse after {' or '.join(HEADS)} only.{hint}")
        raise SpecError("chain", steps, f"must start with a compute op: {', '.join(HEADS)}")
    for i, step in enumerate(rest, 1):
        if step in HEADS or step in STANDALONE:
            raise SpecError("chain", steps, f"step {i} ({step!r}) is a second compute op after {head!r}: one cuDNN "
                            "graph here holds one compute op followed by pointwise steps; build two graphs")
        if step not in EPILOGUES:
            raise SpecError("chain", steps, f"step {i} ({step!r}) is not a pointwise step; choose from "
                            f"{', '.join(EPILOGUES)}")
    if "epilogue" in fields:
        raise SpecError("epilogue", fields["epilogue"], "is given by the chain's steps; do not pass it too")
    return HEADS[head](**fields, epilogue=rest)
