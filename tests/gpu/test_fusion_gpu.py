"""cl.run on a real GPU for fusion beyond epilogues: conv_fprop + genstats, and the scale-bias-relu prologue before
conv_fprop (with and without genstats): every output checked; what 9.19 has no engine for refused by the spec."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
import cudnn_lab.graph.fusion  # registers the fusion recipes (also done by cudnn_lab.graph)
from cudnn_lab.specs.fusion import ConvGenstatsSpec, ConvPrologueSpec

pytestmark = pytest.mark.gpu

SMALL = dict(n=8, c=64, h=28, w=28, k=64)
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.05)


def _assert_a_plan_is_right(result: cl.RunResult) -> None:
    print(result.plans[["plan", "status", "median_ms", "rel_l2", "error"]].to_string())
    ok = result.ok
    assert len(ok) >= 1, result.plans
    best = result.best
    assert best["nan_count"] == 0, best.to_dict()  # Y, SUM and SQ_SUM all written
    assert bool(best["pass_cudnn"]), best.to_dict()


def test_conv_genstats() -> None:
    _assert_a_plan_is_right(cl.run(ConvGenstatsSpec(**SMALL, dtype="fp16"), **QUICK))


def test_what_cudnn_9_19_has_no_engine_for_is_refused_by_the_spec() -> None:
    """bf16 conv + genstats and the prologue + genstats with fp32 scale/bias found no engine on an H100 with 9.19
    (scripts/probe_fusions.py --variants, 2026-11-22): the specs refuse them naming the field and the version."""
    with pytest.raises(cl.SpecError) as info:
        ConvGenstatsSpec(**SMALL, dtype="bf16")
    assert info.value.field == "dtype" and "9.19" in str(info.value)
    with pytest.raises(cl.SpecError) as info:
        ConvPrologueSpec(**SMALL, dtype="fp16", param_dtype="fp32", genstats=True)
    assert info.value.field == "param_dtype" and "9.19" in str(info.value)


@pytest.mark.parametrize("dtype,param_dtype,genstats", [
    ("fp16", "fp32", False), ("fp16", "fp16", False), ("bf16", "fp32", False), ("bf16", "bf16", False),
    ("fp16", "fp16", True)])
def test_scale_bias_relu_prologue(dtype: str, param_dtype: str, genstats: bool) -> None:
    spec = ConvPrologueSpec(**SMALL, dtype=dtype, param_dtype=param_dtype, genstats=genstats)
    _assert_a_plan_is_right(cl.run(spec, **QUICK))


def test_prologue_strided_1x1() -> None:
    spec = ConvPrologueSpec(n=8, c=64, h=28, w=28, k=128, r=1, s=1, padding=0, stride=2)
    _assert_a_plan_is_right(cl.run(spec, **QUICK))


def test_against_pytorch() -> None:
    result = cl.run(ConvPrologueSpec(n=32, c=128, h=28, w=28, k=128), plans="all", time_cap_s=0.2)
    print(result.summary())
    assert result.torch.get("benchmark_off_ms", 0) > 0, result.torch
    _assert_a_plan_is_right(result)
