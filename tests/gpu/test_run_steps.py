"""gpu/run.py and gpu/execution.py without a GPU: the Run's named steps, one record per plan, the plan interface."""

from __future__ import annotations

import inspect

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu import anatomy
from cudnn_lab.gpu.execution import ExecutablePlan, FrontendPlan, PlanRecord, finish_rows, plan_row
from cudnn_lab.gpu.plans import PlanEntry
from cudnn_lab.gpu.run import FINISH_STEPS, Run
from cudnn_lab.gpu.timing import TimingOptions, TimingResult, spread_met

#: The steps issue 23 names, each a method of Run.
STEPS = ("start", "propose", "build", "check", "time", "plans", "ceilings", "kernels", "notes", "explore",
         "baseline", "rows", "finish", "record")


def _entry() -> PlanEntry:
    spec = cl.ConvSpec(n=2, c=8, h=8, w=8, k=8, r=3, s=3, padding=1)
    return PlanEntry(name="eng0_k2=1", engine_id=0, knobs={"k2": 1}, graph=cl.build_graph(spec), index=0,
                     ranks={"A": 0}, behavior_notes=("RUNTIME_COMPILATION",))


@pytest.mark.parametrize("step", STEPS)
def test_every_step_is_a_method_of_at_most_about_40_lines(step: str) -> None:
    method = getattr(Run, step)
    lines = inspect.getsource(method).splitlines()
    assert callable(method) and len(lines) <= 42, (step, len(lines))


def test_the_steps_after_the_plans_run_in_the_order_of_the_phases() -> None:
    from cudnn_lab.gpu.execution import PHASES

    assert all(hasattr(Run, step) for step in FINISH_STEPS)
    assert [PHASES.index(s) for s in FINISH_STEPS] == sorted(PHASES.index(s) for s in FINISH_STEPS)


def test_a_frontend_plan_is_an_executable_plan_over_its_entry() -> None:
    entry = _entry()
    plan = FrontendPlan(entry, sess=None)
    assert isinstance(plan, ExecutablePlan)
    assert plan.name == entry.name and plan.workspace_size() == 0 and not plan.check_support()
    entry.built, entry.workspace_bytes = True, 4096
    assert plan.check_support() and plan.workspace_size() == 4096
    entry.built, entry.build_error = False, "no engine"
    assert plan.build() is False and plan.error == "no engine"  # a failed build is not tried again


def test_a_record_gives_the_plan_table_row_and_keeps_the_timing_samples() -> None:
    entry = _entry()
    entry.workspace_bytes, entry.build_ms = 1024, 12.5
    samples = (0.2, 0.1, 0.3)
    timing = TimingResult(median_ms=0.2, iqr_ms=0.1, q1_ms=0.15, q3_ms=0.25, min_ms=0.1, samples=3, mode="events",
                          calls_per_sample=1, capped=False, host_ms=None, cold_l2=False, sample_ms=samples)
    record = PlanRecord(entry=entry, rank=0, status="ok", timing=timing,
                        measured={"median_ms": 0.2, "kernels": "[]", "numeric_notes": "TENSOR_CORE"})
    row = record.row()
    assert row["plan"] == "eng0_k2=1" and row["heuristic_rank"] == 0 and row["status"] == "ok"
    assert row["workspace_bytes"] == 1024 and row["build_ms"] == 12.5 and row["rank_A"] == 0
    assert row["knobs"] == '{"k2": 1}' and row["behavior_notes"] == "RUNTIME_COMPILATION"
    assert record.sample_ms == samples and record.built and record.build_ms == 12.5
    assert record.kernels == "[]" and record.notes == "TENSOR_CORE"
    not_built = PlanRecord(entry=entry, rank=1)
    assert not not_built.built and not_built.sample_ms == ()
    assert not_built.row()["workspace_bytes"] is None and not_built.row()["build_ms"] is None


def test_finished_rows_say_where_the_plan_came_from_and_the_launch_gap() -> None:
    entry = _entry()
    rows = [plan_row(entry, 0, "ok", "", {"median_ms": 0.004, "kernel_ms": 0.003, "_replay_ms": 0.006}),
            plan_row(entry, 1, "not_built", "", {})]
    finish_rows(rows, loaded={"eng0_k2=1": object()}, version=None)
    assert "_replay_ms" not in rows[0] and rows[0]["replay_over_kernel"] == pytest.approx(2.0)
    assert rows[0]["launch_gap_ms"] == pytest.approx(0.003)
    assert rows[0]["from_cache"] is True and rows[1]["from_cache"] is False  # a plan not built is never loaded
    assert rows[0]["proposed"] is True and rows[0]["origin"] == "heuristics" and "knob_names" in rows[0]


def test_one_stop_rule_for_sampling() -> None:
    opts = TimingOptions(min_samples=5, rel_iqr_target=0.10)
    assert not spread_met([1.0] * 4, opts)  # too few samples, however tight
    assert spread_met([1.0] * 5, opts)
    assert not spread_met([1.0, 2.0, 1.0, 2.0, 1.5], opts)  # too wide


def test_the_anatomy_package_keeps_its_names_and_the_session_holds_its_state() -> None:
    from cudnn_lab.gpu.session import Session

    assert {"explore_rows", "kernel_and_note_columns", "knob_columns"} <= set(anatomy.__all__)
    source = inspect.getsource(Session.__init__)
    assert "self.anatomy" in source and "self.explorer" in source
    for module in (anatomy.columns, anatomy.explore):
        assert "sess._" not in inspect.getsource(module)  # no private state attached to the session


def test_a_run_is_stopped_where_it_is_and_keeps_the_first_reason() -> None:
    run = Run(cl.ConvSpec(), cl.RunOptions())
    assert run.stopped is None
    run.halt("stop asked after 2 of 9 plans")
    run.halt("interrupted (KeyboardInterrupt)")
    assert run.stopped == "stop asked after 2 of 9 plans"
