"""PyTorch's SDPA backends beside cuDNN's plans on a real GPU (issue 38, which backend wins where): with
``backends=True`` every backend is timed or refused in PyTorch's words, a sweep point carries them in its
``baselines`` cell, and the backend map decides each shape from them."""

from __future__ import annotations

import json

import pytest

import cudnn_lab as cl
from cudnn_lab.reference.sdpa import SDPA_BACKENDS
from cudnn_lab.results.backend_map import backend_map

pytestmark = pytest.mark.gpu

QUICK = dict(plans="all", roofline=False, time_cap_s=0.05, kernels=False, notes=False)


@pytest.mark.parametrize("direction", ["fwd_inference", "bwd"])
def test_every_backend_is_timed_or_refused_with_pytorchs_reason(direction: str) -> None:
    spec = cl.SdpaSpec(batch=2, heads=8, kv_heads=2, seq_q=512, seq_kv=512, head_dim=128, causal=True,
                       dtype="bf16", direction=direction)
    result = cl.run(spec, backends=True, **QUICK)
    for name in SDPA_BACKENDS:
        ms, error = result.torch.get(f"{name}_ms"), result.torch.get(f"{name}_error")
        assert (ms is not None and ms > 0) != (error is not None), (name, result.torch)
        if error is not None:
            assert "refused this shape" in error or "out of memory" in error.lower(), error
    assert result.torch.get("sdpa_math_ms", 0) > 0, result.torch  # math runs every plain shape
    assert result.torch.get("sdpa_flash_ms", 0) > 0, result.torch  # and flash runs bf16 d128 on Hopper
    assert "sdpa_flash" in result.summary() or "flash" in result.summary()


def test_without_backends_asked_none_is_timed() -> None:
    spec = cl.SdpaSpec(batch=1, heads=4, seq_q=256, seq_kv=256, head_dim=64, dtype="bf16")
    result = cl.run(spec, **QUICK)
    assert not any(k.startswith("sdpa_") for k in result.torch), result.torch


def test_a_swept_shape_carries_its_backends_and_gets_a_winner(tmp_path) -> None:
    specs = [cl.SdpaSpec(batch=1, heads=8, seq_q=s, seq_kv=s, head_dim=64, dtype="bf16") for s in (256, 1024)]
    frame = cl.sweep(specs, store=tmp_path / "s.parquet", backends=True, **QUICK)
    cells = frame.drop_duplicates("point_id")["baselines"]
    assert all(set(SDPA_BACKENDS) <= set(json.loads(c)) for c in cells), list(cells)
    again = cl.load_results(tmp_path / "s.parquet")  # the loading layer checks the cells
    bmap = backend_map(again)
    assert len(bmap.rows) == 2 and all(r.winner is not None for r in bmap.rows)
    assert all("cudnn" in r.times_ms and "sdpa_math" in r.times_ms for r in bmap.rows)
