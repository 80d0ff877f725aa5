"""cl.run(PoolSpec) on a real GPU: cuDNN's classic cudnnPoolingForward as the one plan row, NaN-poisoned output
checked within cuDNN's band of the float64 reference, timed; and the graph API's lack of pooling said plainly."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu.classic.pool import PLAN_NAME

pytestmark = pytest.mark.gpu

SMALL = dict(n=4, c=32, h=17, w=17)
QUICK = dict(plans="heuristic", baselines=False, roofline=False, time_cap_s=0.05)


def _assert_classic_plan_is_right(result: cl.RunResult) -> None:
    plans = result.plans
    assert list(plans["plan"]) == [PLAN_NAME], plans
    pick = result.heuristic_pick
    assert pick["status"] == "ok", pick.to_dict()
    assert int(pick["engine_id"]) == -1
    assert pick["nan_count"] == 0, pick.to_dict()  # every element of the NaN-poisoned Y was written
    assert bool(pick["pass_cudnn"]), pick.to_dict()
    assert pick["median_ms"] > 0


@pytest.mark.parametrize("dtype", ["fp16", "fp32", "bf16"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", ["max", "avg", "avg_exclude_pad"])
def test_pool_matches_reference(mode: str, layout: str, dtype: str) -> None:
    spec = cl.PoolSpec(**SMALL, mode=mode, window=3, stride=2, padding=1, layout=layout, dtype=dtype)
    _assert_classic_plan_is_right(cl.run(spec, **QUICK))


@pytest.mark.parametrize("window,stride,padding", [(2, 2, 0), (3, 1, 1), ((3, 5), (2, 1), (1, 2)), (17, 17, 0),
                                                   (4, 2, 2), (1, 1, 0)],
                         ids=["2s2p0", "3s1p1", "3x5s2x1p1x2", "global", "4s2p2", "1s1p0"])
@pytest.mark.parametrize("mode", ["max", "avg", "avg_exclude_pad"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_pool_window_stride_padding_cases(layout: str, mode: str, window, stride, padding) -> None:
    spec = cl.PoolSpec(**SMALL, mode=mode, window=window, stride=stride, padding=padding, layout=layout,
                       dtype="fp16")
    _assert_classic_plan_is_right(cl.run(spec, **QUICK))


def test_pool_against_pytorch_with_all_plans_and_roofline() -> None:
    spec = cl.PoolSpec(n=32, c=64, h=56, w=56, mode="max", window=3, stride=2, padding=1, layout="NHWC",
                       dtype="fp16")
    result = cl.run(spec, plans="all", torch_baseline=True, roofline=True, time_cap_s=0.2)
    _assert_classic_plan_is_right(result)
    assert result.best["plan"] == PLAN_NAME
    assert result.torch.get("benchmark_off_ms", 0) > 0, result.torch  # PyTorch's max_pool2d ran on the same X
    assert result.heuristic_pick["gbps"] > 0
    print(result.summary())


def test_classic_call_is_captured_in_a_cuda_graph() -> None:
    """The classic call runs on the handle's stream (the session's), so CUDA-graph replay times it."""
    result = cl.run(cl.PoolSpec(**SMALL), timing="cuda_graph", **QUICK)
    assert result.heuristic_pick["timing_mode"] == "cuda_graph", result.heuristic_pick.to_dict()
    assert result.heuristic_pick["calls_per_sample"] > 1


def test_repeated_run_reuses_the_session_and_stays_right() -> None:
    spec = cl.PoolSpec(**SMALL, mode="avg", layout="NCHW", dtype="fp32")
    first = cl.run(spec, **QUICK)
    again = cl.run(spec, **QUICK)
    _assert_classic_plan_is_right(first)
    _assert_classic_plan_is_right(again)


def test_build_graph_says_pooling_has_no_graph_and_what_runs_instead() -> None:
    with pytest.raises(cl.UnsupportedGraphError) as info:
        cl.build_graph(cl.PoolSpec(**SMALL))
    assert "cudnnPoolingForward" in str(info.value) and "graph API" in str(info.value)


def test_resample_node_from_json_still_fails_in_this_frontend() -> None:
    """Finding (a): the one way to put pooling into a frontend 1.32 graph from Python fails at
    build_operation_graph. If this test fails, the frontend fixed it: revisit cudnn_lab/graph/pool.py."""
    import cudnn

    from cudnn_lab.graph.pool import resample_graph_json

    g = cudnn.pygraph(handle=cudnn.create_handle())
    g.deserialize(resample_graph_json(cl.PoolSpec(**SMALL)))
    lowered = g._lowered_graph  # the deserialized C++ graph; the Python IR holds no node
    lowered.validate()
    with pytest.raises(Exception, match="BAD_PARAM"):
        lowered.build_operation_graph()
