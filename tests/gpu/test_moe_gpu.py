"""cl.run on a real GPU for the MoE grouped GEMM: every plan inside cuDNN's band, every row written, for balanced
and imbalanced routings (Zipf, one hot expert, idle experts, uneven counts), with the PyTorch loop, one dense GEMM
of the same FLOPs and torch._grouped_mm timed beside the plans."""

from __future__ import annotations

import math

import pytest

import cudnn_lab as cl
from cudnn_lab.specs.moe import MoeSpec

pytestmark = pytest.mark.gpu

SMALL = dict(experts=8, tokens=4096, hidden_in=1024, hidden_out=1024)
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.05)


def _assert_every_plan_is_right(result: cl.RunResult) -> None:
    """At least one plan ran; every plan that ran wrote every row and is inside cuDNN's band."""
    print(result.summary())
    print(result.plans[["plan", "status", "median_ms", "rel_l2", "nan_count", "pass_cudnn", "error"]].to_string())
    ok = result.ok
    assert len(ok) >= 1, result.plans
    assert (ok["nan_count"] == 0).all(), ok[["plan", "nan_count"]]
    assert ok["pass_cudnn"].astype(bool).all(), ok[["plan", "rel_l2", "max_abs"]]


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_balanced_routing_every_plan_inside_the_band(dtype: str) -> None:
    _assert_every_plan_is_right(cl.run(MoeSpec(**SMALL, dtype=dtype), **QUICK))


@pytest.mark.parametrize("routing", [
    dict(distribution="zipf", skew=1.2),
    dict(distribution="zipf", skew=3.0, seed=7),  # a steep skew, the large share on a shuffled expert
    dict(distribution="hot", hot_share=1.0),  # one-hot: seven idle experts
    dict(distribution="hot", hot_share=0.75, seed=3),
    dict(distribution="counts", counts=(1, 0, 2047, 517, 3, 0, 1500, 28)),  # counts off any tile size
], ids=["zipf", "zipf_steep", "one_hot", "hot", "counts"])
def test_imbalanced_routings_run_inside_the_band(routing: dict) -> None:
    spec = MoeSpec(**SMALL, **routing)
    _assert_every_plan_is_right(cl.run(spec, **QUICK))


def test_baselines_show_the_loop_the_dense_gemm_and_grouped_mm() -> None:
    import torch

    spec = MoeSpec(**SMALL, distribution="zipf", skew=1.2)
    result = cl.run(spec, plans="heuristic", baselines=True, roofline=False, time_cap_s=0.05)
    print(result.torch)
    for key in ("benchmark_off_ms", "dense_gemm_ms"):
        assert math.isfinite(result.torch[key]) and result.torch[key] > 0, result.torch
    if hasattr(torch, "_grouped_mm"):  # its kernels exist from Hopper on; elsewhere its error is recorded
        assert "grouped_mm_ms" in result.torch or "grouped_mm_error" in result.torch, result.torch


def test_grouped_mm_and_the_loop_agree_with_the_reference() -> None:
    """The eager baselines compute the same Y (so their times are of the same work)."""
    import torch

    import cudnn_lab.reference as ref
    from cudnn_lab.reference.moe import extra_baselines

    spec = MoeSpec(**SMALL, distribution="hot", hot_share=0.75)
    inputs = ref.make_inputs(spec, device="cuda")
    expected = ref.reference(spec, inputs)
    loop = ref.torch_eager(spec, inputs)
    assert ((loop.double() - expected).norm() / expected.norm()).item() < 1e-2
    ops = extra_baselines(spec, inputs)
    if "grouped_mm" in ops:
        try:
            got = ops["grouped_mm"]()
        except RuntimeError as e:  # no kernel for this GPU: nothing to compare
            pytest.skip(f"torch._grouped_mm does not run here: {e}")
        torch.cuda.synchronize()
        assert ((got.double() - expected[0]).norm() / expected.norm()).item() < 1e-2
