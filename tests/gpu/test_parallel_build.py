"""gpu/parallel_build.py without a GPU: the option, the share split, the report's arithmetic, NoGPUError before any
helper starts, and the warning path with helpers (kit workers of the selftest roles) that exit at once, hang or list
other plans (the run loses nothing); the build role's share at once and the helpers' lower priority."""

from __future__ import annotations

import json
import warnings

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu import build_role
from cudnn_lab.gpu.workers import claims
from cudnn_lab.gpu import parallel_build as pb
from cudnn_lab.options import RunOptions

def _spec() -> cl.MatmulSpec:
    return cl.MatmulSpec(batch=1, m=64, n=64, k=64, dtype="fp16")


# ------------------------------------------------------------------------------------------------ the option

def test_parallel_builds_defaults_to_auto_and_round_trips() -> None:
    assert RunOptions().parallel_builds == "auto" and RunOptions.from_dict(RunOptions().to_dict()) == RunOptions()
    assert RunOptions(parallel_builds=None).parallel_builds is None
    assert RunOptions(parallel_builds=True).parallel_builds is True
    assert RunOptions(parallel_builds=False).parallel_builds == 0
    o = RunOptions(parallel_builds=8)
    assert o.parallel_builds == 8 and RunOptions.from_dict(o.to_dict()) == o
    assert RunOptions(parallel_builds=0).parallel_builds == 0
    assert RunOptions.coerce(None, parallel_builds=64).parallel_builds == 64


@pytest.mark.parametrize("bad", [-1, 65, 2.0, "3", "AUTO", [2]])
def test_parallel_builds_must_be_a_whole_number_from_0_to_64(bad) -> None:
    with pytest.raises(cl.OptionError) as info:
        RunOptions(parallel_builds=bad)
    assert info.value.option == "parallel_builds" and "0 (off) to 64" in str(info.value)


def test_parallel_builds_has_a_cli_flag_from_its_metadata() -> None:
    from cudnn_lab.cli import run_option_flag

    flag, kwargs = run_option_flag("parallel_builds")
    assert flag == "--parallel-builds" and "helper processes" in kwargs["help"] and "auto" in kwargs["help"]
    assert [kwargs["type"](t) for t in ("auto", "on", "off", "8")] == ["auto", True, 0, 8]
    with pytest.raises(ValueError):
        kwargs["type"]("many")


# ------------------------------------------------------------------------------------------------ shares and report

def test_shares_are_round_robin_and_cover_every_plan_once() -> None:
    plans = [f"p{i}" for i in range(24)]
    shares = pb.split_shares(plans, 8)
    assert [s[0] for s in shares] == plans[:8]  # every helper starts with one of the heuristics' first choices
    assert sorted(p for s in shares for p in s) == sorted(plans)
    assert {len(s) for s in shares} == {3}
    uneven = pb.split_shares(plans[:7], 3)
    assert [len(s) for s in uneven] == [3, 2, 2]
    assert pb.split_shares(plans, 0) == []


def test_pool_size_is_the_least_of_workers_plans_and_cores() -> None:
    assert pb.pool_size(8, 24, cores=16) == 8
    assert pb.pool_size(8, 3, cores=16) == 3
    assert pb.pool_size(8, 24, cores=2) == 2
    assert pb.pool_size(8, 0, cores=16) == 0


