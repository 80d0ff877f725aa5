"""On the GPU: cuDNN's kernel cache as a run option (issue 27). Plans built with it run and agree with the
reference; the heuristics' order without it is recorded and is the order a run without it has; the cache is kept on
disk (where the frontend serializes it) and loaded by a new process's cache; a corrupt kernel cache file is ignored
with one warning and the run loses nothing; a sweep over one dimension uses it."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu import cache as gcache

pytestmark = pytest.mark.gpu

GEMM = cl.MatmulSpec(m=512, n=768, k=512, dtype="bf16")
QUICK = {"baselines": False, "roofline": False, "kernels": False, "notes": False, "time_cap_s": 0.05}


@pytest.fixture
def fresh(temp_cache: Path) -> Path:
    """A new cache root, and no kernel cache kept in this process yet."""
    gcache._KERNEL_CACHES.clear()
    gcache.KernelCacheFile._warned.clear()
    yield temp_cache
    gcache._KERNEL_CACHES.clear()


def _order(result: cl.RunResult) -> list[str]:
    frame = result.plans.sort_values("heuristic_rank")
    return [str(p) for p in frame["plan"]]


def test_plans_built_with_the_kernel_cache_run_and_agree(fresh: Path) -> None:
    r = cl.run(GEMM, seed=21, kernel_cache=True, **QUICK)
    kc = r.settings["kernel_cache_run"]
    assert kc["used"] is True and r.settings["kernel_cache"] is True
    ok = r.plans[r.plans["status"] == "ok"]
    assert len(ok) >= 1 and ok["pass_cudnn"].astype(bool).all()
    assert any("kernel cache" in w for w in r.warnings)
    assert "without it the pick would have been" in r.summary()
    # the order without the cache is the heuristics' own: the order a run without it lists
    plain = cl.run(GEMM, seed=21, kernel_cache=False, **QUICK)
    assert kc["order_without"] == _order(plain)
    assert kc["pick_without"] in kc["order_without"]
    assert "kernel_cache_run" not in plain.settings
    both = set(ok["plan"]) & set(plain.ok["plan"])
    assert both, "the two runs share no plan that ran"


def test_the_cache_is_kept_on_disk_or_says_why(fresh: Path) -> None:
    r = cl.run(GEMM, seed=22, kernel_cache=True, **QUICK)
    kc = r.settings["kernel_cache_run"]
    info = r.device
    path = Path(kc["file"])
    if kc["kept_on_disk"]:
        assert path.is_file() and path.is_relative_to(fresh / "kernels")
        loaded = gcache.KernelCache(info)  # what a new process would load
        assert loaded.source == "disk" and loaded.file.counts["read"] == 1 and loaded.file.counts["ignored"] == 0
    else:
        assert kc["why_not_kept"] and "in this process only" in kc.get("kept", "")


def test_a_corrupt_kernel_cache_file_is_ignored_with_one_warning(fresh: Path) -> None:
    first = cl.run(GEMM, seed=23, kernel_cache=True, **QUICK)
    path = Path(first.settings["kernel_cache_run"]["file"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gcache.MAGIC + b"\x10\x00\x00\x00{not json at all")
    gcache._KERNEL_CACHES.clear()  # as a new process would: the file is read again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = cl.run(GEMM, seed=24, kernel_cache=True, **QUICK)
        cl.run(GEMM, seed=25, kernel_cache=True, **QUICK)
    said = [w for w in caught if "kernel cache file" in str(w.message)]
    assert len(said) == 1 and issubclass(said[0].category, RuntimeWarning)
    assert again.settings["kernel_cache_run"]["source"] == "new"
    ok = again.plans[again.plans["status"] == "ok"]
    assert len(ok) >= 1 and ok["pass_cudnn"].astype(bool).all() and (ok["median_ms"] > 0).all()


def test_a_sweep_over_one_dimension_uses_it(fresh: Path) -> None:
    rows = cl.sweep(GEMM, over={"n": [256, 512]}, plans="heuristic", progress=False, **QUICK)
    assert set(rows["point_status"]) == {"ok"}
    assert len(gcache._KERNEL_CACHES) == 1  # the sweep's points made and used the process's kernel cache
    kc = next(iter(gcache._KERNEL_CACHES.values()))
    assert kc.kept_on_disk is not None or kc.revision() == kc._saved  # it was saved, or nothing new was compiled
