"""A hand-made RunResult, saved as JSON, for the Lab's recorded-results path (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudnn_lab.results import RunResult, plans_frame
from cudnn_lab.specs import ConvSpec

SPEC = ConvSpec(n=4, c=32, h=16, w=16, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                epilogue=("bias", "relu"))


def made_result() -> RunResult:
    """Five plans in heuristic order: one failed to build, three ran (one fails the check), one failed to run."""
    rows = [
        dict(plan="eng0_k2=1", engine_id=0, knobs='{"SPLIT_K": 1}', heuristic_rank=0, rank_A=0,
             status="build_failed", error="no kernel for this layout", behavior_notes=""),
        dict(plan="eng4_k24=27", engine_id=4, knobs='{"KERNEL_CFG": 27}', heuristic_rank=1, rank_A=1, status="ok",
             median_ms=0.031, iqr_ms=0.001, min_ms=0.030, samples=50, workspace_bytes=4096,
             behavior_notes="RUNTIME_COMPILATION", pass_cudnn=True, pass_torch=True, rel_l2=2e-4, max_abs=1e-3,
             nan_count=0, inf_count=0, within_torch=1.0, within_cudnn=1.0, capped=False, timing_mode="cuda_graph",
             tflops=12.0, gbps=300.0, pct_of_ceiling=20.0),
        dict(plan="eng8", engine_id=8, knobs="{}", heuristic_rank=2, rank_B=0, status="ok", median_ms=0.012,
             iqr_ms=0.002, samples=40, workspace_bytes=0, pass_cudnn=False, pass_torch=False, rel_l2=0.3,
             nan_count=5, inf_count=0, capped=True, timing_mode="events", tflops=30.0, gbps=700.0),
        dict(plan="eng9_k3=0", engine_id=9, knobs='{"TILE": 0}', heuristic_rank=3, rank_B=1, status="ok",
             median_ms=0.025, iqr_ms=0.0015, samples=60, workspace_bytes=2 * 2**20, pass_cudnn=True,
             pass_torch=True, rel_l2=1e-4, nan_count=0, inf_count=0, capped=False, timing_mode="cuda_graph",
             tflops=15.0, gbps=380.0),
        dict(plan="eng11", engine_id=11, heuristic_rank=4, rank_FALLBACK=0, status="run_failed",
             error="illegal address"),
    ]
    return RunResult(spec=SPEC, plans=plans_frame(rows),
                     device={"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.65.06", "cudnn_backend": 91900},
                     torch={"benchmark_off_ms": 0.04, "benchmark_on_ms": 0.028},
                     ceilings={"tflops": 700.0, "gbps": 3000.0}, settings={"heuristics": ["A", "B", "FALLBACK"]},
                     warnings=["a note from the run"], created="2026-01-02T03:04:05+00:00")


@pytest.fixture
def recorded_result() -> RunResult:
    return made_result()


@pytest.fixture
def recorded_path(tmp_path: Path, recorded_result: RunResult) -> Path:
    return recorded_result.save(tmp_path / "h100_conv.json")
