"""cl.run on a real GPU for the fusions of issue 28 and standalone reductions: every plan that runs is inside
cuDNN's band with every output element written (conv + concatenate: the conv's channels; the in-place part is the
caller's), and what cuDNN has no engine for is refused with its per-engine reasons and the kit's hint.

What cuDNN 9.19 answered on an H200 (2026-11-26, ``scripts/probe_reductions.py``): the refusals below; a later cuDNN
that runs one of them fails the matching test, which is then to be updated."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import UnsupportedGraphError

pytestmark = pytest.mark.gpu

SMALL = dict(n=8, c=64, h=28, w=28, k=64)
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.02)


def _every_plan_in_band(spec: cl.Spec) -> cl.RunResult:
    result = cl.run(spec, **QUICK)
    print(result.plans[["plan", "status", "median_ms", "rel_l2", "nan_count", "error"]].to_string())
    ok = result.ok
    assert len(ok) >= 1, result.plans
    assert (ok["nan_count"] == 0).all(), ok[["plan", "nan_count"]]  # every element checked was written
    assert ok["pass_cudnn"].all(), ok[["plan", "rel_l2", "max_abs"]]
    return result


@pytest.mark.parametrize("mode,axes,dtype", [("add", "c", "fp16"), ("add", "nhw", "fp16"), ("max", "c", "fp16"),
                                             ("max", "nhw", "fp16"), ("add", "nhw", "bf16")])
def test_conv_reduction(mode: str, axes: str, dtype: str) -> None:
    _every_plan_in_band(cl.ConvReductionSpec(**SMALL, mode=mode, axes=axes, dtype=dtype))


@pytest.mark.parametrize("k0,dtype", [(64, "fp16"), (32, "fp16"), (64, "bf16")])
def test_conv_concatenate_in_place(k0: int, dtype: str) -> None:
    _every_plan_in_band(cl.ConvConcatSpec(**SMALL, k0=k0, dtype=dtype))


@pytest.mark.parametrize("extra", [dict(dtype="fp16"), dict(dtype="bf16"), dict(dtype="fp16", k=128, stride=2)])
def test_conv_dgrad_relu_backward(extra: dict) -> None:
    _every_plan_in_band(cl.ConvDgradReluSpec(**{**SMALL, **extra}))


@pytest.mark.parametrize("mode,axes,dtype", [("add", "nhw", "fp16"), ("max", "nhw", "fp16"), ("min", "nhw", "fp16"),
                                             ("amax", "nhw", "fp16"), ("add", "c", "fp16"), ("add", "nchw", "fp16"),
                                             ("add", "nhw", "fp32"), ("max", "c", "bf16")])
def test_standalone_reduction_runs_in_nhwc(mode: str, axes: str, dtype: str) -> None:
    _every_plan_in_band(cl.ReductionSpec(mode=mode, axes=axes, dtype=dtype))


@pytest.mark.parametrize("changes,reason,category", [
    (dict(layout="NCHW"), "!is_NHWC", "by layout"),
    (dict(axes="hw"), "isColumnReduction", "by pattern"),
    (dict(mode="mul"), "Unsupported reduction op", "by pattern"),
    (dict(mode="avg"), "", ""), (dict(mode="norm2"), "", "")])
def test_standalone_reduction_refusals_say_cudnns_reasons(changes: dict, reason: str, category: str) -> None:
    spec = cl.ReductionSpec(**changes)
    with pytest.raises(UnsupportedGraphError) as info:
        cl.run(spec, **QUICK)
    err = info.value
    print(err.summary, "\n", err.detail[:2000])
    assert "No cuDNN engine" in err.summary and "ran standalone reductions only in NHWC" in err.summary
    assert err.detail and err.cudnn_version
    if reason:  # cuDNN's message holds per-engine reasons: the summary counts them by category
        assert reason in err.detail and "cuDNN refused" in err.summary and category in err.summary
