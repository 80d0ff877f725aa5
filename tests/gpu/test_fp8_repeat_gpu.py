"""On the GPU: FP8 inputs made and their quantization figures computed on the GPU, once per (spec, seed) (issue 27).
The inputs are bit for bit the host path's; the figures are the host's single-pass figures (float64 sums in another
order aside); a repeated run returns identical figures without computing them again."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.reference import make_inputs, quantization_report
from cudnn_lab.reference import fp8 as rfp8

pytestmark = pytest.mark.gpu

GEMM = cl.MatmulSpec(m=256, n=192, k=320, dtype="fp8_e4m3", transpose_b=True)
CONV = cl.ConvSpec(n=4, c=32, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp8_e4m3")
QUICK = {"baselines": False, "roofline": False, "kernels": False, "notes": False, "time_cap_s": 0.05}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    rfp8.forget_reports()


@pytest.mark.parametrize("spec", [GEMM, CONV], ids=["gemm", "conv"])
def test_gpu_inputs_and_figures_are_the_hosts(spec: cl.Spec) -> None:
    import torch

    host = make_inputs(spec, seed=4)
    slow = quantization_report(spec, host, seed=4)  # computed on the host, in one pass
    rfp8.forget_reports()
    gpu = make_inputs(spec, device="cuda", seed=4)  # quantized on the GPU; the report kept while the data is there
    for name, t in host.items():
        g = gpu[name].cpu()
        assert g.dtype == t.dtype and g.stride() == t.stride()
        assert torch.equal(g.view(torch.uint8) if g.element_size() == 1 else g,
                           t.view(torch.uint8) if t.element_size() == 1 else t), name
    kept = rfp8.kept_report(spec, 4)
    assert kept is not None
    ins, _ = spec.io_names()
    for name in ins:
        for key in ("saturated", "flushed", "numel", "amax", "scale", "max_abs", "max_rel_normal"):
            assert kept[name][key] == slow[name][key], (name, key)
        assert kept[name]["rel_l2"] == pytest.approx(slow[name]["rel_l2"], rel=1e-9)
    assert kept["output_rel_l2"] == pytest.approx(slow["output_rel_l2"], rel=1e-9)


def test_gpu_figures_in_pieces_are_the_whole_ones() -> None:
    gpu = make_inputs(GEMM, device="cuda", seed=6)
    from cudnn_lab.reference.matmul import compute

    whole = rfp8.quantization_report(GEMM, compute, GEMM.k, gpu, seed=6, split_dim=1, keep=False)
    pieces = rfp8.quantization_report(GEMM, compute, GEMM.k, gpu, seed=6, split_dim=1, keep=False, limit=4096)
    assert pieces["output_rel_l2"] == pytest.approx(whole["output_rel_l2"], rel=1e-9)
    assert pieces["A"]["max_abs"] == whole["A"]["max_abs"] and pieces["B"]["flushed"] == whole["B"]["flushed"]


def test_a_repeated_fp8_run_returns_identical_figures() -> None:
    first = cl.run(GEMM, seed=8, **QUICK)
    again = cl.run(GEMM, seed=8, **QUICK)
    assert first.settings["quantization"] == again.settings["quantization"]
    assert set(first.settings["quantization"]) == {"A", "B", "output_rel_l2"}
    assert 0 < first.settings["quantization"]["output_rel_l2"] < 0.1
    other = cl.run(GEMM, seed=9, **QUICK)  # another seed: other data, other figures
    assert other.settings["quantization"]["A"]["rel_l2"] != first.settings["quantization"]["A"]["rel_l2"]
    ok = first.plans[first.plans["status"] == "ok"]
    assert len(ok) >= 1 and ok["pass_cudnn"].astype(bool).all()
