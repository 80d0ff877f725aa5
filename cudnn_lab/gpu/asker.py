"""The user's side of :mod:`cudnn_lab.gpu.ask_worker`: a warm worker process per cuDNN library folder, asked one
query at a time with a deadline. A worker that crashes (cuDNN can, for some targets) or hangs is replaced, and that
query comes back as a refusal saying so; the user's process and everything it measured are untouched.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import OptionError, PathError
from ..files import as_path
from ..provenance import cudnn_version_text
from .deviceless import Answer

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


def worker_env(cudnn_lib: Path | None) -> dict[str, str]:
    """The environment of a kit worker process: this checkout importable, and the cuDNN in ``cudnn_lib`` (None: the
    one this process would load) first on the loader's path."""
    env = dict(os.environ)
    if cudnn_lib is not None:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([str(cudnn_lib), env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


class Asker:
    """One warm :mod:`ask_worker` process (started on first use) for the cuDNN in ``cudnn_lib`` (None: the one this
    process would load)."""

    def __init__(self, cudnn_lib: Path | None = None, *, timeout_s: float = 120.0) -> None:
        self.cudnn_lib = cudnn_lib
        self.timeout_s = timeout_s
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._next = 0
        self.cudnn_version: int | None = None
        self.card: dict[str, Any] | None = None
        self._failed: OptionError | None = None

    def _start(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-m", "cudnn_lab.gpu.ask_worker"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=None, text=True, bufsize=1,
                                      env=worker_env(self.cudnn_lib), start_new_session=True)
        first = self._read(self.timeout_s)
        if not first or not first.get("ready"):
            self.close()
            where = f"with cuDNN from {self.cudnn_lib}" if self.cudnn_lib else "with this process's cuDNN"
            said = f": {first['error']}" if first and first.get("error") else ""
            raise OptionError("cudnn_lib", str(self.cudnn_lib or "default"),
                              f"a cuDNN the kit can load; a worker {where} did not start{said} (cuDNN 9.8 or newer "
                              "and the NVIDIA driver are needed)")
        self.cudnn_version, self.card = int(first["cudnn"]), first.get("description")

    def _read(self, timeout_s: float) -> dict[str, Any] | None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(timeout_s):
                return {"timeout": True}
            line = proc.stdout.readline()
        finally:
            sel.close()
        return json.loads(line) if line.strip() else None

    def ensure_started(self) -> None:
        """Start the worker if it is not running (OptionError if this cuDNN cannot be loaded here); a failed start
        is remembered, so a machine without the driver is not asked again."""
        with self._lock:
            if self._failed is not None:
                raise self._failed
            if self._proc is None or self._proc.poll() is not None:
                try:
                    self._start()
                except OptionError as e:
                    self._failed = e
                    raise

    def ask(self, spec: Any, *, description: dict[str, Any] | None = None, sm_count: int | None = None,
            modes: tuple[str, ...] = ("A", "B", "FALLBACK")) -> Answer | Refusal:
        """cuDNN's answer for ``spec`` on a target (None: the card), or a Refusal saying why there is none."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            assert self._proc is not None and self._proc.stdin is not None
            self._next += 1
            query = {"id": self._next, "spec": spec.to_dict(), "description": description, "sm_count": sm_count,
                     "modes": list(modes)}
            try:
                self._proc.stdin.write(json.dumps(query) + "\n")
                self._proc.stdin.flush()
                reply = self._read(self.timeout_s)
            except (BrokenPipeError, OSError, ValueError):
                reply = None
            if reply is None or reply.get("timeout"):
                try:
                    code = self._proc.wait(timeout=5) if reply is None else None
                except subprocess.TimeoutExpired:
                    code = None
                self.close()
                if reply is None:
                    how = (f"signal {-code}, {signal.Signals(-code).name}" if code is not None and code < 0
                           else f"exit code {code}" if code is not None else "no answer")
                    return Refusal("crashed", f"cuDNN {cudnn_version_text(self.cudnn_version)} crashed answering "
                                              f"this query ({how}); the kit's worker was restarted")
                return Refusal("timeout", f"cuDNN gave no answer within {self.timeout_s:.0f} s")
            if "error" in reply:
                err = reply["error"]
                return Refusal("declined", err["message"].split("\n\nBackend message:")[0], err.get("detail", ""))
            return Answer.from_dict(reply["answer"])

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass


_ASKERS: dict[str, Asker] = {}


def asker(cudnn_lib: Any = None) -> Asker:
    """The warm Asker for a cuDNN library folder (checked first), one per folder per process."""
    folder = None if cudnn_lib is None else check_cudnn_folder(cudnn_lib)
    key = str(folder)
    if key not in _ASKERS:
        _ASKERS[key] = Asker(folder)
    return _ASKERS[key]


@atexit.register
def _close_all() -> None:
    for a in _ASKERS.values():
        a.close()