def test_the_report_counts_only_handed_over_plans() -> None:
    plans = (pb.PlanBuild("a", 0, "stored", 900.0), pb.PlanBuild("b", 1, "stored", 600.0),
             pb.PlanBuild("c", 0, "fast", 5.0), pb.PlanBuild("d", 1, "failed", None, "no"),
             pb.PlanBuild("e", -1, "missed"), pb.PlanBuild("f", 1, "cached"))
    r = pb.BuildReport(workers=4, helpers=2, plans=plans, wall_s=0.5, start_s=0.1)
    assert r.built == 2 and r.serial_s == pytest.approx(1.5) and r.saved_s == pytest.approx(1.0)
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert (d["built"], d["serial_s"], d["saved_s"], d["helpers"]) == (2, 1.5, 1.0, 2)
    assert [p["status"] for p in d["plans"]] == ["stored", "stored", "fast", "failed", "missed", "cached"]
    slow = pb.BuildReport(workers=4, helpers=2, plans=plans[:1], wall_s=2.0)
    assert slow.saved_s == pytest.approx(-1.1)
    with pytest.raises(dataclasses_error()):
        r.wall_s = 1.0  # type: ignore[misc]
    with pytest.raises(AssertionError):
        pb.PlanBuild("x", 0, "done")


def dataclasses_error() -> type[Exception]:
    import dataclasses

    return dataclasses.FrozenInstanceError


# ------------------------------------------------------------------------------------------------ no GPU, bad helpers

def test_off_means_nothing_happens() -> None:
    assert pb.parallel_prebuild(_spec(), RunOptions(parallel_builds=None), {}) is None
    assert pb.parallel_prebuild(_spec(), RunOptions(parallel_builds=False), {}) is None
    assert pb.parallel_prebuild(_spec(), RunOptions(parallel_builds=0), {}) is None


def test_without_a_gpu_parallel_builds_raise_no_gpu_error_before_any_helper_starts(monkeypatch) -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    started = []
    monkeypatch.setattr(pb.Helper, "__init__", lambda self, *a: started.append(a))
    with pytest.raises(cl.NoGPUError):
        pb.parallel_prebuild(_spec(), RunOptions(parallel_builds=4), {})
    assert started == []


def test_a_helper_that_exits_at_once_leaves_every_plan_to_the_run_with_one_warning() -> None:
    pool = pb.HelperPool(target=EXITS, start_deadline_s=30)
    plans = ["eng0", "eng4_k24=27", "eng7"]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = pb.prebuild(_spec(), RunOptions(parallel_builds=2), 2, plans=plans, pool=pool, cores=4)
        said = [w for w in caught if "parallel builds" in str(w.message)]
        assert len(said) == 1 and issubclass(said[0].category, RuntimeWarning)
        assert "nothing is lost" in str(said[0].message) and "exit code 3" in str(said[0].message)
        assert report.helpers == 0 and report.built == 0
        assert [(p.plan, p.status) for p in report.plans] == [(p, "missed") for p in plans]
        assert len(report.problems) == 2 and all("exit code 3" in p for p in report.problems)
        assert pool.started == 2
    finally:
        pool.close()


#: selftest roles: one ends (exit code 3) before its ready line, one is ready and never answers, one lists other plans
EXITS = "cudnn_lab.gpu.workers.selftest:dies_at_start"
HANGS = "cudnn_lab.gpu.workers.selftest:sleep"
DISAGREES = "cudnn_lab.gpu.workers.selftest:other_plans"


