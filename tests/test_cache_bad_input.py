"""Bad entries in the three disk caches (plans, heuristics' answers, ceilings) and `cudnn-lab cache` on bad folders.

Each cache is reached as the other cache tests reach it, without a GPU: real entries written and read back through
PlanStore, heuristics_cache.remember/recall and ceilings.load_or_measure (the measurement a plain function). A FIFO,
a folder, a link, a nesting bomb, a 600 MB sparse file, a foreign file or a record with meaningless values in an
entry's place is skipped without blocking or reading it whole, set aside, and rebuilt; `--clear` removes only what
the kit wrote and says exactly what it removed and left; `--info` says when the root cannot be used.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cudnn_lab import cache_dir
from cudnn_lab.cli import main
from cudnn_lab.errors import DataError
from cudnn_lab.gpu import heuristics_cache as hc
from cudnn_lab.gpu.cache import MAGIC, PlanStore, identity, plan_store
from cudnn_lab.gpu.ceilings import Ceilings, _path, load_or_measure, read_cached, write_cached
from cudnn_lab.gpu.plans import PlanEntry
from cudnn_lab.specs import MatmulSpec

HUGE = 600 * 2**20  # a sparse file: no disk, but reading it whole would take 600 MB of memory
BLOB = bytes(range(256)) * 11
INFO = {"gpu": "NVIDIA H200", "compute_capability": "9.0", "cudnn_backend": 91900, "cudnn_frontend": "1.32.0"}
GRAPH_KEY = "ab" * 32
SPEC = MatmulSpec(m=64, n=64, k=64, dtype="bf16")
CEIL_IDENT = {"gpu": "NVIDIA H100 80GB HBM3", "cc": "9.0", "uuid": "GPU-1234", "dtype": "fp16", "size": 8192,
              "copy_mib": 1024}
RECORD = Ceilings(dtype="fp16", tflops=712.5, gbps=2950.0, matmul_size=8192, copy_bytes=1 << 30, tflops_iqr=4.1,
                  gbps_iqr=12.0, samples=10, measured="2026-11-22T10:00:00+00:00").to_dict()


@pytest.fixture(autouse=True)
def cache_root(temp_cache: Path) -> Path:
    return temp_cache


# ------------------------------------------------------------------------------------------------ the three caches

def plan_ident(plan: str = "eng4_k24=27") -> dict[str, str]:
    return identity(GRAPH_KEY, plan, "NVIDIA H100 80GB HBM3", "9.0", "91900", "1.32.0")


def heur_ident() -> dict[str, str]:
    return hc.proposals_ident(SPEC, {"nodes": [{"name": "mm"}]}, "proposals", ("A",), INFO)


def heur_entries() -> list[PlanEntry]:
    return [PlanEntry(name="eng0", engine_id=0, knobs={}, graph=None, index=0, ranks={"A": 0})]


class Plans:
    """The plan cache: one entry per identity."""

    name = "plans"

    def path(self) -> Path:
        return plan_store().path(plan_ident())

    def write(self) -> bool:
        return plan_store().put(plan_ident(), BLOB, {"uids": {"x": 1}})

    def read(self) -> Any:
        found = plan_store().get(plan_ident())
        return None if found is None else found[0]

    def good(self, value: Any) -> bool:
        return value == BLOB

    def bomb(self) -> bytes:
        head = b"[" * 200_000 + b"]" * 200_000
        return MAGIC + len(head).to_bytes(4, "little") + head

    def head(self) -> bytes:
        return MAGIC


class Heuristics:
    """The heuristics' answers: proposals recalled only when every plan they name is in the plan cache."""

    name = "heuristics"

    def path(self) -> Path:
        return hc.heuristics_store().path(heur_ident())

    def write(self) -> bool:
        plan_store().put(identity(GRAPH_KEY, "eng0", INFO["gpu"], INFO["compute_capability"], INFO["cudnn_backend"],
                                  INFO["cudnn_frontend"]), BLOB)
        return hc.remember(heur_ident(), heur_entries(), [GRAPH_KEY])

    def read(self) -> Any:
        return hc.recall(heur_ident(), INFO)

    def good(self, value: Any) -> bool:
        return value is not None and [e["name"] for e in value] == ["eng0"]

    def bomb(self) -> bytes:  # a whole entry (magic, header, digest all right) whose JSON nests 100000 deep
        return PlanStore.encode(heur_ident(), b"[" * 100_000 + b"]" * 100_000, {})

    def head(self) -> bytes:
        return MAGIC


