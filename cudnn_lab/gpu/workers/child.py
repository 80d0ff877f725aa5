"""The child side of a kit worker: import the role, say ready, answer one JSON line per request until stdin closes.

Wire protocol (one JSON object per line; the pipe is the process's original stdout, and anything a library prints
goes to stderr instead, so it can never corrupt an answer):

- first line: ``{"ready": true, "pid": n, "start_s": s, "info": {...}}`` (``info``: the role's start hook's dict) or
  ``{"ready": false, "error": "...", "type": "..."}`` and exit code 3;
- request: ``{"id": n, "message": {...}}``;
- answer: ``{"id": n, "reply": {...}}``; a streaming role (a generator) sends ``{"id": n, "part": {...}}`` per item,
  then ``{"id": n, "end": true}``; an exception the role let out: ``{"id": n, "failed": {"type", "message"}}``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

#: The pipe to the parent (set by :func:`main`); a role never needs it (its return value is its answer).
PROTOCOL: IO[str] | None = None
#: Exit code of a child whose role could not start.
START_FAILED = 3


def resolve(target: str) -> Callable[..., Any]:
    """The function a ``"package.module:function"`` target names (ImportError/AttributeError/ValueError if none)."""
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"a worker target is 'package.module:function', not {target!r}")
    fn = getattr(importlib.import_module(module), name)
    if not callable(fn):
        raise TypeError(f"{target} is not callable")
    return fn  # type: ignore[no-any-return]


def one_line(e: BaseException) -> str:
    """An exception as one short line (its first line, spaces collapsed, at most 300 characters)."""
    first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
    return " ".join(first.split())[:300] or type(e).__name__


def say(message: dict[str, Any]) -> None:
    """Write one line to the parent."""
    assert PROTOCOL is not None
    PROTOCOL.write(json.dumps(message, default=str) + "\n")
    PROTOCOL.flush()


def _answer(fn: Callable[..., Any], ident: Any, message: Any) -> None:
    try:
        if not isinstance(message, dict):
            raise TypeError(f"a request's message is a JSON object, not {type(message).__name__}")
        result = fn(message)
        if isinstance(result, dict):
            say({"id": ident, "reply": result})
            return
        if not isinstance(result, Iterator):
            raise TypeError(f"a role answers a dict or yields dicts, not {type(result).__name__}")
        for part in result:
            if not isinstance(part, dict):
                raise TypeError(f"a streaming role yields dicts, not {type(part).__name__}")
            say({"id": ident, "part": part})
        say({"id": ident, "end": True})
    except Exception as e:  # noqa: BLE001 - the role's error goes back to the parent as data; the child stays up
        say({"id": ident, "failed": {"type": type(e).__name__, "message": one_line(e)}})


def main(argv: list[str]) -> int:
    """Run the role named in ``argv`` (``TARGET [--nice N]``) until stdin closes."""
    global PROTOCOL
    t0 = time.perf_counter()
    PROTOCOL = os.fdopen(os.dup(1), "w")  # the pipe to the parent; fd 1 now goes to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    target = argv[0] if argv else ""
    if "--nice" in argv:
        try:
            os.nice(int(argv[argv.index("--nice") + 1]))
        except OSError:  # not allowed here: same priority as the parent
            pass
    try:
        fn = resolve(target)
        start = getattr(fn, "worker_start", None)
        info = start() if start is not None else {}
    except Exception as e:  # noqa: BLE001 - no library here: one line, not a traceback
        say({"ready": False, "error": one_line(e), "type": type(e).__name__})
        return START_FAILED
    say({"ready": True, "pid": os.getpid(), "start_s": time.perf_counter() - t0, "info": info or {}})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            ident, message = request.get("id"), request.get("message")
        except (ValueError, AttributeError) as e:
            say({"id": None, "failed": {"type": type(e).__name__, "message": f"not a request line: {one_line(e)}"}})
            continue
        _answer(fn, ident, message)
    return 0
