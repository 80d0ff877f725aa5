"""The plan cache on disk (gpu/cache.py PlanStore) and where caches live (cache_dir.py): faults, limits, two
processes. Real bytes in real files; serializing a real cuDNN plan is in tests/gpu/test_cache_gpu.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from cudnn_lab import cache_dir
from cudnn_lab.cli import main
from cudnn_lab.gpu.cache import MAGIC, PlanStore, graph_key, identity, plan_store


@pytest.fixture(autouse=True)
def cache_root(temp_cache: Path) -> Path:
    return temp_cache


def ident(plan: str = "eng4_k24=27", gpu: str = "NVIDIA H100 80GB HBM3", backend: str = "91900") -> dict[str, str]:
    g = graph_key({"op": "matmul", "m": 64}, {"nodes": [{"name": "mm"}]})
    return identity(g, plan, gpu, "9.0", backend, "1.32.0")


BLOB = bytes(range(256)) * 11  # 2.8 KB, like a GEMM plan


def test_root_follows_the_environment(cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_dir.cache_root() == cache_root
    monkeypatch.delenv(cache_dir.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_root / "xdg"))
    assert cache_dir.cache_root() == cache_root / "xdg" / "cudnn_lab"


def test_an_entry_round_trips_with_its_meta(cache_root: Path) -> None:
    store = PlanStore()
    assert store.folder == cache_root / "plans"
    assert store.put(ident(), BLOB, {"uids": {"a": 1, "b": 2}})
    blob, meta = store.get(ident())
    assert blob == BLOB and meta == {"uids": {"a": 1, "b": 2}}
    assert store.counts["stored"] == 1 and store.counts["hits"] == 1
    assert store.path(ident()).read_bytes().startswith(MAGIC)


def test_any_part_of_the_identity_changing_is_a_miss() -> None:
    store = PlanStore()
    store.put(ident(), BLOB)
    for other in (ident(plan="eng4_k24=28"), ident(gpu="NVIDIA H200"), ident(backend="92000")):
        assert store.get(other) is None
    g2 = graph_key({"op": "matmul", "m": 65}, {"nodes": [{"name": "mm"}]})
    assert store.get(identity(g2, "eng4_k24=27", "NVIDIA H100 80GB HBM3", "9.0", "91900", "1.32.0")) is None
    assert store.get(ident()) is not None


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "garbage", "header_only", "long_header"])
def test_a_damaged_entry_is_ignored_and_removed(damage: str) -> None:
    store = PlanStore()
    store.put(ident(), BLOB)
    path = store.path(ident())
    data = path.read_bytes()
    damaged = {"truncated": data[:-100], "flipped": data[:-1] + bytes([data[-1] ^ 0xFF]), "empty": b"",
               "garbage": os.urandom(len(data)), "header_only": data[:len(MAGIC) + 4],
               "long_header": MAGIC + (2**31).to_bytes(4, "little") + b"{}"}[damage]
    path.write_bytes(damaged)
    assert store.get(ident()) is None
    assert store.counts["ignored"] == 1 and not path.exists()
    assert store.put(ident(), BLOB) and store.get(ident())[0] == BLOB  # rebuilt and stored again


def test_a_foreign_entry_under_this_key_is_ignored() -> None:
    # Another GPU's entry copied over this one's file: its header names another identity, so it is never used.
    store = PlanStore()
    foreign = ident(gpu="NVIDIA A100-SXM4-80GB")
    store.put(foreign, b"A100 plan")
    store.path(ident()).parent.mkdir(parents=True, exist_ok=True)
    store.path(foreign).replace(store.path(ident()))
    assert store.get(ident()) is None and store.counts["ignored"] == 1


def test_the_folder_is_trimmed_least_recently_used_first() -> None:
    store = PlanStore(max_bytes=10_000)
    idents = [ident(plan=f"eng{i}") for i in range(8)]
    for i, it in enumerate(idents):
        store.put(it, BLOB)
        if store.path(it).exists():  # an older mtime for each earlier write (the clock may not move between them)
            os.utime(store.path(it), (1_000_000 + i, 1_000_000 + i))
        if i == 1:
            store.get(idents[0])  # a read makes entry 0 recent again
            os.utime(store.path(idents[0]), (2_000_000, 2_000_000))
    _, size = cache_dir.folder_info(store.folder)
    assert size <= 10_000
    assert store.get(idents[-1]) is not None and store.get(idents[0]) is not None
    assert store.get(idents[1]) is None  # the oldest untouched entry went first


def test_an_unwritable_folder_switches_the_cache_off_with_one_warning(cache_root: Path) -> None:
    cache_root.parent.mkdir(parents=True, exist_ok=True)
    cache_root.write_text("a file where the cache folder should be")
    store = PlanStore()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not store.put(ident(), BLOB)
        assert not store.put(ident(plan="other"), BLOB)
        assert store.get(ident()) is None
    assert [str(w.message).count("switched off") for w in caught] == [1]
    assert not cache_dir.cache_enabled() and "cannot write" in cache_dir.disabled_reason()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_switches_the_cache_off(cache_root: Path) -> None:
    (cache_root / "plans").mkdir(parents=True)
    os.chmod(cache_root / "plans", 0o500)
    try:
        with pytest.warns(RuntimeWarning, match="switched off"):
            assert not PlanStore().put(ident(), BLOB)
    finally:
        os.chmod(cache_root / "plans", 0o700)


def test_the_environment_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch, cache_root: Path) -> None:
    monkeypatch.setenv(cache_dir.ENV_OFF, "1")
    store = PlanStore()
    assert not store.put(ident(), BLOB) and store.get(ident()) is None
    assert not (cache_root / "plans").exists()
    assert cache_dir.disabled_reason() == f"{cache_dir.ENV_OFF} is set"
    monkeypatch.setenv(cache_dir.ENV_OFF, "0")
    assert cache_dir.cache_enabled()


WRITER = textwrap.dedent("""
    import sys
    from cudnn_lab.gpu.cache import PlanStore, graph_key, identity
    who, rounds = sys.argv[1], int(sys.argv[2])
    store = PlanStore()
    g = graph_key({"op": "matmul"}, {})
    for i in range(rounds):
        shared = identity(g, f"shared{i % 5}", "GPU", "9.0", "91900", "1.32.0")
        own = identity(g, f"{who}-{i}", "GPU", "9.0", "91900", "1.32.0")
        assert store.put(shared, bytes([i % 5]) * (20000 + i % 5)), "shared write failed"
        assert store.put(own, who.encode() * 5000 + i.to_bytes(4, "little")), "own write failed"
        got = store.get(shared)
        assert got is not None and got[0] == bytes([i % 5]) * (20000 + i % 5), "read a torn entry"
    print(store.counts["ignored"])
