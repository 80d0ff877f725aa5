"""On the GPU: real plans serialized into the plan cache and loaded back (in this process and in a fresh one),
ceilings kept on disk, repeated runs reusing their measurements, CUPTI timing through cl.run, warm workers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab import cache_dir

pytestmark = pytest.mark.gpu

GEMM = cl.MatmulSpec(m=512, n=512, k=512, dtype="bf16")
CONV = cl.ConvSpec(n=4, c=32, h=14, w=14, k=32, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
QUICK = {"baselines": False, "roofline": False, "time_cap_s": 0.05}


@pytest.fixture
def cache_root(temp_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # every plan that can be serialized is cached, not only slow builds, so the test sees loads for each family
    monkeypatch.setattr("cudnn_lab.gpu.cache.SERIALIZE_MIN_BUILD_MS", 0.0)
    return temp_cache


@pytest.mark.parametrize("spec", [GEMM, CONV], ids=["gemm", "conv"])
def test_cached_plans_load_check_and_time_in_a_new_session(cache_root: Path, spec: cl.Spec) -> None:
    first = cl.run(spec, seed=11, **QUICK)
    stored = first.settings["plan_cache_stats"]["stored"]
    assert stored >= 1 and len(list((cache_root / "plans").rglob("*.plan"))) >= 1
    assert not first.plans["from_cache"].fillna(False).any()
    again = cl.run(spec, seed=12, **QUICK)  # another session: nothing built yet, so plans come from disk
    loaded = again.plans[again.plans["from_cache"].fillna(False).astype(bool)]
    assert len(loaded) >= 1 and again.settings["plan_cache_stats"]["hits"] >= len(loaded)
    assert again.settings["plan_cache_stats"]["mismatched"] == 0  # each blob held the plan it was stored under
    # a loaded plan is checked against the reference before its time is shown
    assert (loaded["status"] == "ok").all() and loaded["pass_cudnn"].astype(bool).all()
    assert (loaded["median_ms"] > 0).all() and (loaded["build_ms"] >= 0).all()


def test_without_the_plan_cache_nothing_is_written(cache_root: Path) -> None:
    r = cl.run(CONV, seed=13, plan_cache=False, **QUICK)
    assert not (cache_root / "plans").exists() and r.settings["plan_cache_stats"]["enabled"] is False


SCRIPT = textwrap.dedent("""
    import cudnn_lab as cl
    import cudnn_lab.gpu.cache as cache
    cache.SERIALIZE_MIN_BUILD_MS = 0.0
    r = cl.run(cl.MatmulSpec(m=512, n=512, k=512, dtype="bf16"), baselines=False, roofline=False, time_cap_s=0.05)
    ok = r.plans[r.plans["status"] == "ok"]
    loaded = int(r.plans["from_cache"].fillna(False).astype(bool).sum())
    print(loaded, len(ok), int(ok["pass_cudnn"].astype(bool).sum()))