class CeilingsCache:
    """The ceilings: one JSON file per GPU, dtype and size; the measurement a plain function here."""

    name = "ceilings"

    def __init__(self) -> None:
        self.measured = 0

    def path(self) -> Path:
        return _path(CEIL_IDENT)

    def write(self) -> bool:
        return write_cached(CEIL_IDENT, RECORD)

    def read(self) -> Any:
        return read_cached(CEIL_IDENT)

    def good(self, value: Any) -> bool:
        return value == RECORD

    def bomb(self) -> bytes:
        deep = "[" * 30_000 + "]" * 30_000  # under the 64 KiB bound: refused for its nesting, not its size
        return f'{{"format": 1, "identity": {json.dumps(CEIL_IDENT)}, "record": {{"x": {deep}}}}}'.encode()

    def head(self) -> bytes:
        return b'{"format": 1, "identity": {}, "record": {'


CACHES = [Plans, Heuristics, CeilingsCache]


@pytest.fixture(params=CACHES, ids=lambda c: c.name)
def cache(request: pytest.FixtureRequest) -> Any:
    return request.param()


def in_time(read: Callable[[], Any], seconds: float = 20.0) -> Any:
    """``read()``'s value, failing (not hanging) if it does not return within ``seconds``: a FIFO opened for
    reading without O_NONBLOCK would wait for a writer for ever."""
    out: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: out.setdefault("value", read()), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"reading the cache entry blocked for more than {seconds} s")
    return out.get("value")


