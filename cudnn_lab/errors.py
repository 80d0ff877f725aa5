"""The kit's one family of errors: one class per kind of failure.

Every error a user sees is a :class:`CudnnLabError`. Each also subclasses the builtin a Python user would expect
(``SpecError`` is a ``ValueError``, ``PathError`` an ``OSError``, ``NoGPUError`` a ``RuntimeError``), so existing
``except`` clauses keep working, and each message says what is wrong and what to do.

| class | kind of failure |
| --- | --- |
| SpecError | a field of a problem description (a spec) |
| OptionError | a run, sweep, plot or UI option or argument |
| DataError | the content of a file the kit reads: not decodable, or not the documented schema |
| PathError | a path the kit reads or writes: missing, a directory, unreadable, unwritable |
| NoGPUError | no usable GPU for what needs one |
| UnsupportedGraphError | cuDNN cannot build or run this graph here |
| PlanError | one execution plan could not be built, pinned or run |
| ResourceError | a problem would not fit in memory (GPU, or host for the CPU reference) |
| MissingDependencyError | an optional package or binary is missing |
| DrawingError | graphviz's ``dot`` rejected a drawing the kit made (a bug of the kit's drawing) |
| WorkerError | a kit worker process (``gpu/workers``) did not start, crashed, hung or answered garbage |
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CudnnLabError",
    "SpecError",
    "OptionError",
    "DataError",
    "PathError",
    "NoGPUError",
    "UnsupportedGraphError",
    "PlanError",
    "ResourceError",
    "MissingDependencyError",
    "DrawingError",
    "WorkerError",
    "shorten",
]

#: Longest rendering of a user's value inside a message; longer values are cut with their length shown.
MAX_VALUE_CHARS = 80


def shorten(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, so a huge bad value never floods a message."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails (or is a 5000-digit int) still gets a message
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = f"{text[:limit - 20]}... ({len(text)} chars)"
    return text


class CudnnLabError(Exception):
    """Base of every error raised by cudnn_lab."""


class _RefusedValue(CudnnLabError, ValueError):
    """A named value the kit cannot take: keeps ``value`` and ``allowed``; reads ``<where><name>=<value>: <allowed>``
    (the base of SpecError and OptionError, the one place that message is made)."""

    def __init__(self, where: str, name: str, value: Any, allowed: str) -> None:
        self.value = value
        self.allowed = allowed
        super().__init__(f"{where}{name}={shorten(value)}: {allowed}")


class SpecError(_RefusedValue):
    """A problem description holds a value cuDNN cannot take; names the field, the value and what is allowed."""

    #: the sweep point a refused grid combination was (``sweeps.grid``: base spec and axis values); None elsewhere
    point: dict[str, Any] | None = None

    def __init__(self, field: str, value: Any, allowed: str, *, spec: str = "") -> None:
        self.field = field
        self.spec = spec
        super().__init__(f"{spec}." if spec else "", field, value, allowed)


class OptionError(_RefusedValue):
    """A run, sweep, plot or UI option holds a value the kit cannot take; names the option and what is allowed."""

    def __init__(self, option: str, value: Any, allowed: str, *, where: str = "") -> None:
        self.option = option
        self.where = where
        super().__init__(f"{where}: option " if where else "option ", option, value, allowed)


class _FileProblem(CudnnLabError):
    """An error about one path: names it (cut to 200 characters) and the problem, then what to do (``hint``)."""

    def __init__(self, path: Any, problem: str, *, hint: str = "") -> None:
        self.path = str(path)
        self.problem = problem
        msg = f"{shorten(self.path, 200)}: {problem}"
        if hint:
            msg += f". {hint}"
        super().__init__(msg)


class DataError(_FileProblem, ValueError):
    """A file's content cannot be used: names the file and the first problem found, and what the kit expects."""


