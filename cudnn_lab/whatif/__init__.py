"""What-if: answers for hardware and cuDNN versions not in hand, one module per question.

- :mod:`~cudnn_lab.whatif.devices`: targets (cuDNN's deviceless device descriptions and their provenance);
- :mod:`~cudnn_lab.whatif.heuristics`: the plans cuDNN's heuristics propose on a target (``plans_for``,
  ``compare``, ``drift``);
- :mod:`~cudnn_lab.whatif.versions`: the same spec run under another cuDNN (``run_under``, ``run_drift``);
- :mod:`~cudnn_lab.whatif.block_formats`: block-scaled (MXFP8/NVFP4) formats, emulated and asked of cuDNN;
- :mod:`~cudnn_lab.whatif.scaling`: one spec timed on fewer SMs (``sm_scaling``).
- :mod:`~cudnn_lab.whatif.version_triage`: one spec under each cuDNN the machine has (``triage``).

Importing the package is light: each question's module loads on first use of one of its names. No submodule is
named like a public function here or on ``cudnn_lab`` (an imported submodule would replace the function).

:data:`QUESTIONS` registers each question (README "Adding a what-if question"; tests/whatif/
test_questions_contract.py checks every entry).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any


@dataclasses.dataclass(frozen=True)
class Question:
    """One what-if question: its ``module`` (``cudnn_lab.whatif.<module>``, holding ``ask``), its frozen answer
    types (``answers``: class names in that module, each with to_dict/from_dict, summary and frame), the recordings
    kind its answers are kept in (``recording``, registered in results/recordings.py by the module), the module's
    function listing recorded answers of ``answers[0]`` (``recorded``) and the plots registry's entries drawing them
    (``views``: plots/registry.py names; none for a question drawn nowhere yet)."""

    name: str
    module: str
    answers: tuple[str, ...]
    recording: str
    recorded: str
    views: tuple[str, ...] = ()

    def load(self) -> Any:
        """The question's module, imported."""
        return importlib.import_module(f"{__name__}.{self.module}")


#: Every what-if question, by name.
QUESTIONS: dict[str, Question] = {q.name: q for q in (
    Question("targets", "devices", ("Target",), "target", "targets"),
    Question("heuristics", "heuristics", ("WhatIf", "Drift"), "whatif", "recorded_whatifs",
             ("whatif_label", "whatif_compare", "whatif_refusals", "whatif_reasons", "whatif_drift",
              "whatif_drift_summary")),
    Question("cudnn versions", "versions", ("RunDrift",), "version_run", "recorded_run_drifts", ("run_drift",)),
    Question("block formats", "block_formats", ("BlockScaleAnswer", "BlockWhatIf"), "block_scale",
             "recorded_block_scale_answers", ("block_emulated", "block_asked", "block_answers")),
    Question("sm scaling", "scaling", ("ScalingResult",), "sm_scaling", "recorded_scalings", ("sm_scaling",)),
    Question("version triage", "version_triage", ("Triage",), "triage", "recorded_triages"),
)}

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
    **dict.fromkeys(("Triage", "VersionRun", "recorded_triages", "triage"), "version_triage"),
}

__all__ = sorted([*_LAZY, "Question", "QUESTIONS"])


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