def test_a_helper_that_hangs_is_killed_at_the_deadline_and_started_again_next_time() -> None:
    pool = pb.HelperPool(target=HANGS, start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = pb.prebuild(_spec(), RunOptions(), 1, plans=["eng0"], pool=pool, deadline_s=0.5, cores=4)
        assert [(p.plan, p.status) for p in report.plans] == [("eng0", "missed")]
        assert any("no answer within 0.5 s" in p for p in report.problems)
        assert len([w for w in caught if "parallel builds" in str(w.message)]) == 1
        first = pool.helpers[0]
        assert not first.alive()
        ready, _, _ = pool.ensure(1)
        assert len(ready) == 1 and ready[0].pid != first.pid and pool.started == 2
    finally:
        pool.close()


def test_a_helper_on_another_gpu_or_cudnn_is_left_out() -> None:
    pool = pb.HelperPool(target=HANGS, start_deadline_s=30)
    info = {"gpu": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "cudnn_backend": 91900,
            "cudnn_frontend": "1.32.0"}
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            report = pb.prebuild(_spec(), RunOptions(), 1, info=info, plans=["eng0"], pool=pool, cores=4)
        assert report.helpers == 0 and any("another GPU or cuDNN" in p for p in report.problems)
        assert report.plans[0].status == "missed"
    finally:
        pool.close()


def test_the_real_helper_without_a_gpu_says_why_it_cannot_start() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    pool = pb.HelperPool(start_deadline_s=60)
    try:
        ready, _, problems = pool.ensure(1)
        assert ready == [] and len(problems) == 1 and "helper 0 could not start" in problems[0]
        assert "no CUDA GPU" in problems[0] and not pool.helpers[0].alive()
    finally:
        pool.close()


# ------------------------------------------------------------------------------------------------ asynchronous handle

PLANS = ["eng0", "eng4_k24=27", "eng7", "eng8"]


def test_the_async_handle_is_off_without_the_option_and_needs_a_gpu_before_any_helper_starts(monkeypatch) -> None:
    assert pb.parallel_prebuild_async(_spec(), RunOptions(parallel_builds=None), {}) is None
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    started = []
    monkeypatch.setattr(pb.Helper, "__init__", lambda self, *a: started.append(a))
    with pytest.raises(cl.NoGPUError):
        pb.parallel_prebuild_async(_spec(), RunOptions(parallel_builds=4), {})
    assert started == []


def test_async_helpers_that_exit_at_once_answer_wait_with_missed_and_the_run_builds_every_plan() -> None:
    pool = pb.HelperPool(target=EXITS, start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handle = pb.start_prebuild(_spec(), RunOptions(), 2, plans=PLANS, pool=pool, cores=4)
            assert handle.wait("eng0", timeout=60) is None  # the pick is the run's own: never waited for
            got = handle.wait("eng7", timeout=60)
            assert got is not None and got.status == "missed" and handle.finished  # answered, not timed out
            assert not [w for w in caught if "parallel builds" in str(w.message)]  # said once, in report()
            report = handle.report(timeout=60)
            handle.report(timeout=60)
        said = [w for w in caught if "parallel builds" in str(w.message)]
        assert len(said) == 1 and "exit code 3" in str(said[0].message) and "nothing is lost" in str(said[0].message)
        assert [(p.plan, p.status) for p in report.plans] == [("eng0", "left")] + [(p, "missed") for p in PLANS[1:]]
        assert report.helpers == 0 and report.built == 0 and not any("waited" in p for p in report.problems)
        assert report.to_dict()["plans"][0]["status"] == "left" and report.waited_s >= 0
    finally:
        pool.close()


def test_async_wait_times_out_on_a_hung_helper_and_the_deadline_cuts_it_off() -> None:
    pool = pb.HelperPool(target=HANGS, start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handle = pb.start_prebuild(_spec(), RunOptions(), 1, plans=PLANS, pool=pool, cores=4, deadline_s=2.0)
            # a wait would block for a helper's plan, not for the pick (the run's own) or a plan no helper has
            assert handle.pending("eng4_k24=27") and not handle.pending("eng0") and not handle.pending("other")
            assert not handle.answered("eng4_k24=27") and handle.answered("eng0") and handle.answered("other")
            assert handle.wait("eng4_k24=27", timeout=0.05) is None  # still building: the run builds it itself
            assert not handle.finished
            late = handle.wait("eng8", timeout=60)  # the per-helper deadline cuts the silent helper off
            report = handle.report(timeout=60)
        assert late is not None and late.status == "missed" and handle.finished
        assert not any(handle.pending(p) for p in PLANS)  # finished: nothing left to wait for
        assert all(handle.answered(p) for p in PLANS)
        assert any("waited 0.05 s for eng4_k24=27 and built it itself" in p for p in report.problems)
        assert any("no answer within 2 s" in p for p in report.problems)
        assert [p.status for p in report.plans] == ["left", "missed", "missed", "missed"]
        assert len([w for w in caught if "parallel builds" in str(w.message)]) == 1
        assert not pool.helpers[0].alive()
    finally:
        pool.close()


def test_an_async_helper_listing_other_plans_is_left_out_and_a_report_before_the_end_says_still_building() -> None:
    pool = pb.HelperPool(target=DISAGREES, start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            handle = pb.start_prebuild(_spec(), RunOptions(max_plans=3), 2, plans=PLANS, pool=pool, cores=4)
            got = handle.wait("eng7", timeout=60)
            report = handle.report(timeout=60)
        assert [p.plan for p in report.plans] == PLANS[:3]  # max_plans cuts the list as the run does
        assert got is not None and got.status == "missed"
        assert sum("proposed other plans" in p for p in report.problems) == 2 and report.built == 0
        assert all(not h.alive() for h in pool.helpers)  # left out and ended: the pool starts fresh ones
    finally:
        pool.close()
    hung = pb.HelperPool(target=HANGS, start_deadline_s=30)
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            handle = pb.start_prebuild(_spec(), RunOptions(), 1, plans=PLANS[:2], pool=hung, cores=4)
            early = handle.report(timeout=0.0)
        assert "the helpers were still building when the run ended" in early.problems
        assert early.plans[1].status == "missed" and "still building" in early.plans[1].error
    finally:
        hung.close()



# ------------------------------------------------------------------------------------------------ the helper's role

def test_the_build_role_lists_and_builds_its_share_at_once(monkeypatch) -> None:
    monkeypatch.setattr(build_role, "_propose", lambda query, handle, info: ({"eng0": None, "eng7": None}, None))
    said = list(build_role.build({"cmd": "share", "leave": 1, "slots": 1, "slot": 0}))
    assert said[0] == {"plans": ["eng0", "eng7"], "share": ["eng7"]}  # the pick is left to the run
    assert said[1]["plan"] == "eng7" and said[1]["status"] == "failed"  # built at once (here: no entry to build)
    assert len(said) == 2  # the worker seam ends the stream (the pool reads it as done)
    assert build_role.build({"cmd": "propose"}) == {"plans": ["eng0", "eng7"]}
    assert "unknown command" in build_role.build({"cmd": "nope"})["error"]


def test_helpers_run_the_build_role_at_a_lower_priority_and_stream_their_answers_to_the_pool() -> None:
    h = pb.Helper(0, "cudnn_lab.gpu.workers.selftest:echo", start_deadline_s=30)
    try:
        assert h.worker.nice == pb.HELPER_NICE and h.worker.target == "cudnn_lab.gpu.workers.selftest:echo"
        h.worker.wait_ready()
        assert h.send({"env": build_role.DEVICE_ENV})
        got = pb.wait_lines([h], 30, lambda m: "echo" in m)[0]
        assert got["env"] == "0"  # the pool names the device to the helper
        assert got["nice"] == min(19, pb.os.nice(0) + pb.HELPER_NICE)  # a lower priority than this process
    finally:
        h.kill()
    assert not h.alive()


# ------------------------------------------------------------------------------------------------ plans taken when free

def test_helpers_take_plans_as_they_become_free_each_once_and_the_claims_go_with_the_prebuild(tmp_path) -> None:
    """Issue 36: a helper with one slow compile no longer holds up the plans dealt after it. Slot 0's first plan is
    held until another helper has taken the last plan, which round-robin shares would have dealt to slot 0."""
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:takes_plans", start_deadline_s=60)
    try:
        handle = pb.start_prebuild(_spec(), RunOptions(), 2, plans=PLANS, pool=pool, cores=4)
        report = handle.report(timeout=120)
        folder = handle._claims
    finally:
        pool.close()
    by_plan = {p.plan: p for p in report.plans}
    assert [p.status for p in report.plans] == ["left", "stored", "stored", "stored"] and not report.problems
    slot0, slot1 = handle._slot_helper[0], handle._slot_helper[1]
    assert by_plan["eng4_k24=27"].helper == slot0 and by_plan["eng7"].helper == slot1
    assert by_plan["eng8"].helper == slot1  # taken by the free helper, not dealt to the busy one
    assert folder is not None and not pb.os.path.exists(folder)  # no claims folder left behind


def test_claims_take_the_own_first_then_the_lowest_free_plan_once_and_stop_when_the_folder_goes(tmp_path) -> None:
    folder = str(tmp_path / "claims")
    pb.os.mkdir(folder)
    first, second = claims.claimed(folder, 5, 0), claims.claimed(folder, 5, 1)
    assert next(first) == 0 and next(second) == 1 and next(second) == 2 and next(first) == 3
    assert [claims.claim_owner(folder, i) for i in range(5)] == [0, 1, 1, 0, None]
    (tmp_path / "claims" / "4").write_text("")  # made, not yet written: a helper is taking it now
    assert claims.claim_owner(folder, 4) == claims.TAKING
    assert list(first) == [] and list(second) == []  # every plan taken once
    late = claims.claimed(folder, 7, 2)
    assert next(late) == 5
    pb.shutil.rmtree(folder)
    assert list(late) == [] and claims.claim_owner(folder, 0) is None  # the run ended: nothing more is taken


def test_with_no_plan_left_to_the_run_it_can_take_stored_plans_while_a_helper_builds_the_pick() -> None:
    """Issue 36: a warm 'auto' run leaves no plan to itself; while slot 0 still builds the pick, ``ready`` hands the
    run the later plans other helpers have stored (in the order asked), and returns once the pick is answered."""
    pool = pb.HelperPool(target="cudnn_lab.gpu.workers.selftest:takes_plans", start_deadline_s=60)
    later = PLANS[:0:-1]  # asked in another order than listed: answered in the order asked
    seen: list[list[str]] = []
    try:
        handle = pb.start_prebuild(_spec(), RunOptions(), 2, plans=PLANS, pool=pool, cores=4, leave=0)
        while handle.pending(PLANS[0]):
            seen.append(handle.ready(PLANS[0], later, timeout=60))
            assert seen[-1] or not handle.pending(PLANS[0])  # woken by a stored plan or by the pick's answer
        report = handle.report(timeout=120)
    finally:
        pool.close()
    assert all(got == [p for p in later if p in got] for got in seen)
    assert handle.ready(PLANS[0], later, timeout=0) == later  # all stored now, in the order asked
    assert handle.ready(PLANS[0], ["eng99"], timeout=0) == []  # a plan no helper stored is never ready
    assert [p.status for p in report.plans] == ["stored"] * 4 and not report.problems  # the pick was built too
    assert report.plans[0].helper == handle._slot_helper[0]


def test_with_no_plan_left_to_the_run_a_dead_or_hung_helper_gives_the_pick_back_to_the_run() -> None:
    """Issue 36's bad input for a warm 'auto' run (leave=0): the pick is a helper's too, so a helper that dies or hangs
    must not keep the run waiting for it: the pick is answered 'missed' (the run builds it), said once."""
    for target, deadline in ((EXITS, 60.0), (HANGS, 2.0)):
        pool = pb.HelperPool(target=target, start_deadline_s=30)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                handle = pb.start_prebuild(_spec(), RunOptions(), 1, plans=PLANS, pool=pool, cores=4, leave=0,
                                           deadline_s=deadline)
                got = handle.wait("eng0", timeout=60)
                assert got is not None and got.status == "missed" and handle.finished, target
                assert handle.ready("eng0", PLANS[1:], timeout=0) == []  # nothing stored to work on meanwhile
                report = handle.report(timeout=60)
            assert [p.status for p in report.plans] == ["missed"] * 4, target  # none 'left': the run had none
            assert len([w for w in caught if "parallel builds" in str(w.message)]) == 1, target
        finally:
            pool.close()