class PathError(_FileProblem, OSError):
    """A path cannot be read or written as asked (missing, a directory, unwritable); says which and what to do."""

    def __str__(self) -> str:  # OSError's own __str__ would show errno formatting instead of the message
        return str(self.args[0]) if self.args else ""


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

    def __init__(self, summary: str, *, detail: str = "", device: str = "", cudnn_version: str = "",
                 hint: str = " Try another layout, data type or size, or another heuristic mode.") -> None:
        self.summary = summary
        self.detail = detail
        self.device = device
        self.cudnn_version = cudnn_version
        where = ", ".join(x for x in (device, f"cuDNN {cudnn_version}" if cudnn_version else "") if x)
        msg = summary if not where else f"{summary} (on {where})"
        msg += hint
        if detail:
            msg += f"\n\nBackend message:\n{detail.strip()}"
        super().__init__(msg)


class PlanError(CudnnLabError, RuntimeError):
    """One execution plan could not be built, pinned or run; the other plans are unaffected."""


class ResourceError(CudnnLabError, MemoryError):
    """A problem would not fit in memory; refused before anything is allocated."""

    def __init__(self, needed_bytes: int, free_bytes: int, what: str = "this problem", *,
                 memory: str = "GPU memory") -> None:
        self.needed_bytes = needed_bytes
        self.free_bytes = free_bytes
        super().__init__(
            f"{what} needs about {needed_bytes / 2**30:.2f} GiB of {memory} but only {free_bytes / 2**30:.2f} GiB "
            "is free. Make the sizes smaller (batch first) or free memory, then try again."
        )


class MissingDependencyError(CudnnLabError, ImportError):
    """An optional piece of the stack (a package or a binary) is missing; says how to install it."""

    def __init__(self, what: str, install_hint: str) -> None:
        self.what = what
        self.install_hint = install_hint
        super().__init__(f"{what} is not available. {install_hint}")


class DrawingError(CudnnLabError, RuntimeError):
    """``dot`` rejected a drawing's DOT text. The message is one sentence (which drawing, what to do); the DOT text
    (``source``) and dot's own message (``stderr``) are kept on the error for a details view, not put in it."""

    def __init__(self, source: str, stderr: str, spec: Any = None) -> None:
        self.source, self.stderr, self.spec = source, stderr, spec
        if spec is not None:
            family = type(spec).__name__
            message = (f"Cannot draw {family} '{spec.label()}': graphviz 'dot' rejected the DOT text of this drawing, "
                       f"a bug in the kit's {family} drawing; please report it with the DOT source (kept with this "
                       "message); only the drawing is affected.")
        else:
            message = ("Cannot draw this DOT text: graphviz 'dot' rejected it as not valid DOT; check it with "
                       "'dot -Tsvg' (dot's own message is the error's .stderr).")
        super().__init__(message)


class WorkerError(CudnnLabError, RuntimeError):
    """A kit worker process (``gpu/workers``) failed: ``role`` (its target), ``kind`` ("start", "crash", "deadline",
    "bad_reply" or "failed": the role raised), ``how`` (exit code or signal, where it ended) and ``detail`` (the
    child's own words or its last line of stderr). The user's process and what it measured are untouched."""

    #: What each kind means to the user, and what to do.
    TODO: dict[str, str] = {
        "start": "check that the role's libraries (cuDNN, the NVIDIA driver) load in a fresh Python process",
        "crash": "the library it called crashed (the kit's process is unaffected); report the input that did it",
        "deadline": "the worker was killed; try again with a longer timeout or a smaller problem",
        "bad_reply": "the worker was killed; something in it wrote to the kit's pipe: report it",
        "failed": "the worker is still up; the message above is the role's own error",
    }

    def __init__(self, role: str, kind: str, what: str, *, how: str = "", detail: str = "") -> None:
        self.role, self.kind, self.what, self.how, self.detail = role, kind, what, how, detail
        said = f" ({how})" if how else ""
        tail = f": {detail}" if detail else ""
        todo = self.TODO.get(kind, "")
        super().__init__(f"the kit's worker process for {role} {what}{said}{tail}" + (f"; {todo}" if todo else ""))
