"""The user's side of the heuristics-asking role (:mod:`cudnn_lab.gpu.ask_worker`): a warm kit worker
(:class:`cudnn_lab.gpu.workers.Worker`) per cuDNN library folder, asked one query at a time with a deadline. A worker
that crashes (cuDNN can, for some targets) is started again and asked once more; a second crash or a hang comes back
as a refusal saying so; the user's process and everything it measured are untouched.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

from ..errors import OptionError, PathError, WorkerError
from ..files import as_path
from ..provenance import cudnn_version_text
from .ask_worker import TARGET
from .deviceless import Answer
from .workers import Worker, worker_env

__all__ = ["Refusal", "Asker", "asker", "check_cudnn_folder", "worker_env"]


@dataclasses.dataclass(frozen=True)
class Refusal:
    """cuDNN gave no plan: ``kind`` is "declined" (its own error, ``detail`` holds its per-engine reasons),
    "crashed" (the process died answering) or "timeout"."""

    kind: str
    message: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"refused": self.kind, "message": self.message, "detail": self.detail}


def check_cudnn_folder(folder: Any) -> Path:
    """A folder holding a cuDNN 9 library (``libcudnn.so.9`` or ``libcudnn_graph.so.9``); PathError otherwise."""
    path = as_path(folder, what="cudnn_lib")
    if not path.is_dir():
        raise PathError(path, "the cuDNN library folder does not exist or is not a folder",
                        hint="give the folder holding libcudnn.so.9, e.g. /usr/lib/x86_64-linux-gnu or "
                             "<pip --target>/nvidia/cudnn/lib")
    libs = sorted(p.name for p in path.glob("libcudnn*.so*"))
    if not any(n.startswith(("libcudnn.so.9", "libcudnn_graph.so.9")) for n in libs):
        other = [n for n in libs if n.startswith("libcudnn")]
        problem = (f"holds cuDNN libraries of another major version ({', '.join(other[:3])})" if other
                   else "holds no cuDNN library (libcudnn.so.9 / libcudnn_graph.so.9)")
        raise PathError(path, f"the cuDNN library folder {problem}; the kit runs cuDNN 9 only")
    return path


class Asker:
    """One warm heuristics-asking worker (started on first use) for the cuDNN in ``cudnn_lib`` (None: the one this
    process would load)."""

    def __init__(self, cudnn_lib: Path | None = None, *, timeout_s: float = 120.0) -> None:
        self.cudnn_lib = cudnn_lib
        self.timeout_s = timeout_s
        self._worker: Worker | None = None
        self._lock = threading.Lock()
        self.cudnn_version: int | None = None
        self.card: dict[str, Any] | None = None
        self._failed: OptionError | None = None

    def _start(self) -> None:
        worker = Worker(TARGET, env=worker_env(self.cudnn_lib), ready_timeout_s=self.timeout_s, stderr="inherit")
        try:
            info = worker.start()
        except WorkerError as e:
            worker.close()
            where = f"with cuDNN from {self.cudnn_lib}" if self.cudnn_lib else "with this process's cuDNN"
            said = f": {e.detail}" if e.detail else f" ({e.how})" if e.how else ""
            raise OptionError("cudnn_lib", str(self.cudnn_lib or "default"),
                              f"a cuDNN the kit can load; a worker {where} did not start{said} (cuDNN 9.8 or newer "
                              "and the NVIDIA driver are needed)") from None
        self._worker = worker
        self.cudnn_version, self.card = int(info["cudnn"]), info.get("description")

    def ensure_started(self) -> None:
        """Start the worker if it is not running (OptionError if this cuDNN cannot be loaded here); a failed start
        is remembered, so a machine without the driver is not asked again."""
        with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._worker is None:
                try:
                    self._start()
                except OptionError as e:
                    self._failed = e
                    raise

    def ask(self, spec: Any, *, description: dict[str, Any] | None = None, sm_count: int | None = None,
            modes: tuple[str, ...] = ("A", "B", "FALLBACK")) -> Answer | Refusal:
        """cuDNN's answer for ``spec`` on a target (None: the card), or a Refusal saying why there is none."""
        with self._lock:
            if self._worker is None:
                self._start()
            assert self._worker is not None
            query = {"spec": spec.to_dict(), "description": description, "sm_count": sm_count,
                     "modes": list(modes)}
            try:
                reply = self._worker.request(query, timeout_s=self.timeout_s)
            except WorkerError as e:
                if e.kind == "deadline":
                    return Refusal("timeout", f"cuDNN gave no answer within {self.timeout_s:.0f} s")
                if e.kind == "crash":
                    return Refusal("crashed", f"cuDNN {cudnn_version_text(self.cudnn_version)} crashed answering "
                                              f"this query ({e.how or 'no answer'}), and again when asked once "
                                              "more; the kit's worker will be started again")
                return Refusal("crashed", str(e))
            if "error" in reply:
                err = reply["error"]
                return Refusal("declined", err["message"].split("\n\nBackend message:")[0], err.get("detail", ""))
            return Answer.from_dict(reply["answer"])

    def close(self) -> None:
        """End the worker (a later question starts it again)."""
        if self._worker is not None:
            self._worker.close()


_ASKERS: dict[str, Asker] = {}


def asker(cudnn_lib: Any = None) -> Asker:
    """The warm Asker for a cuDNN library folder (checked first), one per folder per process."""
    folder = None if cudnn_lib is None else check_cudnn_folder(cudnn_lib)
    key = str(folder)
    if key not in _ASKERS:
        _ASKERS[key] = Asker(folder)
    return _ASKERS[key]

