"""RunResult.summary shows a run's parallel builds (settings["parallel_build"], gpu/parallel_build.py's report)."""

from __future__ import annotations

import json

from cudnn_lab.gpu.parallel_build import BuildReport, PlanBuild
from cudnn_lab.results import RunResult, plans_frame
from cudnn_lab.specs import MatmulSpec


def _result(settings: dict) -> RunResult:
    rows = [dict(plan="eng4_k24=27", engine_id=4, heuristic_rank=0, rank_A=0, status="ok", median_ms=0.031)]
    return RunResult(spec=MatmulSpec(batch=1, m=64, n=64, k=64, dtype="fp16"), plans=plans_frame(rows),
                     device={"gpu": "NVIDIA H100 80GB HBM3", "cudnn_backend": 91900}, torch={}, ceilings={},
                     settings=settings, warnings=[], created="2026-11-26T00:00:00+00:00")


def test_summary_says_how_many_helpers_built_how_many_plans_and_what_it_saved() -> None:
    report = BuildReport(workers=8, helpers=3, wall_s=1.25, plans=(
        PlanBuild("a", 0, "stored", 2000.0), PlanBuild("b", 1, "stored", 1500.0), PlanBuild("c", 2, "fast", 4.0)))
    settings = json.loads(json.dumps({"parallel_build": report.to_dict()}))
    lines = [x for x in _result(settings).summary().splitlines() if x.startswith("parallel builds")]
    assert lines == ["parallel builds: 3 helpers built 2 plans in 1.2 s (serial 3.5 s, saved 2.2 s)"]


def test_summary_says_why_parallel_builds_were_skipped_and_nothing_when_off() -> None:
    skipped = _result({"parallel_build": {"workers": 4, "helpers": 0, "built": 0, "skipped": "plan_cache=False"}})
    assert "parallel builds: skipped (plan_cache=False)" in skipped.summary()
    assert "parallel builds" not in _result({"parallel_build": None}).summary()
    assert "parallel builds" not in _result({}).summary()


def test_a_saved_result_keeps_its_parallel_build_report(tmp_path) -> None:
    report = BuildReport(workers=8, helpers=2, wall_s=0.5, problems=("helper 3 died",),
                         plans=(PlanBuild("a", 0, "stored", 700.0), PlanBuild("b", -1, "missed")))
    result = _result({"parallel_build": report.to_dict()})
    path = tmp_path / "run.json"
    result.save(path)
    again = RunResult.load(path)
    assert again.settings["parallel_build"] == report.to_dict()
    assert "parallel builds: 2 helpers built 1 plans in 0.5 s (serial 0.7 s, saved 0.2 s)" in again.summary()
