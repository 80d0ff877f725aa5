"""Attention at head sizes beyond 64/128/256 and with separate Q/K and V head sizes (MLA) on a real GPU (issue 38):
every plan cuDNN proposes runs inside SDPA's band (2e-2/2e-2) against float64, forward and backward, fp16 and bf16,
and PyTorch's SDPA runs the same shapes; the real-model presets run at a smaller size."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

SMALL = dict(batch=2, heads=4, seq_q=256, seq_kv=256, causal=True)
QUICK = dict(plans="all", baselines=True, roofline=False, time_cap_s=0.05, max_plans=8)


def _every_plan_inside_the_band(result: cl.RunResult) -> None:
    ran = result.ok
    assert len(ran) > 0, result.plans[["plan", "status", "error"]].to_string()
    bad = ran[[str(v) != "True" for v in ran["pass_cudnn"]]]  # every plan checked, and inside the band
    assert bad.empty, bad[["plan", "rel_l2", "max_abs"]].to_string()
    assert (ran["nan_count"] == 0).all()
    assert result.torch.get("benchmark_off_ms", 0) > 0, result.torch


@pytest.mark.parametrize("head_dim", [8, 72, 80, 96, 112, 160, 200, 248])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("direction", ["fwd_training", "bwd"])
def test_odd_head_sizes_run_inside_the_band(direction: str, dtype: str, head_dim: int) -> None:
    spec = cl.SdpaSpec(**SMALL, head_dim=head_dim, dtype=dtype, direction=direction)
    _every_plan_inside_the_band(cl.run(spec, **QUICK))


@pytest.mark.parametrize("d_qk,d_v", [(192, 128), (128, 64), (64, 128)])
@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training", "bwd"])
def test_mla_head_sizes_run_inside_the_band(direction: str, d_qk: int, d_v: int) -> None:
    spec = cl.SdpaSpec(**SMALL, head_dim=d_qk, head_dim_v=d_v, dtype="bf16", direction=direction)
    _every_plan_inside_the_band(cl.run(spec, **QUICK))


def test_mla_with_grouped_heads_and_a_padding_mask() -> None:
    spec = cl.SdpaSpec(**SMALL, kv_heads=2, head_dim=192, head_dim_v=128, dtype="bf16", direction="bwd",
                       seq_lens_q=(256, 100), seq_lens_kv=(256, 130))
    _every_plan_inside_the_band(cl.run(spec, **QUICK))


@pytest.mark.parametrize("name", ["DeepSeek-V3 MLA prefill", "DeepSeek-V3 MLA training backward",
                                  "Phi-3-mini attention (d 96)", "Phi-2 attention (d 80)", "ViT-B/16 attention",
                                  "Qwen2-VL vision attention (d 80)"])
def test_the_attention_presets_run(name: str) -> None:
    spec = cl.preset(name)
    spec = spec.replace(heads=min(spec.heads, 16), seq_q=min(spec.seq_q, 1024), seq_kv=min(spec.seq_kv, 1024))
    _every_plan_inside_the_band(cl.run(spec, **{**QUICK, "max_plans": 4}))


@pytest.mark.parametrize("d_qk,d_v", [(264, 264), (512, 512), (1024, 1024), (576, 512)])
@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training"])
def test_forward_head_sizes_past_256_run_inside_the_band(direction: str, d_qk: int, d_v: int) -> None:
    """The forward past 256, as cuDNN 9.19 answered on an H200 (scripts/probe_shapes.py --beyond, 2026-11-29)."""
    spec = cl.SdpaSpec(**SMALL, head_dim=d_qk, head_dim_v=d_v, dtype="bf16", direction=direction)
    _every_plan_inside_the_band(cl.run(spec, **QUICK))
