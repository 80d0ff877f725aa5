"""Tiny roles that test the worker seam (:mod:`cudnn_lab.gpu.workers`) without a GPU or cuDNN: an echo, a crash
(exit code or SIGKILL), a sleep, garbage on the answer pipe, a stream, a start that fails. Also used by the
plan-build pool's CPU tests (helpers that die at start, hang, or list other plans)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import child
from .claims import claim_owner, claimed
from .process import role


def echo(message: dict[str, Any]) -> dict[str, Any]:
    """The message back, with this process's id, niceness and the environment variable ``message["env"]``."""
    print("a library's chatter goes to stderr, not to the answer pipe")  # the point: it goes to stderr
    var = message.get("env")
    return {"echo": message, "pid": os.getpid(), "nice": os.nice(0),
            "env": os.environ.get(str(var)) if var else None}


def crash(message: dict[str, Any]) -> dict[str, Any]:
    """Die answering: ``os._exit(message["code"])`` (default 7), or SIGKILL itself with ``"signal": true``. With a
    ``"once"`` file path it dies only where the file does not exist yet (creating it), and echoes otherwise."""
    once = message.get("once")
    if once and Path(once).exists():
        return {"survived": True, "pid": os.getpid()}
    if once:
        Path(once).write_text("crashed once\n")
    if message.get("signal"):
        os.kill(os.getpid(), signal.SIGKILL)
    os._exit(int(message.get("code", 7)))


def sleep(message: dict[str, Any]) -> dict[str, Any]:
    """Sleep ``message["s"]`` seconds (default 600: a hung worker), then answer."""
    time.sleep(float(message.get("s", 600)))
    return {"slept": True}


def garbage(message: dict[str, Any]) -> dict[str, Any]:
    """Write a line that is not JSON to the answer pipe (as a broken library could), then answer."""
    assert child.PROTOCOL is not None
    child.PROTOCOL.write("this is not json\n")
    child.PROTOCOL.flush()
    return {"after": "garbage"}


def count(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Stream ``message["n"]`` parts."""
    for i in range(int(message.get("n", 3))):
        yield {"i": i}


def raises(message: dict[str, Any]) -> dict[str, Any]:
    """A role that lets an exception out (the child stays up)."""
    raise KeyError(message.get("key", "missing"))


def _cannot_start() -> dict[str, Any]:
    raise RuntimeError("no such library here (a test)")


@role(start=_cannot_start)
def unstartable(message: dict[str, Any]) -> dict[str, Any]:
    """A role whose start hook fails: the ready line says why."""
    return {}


def _exit_at_start() -> dict[str, Any]:
    os._exit(3)


@role(start=_exit_at_start)
def dies_at_start(message: dict[str, Any]) -> dict[str, Any]:
    """A role whose process ends (exit code 3) before its ready line."""
    return {}


def _slow_start() -> dict[str, Any]:
    time.sleep(float(os.environ.get("CUDNN_LAB_SELFTEST_START_S", "60")))
    return {}


@role(start=_slow_start)
def slow_start(message: dict[str, Any]) -> dict[str, Any]:
    """A role whose ready line comes only after ``CUDNN_LAB_SELFTEST_START_S`` seconds (a helper still starting)."""
    return {}


def other_plans(message: dict[str, Any]) -> Iterator[dict[str, Any]] | dict[str, Any]:
    """A plan-build helper that lists plans no run has (the pool leaves it out)."""
    if message.get("cmd") == "propose":
        return {"plans": ["other0", "other1"]}
    return iter([{"plans": ["other0", "other1"], "share": []}])


def large(message: dict[str, Any]) -> dict[str, Any]:
    """An answer of ``message["mb"]`` megabytes (a recorded run's size), to check long lines arrive whole."""
    return {"blob": "x" * int(float(message.get("mb", 8)) * 2**20)}


#: The plans :func:`takes_plans` lists (the parallel-build CPU tests' list).
TAKES_PLANS = ["eng0", "eng4_k24=27", "eng7", "eng8"]


def takes_plans(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A plan-build helper that takes plans from the run's claims folder as the real role does
    (workers/claims.py) and 'builds' each at once, except that slot 0's first plan is held until another helper
    has taken the last plan (at most 30 s): with round-robin shares that plan would be slot 0's own, held up. The
    other slots start taking once slot 0 has taken its first."""
    folder, slot, leave = str(message["claims"]), int(message.get("slot") or 0), int(message.get("leave") or 0)
    rest = TAKES_PLANS[leave:]
    yield {"plans": TAKES_PLANS, "share": rest[slot:slot + 1]}
    if slot:  # slot 0 takes its own first (a helper that starts late may find its first taken: the tests pin slots)
        _until_taken(folder, 0)
    for i in claimed(folder, len(rest), slot):
        if slot == 0 and i == 0:
            _until_taken(folder, len(rest) - 1)
        yield {"plan": rest[i], "status": "stored", "build_ms": 1.0}


def _until_taken(folder: str, index: int, seconds: float = 30.0) -> None:
    """Wait until some helper has taken plan ``index`` of the claims folder (at most ``seconds``)."""
    end = time.monotonic() + seconds
    while claim_owner(folder, index) is None and time.monotonic() < end:
        time.sleep(0.02)
