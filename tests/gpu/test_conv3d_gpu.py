"""cl.run(Conv3dSpec) on a real GPU (issue 38): every plan cuDNN proposes for 3-D convolutions (fprop, dgrad, wgrad;
NCDHW and NDHWC; fp16, bf16, fp32; an epilogue; depthwise; the video-model presets at a smaller batch) runs and
writes an output inside the dtype's cuDNN band against float64, and PyTorch's conv3d (the baseline) runs too."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

QUICK = dict(plans="all", baselines=True, roofline=False, time_cap_s=0.05, max_plans=12)
SMALL = dict(n=2, c=32, d=8, h=16, w=16, k=64)


def _every_plan_inside_the_band(result: cl.RunResult) -> None:
    plans = result.plans
    ran = result.ok
    assert len(ran) > 0, plans[["plan", "status", "error"]].to_string()
    bad = ran[[str(v) != "True" for v in ran["pass_cudnn"]]]  # every plan checked, and inside the band
    assert bad.empty, bad[["plan", "rel_l2", "max_abs"]].to_string()
    assert (ran["nan_count"] == 0).all()
    assert result.torch.get("benchmark_off_ms", 0) > 0, result.torch  # torch.nn.functional.conv3d / its gradient


@pytest.mark.parametrize("layout", ["NDHWC", "NCDHW"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
def test_every_plan_of_a_3d_conv_is_inside_the_band(direction: str, dtype: str, layout: str) -> None:
    spec = cl.Conv3dSpec(**SMALL, direction=direction, dtype=dtype, layout=layout)
    _every_plan_inside_the_band(cl.run(spec, **QUICK))


def test_a_3d_conv_with_an_epilogue() -> None:
    spec = cl.Conv3dSpec(**SMALL, epilogue=("bias", "relu"), dtype="fp16")
    _every_plan_inside_the_band(cl.run(spec, **QUICK))


@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
def test_a_depthwise_3d_conv(direction: str) -> None:
    spec = cl.Conv3dSpec(n=2, c=64, k=64, groups=64, d=8, h=14, w=14, direction=direction, dtype="fp16")
    _every_plan_inside_the_band(cl.run(spec, **QUICK))


@pytest.mark.parametrize("name", ["Wan2.1 video VAE conv3d", "Wan2.1 video VAE conv3d dgrad",
                                  "Qwen2-VL vision patch conv3d", "X3D-M depthwise conv3d"])
def test_the_video_model_presets_run(name: str) -> None:
    spec = cl.preset(name)
    spec = spec.replace(n=min(spec.n, 64))  # the layer as published, at a smaller batch
    _every_plan_inside_the_band(cl.run(spec, **{**QUICK, "max_plans": 6}))


def test_the_recorded_video_problems_are_listed() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
    from record import PROBLEMS

    video = [s for s in PROBLEMS.values() if isinstance(s, cl.Conv3dSpec)]
    assert {s.direction for s in video} == {"fprop", "dgrad", "wgrad"}
