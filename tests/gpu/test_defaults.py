"""gpu/defaults.py without a GPU (issue 36): what 'auto' decides for parallel builds and the kernel cache, from the
cores, the plans left to build and why helpers cannot help; a user's own setting kept; the decisions record read
back through the kit's checked loader (damaged: refused naming the field); a run that stops waiting for helpers
(abandon) loses nothing; warm() stays quiet where there is no GPU."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError
from cudnn_lab.gpu import defaults as d
from cudnn_lab.gpu import parallel_build as pb
from cudnn_lab.options import RunOptions
from cudnn_lab.results import RunResult

SPEC = cl.NormSpec(kind="rmsnorm", phase="inference", rows=64, features=64, dtype="bf16")


@pytest.fixture(autouse=True)
def _no_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(d.ENV_AUTO_HELPERS, raising=False)


def test_an_environment_cap_limits_auto_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(d.ENV_AUTO_HELPERS, "2")
    assert d.auto_helpers(15) == 2 and d.decide_parallel_builds(SPEC, RunOptions(parallel_builds=6), cores=16).used == 6
    monkeypatch.setenv(d.ENV_AUTO_HELPERS, "0")
    off = d.decide_parallel_builds(SPEC, RunOptions(), cores=16)
    assert off.used == 0 and "CUDNN_LAB_AUTO_HELPERS=0" in off.why
    monkeypatch.setenv(d.ENV_AUTO_HELPERS, "lots")  # not a number: ignored
    assert d.auto_helpers(15) == 14


def test_helpers_need_four_spare_cores_and_stay_within_fourteen_the_cores_and_the_plans() -> None:
    assert [d.auto_helpers(s) for s in (0, 1, 3, 4, 5, 9, 15, 63)] == [0, 0, 0, 3, 4, 8, 14, 14]
    assert d.auto_helpers(15, plans=2) == 2 and d.auto_helpers(15, plans=0) == 0
    assert d.spare_cores(16) == 15 and d.spare_cores(1) == 0 and d.usable_cores() >= 1


@pytest.mark.parametrize(("cores", "used"), [(16, 14), (8, 6), (5, 3), (4, 0), (2, 0), (1, 0)])
def test_auto_counts_helpers_from_the_cores(cores: int, used: int) -> None:
    decision = d.decide_parallel_builds(SPEC, RunOptions(), cores=cores)
    assert decision.asked == "auto" and decision.used == used
    assert ("cores to spare" in decision.why) == (used > 0)
    if not used:
        assert "helpers need 4" in decision.why and "parallel_builds=N forces N" in decision.why


def test_auto_is_off_where_it_would_not_pay() -> None:
    skip = "its plans come from a classic cuDNN call, not a frontend graph"
    assert d.decide_parallel_builds(SPEC, RunOptions(), skip, cores=16).used == 0
    assert skip in d.decide_parallel_builds(SPEC, RunOptions(), skip, cores=16).why
    assert d.decide_parallel_builds(SPEC, RunOptions(max_plans=1), cores=16).used == 0
    for unbuilt in (0, 1):  # a repeat in this process: nothing (or only the pick) left to build
        decision = d.decide_parallel_builds(SPEC, RunOptions(), cores=16, unbuilt=unbuilt)
        assert decision.used == 0 and "built earlier in this process" in decision.why
    assert d.decide_parallel_builds(SPEC, RunOptions(), cores=16, unbuilt=3).used == 2  # the run builds the pick


def test_a_users_setting_is_kept_and_one_that_cannot_be_honoured_says_why() -> None:
    for off in (None, 0, False):
        decision = d.decide_parallel_builds(SPEC, RunOptions(parallel_builds=off), cores=64)
        assert decision.used == 0 and "off, as asked" in decision.why
    assert d.decide_parallel_builds(SPEC, RunOptions(parallel_builds=12), cores=2).used == 12  # forced: no core rule
    assert d.decide_parallel_builds(SPEC, RunOptions(parallel_builds=True), cores=2).used == 1
    assert d.decide_parallel_builds(SPEC, RunOptions(parallel_builds=True), cores=32).used == d.MAX_AUTO_HELPERS == 14
    refused = d.decide_parallel_builds(SPEC, RunOptions(parallel_builds=4), "plan_cache=False: ...", cores=32)
    assert refused.used == 0 and "asked for (4) but not used: plan_cache=False" in refused.why


def test_the_kernel_cache_is_left_off_for_a_single_run_and_kept_as_asked() -> None:
    auto = d.decide_kernel_cache(RunOptions())
    assert auto.asked == "auto" and auto.used is False and "sweep over one dimension" in auto.why
    assert d.decide_kernel_cache(RunOptions(kernel_cache=True)).used is True
    assert d.decide_kernel_cache(RunOptions(kernel_cache=False)).used is False
    classic = d.decide_kernel_cache(RunOptions(kernel_cache=True), frontend=False)
    assert classic.used is False and "classic cuDNN call" in classic.why


def test_no_session_in_this_process_means_plans_to_build_unknown() -> None:
    assert d.unbuilt_in_process(SPEC, RunOptions()) is None


# ------------------------------------------------------------------------------------------------ the record

RECORDING = "h200_matmul_fp16_bias"


def _saved(tmp_path: Path, decisions: Any) -> Path:
    data = cl.load_results(RECORDING).to_dict()
    data["settings"]["decisions"] = decisions
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _decisions() -> dict[str, Any]:
    return {"parallel_builds": d.decide_parallel_builds(SPEC, RunOptions(), cores=16).to_dict(),
            "kernel_cache": d.decide_kernel_cache(RunOptions()).to_dict()}


def test_the_decisions_record_reads_back_through_the_checked_loader(tmp_path) -> None:
    result = RunResult.load(_saved(tmp_path, _decisions()))
    assert result.settings["decisions"]["parallel_builds"]["used"] == 14
    assert result.settings["decisions"]["kernel_cache"]["used"] is False


@pytest.mark.parametrize(("damage", "field"), [
    (lambda x: x.__setitem__("teleport", {}), "settings.decisions.teleport"),
    (lambda x: x["parallel_builds"].__setitem__("used", "eight"), "settings.decisions.parallel_builds.used"),
    (lambda x: x["parallel_builds"].__setitem__("used", -1), "settings.decisions.parallel_builds.used"),
    (lambda x: x["parallel_builds"].__setitem__("used", True), "settings.decisions.parallel_builds.used"),
    (lambda x: x["parallel_builds"].pop("used"), "settings.decisions.parallel_builds.used"),
    (lambda x: x["kernel_cache"].__setitem__("used", 1), "settings.decisions.kernel_cache.used"),
    (lambda x: x["kernel_cache"].__setitem__("why", ""), "settings.decisions.kernel_cache.why"),
    (lambda x: x["kernel_cache"].__setitem__("asked", [1]), "settings.decisions.kernel_cache.asked"),
    (lambda x: x.__setitem__("kernel_cache", "on"), "settings.decisions.kernel_cache"),
])
def test_a_damaged_decisions_record_is_refused_naming_the_field(tmp_path, damage, field) -> None:
    decisions = _decisions()
    damage(decisions)
    with pytest.raises(DataError, match=field.replace(".", r"\.")):
        RunResult.load(_saved(tmp_path, decisions))


def test_a_decisions_record_that_is_not_an_object_is_refused(tmp_path) -> None:
    with pytest.raises(DataError, match=r"settings\.decisions"):
        RunResult.load(_saved(tmp_path, ["auto"]))


# ------------------------------------------------------------------------------------------------ helpers let go

def test_a_run_that_stops_waiting_for_its_helpers_keeps_a_skipped_record_and_they_finish_alone() -> None:
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:sleep", start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handle = pb.start_prebuild(SPEC, RunOptions(), 1, plans=["eng0", "eng1"], pool=pool, cores=4,
                                       deadline_s=1.0)
            record = handle.abandon("auto: off, the plans were recalled from the plan cache")
            assert record == {"workers": 1, "helpers": 0, "built": 0,
                              "skipped": "auto: off, the plans were recalled from the plan cache"}
            handle._thread.join(60)  # the silent helper is cut off at its deadline, in the background
        assert handle.finished and not [w for w in caught if "parallel builds" in str(w.message)]
    finally:
        pool.close()


# ------------------------------------------------------------------------------------------------ warm-up

def test_warm_without_a_gpu_is_quiet_and_says_so() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    state = d.warm(SPEC, options=RunOptions(parallel_builds=0))
    assert state["state"] == "failed" and state["helpers"] == 0 and state["note"]
    assert d.warm_state()["state"] == "failed"


# ------------------------------------------------------------------------------------------------ a cold pool

def _entry(notes: tuple[str, ...] = (), built: Any = None) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(behavior_notes=notes, built=built)


def test_a_cold_pool_is_started_only_where_the_plans_show_it_pays() -> None:
    rtc = ("RUNTIME_COMPILATION",)
    assert d.worth_starting([_entry(rtc), _entry(rtc), _entry(rtc)]) == ""
    assert "recalled from the plan cache" in d.worth_starting([_entry(rtc)] * 3, recalled=True)
    assert "1 plan(s) to build beside the pick" in d.worth_starting([_entry(), _entry(rtc), _entry(rtc, built=1)])
    assert "compiled at run time" in d.worth_starting([_entry(rtc), _entry(), _entry()])
    assert d.pool_warm(12345) is False  # no pool for that device in this process


def test_an_eager_run_builds_a_plan_itself_while_its_helper_has_not_listed_the_plans() -> None:
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:sleep", start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            handle = pb.start_prebuild(SPEC, RunOptions(), 2, plans=["eng0", "eng1", "eng2"], pool=pool, cores=4,
                                       deadline_s=60.0, eager=True)
            assert handle.wait("eng1", timeout=60) is None and handle.wait("eng2", timeout=60) is None
            report = handle.report(timeout=0.0)
        assert not any("waited" in p for p in report.problems)  # not waited for: built by the run at once
    finally:
        pool.close()


def test_a_plan_is_unlisted_only_for_an_eager_run_whose_helpers_have_not_listed_the_plans() -> None:
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:sleep", start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            for eager in (True, False):
                handle = pb.start_prebuild(SPEC, RunOptions(), 1, plans=["eng0", "eng1"], pool=pool, cores=4,
                                           deadline_s=60.0, eager=eager, leave=0)
                assert handle.unlisted("eng0") is eager and handle.unlisted("eng1") is eager
                assert not handle.pending("eng0") if eager else handle.pending("eng0")
                assert not handle.answered("eng0")  # either way the run has its own work to do first
                handle.report(timeout=0.0, overtaken=True)
    finally:
        pool.close()
    from cudnn_lab.gpu.workers.selftest import TAKES_PLANS

    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:takes_plans", start_deadline_s=60)
    try:
        handle = pb.start_prebuild(SPEC, RunOptions(), 2, plans=TAKES_PLANS, pool=pool, cores=4, leave=1, eager=True)
        handle.wait(TAKES_PLANS[1], timeout=60)  # listed, then answered
        handle.report(timeout=60)
        assert not any(handle.unlisted(p) for p in TAKES_PLANS)  # the pick: the run's; the rest: answered
        assert all(handle.answered(p) for p in TAKES_PLANS)
    finally:
        pool.close()


def test_a_run_whose_helpers_have_not_listed_asks_its_own_work_first_then_builds_the_plan_itself(monkeypatch) -> None:
    """Issue 36 (H200, 2026-11-29: DenseNet's pick compiled in the run for 1.77 s, then its notes took 0.84 s, because
    no helper had listed the plans yet): the run asks the notes first, by when a helper may be building the plan."""
    from cudnn_lab.gpu.execution import PlanRecord
    from cudnn_lab.gpu.plans import PlanEntry
    from cudnn_lab.gpu.run import Run

    order: list[str] = []
    run = Run(SPEC, RunOptions(plans="all"))
    monkeypatch.setattr(run, "work_while_waiting", lambda: order.append("notes"))
    monkeypatch.setattr(run, "work_ahead", lambda handed, record: order.append("ahead"))
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:sleep", start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            run.prebuild = pb.start_prebuild(SPEC, run.options, 1, plans=["eng0", "eng1"], pool=pool, cores=4,
                                             deadline_s=60.0, eager=True, leave=0)
            record = PlanRecord(PlanEntry("eng0", 0, {}, None, 0), rank=0)
            assert run.build(record) is False and record.status == "build_failed"  # no plan object: built here
            assert order == ["notes"] and run.waited_for_helpers  # its own work first, no helper to wait for
            order.clear()
            run.prebuild = pb.start_prebuild(SPEC, run.options, 1, plans=["eng0", "eng1"], pool=pool, cores=4,
                                             deadline_s=60.0, eager=True, leave=1)
            run.build(PlanRecord(PlanEntry("eng0", 0, {}, None, 0), rank=0))  # the pick left to the run: at once
            assert order == []
    finally:
        pool.close()


def test_an_eager_run_that_built_every_plan_itself_reports_them_left_and_warns_of_nothing() -> None:
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:sleep", start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handle = pb.start_prebuild(SPEC, RunOptions(), 2, plans=["eng0", "eng1", "eng2"], pool=pool, cores=4,
                                       deadline_s=60.0, eager=True)
            assert handle.wait("eng1", timeout=60) is None and handle.wait("eng2", timeout=60) is None
            report = handle.report(timeout=0.0, overtaken=True)  # the run went through every plan itself
            assert not handle.finished  # not waited for: the silent helpers go on in the background
        assert [p.status for p in report.plans] == ["left", "left", "left"] and not report.problems
        assert not [w for w in caught if "parallel builds" in str(w.message)]
        assert report.to_dict()["built"] == 0
    finally:
        pool.close()


def test_an_auto_run_does_not_wait_at_its_end_for_helpers_still_starting() -> None:
    from cudnn_lab.gpu.run import Run

    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:sleep", start_deadline_s=30)
    try:
        run = Run(SPEC, RunOptions(plans="all"))
        run.prebuild = pb.start_prebuild(SPEC, run.options, 2, plans=["eng0", "eng1", "eng2"], pool=pool, cores=4,
                                         deadline_s=60.0, eager=True)
        run.waited_for_helpers = True  # an eager wait() that returned at once (its helper had not listed the plans)
        run.end_prebuild()
        assert run.parallel_build is not None and "before its helpers handed any" in run.parallel_build["skipped"]
        assert run.parallel_build["workers"] == 2 and not run.prebuild.finished  # they go on in the background
        assert "helpers_end" in run.phases.s  # the end of the helpers is a phase of its own
    finally:
        pool.close()
