"""The forecasts the Lab's What-if view and the report show: :func:`cudnn_lab.whatif.speed.forecast` for one spec
and several targets, each from a measured run on another GPU than the target (a forecast of a GPU from its own
recording says nothing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ..errors import OptionError
from ..specs import Spec
from .speed import RECORDED_DIR, Forecast, forecast, source_run

__all__ = ["forecasts_for"]

#: The recorded GPUs, each with the other one to forecast it from.
_OTHER: dict[str, str] = {"h100": "h200", "h200": "h100"}


def forecasts_for(spec: Any, targets: Iterable[Any], source: Any = None) -> list[Forecast]:
    """One :class:`Forecast` per target (in order, duplicates once) from ``source`` (default: the shipped recording
    of ``spec``); where that source was measured on the target itself, from the other recorded GPU's recording of
    the same problem when one ships; a target named otherwise than its GPU is shown 'sm90 (h100)'. A target
    without datasheet facts in the kit (a synthetic compute capability such as sm86) is answered "measure this"
    with why; any other error of the kit (the spec, its recording) is raised."""
    out: list[Forecast] = []
    targets = list(dict.fromkeys(targets))
    if source is None and targets and isinstance(spec, Spec):  # the shipped recording, found once for every target
        source = RECORDED_DIR / source_run(None, spec.to_dict())[1]  # (a search reads the recordings until it matches)
    for target in targets:
        try:
            f = forecast(spec, target, source)
        except OptionError as e:
            if e.option != "target":
                raise
            out.append(Forecast(spec=spec.to_dict(), family=str(spec.to_dict()["op"]), target=str(target),
                                source="", source_gpu="", plans_from="",
                                measure_this=f"the kit has no datasheet facts for {target} to forecast from "
                                f"({e.allowed})"))
            continue
        other = _OTHER.get(f.source_gpu)
        if f.target == f.source_gpu and other and f.source.startswith(f"{f.source_gpu}_"):
            alt = RECORDED_DIR / (other + f.source[len(f.source_gpu):])
            if alt.is_file():
                f = forecast(spec, target, alt)
        if str(target) != f.target:  # a kit target's name (sm90) with the GPU whose facts answer it (h100)
            f = dataclasses.replace(f, target=f"{target} ({f.target})")
        out.append(f)
    return out
