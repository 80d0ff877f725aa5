"""The suite's own order (tests/conftest.py): the slowest GPU modules are collected first, so that ``--dist loadfile``
starts them at once rather than leaving one worker to finish them alone."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from conftest import SLOW_FIRST, slow_first

ROOT = Path(__file__).resolve().parent.parent


def test_the_slow_modules_come_first_in_their_order_and_the_rest_keep_theirs() -> None:
    ids = ["tests/a_test.py::t1", f"{SLOW_FIRST[2]}::x", "tests/b_test.py::t2", f"{SLOW_FIRST[0]}::y",
           f"{SLOW_FIRST[0]}::z", "tests/a_test.py::t3"]
    got = [i.nodeid for i in slow_first([SimpleNamespace(nodeid=n) for n in ids])]
    assert got == [f"{SLOW_FIRST[0]}::y", f"{SLOW_FIRST[0]}::z", f"{SLOW_FIRST[2]}::x", "tests/a_test.py::t1",
                   "tests/b_test.py::t2", "tests/a_test.py::t3"]


def test_every_slow_module_named_exists() -> None:
    assert all((ROOT / path).is_file() for path in SLOW_FIRST)  # a renamed module would silently lose its place


def test_this_session_collected_the_slow_modules_first(request) -> None:
    slow = [item.nodeid.split("::", 1)[0] in SLOW_FIRST for item in request.session.items]
    assert slow == sorted(slow, reverse=True)  # every test of a slow module before any other