def place(path: Path, make: Callable[[Path], None]) -> None:
    """Put something in an entry's place (its folder made first)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        path.unlink()
    make(path)


def assert_rebuilt(cache: Any) -> None:
    """The bad entry is gone from its place, and the cache writes and reads the entry again."""
    assert not os.path.lexists(cache.path()) or cache.path().is_file()
    assert cache.write(), "the cache could not write the entry again"
    assert cache.good(cache.read())


def test_each_cache_round_trips(cache: Any) -> None:
    assert cache.read() is None
    assert cache.write()
    assert cache.good(cache.read())


def test_a_fifo_entry_is_skipped_without_blocking_and_rebuilt(cache: Any) -> None:
    place(cache.path(), os.mkfifo)
    assert in_time(cache.read) is None
    assert not os.path.lexists(cache.path())  # the cache owns the name: the FIFO was removed
    assert_rebuilt(cache)


def test_a_folder_in_an_entrys_place_is_set_aside_and_rebuilt(cache: Any) -> None:
    place(cache.path(), lambda p: (p.mkdir(), (p / "inside.txt").write_text("kept")))
    assert cache.read() is None
    aside = [p for p in cache.path().parent.iterdir() if p.name.startswith(cache.path().name + ".aside-")]
    assert len(aside) == 1 and (aside[0] / "inside.txt").read_text() == "kept"  # set aside, not deleted
    assert_rebuilt(cache)


def test_a_folder_written_over_before_any_read_does_not_switch_the_cache_off(cache: Any) -> None:
    place(cache.path(), lambda p: p.mkdir())
    assert cache.write() and cache.path().is_file() and cache.good(cache.read())
    assert cache_dir.cache_enabled()


def test_a_link_in_an_entrys_place_is_removed_and_its_target_kept(cache: Any, tmp_path: Path) -> None:
    assert cache.write()
    outside = tmp_path / "outside"
    outside.write_bytes(cache.path().read_bytes())  # even a good entry's bytes: a link is never the kit's
    place(cache.path(), lambda p: p.symlink_to(outside))
    assert cache.read() is None
    assert not os.path.lexists(cache.path()) and outside.exists()
    assert_rebuilt(cache)


def test_a_nesting_bomb_is_refused_and_rebuilt(cache: Any) -> None:
    place(cache.path(), lambda p: p.write_bytes(cache.bomb()))
    assert cache.read() is None  # no RecursionError
    assert not cache.path().exists()
    assert_rebuilt(cache)


@pytest.mark.parametrize("start", ["zeros", "header"])
def test_a_huge_sparse_entry_is_skipped_without_reading_it(cache: Any, start: str) -> None:
    def make(p: Path) -> None:
        with p.open("wb") as f:
            f.write(cache.head() if start == "header" else b"")
            f.truncate(HUGE)

    place(cache.path(), make)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        assert cache.read() is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"{peak / 2**20:.0f} MiB allocated to skip a {HUGE >> 20} MiB entry"
    assert time.perf_counter() - t0 < 20.0
    assert not cache.path().exists()
    assert_rebuilt(cache)


@pytest.mark.parametrize("body", [b"", b"\x00" * 100, b"plain text, not the kit's", b"\xff\xfe{}"])
def test_a_foreign_entry_is_removed_and_rebuilt(cache: Any, body: bytes) -> None:
    place(cache.path(), lambda p: p.write_bytes(body))
    assert cache.read() is None and not cache.path().exists()
    assert_rebuilt(cache)


def test_an_entry_that_cannot_be_set_aside_warns_once(cache: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    place(cache.path(), os.mkfifo)
    real_unlink = os.unlink

    def refuse(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path) == cache.path():
            raise PermissionError(13, "Permission denied")
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refuse)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert in_time(cache.read) is None
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and str(cache.path()) in messages[0] and "Permission denied" in messages[0]
    assert cache_dir.cache_enabled()


# ------------------------------------------------------------------------------------------------ values by meaning

@pytest.mark.parametrize(("field", "value", "said"), [
    ("tflops", float("inf"), "finite"), ("gbps", 0.0, "more than 0"), ("tflops", -5.0, "at least"),
    ("tflops", "712", "number"), ("tflops", True, "number"), ("tflops_iqr", "4.1", "number"),
    ("gbps_iqr", -1.0, "at least"), ("tflops_iqr", float("nan"), "finite"), ("samples", -1, "whole number"),
    ("samples", 2.5, "whole number"), ("samples", True, "whole number"), ("matmul_size", 8192.0, "whole number"),
    ("copy_bytes", 0, "whole number"), ("measured", "yesterday", "ISO"), ("dtype", "", "dtype"),
    ("dtype", None, "dtype"),
])
def test_a_ceilings_record_with_a_meaningless_value_is_refused(field: str, value: Any, said: str) -> None:
    bad = {**RECORD, field: value}
    assert Ceilings.from_dict(bad) is None
    with pytest.raises(DataError, match=f"field {field}: .*{said}"):
        Ceilings.check(bad, "test")


@pytest.mark.parametrize(("field", "text"), [("tflops", "1e999"), ("gbps", "NaN"), ("tflops_iqr", "Infinity"),
                                             ("tflops_iqr", '"wide"'), ("samples", "-3"), ("tflops", "0")])
def test_a_ceilings_file_with_a_meaningless_value_is_measured_again(field: str, text: str) -> None:
    write_cached(CEIL_IDENT, RECORD)
    doc = _path(CEIL_IDENT).read_text()
    needle = f'"{field}": {json.dumps(RECORD[field])}'
    assert needle in doc
    _path(CEIL_IDENT).write_text(doc.replace(needle, f'"{field}": {text}'))
    calls: list[int] = []

    def measure() -> dict:
        calls.append(1)
        return RECORD

    assert load_or_measure(CEIL_IDENT, measure, check=lambda r: Ceilings.from_dict(r) is not None) == (RECORD, False)
    assert calls == [1] and read_cached(CEIL_IDENT) == RECORD  # replaced by the new measurement


def test_a_good_ceilings_record_with_unknown_keys_is_used() -> None:
    c = Ceilings.check({**RECORD, "kernel": "torch._scaled_mm (use_fast_accum=True)", "samples": None}, "test")
    assert c.tflops == 712.5 and c.samples is None


@pytest.mark.parametrize("change", [{"engine_id": -1}, {"engine_id": True}, {"ranks": {"A": True}},
                                    {"ranks": {"A": -2}}, {"knobs": {"k24": 1.5}}, {"name": ""},
                                    {"graph_key": "../../etc"}, {"behavior_notes": [3]}])
def test_kept_proposals_with_a_meaningless_value_are_removed(change: dict) -> None:
    Heuristics().write()
    record = {"name": "eng0", "engine_id": 0, "knobs": {}, "ranks": {"A": 0}, "behavior_notes": [],
              "graph_key": GRAPH_KEY} | change
    store = hc.heuristics_store()
    assert store.put(heur_ident(), json.dumps({"entries": [record]}).encode())
    assert hc.recall(heur_ident(), INFO) is None and not store.path(heur_ident()).exists()


def test_kept_proposals_naming_a_plan_twice_are_removed() -> None:
    Heuristics().write()
    record = {"name": "eng0", "engine_id": 0, "knobs": {}, "ranks": {"A": 0}, "behavior_notes": [],
              "graph_key": GRAPH_KEY}
    hc.heuristics_store().put(heur_ident(), json.dumps({"entries": [record, record]}).encode())
    assert hc.recall(heur_ident(), INFO) is None


def test_an_entry_too_big_to_be_read_is_not_written() -> None:
    store = PlanStore(max_entry_bytes=4096)
    assert not store.put(plan_ident(), b"x" * 5000) and not store.path(plan_ident()).exists()
    assert store.put(plan_ident(), b"x" * 1000) and store.get(plan_ident())[0] == b"x" * 1000


# ------------------------------------------------------------------------------------------------ cudnn-lab cache

def fill() -> None:
    """One entry in each cache, as the kit writes them."""
    for c in CACHES:
        assert c().write()


def cache_cmd(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["cache", *args])
    return code, capsys.readouterr().out


def test_clear_removes_only_the_kits_entries_and_says_what_it_left(cache_root: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    fill()
    hh = plan_store().path(plan_ident()).parent
    foreign = {
        cache_root / "plans" / "notes.txt": b"mine",
        hh / ("0" * 64 + ".plan"): b"named like an entry, not one",  # the name alone is not enough
        cache_root / "ceilings" / "mine.json": b'{"format": 1, "identity": {}, "record": {}}',
        cache_root / "heuristics" / "zz" / "data.bin": b"mine too",
        cache_root / "keep.txt": b"beside the caches",
    }
    for path, data in foreign.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    code, out = cache_cmd(capsys, "--clear")
    assert code == 0
    # plans: the plan and the heuristics' plan blob; heuristics: the proposals; ceilings: one file
    assert "cleared plans: 2 file(s), ceilings: 1 file(s), heuristics: 1 file(s)" in out
    assert "left (not the kit's): 4 path(s)" in out
    for path in list(foreign)[:3]:
        assert path.exists() and f"{path}: not written by the kit" in out
    assert f"{cache_root / 'heuristics' / 'zz'}: not written by the kit (a folder the cache never makes)" in out
    assert all(p.exists() for p in foreign)
    assert not plan_store().path(plan_ident()).exists() and not _path(CEIL_IDENT).exists()
    assert not hc.heuristics_store().path(heur_ident()).exists()
    assert "could not remove" not in out
    assert sorted(p.name for p in (cache_root / "plans").rglob("*") if p.is_file()) == ["0" * 64 + ".plan",
                                                                                       "notes.txt"]


def test_clear_never_follows_a_link_out_of_the_root(cache_root: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    fill()
    shutil.move(str(cache_root / "plans"), elsewhere)  # a plans folder kept on another disk, linked in
    (cache_root / "plans").symlink_to(elsewhere)
    outside_entry = next(p for p in elsewhere.rglob("*.plan"))
    (cache_root / "heuristics" / "ab").mkdir(parents=True, exist_ok=True)
    link = cache_root / "heuristics" / "ab" / ("ab" * 32 + ".plan")
    link.symlink_to(outside_entry)  # named like an entry, pointing out of the root
    code, out = cache_cmd(capsys, "--clear")
    assert code == 0
    assert "cleared plans: 0 file(s), ceilings: 1 file(s), heuristics: 1 file(s)" in out
    assert f"{cache_root / 'plans'}: a symbolic link to {elsewhere}: not followed" in out
    assert f"{link}: a symbolic link to {outside_entry}: not followed" in out
    assert outside_entry.exists() and len(list(elsewhere.rglob("*.plan"))) == 2 and os.path.islink(link)
    _, info = cache_cmd(capsys, "--info")
    assert "plans: 0 file(s), 0.0 MiB (a symbolic link to" in info


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` read-only for real: its mode for a user, the immutable attribute for root (who ignores modes)."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o500)
        try:
            yield
        finally:
            os.chmod(folder, 0o700)
        return
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("running as root without chattr +i: a folder cannot be made read-only for this user")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_clear_in_a_read_only_folder_says_what_it_could_not_remove(cache_root: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    fill()
    entry = plan_store().path(plan_ident())
    stuck = sorted(entry.parent.iterdir())
    others = [p for p in entry.parent.parent.rglob("*.plan") if p.parent != entry.parent]
    with read_only(entry.parent):
        code, out = cache_cmd(capsys, "--clear")
    assert code == 1
    assert f"cleared plans: {len(others)} file(s), ceilings: 1 file(s), heuristics: 1 file(s)" in out
    assert f"could not remove: {len(stuck)} path(s)\n  {stuck[0]}: could not be removed (" in out
    assert all(p.exists() for p in stuck) and not any(p.exists() for p in others)
    assert f"plans: {len(stuck)} file(s)" in out  # the --info after it counts what is really there


@pytest.mark.parametrize("what", ["file", "fifo"])
def test_info_says_when_the_root_is_not_a_folder(cache_root: Path, capsys: pytest.CaptureFixture[str],
                                                 what: str) -> None:
    cache_root.parent.mkdir(parents=True, exist_ok=True)
    if what == "file":
        cache_root.write_text("a file where the cache folder should be")
    else:
        os.mkfifo(cache_root)
    code, out = cache_cmd(capsys, "--info")
    kind = "a regular file" if what == "file" else "a FIFO"
    assert code == 0 and f"(unusable: it is {kind}" in out and "(on;" not in out
    code, out = cache_cmd(capsys, "--clear")
    assert code == 0 and "nothing to clear (it is" in out and cache_root.exists()


def test_info_says_when_the_root_cannot_be_made(cache_root: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cache_root.parent.mkdir(parents=True, exist_ok=True)
    (cache_root.parent / "blocker").write_text("a file")
    monkeypatch.setenv(cache_dir.ENV_DIR, str(cache_root.parent / "blocker" / "cache"))
    _, out = cache_cmd(capsys, "--info")
    assert f"unusable: it cannot be made: {cache_root.parent / 'blocker'} is not a folder" in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes any folder")
def test_info_says_when_the_root_is_unreadable(cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache_root.mkdir(parents=True)
    os.chmod(cache_root, 0)
    try:
        _, out = cache_cmd(capsys, "--info")
    finally:
        os.chmod(cache_root, 0o700)
    assert "unusable: it is not readable and writable" in out


def test_info_of_a_missing_root_is_on(cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cache_cmd(capsys, "--info")
    assert code == 0 and f"cache: {cache_root} (on;" in out and not cache_root.exists()
