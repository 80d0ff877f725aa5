"""cl.run(RnnSpec) on a real GPU: cuDNN's classic RNN API, one plan row per algorithm, every output NaN-poisoned and
checked against the float64 cell-by-cell reference (itself checked against torch.nn on the CPU); the weights copied
into the places cudnnGetRNNWeightParams gives; the backward training step; PyTorch's module as the baseline."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
import cudnn_lab.gpu.classic.rnn  # registers RnnSpec's plan source (also done by cudnn_lab.gpu)
from cudnn_lab.gpu.classic.rnn import RnnPlan, plan_name
from cudnn_lab.specs.rnn import CELLS, RnnSpec

pytestmark = pytest.mark.gpu

SMALL = dict(hidden_size=64, input_size=32, seq_len=8, batch=4)
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.05)


def _row(result: cl.RunResult, algo: str) -> dict:
    rows = result.plans.set_index("plan")
    return rows.loc[plan_name(result.spec, algo)].to_dict()


def _assert_ran_and_matches(row: dict, strict: bool = True) -> None:
    assert row["status"] == "ok", row
    assert row["nan_count"] == 0, row  # every element of every NaN-poisoned output was written
    assert row["engine_id"] == -1 and row["median_ms"] > 0
    if strict:
        assert bool(row["pass_cudnn"]), row
    else:
        assert row["rel_l2"] < 1e-2, row


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("cell", CELLS)
def test_standard_algorithm_matches_reference(cell: str, dtype: str) -> None:
    spec = RnnSpec(cell=cell, dtype=dtype, algo="standard", **SMALL)
    result = cl.run(spec, **QUICK)
    assert list(result.plans["plan"]) == [plan_name(spec, "standard")]
    _assert_ran_and_matches(_row(result, "standard"))


def test_stacked_bidirectional_lstm() -> None:
    spec = RnnSpec(cell="lstm", layers=3, bidirectional=True, dtype="fp16", algo="standard", **SMALL)
    _assert_ran_and_matches(_row(cl.run(spec, **QUICK), "standard"))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_every_algorithm_is_a_plan_row_and_each_that_builds_is_right(cell: str) -> None:
    """One row per algorithm; cuDNN may refuse a persistent one for a problem (its row says which status)."""
    spec = RnnSpec(cell=cell, dtype="fp16", **SMALL)
    result = cl.run(spec, **QUICK)
    print(result.plans[["plan", "status", "error", "median_ms", "rel_l2", "workspace_bytes"]].to_string())
    assert len(result.plans) == 4 and set(result.plans["engine_id"]) == {-1}
    _assert_ran_and_matches(_row(result, "standard"))
    for _, row in result.plans.iterrows():
        if row["status"] == "ok":
            _assert_ran_and_matches(row.to_dict())
        else:
            assert row["status"] == "build_failed" and "CUDNN_STATUS" in row["error"], row.to_dict()
    assert (result.plans["status"] == "ok").sum() >= 2, "only the standard algorithm ran"


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn_tanh"])
def test_backward_training_step_matches_autograd(cell: str) -> None:
    spec = RnnSpec(cell=cell, layers=2, bidirectional=True, dtype="fp32", math_type="fma", algo="standard",
                   direction="bwd", **SMALL)
    result = cl.run(spec, **QUICK)
    _assert_ran_and_matches(_row(result, "standard"), strict=False)


def test_fp32_without_tensor_cores_is_fp32_accurate() -> None:
    spec = RnnSpec(cell="lstm", dtype="fp32", math_type="fma", algo="standard", **SMALL)
    row = _row(cl.run(spec, **QUICK), "standard")
    _assert_ran_and_matches(row)
    assert row["rel_l2"] < 1e-5, row


def test_bf16_runs_or_says_why() -> None:
    spec = RnnSpec(cell="lstm", dtype="bf16", algo="standard", **SMALL)
    row = _row(cl.run(spec, **QUICK), "standard")
    print(row)
    if row["status"] == "ok":
        _assert_ran_and_matches(row)
    else:
        assert "CUDNN_STATUS" in row["error"], row


def test_weight_views_are_disjoint_and_inside_cudnns_weight_space() -> None:
    import torch

    from cudnn_lab.gpu.session import cudnn_handle

    spec = RnnSpec(cell="lstm", layers=2, bidirectional=True, dtype="fp16", **SMALL)
    plan = RnnPlan(spec, "standard", cudnn_handle(0)).build_plan_at_index(0)
    base, size = plan._buffers["weights"].data_ptr(), plan.sizes["weights"]
    spans = sorted((v.data_ptr() - base, v.data_ptr() - base + v.numel() * v.element_size()) for _, v, _ in plan._views)
    assert len(spans) == len(spec.weight_slots())
    assert spans[0][0] >= 0 and spans[-1][1] <= size
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    used = sum(e - s for s, e in spans)
    print(f"weight space {size} bytes, {used} used by the {len(spans)} matrices and biases")
    assert used == sum(torch.Size(d).numel() for d in spec.param_shapes().values()) * 2
    plan.release()


def test_against_pytorch_with_baseline() -> None:
    spec = RnnSpec(cell="lstm", layers=2, dtype="fp16", hidden_size=512, input_size=512, seq_len=64, batch=32)
    result = cl.run(spec, plans="all", roofline=True, time_cap_s=0.3)
    print(result.summary())
    print(result.plans[["plan", "status", "median_ms", "tflops", "rel_l2", "error"]].to_string())
    assert result.torch.get("benchmark_off_ms", 0) > 0, result.torch  # torch.nn.LSTM on the same weights
    _assert_ran_and_matches(_row(result, "standard"))


def test_build_graph_says_there_is_no_rnn_graph() -> None:
    with pytest.raises(cl.UnsupportedGraphError, match="cudnnRNNForward"):
        cl.build_graph(RnnSpec(**SMALL))
