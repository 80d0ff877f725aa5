"""Fast by default on a real GPU (issue 36): a run with no options set decides its helpers and kernel cache itself
and says so (settings['decisions'], read back through the checked loader); with the same plans and statuses as a run
without helpers; a repeat in the process uses none; a count set by hand that cannot be honoured is said once and the
run loses nothing; the kernel cache is left off for a single run."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab import cache_dir
from cudnn_lab.gpu.defaults import ENV_AUTO_HELPERS
from cudnn_lab.results import RunResult

pytestmark = pytest.mark.gpu

RMSNORM = cl.NormSpec(kind="rmsnorm", phase="inference", rows=2048, features=4096, dtype="bf16")
QUICK = dict(plans="all", baselines=False, roofline=False, kernels=False, notes=False, time_cap_s=0.05, max_plans=6)


def _statuses(r) -> dict[str, str]:
    return dict(zip(r.plans["plan"], r.plans["status"]))


def test_a_run_with_default_options_decides_and_says_what_it_used(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_AUTO_HELPERS, "2")  # a test process: a small pool (the rule is tested on the CPU)
    monkeypatch.setenv(cache_dir.ENV_DIR, str(tmp_path / "without"))
    without = cl.run(RMSNORM, **QUICK, parallel_builds=0, seed=11)
    monkeypatch.setenv(cache_dir.ENV_DIR, str(tmp_path / "auto"))
    first = cl.run(RMSNORM, **QUICK, seed=12)  # parallel_builds='auto', kernel_cache auto
    decisions = first.settings["decisions"]
    pb, kc = decisions["parallel_builds"], decisions["kernel_cache"]
    assert pb["asked"] == "auto" and isinstance(pb["used"], int) and pb["why"].startswith("auto")
    assert kc == {"asked": "auto", "used": False, "why": kc["why"]} and "single run" in kc["why"]
    assert _statuses(first) == _statuses(without)  # helpers or not, the same plans and outcomes
    if pb["used"]:  # helpers started; a run that went through its plans before they were ready did not wait
        assert first.settings["parallel_build"]["workers"] == pb["used"]
        assert "helpers_end" in first.settings["phase_s"]
    back = RunResult.load(first.save(tmp_path / "r.json"))
    assert back.settings["decisions"] == decisions
    again = cl.run(RMSNORM, **QUICK, seed=12)  # every plan built in this process: no helpers
    assert again.settings["decisions"]["parallel_builds"]["used"] == 0
    assert "built earlier in this process" in again.settings["decisions"]["parallel_builds"]["why"]


def test_a_count_set_by_hand_that_cannot_be_used_is_said_once_and_nothing_is_lost(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(cache_dir.ENV_DIR, str(tmp_path / "c"))
    result = cl.run(RMSNORM, **QUICK, seed=13, parallel_builds=4, plan_cache=False)
    said = [w for w in result.warnings if "parallel_builds=4 was not used" in w]
    assert len(said) == 1 and "plan_cache=False" in said[0]
    assert result.settings["parallel_build"]["skipped"] and result.settings["decisions"]["parallel_builds"]["used"] == 0
    assert len(result.plans) == 6 and (result.plans["status"] != "not_built").all()


def test_helpers_are_not_used_for_a_classic_call(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(cache_dir.ENV_DIR, str(tmp_path / "c"))
    result = cl.run(cl.PoolSpec(n=4, c=16, h=16, w=16, mode="max", window=3, stride=2, padding=1, dtype="fp16"),
                    plans="all", baselines=False, roofline=False, kernels=False, notes=False)
    pb = result.settings["decisions"]["parallel_builds"]
    assert pb["used"] == 0 and "classic" in pb["why"]


@pytest.mark.parametrize("spec", [RMSNORM, cl.MatmulSpec(m=256, n=256, k=256, dtype="fp8_e4m3", transpose_b=True)],
                         ids=["bf16", "fp8"])
def test_the_warm_up_loads_the_checks_kernels_only_where_runs_check(spec) -> None:
    from cudnn_lab.gpu import defaults as d
    from cudnn_lab.options import RunOptions

    off = d.warm(spec, options=RunOptions(parallel_builds=0, check=False))
    assert off["state"] == "ready" and "check_kernels" not in off["seconds"]
    on = d.warm(spec, options=RunOptions(parallel_builds=0))
    assert on["state"] == "ready", on["note"]
    assert on["seconds"]["check_kernels"] > 0
