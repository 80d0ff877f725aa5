"""The gap between a plan's kernels (issue 36): each execution's span (first kernel start to last kernel end) minus
its summed kernel time, from the CUPTI timeline cut at one marker per execution; a column of its own
(``kernel_gap_ms``) in the schema, read back by the checked loader. CPU parts on made-up timelines; the GPU part on
a real two-kernel plan."""

from __future__ import annotations

import json

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError
from cudnn_lab.gpu.kernels import KernelStat, PlanKernels, span_gap_us, split_segments
from cudnn_lab.results import RunResult
from cudnn_lab.results.schema import column


def _ev(start: int, end: int, name: str = "k") -> tuple[int, int, str, str]:
    return (start, end, name, "kernel")


def test_span_and_gap_of_one_execution() -> None:
    assert span_gap_us([_ev(0, 4000)]) == (4.0, 0.0)  # one kernel: no gap
    assert span_gap_us([_ev(0, 4000), _ev(5000, 7000, "k2")]) == (7.0, 1.0)  # 1 us idle between two kernels
    assert span_gap_us([_ev(0, 4000), _ev(3000, 6000, "k2")]) == (6.0, -1.0)  # overlapping (PDL): negative
    assert span_gap_us([]) is None


def test_per_execution_segments_give_the_median_gap() -> None:
    mark = "void at::native::FillFunctor"
    timeline = [_ev(0, 10, mark), _ev(100, 200), _ev(300, 400, "k2"),  # execution 1: gap 0.1 us
                _ev(500, 510, mark), _ev(600, 700), _ev(1000, 1100, "k2"),  # execution 2: gap 0.3 us
                _ev(1200, 1210, mark)]
    segments = split_segments(timeline, 2)
    assert segments is not None and [len(s) for s in segments] == [2, 2]
    gaps = [span_gap_us(s)[1] for s in segments]  # type: ignore[index]
    assert gaps == pytest.approx([0.1, 0.3])
    pk = PlanKernels((KernelStat("k", "kernel", 1, 0.1), KernelStat("k2", "kernel", 1, 0.1)), runs=2, gap_us=0.2)
    assert pk.kernel_gap_ms == pytest.approx(0.0002) and pk.kernel_ms == pytest.approx(0.0002)
    assert PlanKernels(error="x", gap_us=1.0).kernel_gap_ms is None and PlanKernels(runs=1).kernel_gap_ms is None


def test_the_column_is_in_the_schema_with_unit_and_meaning() -> None:
    c = column("kernel_gap_ms")
    assert c.dtype == "float" and c.unit == "ms" and "span" in c.doc and "µs" in c.title


def test_a_saved_gap_reads_back_and_a_wrongly_typed_one_is_refused(tmp_path) -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    data = result.to_dict()
    data["plans"][0]["kernel_gap_ms"] = -0.0004  # overlap is a value, not damage
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    assert RunResult.load(path).plans["kernel_gap_ms"].iloc[0] == pytest.approx(-0.0004)
    data["plans"][0]["kernel_gap_ms"] = "small"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match="kernel_gap_ms"):
        RunResult.load(path)


@pytest.mark.gpu
def test_a_real_run_records_the_gap_between_each_plans_kernels(temp_cache) -> None:
    spec = cl.ConvSpec(n=8, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    result = cl.run(spec, plans="all", notes=False, baselines=False, roofline=False, parallel_builds=0)
    ok = result.plans[result.plans["status"] == "ok"]
    assert len(ok) and ok["kernel_gap_ms"].notna().all()
    single = ok[ok["kernel_count"] == 1]
    assert (single["kernel_gap_ms"].abs() < 1e-9).all()  # one kernel: no gap by construction
    span = ok["kernel_ms"] + ok["kernel_gap_ms"]
    assert (span > 0).all()
