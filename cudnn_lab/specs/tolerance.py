"""A tolerance band and the sources bands cite: what a family declares when cuDNN's own tests of its op accept a
looser band than its dtype's (``Spec.tolerances``); :mod:`cudnn_lab.numerics` applies them."""

from __future__ import annotations

import dataclasses

from .records import AsDict

__all__ = ["ToleranceBand", "TORCH_SOURCE", "CUDNN_SOURCE"]

#: Where a band comes from: torch.testing's default (strict), or the looser band cuDNN's own tests accept.
TORCH_SOURCE = "torch.testing.assert_close default"
CUDNN_SOURCE = "cuDNN frontend's test tolerance"


@dataclasses.dataclass(frozen=True)
class ToleranceBand(AsDict):
    """An element passes when |actual - expected| <= atol + rtol * |expected| (torch.testing's rule)."""

    rtol: float
    atol: float
    source: str
