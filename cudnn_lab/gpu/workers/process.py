"""The parent side of a kit worker (:class:`Worker`, :func:`call_once`); the child side is :mod:`.child`."""

from __future__ import annotations

import collections
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal, Protocol, TypeVar

from ...errors import WorkerError

__all__ = ["Worker", "call_once", "role", "Role", "worker_env", "STDERR_MODES"]

#: What a worker's stderr does: "inherit" (goes where the parent's goes), "discard", or "tail" (read by the parent,
#: its last lines kept for the error message of a crash).
STDERR_MODES = ("inherit", "discard", "tail")
#: Lines of a worker's stderr kept in "tail" mode.
TAIL_LINES = 20

StderrMode = Literal["inherit", "discard", "tail"]
R = TypeVar("R", bound=Callable[..., Any])


class Role(Protocol):
    """A worker role: called in the child with each request's message; returns one answer or yields several."""

    def __call__(self, message: dict[str, Any], /) -> dict[str, Any] | Iterator[dict[str, Any]]: ...


def role(*, start: Callable[[], dict[str, Any]] | None = None) -> Callable[[R], R]:
    """Mark a role function with a start hook, run in the child before its ready line (make a context, load a
    library); the hook's dict is the worker's :attr:`Worker.info`, and its exception a start failure."""
    def mark(fn: R) -> R:
        setattr(fn, "worker_start", start)  # noqa: B010 - a typed callable has no such attribute to assign
        return fn
    return mark


