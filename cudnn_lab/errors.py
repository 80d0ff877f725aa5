"""The kit's one family of errors.

Every error a user sees is a :class:`CudnnLabError`. Each also subclasses the builtin a Python user would expect
(``SpecError`` is a ``ValueError``, ``NoGPUError`` a ``RuntimeError``), so existing ``except`` clauses keep working,
and each message says what is wrong and what to do.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CudnnLabError",
    "SpecError",
    "NoGPUError",
    "UnsupportedGraphError",
    "PlanError",
    "ResourceError",
    "MissingDependencyError",
]


class CudnnLabError(Exception):
    """Base of every error raised by cudnn_lab."""


class SpecError(CudnnLabError, ValueError):
    """A problem description holds a value cuDNN cannot take; names the field, the value and what is allowed."""

    def __init__(self, field: str, value: Any, allowed: str, *, spec: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.spec = spec
        where = f"{spec}." if spec else ""
        super().__init__(f"{where}{field}={value!r}: {allowed}")


class NoGPUError(CudnnLabError, RuntimeError):
    """No usable CUDA GPU; everything but execution still works."""

    def __init__(self, reason: str = "no CUDA GPU is visible to PyTorch") -> None:
        self.reason = reason
        super().__init__(
            f"Cannot run on a GPU: {reason}. Graphs, drawings, scripts and the PyTorch reference work without one; "
            "load results recorded on a real GPU with cudnn_lab.recorded_datasets() / cudnn_lab.load_results(), "
            "or run this on a machine with an NVIDIA GPU."
        )


class UnsupportedGraphError(CudnnLabError, RuntimeError):
    """cuDNN cannot build or run this graph here; one readable sentence first, the backend's message as detail."""

    def __init__(self, summary: str, *, detail: str = "", device: str = "", cudnn_version: str = "") -> None:
        self.summary = summary
        self.detail = detail
        self.device = device
        self.cudnn_version = cudnn_version
        where = ", ".join(x for x in (device, f"cuDNN {cudnn_version}" if cudnn_version else "") if x)
        msg = summary if not where else f"{summary} (on {where})"
        msg += " Try another layout, data type or size, or another heuristic mode."
        if detail:
            msg += f"\n\nBackend message:\n{detail.strip()}"
        super().__init__(msg)


class PlanError(CudnnLabError, RuntimeError):
    """One execution plan could not be built or run; the other plans are unaffected."""


class ResourceError(CudnnLabError, MemoryError):
    """A problem would not fit in the GPU's free memory; refused before anything is allocated."""

    def __init__(self, needed_bytes: int, free_bytes: int, what: str = "this problem") -> None:
        self.needed_bytes = needed_bytes
        self.free_bytes = free_bytes
        super().__init__(
            f"{what} needs about {needed_bytes / 2**30:.2f} GiB of GPU memory but only {free_bytes / 2**30:.2f} GiB "
            "is free. Make the sizes smaller (batch first) or free GPU memory, then try again."
        )


class MissingDependencyError(CudnnLabError, ImportError):
    """An optional piece of the stack (a package or a binary) is missing; says how to install it."""

    def __init__(self, what: str, install_hint: str) -> None:
        self.what = what
        self.install_hint = install_hint
        super().__init__(f"{what} is not available. {install_hint}")
