"""The FP8 quantization report computed once per (spec, seed), in float64 pieces where needed: the same figures as a
straightforward single-pass float64 computation on the host (issue 27, part 3). CPU only."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import cudnn_lab as cl  # noqa: E402
from cudnn_lab.reference import make_inputs, quantization_report  # noqa: E402
from cudnn_lab.reference import fp8 as rfp8  # noqa: E402
from cudnn_lab.reference.conv import compute as conv_compute  # noqa: E402
from cudnn_lab.reference.conv import fan_in as conv_fan_in  # noqa: E402
from cudnn_lab.reference.matmul import compute as mm_compute  # noqa: E402
from cudnn_lab.reference.quantize import chunks, dequantize, quantization_error, quantize  # noqa: E402
from cudnn_lab.specs.fp8 import fp8_format  # noqa: E402

GEMM = cl.MatmulSpec(m=96, n=40, k=72, dtype="fp8_e4m3", transpose_b=True)
GEMM_E5 = cl.MatmulSpec(batch=2, m=48, n=32, k=40, dtype="fp8_e5m2", b_dtype="fp8_e4m3", transpose_b=True,
                        out_dtype="fp16")
CONV = cl.ConvSpec(n=4, c=16, h=8, w=8, k=8, r=3, s=3, padding=1, dtype="fp8_e4m3")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    rfp8.forget_reports()


def slow_error(x: torch.Tensor, dtype: str, scale: float | None) -> dict:
    """What quantizing ``x`` costs, in one float64 pass (the definition, written out)."""
    q = quantize(x, dtype, scale)
    e = x.to(torch.float64)
    diff = (dequantize(q) - e).abs()
    normal = e.abs() * q.scale >= fp8_format(dtype).min_normal
    return {"rel_l2": float(torch.linalg.vector_norm(diff) / torch.linalg.vector_norm(e)),
            "max_abs": float(diff.max()), "max_rel_normal": float((diff[normal] / e[normal].abs()).max()),
            "saturated": q.saturated, "flushed": q.flushed, "numel": e.numel(), "scale": q.scale}


def slow_output_rel_l2(spec, compute, fan_in: int, inputs, seed: int = 0) -> float:
    floats = rfp8.float_inputs(spec, fan_in, seed=seed)
    exact = compute(spec, {n: x.double() for n, x in floats.items()})
    ins, _ = spec.io_names()
    fp8 = compute(spec, {n: dequantize(inputs[n], float(inputs[f"descale_{n}"].reshape(-1)[0])) for n in ins})
    return float(torch.linalg.vector_norm(fp8 - exact) / torch.linalg.vector_norm(exact))


@pytest.mark.parametrize("spec, compute, fan_in", [(GEMM, mm_compute, GEMM.k), (GEMM_E5, mm_compute, GEMM_E5.k),
                                                   (CONV, conv_compute, conv_fan_in(CONV))])
def test_report_matches_the_single_pass_figures(spec, compute, fan_in) -> None:
    inputs = make_inputs(spec, seed=3)
    report = quantization_report(spec, inputs, seed=3)
    floats = rfp8.float_inputs(spec, fan_in, seed=3)
    for name, x in floats.items():
        want = slow_error(x, spec.tensor_dtypes()[name], spec.scales()[name])
        got = report[name]
        for key in ("saturated", "flushed", "numel", "scale", "max_abs", "max_rel_normal"):
            assert got[key] == want[key], (name, key)
        assert got["rel_l2"] == pytest.approx(want["rel_l2"], rel=1e-12)
    assert report["output_rel_l2"] == pytest.approx(slow_output_rel_l2(spec, compute, fan_in, inputs, 3), rel=1e-12)
    assert report["output_rel_l2"] > 0


@pytest.mark.parametrize("spec, compute, fan_in, split_dim", [(GEMM, mm_compute, GEMM.k, 1),
                                                              (GEMM_E5, mm_compute, GEMM_E5.k, 1),
                                                              (CONV, conv_compute, conv_fan_in(CONV), 0)])
def test_pieces_give_the_same_figures(spec, compute, fan_in, split_dim) -> None:
    """Float64 work in small pieces (as on a GPU whose memory would not hold it at once) changes no figure beyond
    float64 rounding of the sums."""
    inputs = make_inputs(spec, seed=1)
    whole = rfp8.quantization_report(spec, compute, fan_in, inputs, seed=1, split_dim=split_dim, keep=False)
    pieces = rfp8.quantization_report(spec, compute, fan_in, inputs, seed=1, split_dim=split_dim, limit=500,
                                      keep=False)
    ins, _ = spec.io_names()
    assert len(chunks(inputs[ins[0]], 500)) > 1  # the limit really split the work
    for name in ins:
        for key in ("saturated", "flushed", "numel", "max_abs", "max_rel_normal", "amax", "scale"):
            assert pieces[name][key] == whole[name][key], (name, key)
        assert pieces[name]["rel_l2"] == pytest.approx(whole[name]["rel_l2"], rel=1e-12)
    assert pieces["output_rel_l2"] == pytest.approx(whole["output_rel_l2"], rel=1e-12)


def test_quantization_error_in_pieces_covers_every_element() -> None:
    x = torch.linspace(-3.0, 3.0, 1000).reshape(10, 100).t()  # a column-major view
    q = quantize(x, "fp8_e5m2", 2.0**10)
    one, many = quantization_error(x, q), quantization_error(x, q, limit=64)
    assert many.numel == one.numel == 1000
    assert many.max_abs == one.max_abs and many.saturated == one.saturated and many.flushed == one.flushed
    assert many.rel_l2 == pytest.approx(one.rel_l2, rel=1e-12) and math.isfinite(many.rel_l2)
    assert sum(length for _, _, length in chunks(x, 64)) == x.shape[max(range(2), key=lambda i: x.shape[i])]


def test_report_is_kept_per_spec_and_seed_and_handed_out_as_a_copy() -> None:
    inputs = make_inputs(GEMM, seed=0)
    first = quantization_report(GEMM, inputs, seed=0)
    assert rfp8.kept_report(GEMM, 0) == first
    assert rfp8.kept_report(GEMM, 1) is None  # another seed is another report
    assert rfp8.kept_report(GEMM.replace(m=32), 0) is None  # another spec too
    first["A"]["rel_l2"] = -1.0  # a caller's change never reaches the kept report
    again = quantization_report(GEMM, inputs, seed=0)
    assert again["A"]["rel_l2"] > 0 and again == rfp8.kept_report(GEMM, 0)


def test_kept_reports_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rfp8, "MAX_REPORTS", 3)
    for seed in range(5):
        rfp8.keep_report(GEMM, seed, {"output_rel_l2": float(seed)})
    assert [rfp8.kept_report(GEMM, s) for s in (0, 1)] == [None, None]
    assert [rfp8.kept_report(GEMM, s)["output_rel_l2"] for s in (2, 3, 4)] == [2.0, 3.0, 4.0]


def test_inputs_do_not_change() -> None:
    """The FP8 inputs are the float data's quantization, whatever else changed: same values for a seed."""
    a, b = make_inputs(GEMM, seed=5), make_inputs(GEMM, seed=5)
    floats = rfp8.float_inputs(GEMM, GEMM.k, seed=5)
    q = quantize(floats["A"], "fp8_e4m3", GEMM.scales()["A"])
    assert torch.equal(a["A"].view(torch.uint8), q.data.view(torch.uint8))
    assert torch.equal(a["B"].view(torch.uint8), b["B"].view(torch.uint8))
    assert a["B"].stride() == floats["B"].stride()
