"""cudnn_lab: explore NVIDIA cuDNN by hand: build real cuDNN graphs, draw them, run every plan, compare with PyTorch.

Importing the package is light: torch, cudnn, plotly and ipywidgets load where first used.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import (CudnnLabError, DataError, MissingDependencyError, NoGPUError, OptionError, PathError, PlanError,
                     ResourceError, SpecError, UnsupportedGraphError, WorkerError)
from .options import RunOptions
# Imported here, not lazily: the name is also the submodule's, which would otherwise shadow the function once imported.
from .provenance import provenance
from .specs import ConvSpec, MatmulSpec, SdpaSpec, Spec, spec_from_dict, spec_from_json
from .specs import NormSpec
from .specs import PoolSpec
from .specs import MoeSpec
from .specs import Conv3dSpec
from .specs import ConvConcatSpec, ConvDgradReluSpec, ConvReductionSpec, ReductionSpec
from .specs import ActivationSpec, ConvGenstatsSpec, ConvPrologueSpec, RnnSpec, SoftmaxSpec, TransformSpec

from ._version import __version__

# Public names that live in heavier modules, imported on first use.
_LAZY = {
    "build_graph": "cudnn_lab.graph",
    "LabGraph": "cudnn_lab.graph",
    "probe": "cudnn_lab.capabilities",
    "Capabilities": "cudnn_lab.capabilities",
    "compare": "cudnn_lab.numerics",
    "ErrorMetrics": "cudnn_lab.numerics",
    "TOLERANCES": "cudnn_lab.numerics",
    "RunResult": "cudnn_lab.results",
    "recorded_datasets": "cudnn_lab.results",
    "load_results": "cudnn_lab.results",
    "Lab": "cudnn_lab.ui",
    "sweep": "cudnn_lab.sweeps",
    "chain": "cudnn_lab.specs",
    "GPUExecutor": "cudnn_lab.sweeps.executors",
    "run": "cudnn_lab.runs",
    "measure_ceilings": "cudnn_lab.gpu.ceilings",
    "pin_plan": "cudnn_lab.gpu.pin",
    "targets": "cudnn_lab.whatif.devices",
    "plans_for": "cudnn_lab.whatif.heuristics",
    "block_format_whatif": "cudnn_lab.whatif.block_formats",
    "block_scale_plans": "cudnn_lab.whatif.block_formats",
    "sm_scaling": "cudnn_lab.whatif.scaling",
    "triage": "cudnn_lab.whatif.version_triage",
    "forecast": "cudnn_lab.whatif.speed",
    "backend_map": "cudnn_lab.results.backend_map",
    "presets": "cudnn_lab.specs.presets",
    "preset": "cudnn_lab.specs.presets",
}

__all__ = [
    "NormSpec",
    "PoolSpec",
    "MoeSpec",
    "Conv3dSpec",
    "ConvReductionSpec", "ConvConcatSpec", "ConvDgradReluSpec", "ReductionSpec",
    "SoftmaxSpec", "ActivationSpec", "TransformSpec", "RnnSpec", "ConvGenstatsSpec", "ConvPrologueSpec",
    "__version__", "Spec", "ConvSpec", "MatmulSpec", "SdpaSpec", "spec_from_dict", "spec_from_json",
    "CudnnLabError", "SpecError", "NoGPUError", "UnsupportedGraphError", "PlanError", "ResourceError",
    "MissingDependencyError", "OptionError", "WorkerError", "DataError", "PathError", "RunOptions", "provenance",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cudnn_lab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
