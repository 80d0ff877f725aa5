"""gpu/execution.py's per-phase timing (``settings["phase_s"]``): the record's shape, without a GPU."""

from __future__ import annotations

import time

from cudnn_lab.gpu.execution import PHASES, Phases


def test_phases_add_up_and_every_phase_is_reported_in_run_order() -> None:
    phases = Phases()
    with phases("build"):
        time.sleep(0.002)
    phases.add("check", 0.5)
    phases.add("check", 0.25)  # a phase met again (one per plan) adds up
    phases.add("extra", 0.1)  # a phase outside PHASES is kept, after them
    record = phases.record(total=2.0)
    assert list(record)[:len(PHASES)] == list(PHASES)
    assert record["check"] == 0.75 and record["build"] >= 0.002 and record["notes"] == 0.0
    assert record["extra"] == 0.1 and list(record)[-1] == "total" and record["total"] == 2.0


def test_a_phase_that_raises_is_still_timed() -> None:
    phases = Phases()
    try:
        with phases("kernels"):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert "kernels" in phases.s and phases.s["kernels"] >= 0.0
