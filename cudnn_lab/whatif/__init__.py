"""What-if: answers for hardware and cuDNN versions not in hand, one module per question.

- :mod:`~cudnn_lab.whatif.devices`: targets (cuDNN's deviceless device descriptions and their provenance);
- :mod:`~cudnn_lab.whatif.heuristics`: the plans cuDNN's heuristics propose on a target (``plans_for``,
  ``compare``, ``drift``);
- :mod:`~cudnn_lab.whatif.versions`: the same spec run under another cuDNN (``run_under``, ``run_drift``);
- :mod:`~cudnn_lab.whatif.block_formats`: block-scaled (MXFP8/NVFP4) formats, emulated and asked of cuDNN;
- :mod:`~cudnn_lab.whatif.scaling`: one spec timed on fewer SMs (``sm_scaling``).

Importing the package is light: each question's module loads on first use of one of its names. No submodule is
named like a public function here or on ``cudnn_lab`` (an imported submodule would replace the function).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the question module defining it (the old ``cudnn_lab.whatif`` names keep working from here).
_LAZY: dict[str, str] = {
    **dict.fromkeys(("Target", "targets", "target", "synthetic", "load_target", "as_target",
                     "COMPUTE_CAPABILITIES"), "devices"),
    **dict.fromkeys(("WhatIf", "plans_for", "profile", "compare", "drift", "Drift", "recorded_whatifs",
                     "ANSWER_LABEL", "WHATIF_DIR"), "heuristics"),
    **dict.fromkeys(("run_under", "run_drift", "RunDrift", "recorded_run_drifts", "RUNS_DIR"), "versions"),
    **dict.fromkeys(("BlockWhatIf", "block_format_whatif", "EMULATED_LABEL", "BlockScaleAnswer",
                     "block_scale_plans", "ask_block_scaled", "recorded_block_scale_answers",
                     "record_block_scale"), "block_formats"),
    **dict.fromkeys(("ScalingResult", "sm_scaling", "recorded_scalings", "load_scaling", "DEFAULT_SM_COUNTS"),
                    "scaling"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    """The public name from its question module, imported on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, for completion."""
    return sorted({*__all__, *globals()})