""")


def test_two_processes_filling_the_cache_lose_nothing_and_corrupt_nothing(cache_root: Path) -> None:
    rounds = 60
    env = {**os.environ, cache_dir.ENV_DIR: str(cache_root)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, who, str(rounds)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for who in ("a", "b")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert [out.strip() for out, _ in outs] == ["0", "0"]  # neither ever met a damaged entry
    store = PlanStore()
    g = graph_key({"op": "matmul"}, {})
    for who in ("a", "b"):
        for i in range(rounds):
            got = store.get(identity(g, f"{who}-{i}", "GPU", "9.0", "91900", "1.32.0"))
            assert got is not None and got[0] == who.encode() * 5000 + i.to_bytes(4, "little")
    for k in range(5):
        assert store.get(identity(g, f"shared{k}", "GPU", "9.0", "91900", "1.32.0"))[0] == bytes([k]) * (20000 + k)
    assert not list(store.folder.rglob("*.tmp"))  # no temporary file left behind


def test_the_cache_command_reports_and_clears(cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cudnn_lab.gpu.ceilings import Ceilings, write_cached

    plan_store().put(ident(), BLOB)
    write_cached({"gpu": "NVIDIA H100"}, Ceilings("fp16", 700.0, 3000.0, 8192, 1 << 30).to_dict())
    (cache_root / "ceilings" / "x.json").write_text("{}")  # not the kit's: --clear leaves it and says so
    (cache_root / "keep.txt").write_text("not the kit's")
    assert main(["cache", "--info"]) == 0
    out = capsys.readouterr().out
    assert str(cache_root) in out and "plans: 1 file(s)" in out and "ceilings: 2 file(s)" in out
    assert main(["cache", "--clear"]) == 0
    out = capsys.readouterr().out
    assert "cleared plans: 1 file(s), ceilings: 1 file(s)" in out and "plans: 0 file(s)" in out
    assert f"{cache_root / 'ceilings' / 'x.json'}: not written by the kit" in out and "ceilings: 1 file(s)" in out
    assert not (cache_root / "plans").exists() and (cache_root / "keep.txt").exists()


def test_every_cache_folder_has_its_owners_recognizer() -> None:
    assert set(cache_dir._RECOGNIZERS) == set(cache_dir.FOLDERS)  # gpu.cache, gpu.ceilings registered (imported)
    with pytest.raises(ValueError, match="not one of"):
        cache_dir.register("elsewhere", lambda path, rel, is_dir: None)


def test_the_cache_command_clears_in_a_fresh_process(cache_root: Path) -> None:
    """cache_dir imports no cache above it: the command loads the caches that register what may be removed."""
    plan_store().put(ident(), BLOB)
    code = "import sys; from cudnn_lab.cli import main; sys.exit(main(['cache', '--clear']))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, cache_dir.ENV_DIR: str(cache_root)})
    assert out.returncode == 0, out.stderr
    assert "cleared plans: 1 file(s)" in out.stdout and not (cache_root / "plans").exists()