""")


def test_a_fresh_process_loads_what_another_process_cached(cache_root: Path) -> None:
    env = {**os.environ, cache_dir.ENV_DIR: str(cache_root)}
    outs = [subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [o.returncode for o in outs] == [0, 0], [o.stderr[-2000:] for o in outs]
    (cold, ran1, pass1), (warm, ran2, pass2) = ([int(x) for x in o.stdout.split()[-3:]] for o in outs)
    assert cold == 0 and warm >= 1 and ran2 == ran1 and pass2 == ran2


def test_a_repeated_run_reuses_its_measurements_unless_asked(cache_root: Path) -> None:
    first = cl.run(CONV, seed=14, **QUICK)
    again = cl.run(CONV, seed=14, **QUICK)
    assert not first.ok["reused"].astype(bool).any() and again.ok["reused"].astype(bool).all()
    assert list(again.ok["median_ms"]) == list(first.ok["median_ms"])
    assert any("reused" in w for w in again.warnings)
    fresh = cl.run(CONV, seed=14, resample=True, **QUICK)
    assert not fresh.ok["reused"].astype(bool).any() and len(fresh.ok) == len(first.ok)


def test_cupti_timing_through_run(cache_root: Path) -> None:
    r = cl.run(CONV, seed=15, plans="heuristic", timing="cupti", **QUICK)
    pick = r.heuristic_pick
    assert pick["timing_mode"] == "cupti" and pick["calls_per_sample"] == 1 and pick["median_ms"] > 0


def test_ceilings_are_kept_on_disk_and_labelled(cache_root: Path) -> None:
    from cudnn_lab.gpu import ceilings

    ceilings._MEMO.clear()
    c = ceilings.measure_ceilings("fp16", 0, size=2048, copy_mib=64)
    assert c.source == "measured now" and c.measured and len(list((cache_root / "ceilings").glob("*.json"))) == 1
    ceilings._MEMO.clear()  # as a new process would
    kept = ceilings.measure_ceilings("fp16", 0, size=2048, copy_mib=64)
    assert kept.source == f"cached from {c.measured}" and kept.tflops == c.tflops
    again = ceilings.measure_ceilings("fp16", 0, size=2048, copy_mib=64, refresh=True)
    assert again.source == "measured now" and again.measured >= c.measured
    r = cl.run(CONV, seed=16, plans="heuristic", baselines=False, time_cap_s=0.05)
    assert r.ceilings["source"] and r.ceilings["tflops"] > 0 and "ceilings:" in r.summary()


def test_warm_workers_each_hold_their_gpu(cache_root: Path) -> None:
    import torch

    with cl.GPUExecutor(warm=True) as ex:
        reports = ex.warmed
        assert len(reports) == torch.cuda.device_count() == len({r["pid"] for r in reports})
        assert {r["visible"] for r in reports} == {str(g) for g in ex.gpus}
        # each worker ran the tiny warm-up problem through CUPTI: a first point pays no first-use costs
        assert all("warm_error" not in r and r["warm_run_s"] > 0 and r["cupti_s"] is not None for r in reports), \
            reports


@pytest.fixture
def kept_heuristics(cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # every graph's proposals are kept, not only slow ones, so a small GEMM shows the whole path
    monkeypatch.setattr("cudnn_lab.gpu.heuristics_cache.MIN_PROPOSE_S", 0.0)
    return cache_root


def _ok(r: cl.RunResult):
    return r.plans[r.plans["status"] == "ok"].set_index("plan")


def test_kept_proposals_and_notes_are_recalled_by_a_new_session(kept_heuristics: Path) -> None:
    first = cl.run(GEMM, seed=21, **QUICK)
    assert first.settings["proposals_recalled"] is False
    assert len(list((kept_heuristics / "heuristics").rglob("*.plan"))) in (1, 2)  # proposals (and notes)
    again = cl.run(GEMM, seed=22, **QUICK)  # a new session: the heuristics are not asked
    assert again.settings["proposals_recalled"] is True
    a, b = _ok(first), _ok(again)
    assert list(again.plans["plan"]) == list(first.plans["plan"]) and set(a.index) == set(b.index)
    assert b["from_cache"].astype(bool).all() and b["pass_cudnn"].astype(bool).all()
    assert (b["numeric_notes"] == a["numeric_notes"]).all()
    assert (again.plans["heuristic_rank"].tolist() == first.plans["heuristic_rank"].tolist())


def test_a_recalled_plan_whose_blob_is_corrupt_is_asked_for_and_built(kept_heuristics: Path) -> None:
    first = cl.run(GEMM, seed=24, **QUICK)
    blobs = sorted((kept_heuristics / "plans").rglob("*.plan"))
    assert len(blobs) == len(_ok(first))
    blobs[0].write_bytes(blobs[0].read_bytes()[:-7] + b"garbage")  # the digest no longer matches
    again = cl.run(GEMM, seed=25, **QUICK)
    b = _ok(again)
    assert again.settings["proposals_recalled"] is True and len(b) == len(_ok(first))
    assert b["pass_cudnn"].astype(bool).all() and (~b["from_cache"].astype(bool)).sum() >= 1


def test_a_run_with_the_plan_cache_off_asks_the_heuristics_again(kept_heuristics: Path) -> None:
    cl.run(GEMM, seed=26, **QUICK)
    off = cl.run(GEMM, seed=27, plan_cache=False, **QUICK)
    b = _ok(off)
    assert len(b) >= 1 and not b["from_cache"].astype(bool).any() and b["pass_cudnn"].astype(bool).all()
