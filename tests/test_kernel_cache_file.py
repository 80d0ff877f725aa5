"""cuDNN's kernel cache on disk (gpu/cache.KernelCacheFile), without a GPU: the serialized text round-trips; a file
that is corrupt, foreign, from another cuDNN, not a regular file or unwritable is never used, says so once, and
leaves the run to go on; `cudnn-lab cache --clear` knows the folder. The text is what the frontend's
``kernel_cache.serialize()`` returns (a string); the cuDNN side is tested on the GPU
(tests/gpu/test_kernel_cache_gpu.py).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from cudnn_lab import cache_dir
from cudnn_lab.gpu.cache import MAGIC, KernelCacheFile, PlanStore, kernel_identity

INFO = {"gpu": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "cudnn_backend": 91900,
        "cudnn_frontend": "1.32.0"}
TEXT = '{"kernels": ["' + "ab" * 500 + '"]}'


@pytest.fixture(autouse=True)
def root(temp_cache: Path) -> Path:
    KernelCacheFile._warned.clear()
    yield temp_cache
    KernelCacheFile._warned.clear()


def written(kf: KernelCacheFile, info: dict = INFO, text: str = TEXT) -> Path:
    assert kf.write(kernel_identity(info), text, {"entries": 3})
    return kf.path(kernel_identity(info))


def test_round_trip_beside_the_plans(root: Path) -> None:
    kf = KernelCacheFile()
    path = written(kf)
    assert path.is_relative_to(root / "kernels") and path.read_bytes().startswith(MAGIC)
    assert KernelCacheFile().read(kernel_identity(INFO)) == TEXT


def test_another_cudnn_or_gpu_has_its_own_file() -> None:
    kf = KernelCacheFile()
    written(kf)
    for change in ({"cudnn_backend": 91400}, {"cudnn_frontend": "1.33.0"}, {"gpu": "NVIDIA H200"},
                   {"compute_capability": "10.0"}):
        other = {**INFO, **change}
        assert kf.path(kernel_identity(other)) != kf.path(kernel_identity(INFO))
        assert kf.read(kernel_identity(other)) is None
    assert kf.read(kernel_identity(INFO)) == TEXT


def bad_entries(path: Path) -> dict[str, bytes]:
    good = path.read_bytes()
    other = PlanStore.encode(kernel_identity({**INFO, "cudnn_backend": 91400}), TEXT.encode(), {})
    return {"truncated": good[:-7], "flipped": good[:-1] + bytes([good[-1] ^ 1]), "foreign": b"not ours at all",
            "from another cuDNN": other, "empty": b"", "magic only": MAGIC,
            "not utf-8": PlanStore.encode(kernel_identity(INFO), b"\xff\xfe\x00", {})}


@pytest.mark.parametrize("kind", ["truncated", "flipped", "foreign", "from another cuDNN", "magic only",
                                  "not utf-8"])
def test_a_bad_file_is_set_aside_with_one_warning(kind: str) -> None:
    kf = KernelCacheFile()
    path = written(kf)
    path.write_bytes(bad_entries(path)[kind])
    with pytest.warns(RuntimeWarning, match="kernel cache file .* was not used") as caught:
        assert kf.read(kernel_identity(INFO)) is None
    assert len(caught) == 1 and not path.exists()  # set aside: the next write makes a good one
    assert kf.counts["ignored"] == 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bad_entries(written(kf))[kind])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second bad file in this process is not warned about again
        assert kf.read(kernel_identity(INFO)) is None
    assert written(kf) and kf.read(kernel_identity(INFO)) == TEXT


def test_a_fifo_or_folder_in_its_place_is_skipped() -> None:
    kf = KernelCacheFile()
    path = written(kf)
    path.unlink()
    os.mkfifo(path)
    with pytest.warns(RuntimeWarning, match="was not used"):
        assert kf.read(kernel_identity(INFO)) is None
    assert not path.exists()
    path.mkdir()
    assert kf.read(kernel_identity(INFO)) is None  # warned once already: quiet
    assert written(kf) and kf.read(kernel_identity(INFO)) == TEXT


def test_a_refused_cache_is_discarded_with_one_warning() -> None:
    kf = KernelCacheFile()
    path = written(kf)
    with pytest.warns(RuntimeWarning, match="cuDNN refused it"):
        kf.discard(kernel_identity(INFO), "cuDNN refused it: bad version")
    assert not path.exists() and kf.read(kernel_identity(INFO)) is None


def test_too_big_is_neither_written_nor_read() -> None:
    kf = KernelCacheFile(max_bytes=1024)
    assert not kf.write(kernel_identity(INFO), "x" * 4096)
    big = KernelCacheFile()
    path = written(big, text="y" * 4096)
    with pytest.warns(RuntimeWarning, match="was not used"):
        assert kf.read(kernel_identity(INFO)) is None
    assert not path.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_folder_switches_the_caches_off_once_and_loses_nothing(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "kernels").mkdir()
    os.chmod(root / "kernels", 0o500)
    try:
        kf = KernelCacheFile()
        with pytest.warns(RuntimeWarning, match="switched off"):
            assert not kf.write(kernel_identity(INFO), TEXT)
        assert not cache_dir.cache_enabled()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not kf.write(kernel_identity(INFO), TEXT) and kf.read(kernel_identity(INFO)) is None
    finally:
        os.chmod(root / "kernels", 0o700)


def test_caches_off_reads_and_writes_nothing(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    monkeypatch.setenv(cache_dir.ENV_OFF, "1")
    kf = KernelCacheFile()
    assert not kf.write(kernel_identity(INFO), TEXT) and kf.read(kernel_identity(INFO)) is None
    assert not (root / "kernels").exists()


def test_clear_removes_kernel_cache_files_only(root: Path) -> None:
    path = written(KernelCacheFile())
    stranger = root / "kernels" / "notes.txt"
    stranger.write_text("mine")
    done = cache_dir.clear()
    assert done.removed["kernels"] == 1 and not path.exists() and stranger.exists()
    assert "kernels" in cache_dir.info()


def test_a_root_that_cannot_be_made_switches_the_caches_off_once(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """(Also as root: a cache root below a regular file can never be made.)"""
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    monkeypatch.setenv(cache_dir.ENV_DIR, str(blocker / "cache"))
    kf = KernelCacheFile()
    with pytest.warns(RuntimeWarning, match="switched off") as caught:
        assert not kf.write(kernel_identity(INFO), TEXT)
    assert len(caught) == 1 and not cache_dir.cache_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not kf.write(kernel_identity(INFO), TEXT) and kf.read(kernel_identity(INFO)) is None