def worker_env(cudnn_lib: Path | None = None) -> dict[str, str]:
    """The environment of a kit worker process: this checkout importable, and the cuDNN in ``cudnn_lib`` (None: the
    one this process would load) first on the loader's path."""
    env = dict(os.environ)
    if cudnn_lib is not None:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([str(cudnn_lib), env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


class _Ended(Exception):
    """The child's pipe reached its end (it died or closed it)."""


class _Deadline(Exception):
    """Nothing came within the deadline."""


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child's process group (if still running), reap it and close the pipes the parent writes and reads."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdin, proc.stdout):  # stderr is closed by its reader thread at its end
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass


def _drain(stream: IO[bytes], tail: collections.deque[str]) -> None:
    """Keep the last lines of a child's stderr (the reader thread of "tail" mode)."""
    try:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").strip()
            if line:
                tail.append(line)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def ended_how(code: int | None) -> str:
    """'exit code N', 'signal N (NAME)' or 'no answer' (still running) for a process's return code."""
    if code is None:
        return "no answer"
    if code < 0:
        try:
            return f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class Worker:
    """One warm child process running ``target`` (``"package.module:function"``, a :class:`Role`), started on first
    use (or by :meth:`start`) and again after a crash or a deadline; ended by :meth:`close`, at exit, or when the
    object is garbage-collected. ``env``: the child's environment (default :func:`worker_env`); ``nice``: how much
    the child lowers its CPU priority; ``stderr``: one of :data:`STDERR_MODES`."""

    def __init__(self, target: str, *, env: Mapping[str, str] | None = None, nice: int = 0,
                 ready_timeout_s: float = 60.0, stderr: StderrMode = "tail") -> None:
        if not isinstance(target, str) or ":" not in target:
            raise ValueError(f"a worker target is 'package.module:function', not {target!r}")
        if stderr not in STDERR_MODES:
            raise ValueError(f"stderr is one of {STDERR_MODES}, not {stderr!r}")
        self.target = target
        self.env = dict(env) if env is not None else worker_env(None)
        self.nice, self.ready_timeout_s, self.stderr = int(nice), float(ready_timeout_s), stderr
        #: the role's start hook's dict from the ready line (empty until started)
        self.info: dict[str, Any] = {}
        #: the whole ready line of the running child (None: not started or not ready)
        self.ready: dict[str, Any] | None = None
        #: children started over this worker's life
        self.started = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._pieces: list[bytes] = []
        self._events: collections.deque[dict[str, Any]] = collections.deque()
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._next = 0
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- state

    @property
    def pid(self) -> int | None:
        """The process id of the running (or last) child."""
        return self._pid

    def alive(self) -> bool:
        """Whether a child is running."""
        return self._proc is not None and self._proc.poll() is None

    def fileno(self) -> int:
        """The pipe the child answers on (for a selector over several workers)."""
        if self._proc is None or self._proc.stdout is None:
            raise self._error("start", "is not running")
        return self._proc.stdout.fileno()

    def stderr_tail(self) -> str:
        """The last line the child wrote to stderr ("tail" mode; "" otherwise)."""
        return self._tail[-1][:300] if self._tail else ""

    def how_it_ended(self) -> str:
        """'exit code N' / 'signal N (NAME)' once the child ended (waits up to 2 s), else 'no answer'."""
        if self._proc is None:
            return "no answer"
        try:
            return ended_how(self._proc.wait(timeout=2))
        except subprocess.TimeoutExpired:
            return "no answer"

    def _error(self, kind: str, what: str, *, how: str = "", detail: str = "") -> WorkerError:
        return WorkerError(self.target, kind, what, how=how, detail=detail)

    # ---------------------------------------------------------------- start and end

    def launch(self) -> None:
        """Start a child without waiting for its ready line (a running one is ended first); see :meth:`wait_ready`.
        WorkerError where the process cannot be made."""
        with self._lock:
            self.kill()
            argv = [sys.executable, "-m", "cudnn_lab.gpu.workers", self.target]
            if self.nice:
                argv += ["--nice", str(self.nice)]
            err: Any = None if self.stderr == "inherit" else subprocess.DEVNULL if self.stderr == "discard" \
                else subprocess.PIPE
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0,
                                        env=self.env, start_new_session=True)
            except OSError as e:
                raise self._error("start", "could not be started", detail=str(e)) from None
            self._proc, self._pid, self.started = proc, proc.pid, self.started + 1
            self._finalizer = weakref.finalize(self, _end, proc)
            self._tail.clear()
            if proc.stderr is not None:
                threading.Thread(target=_drain, args=(proc.stderr, self._tail), daemon=True,
                                 name=f"cudnn_lab-worker-stderr-{proc.pid}").start()

    def wait_ready(self) -> dict[str, Any]:
        """Wait for a launched child's ready line: the role's :attr:`info`; WorkerError (kind "start", the child
        killed) where it says it cannot start, ends or stays silent for ``ready_timeout_s``."""
        with self._lock:
            try:
                line = self._next_event(None, self.ready_timeout_s)
            except _Deadline:
                self.kill()
                raise self._error("start", f"did not say it was ready within {self.ready_timeout_s:g} s") from None
            except _Ended:
                how = self.how_it_ended()
                self.kill()
                raise self._error("start", "ended while starting", how=how, detail=self.stderr_tail()) from None
            if line.get("ready") is not True:
                self.kill()
                raise self._error("start", "could not start", detail=str(line.get("error") or "no reason given"))
            info = line.get("info")
            self.ready, self.info = line, dict(info) if isinstance(info, dict) else {}
            return self.info

    def start(self) -> dict[str, Any]:
        """Start the child unless it is running and ready; the role's :attr:`info`. WorkerError (kind "start")."""
        with self._lock:
            if self.alive() and self.ready is not None:
                return self.info
            self.launch()
            return self.wait_ready()

    def kill(self) -> None:
        """End the child now (its whole process group) and forget what it had sent; the next request starts a new
        one."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._proc, self._finalizer, self.ready = None, None, None
            self._pieces = []
            self._events.clear()

    def close(self) -> None:
        """End the child (if any); the worker may be used again (a new child starts)."""
        self.kill()

    def abort(self) -> None:
        """End the child's process group now without taking the worker's lock (another thread may hold it inside
        :meth:`wait_ready` or a request): that thread then meets the pipe's end at once instead of its deadline. For
        the interpreter's exit; :meth:`kill` still tidies up after."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass

    # ---------------------------------------------------------------- the pipe

    def send(self, message: dict[str, Any]) -> int:
        """Write one request without waiting; its id. WorkerError (kind "crash") where the child is gone."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.stdin is None:
                raise self._error("crash", "is not running")
            self._next += 1
            try:
                line = json.dumps({"id": self._next, "message": message})
            except (TypeError, ValueError) as e:
                raise self._error("failed", "was given a message that is not plain JSON", detail=str(e)) from None
            try:
                proc.stdin.write((line + "\n").encode())
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                raise self._error("crash", "is gone", how=self.how_it_ended()) from None
            return self._next

    def receive(self) -> list[dict[str, Any]] | None:
        """What the child has sent, read once without blocking past one read (call when :meth:`fileno` is
        readable): the lines as dicts, or None at the end of the pipe. A line that is not a JSON object kills the
        child: WorkerError (kind "bad_reply")."""
        with self._lock:
            out = list(self._events)
            self._events.clear()
            if out:
                return out
            try:
                self._fill()
            except _Ended:
                return None
            out = list(self._events)
            self._events.clear()
            return out

    def _fill(self) -> None:
        """Read once from the pipe into the event queue; _Ended at its end; bad lines kill the child."""
        try:
            data = os.read(self.fileno(), 1 << 16)
        except OSError:
            data = b""
        if not data:
            raise _Ended()
        if b"\n" not in data:  # part of a long line (a large answer): keep the pieces, join once at its end
            self._pieces.append(data)
            return
        self._pieces.append(data)
        *lines, rest = b"".join(self._pieces).split(b"\n")
        self._pieces = [rest] if rest else []
        for raw in lines:
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                event = None
            if not isinstance(event, dict):
                self.kill()
                raise self._error("bad_reply", "wrote a line that is not a JSON object to its answer pipe",
                                  detail=repr(raw[:80].decode(errors="replace")))
            self._events.append(event)

    def _next_event(self, ident: int | None, timeout_s: float) -> dict[str, Any]:
        """The next line for request ``ident`` (None: the ready line), waiting at most ``timeout_s``; _Deadline or
        _Ended otherwise. Lines of other requests (of a child since killed) are dropped."""
        deadline = time.monotonic() + max(0.0, float(timeout_s))
        while True:
            while self._events:
                event = self._events.popleft()
                if (ident is None and "ready" in event) or (ident is not None and event.get("id") == ident):
                    return event
            left = deadline - time.monotonic()
            sel = selectors.DefaultSelector()
            try:
                sel.register(self.fileno(), selectors.EVENT_READ)
                readable = sel.select(max(0.0, left))
            finally:
                sel.close()
            if not readable:
                raise _Deadline()
            self._fill()

    # ---------------------------------------------------------------- requests

    def request(self, message: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        """The role's answer to ``message`` within ``timeout_s`` seconds (the child is started if need be). A child
        that dies answering is started again and asked once more; WorkerError where it dies again (kind "crash"),
        misses the deadline ("deadline", child killed), answers garbage ("bad_reply") or the role raised
        ("failed")."""
        with self._lock:
            for attempt in (1, 2):
                self.start()
                try:
                    ident = self.send(message)
                    event = self._next_event(ident, timeout_s)
                except (_Ended, WorkerError) as e:
                    if isinstance(e, WorkerError) and e.kind != "crash":
                        raise
                    how, detail = self.how_it_ended(), self.stderr_tail()
                    self.kill()
                    if attempt == 1:
                        continue
                    raise self._error("crash", "died answering a request, and again after one restart", how=how,
                                      detail=detail) from None
                except _Deadline:
                    self.kill()
                    raise self._error("deadline", f"gave no answer within {timeout_s:g} s and was killed") from None
                return self._reply(event)
            raise AssertionError("unreachable")

    def _reply(self, event: dict[str, Any]) -> dict[str, Any]:
        if isinstance(event.get("reply"), dict):
            return dict(event["reply"])
        if isinstance(event.get("failed"), dict):
            f = event["failed"]
            raise self._error("failed", "could not answer", detail=f"{f.get('type', 'Error')}: {f.get('message', '')}")
        self.kill()
        raise self._error("bad_reply", "answered with a stream or an unknown line (use Worker.stream for a "
                                       "streaming role)", detail=json.dumps(event)[:200])

    def stream(self, message: dict[str, Any], *, timeout_s: float) -> Iterator[dict[str, Any]]:
        """The parts a streaming role yields for ``message`` (a one-answer role: its answer), each within
        ``timeout_s`` of the one before; errors as :meth:`request`, but a crash after the first part is not
        retried (the parts would repeat)."""
        with self._lock:
            for attempt in (1, 2):
                self.start()
                got = False
                try:
                    ident = self.send(message)
                    while True:
                        event = self._next_event(ident, timeout_s)
                        if "part" in event and isinstance(event["part"], dict):
                            got = True
                            yield dict(event["part"])
                        elif event.get("end") is True:
                            return
                        else:
                            yield self._reply(event)
                            return
                except (_Ended, WorkerError) as e:
                    if isinstance(e, WorkerError) and e.kind != "crash":
                        raise
                    how, detail = self.how_it_ended(), self.stderr_tail()
                    self.kill()
                    if attempt == 1 and not got:
                        continue
                    raise self._error("crash", "died while streaming its answer", how=how, detail=detail) from None
                except _Deadline:
                    self.kill()
                    raise self._error("deadline", f"sent nothing for {timeout_s:g} s and was killed") from None


def call_once(target: str, message: dict[str, Any], *, env: Mapping[str, str] | None = None,
              timeout_s: float, stderr: StderrMode = "tail") -> dict[str, Any]:
    """Start a worker for ``target``, ask it ``message`` (``timeout_s``: the deadline for starting and for the
    answer), end it; the answer, or WorkerError as :meth:`Worker.request`."""
    worker = Worker(target, env=env, ready_timeout_s=max(60.0, float(timeout_s)), stderr=stderr)
    try:
        return worker.request(message, timeout_s=timeout_s)
    finally:
        worker.close()
