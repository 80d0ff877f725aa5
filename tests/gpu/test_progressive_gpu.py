"""Progressive runs on a real GPU: rows handed out in the heuristics' order as plans are measured, a stop or an
interrupt keeps what was measured (a partial result), and a full run's plans and statuses are those of a run that
nobody listened to."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

SPEC = cl.MatmulSpec(batch=1, m=256, n=256, k=128, dtype="fp16", epilogue=("bias",))
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.05, max_plans=6)


class Rows:
    """A progress object: counts the steps and keeps each row as it comes."""

    def __init__(self, stop_after: int | None = None, interrupt_after: int | None = None) -> None:
        self.rows: list[dict] = []
        self.steps = 0
        self.stop_after, self.interrupt_after = stop_after, interrupt_after

    def __call__(self, done: int, total: int, message: str) -> None:
        self.steps += 1

    def row(self, row: dict) -> None:
        self.rows.append(row)
        if self.interrupt_after is not None and len(self.rows) >= self.interrupt_after:
            raise KeyboardInterrupt

    def stop(self) -> bool:
        return self.stop_after is not None and len(self.rows) >= self.stop_after


def _statuses(result: cl.RunResult) -> dict[str, str]:
    return dict(zip(result.plans["plan"], result.plans["status"]))


def test_rows_come_in_heuristic_order_with_the_pick_first() -> None:
    heard = Rows()
    result = cl.run(SPEC, progress=heard, resample=True, **QUICK)
    ranks = [r["heuristic_rank"] for r in heard.rows]
    assert ranks == list(range(len(result.plans))) and heard.steps > 0
    first_ok = next(r for r in heard.rows if r["status"] == "ok")
    assert first_ok["plan"] == result.heuristic_pick["plan"] and first_ok["median_ms"] > 0
    assert not result.partial and result.settings["partial"] is False
    for row in heard.rows:  # a row handed out is the final row's measured part
        final = result.plans.set_index("plan").loc[row["plan"]]
        assert final["status"] == row["status"]
        if row["status"] == "ok":
            assert final["median_ms"] == pytest.approx(row["median_ms"])


def test_a_stop_after_two_rows_returns_a_partial_result_with_those_rows(tmp_path) -> None:
    heard = Rows(stop_after=2)
    result = cl.run(SPEC, progress=heard, stop=heard.stop, resample=True, **QUICK)
    assert len(heard.rows) == 2 and result.partial
    assert list(result.plans["plan"]) == [r["plan"] for r in heard.rows]
    assert "stop asked after 2" in result.settings["stopped"] and "PARTIAL" in result.summary()
    assert cl.RunResult.load(result.save(tmp_path / "partial.json")).partial


def test_an_interrupt_keeps_what_was_measured() -> None:
    heard = Rows(interrupt_after=1)
    result = cl.run(SPEC, progress=heard, resample=True, **QUICK)
    assert result.partial and "KeyboardInterrupt" in result.settings["stopped"]
    assert list(result.plans["plan"]) == [heard.rows[0]["plan"]]


def test_a_full_progressive_run_equals_a_run_nobody_listens_to() -> None:
    quiet = cl.run(SPEC, resample=True, **QUICK)
    heard = Rows()
    loud = cl.run(SPEC, progress=heard, resample=True, **QUICK)
    assert _statuses(loud) == _statuses(quiet)
    assert list(loud.plans["plan"]) == list(quiet.plans["plan"]) == [r["plan"] for r in heard.rows]


def test_the_heuristic_policy_hands_out_the_pick_then_the_plans_it_did_not_build() -> None:
    heard = Rows()
    result = cl.run(SPEC, progress=heard, **{**QUICK, "plans": "heuristic"})
    statuses = [r["status"] for r in heard.rows]
    first = next(i for i, s in enumerate(statuses) if s == "ok")
    assert all(s == "build_failed" for s in statuses[:first])
    assert all(s == "not_built" for s in statuses[first + 1:])
    assert heard.rows[first]["plan"] == result.heuristic_pick["plan"]


def test_the_lab_table_fills_in_during_a_live_run_and_stop_keeps_a_partial_result() -> None:
    from cudnn_lab.ui import Lab

    lab = Lab(SPEC, gpu=True)
    lab.run_options = cl.RunOptions(**QUICK, resample=True)
    table = lab.results.plans_table
    seen: list[list[str]] = []
    fill = table.show_rows

    def watch(spec: cl.Spec, rows: list[dict]) -> None:  # the real table, its calls recorded
        seen.append([r["plan"] for r in rows])
        fill(spec, rows)
        assert not lab.stop_button.disabled  # Stop is on while the run is under way

    table.show_rows = watch
    result = lab.run()
    order = list(result.plans.sort_values("heuristic_rank", kind="stable")["plan"])
    assert seen == [order[:i] for i in range(1, len(order) + 1)] and not result.partial
    assert lab.stop_button.disabled  # idle again

    seen.clear()
    table.show_rows = lambda spec, rows: (watch(spec, rows), lab.stop())  # Stop as the first row arrives
    part = lab.run()
    assert part.partial and len(part.plans) == 1 and seen == [order[:1]]
    assert "PARTIAL run" in lab.results.info.value and table.plans_shown() == order[:1]
