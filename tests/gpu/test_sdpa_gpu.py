"""cl.run(SdpaSpec) on a real GPU: the heuristic's pick writes every output (O, Stats, dQ/dK/dV) within the SDPA
band (cuDNN's SDPA tests' 2e-2/2e-2) of the float64 reference, with a rel L2 near the dtype's rounding, for the
forward (inference, training) and backward, masks, layouts, dtypes, head sizes and grouped-query attention."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

SMALL = dict(batch=2, heads=4, seq_q=128, seq_kv=128)
RUN = dict(plans="heuristic", baselines=True, roofline=False, time_cap_s=0.05)
REL_L2 = {"fp16": 2e-3, "bf16": 1e-2}


def _assert_pick_is_right(result: cl.RunResult) -> None:
    pick = result.heuristic_pick
    assert pick["status"] == "ok", pick.to_dict()
    assert pick["nan_count"] == 0, pick.to_dict()
    assert bool(pick["pass_cudnn"]), pick.to_dict()  # SDPA's band: cuDNN's SDPA tests' 2e-2 / 2e-2
    # and tighter overall: rel L2 of the worst output near the dtype's rounding (measured: fp16 ~4e-4, bf16 ~3e-3)
    assert pick["rel_l2"] < REL_L2[result.spec.dtype], pick.to_dict()
    assert pick["median_ms"] > 0
    assert result.torch.get("benchmark_off_ms", 0) > 0, result.torch  # PyTorch's SDPA ran on the same inputs


@pytest.mark.parametrize("layout,head_dim", [("BSHD", 64), ("BHSD", 128)])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["nomask", "causal"])
@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training", "bwd"])
def test_sdpa_heuristic_pick_matches_reference(direction: str, causal: bool, dtype: str, layout: str,
                                               head_dim: int) -> None:
    spec = cl.SdpaSpec(**SMALL, head_dim=head_dim, causal=causal, dtype=dtype, layout=layout, direction=direction)
    _assert_pick_is_right(cl.run(spec, **RUN))


@pytest.mark.parametrize("kv_heads", [1, 2], ids=["mqa", "gqa"])
@pytest.mark.parametrize("direction", ["fwd_training", "bwd"])
def test_sdpa_grouped_query_attention(direction: str, kv_heads: int) -> None:
    spec = cl.SdpaSpec(**SMALL, kv_heads=kv_heads, head_dim=128, causal=True, dtype="bf16", direction=direction)
    _assert_pick_is_right(cl.run(spec, **RUN))


@pytest.mark.parametrize("direction", ["fwd_training", "bwd"])
def test_sdpa_sliding_window(direction: str) -> None:
    spec = cl.SdpaSpec(**SMALL, head_dim=64, causal=True, sliding_window=32, dtype="fp16", direction=direction)
    _assert_pick_is_right(cl.run(spec, **RUN))


@pytest.mark.parametrize("direction", ["fwd_inference", "bwd"])
def test_sdpa_head_dim_256(direction: str) -> None:
    spec = cl.SdpaSpec(**SMALL, head_dim=256, causal=True, dtype="bf16", direction=direction)
    _assert_pick_is_right(cl.run(spec, **RUN))


def test_sdpa_causal_with_longer_keys() -> None:
    # seq_q < seq_kv with the top-left diagonal: the last keys are seen by no query
    spec = cl.SdpaSpec(batch=2, heads=4, seq_q=64, seq_kv=192, head_dim=64, causal=True, dtype="fp16",
                       direction="fwd_training")
    _assert_pick_is_right(cl.run(spec, **RUN))
