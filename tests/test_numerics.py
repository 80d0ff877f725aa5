"""Error metrics against a float64 reference, the tolerance bands and the TF32 note."""

from __future__ import annotations

import json
import math

import pytest
import torch

from cudnn_lab.errors import CudnnLabError, SpecError
from cudnn_lab.numerics import TOLERANCES, ErrorMetrics, ToleranceBand, compare, tf32_note
from cudnn_lab.specs import ConvSpec, MatmulSpec


@pytest.fixture
def expected() -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, 2 * 3 * 4 * 5, dtype=torch.float64).reshape(2, 3, 4, 5)


def test_identical_tensors_have_no_error_and_pass(expected):
    m = compare(expected.clone(), expected, "fp32")
    assert (m.rel_l2, m.max_abs, m.max_rel) == (0.0, 0.0, 0.0)
    assert m.within_torch == m.within_cudnn == 1.0
    assert m.passed_torch and m.passed_cudnn
    assert (m.nan_count, m.inf_count, m.numel) == (0, 0, expected.numel())


def test_perturbed_element_is_the_worst_index(expected):
    actual = expected.clone()
    actual[1, 2, 3, 0] += 0.25
    m = compare(actual, expected, "fp32")
    assert m.worst_index == (1, 2, 3, 0)
    assert m.max_abs == pytest.approx(0.25)
    assert m.worst_actual == pytest.approx(float(expected[1, 2, 3, 0]) + 0.25)
    assert m.worst_expected == pytest.approx(float(expected[1, 2, 3, 0]))
    assert m.within_torch == pytest.approx(1 - 1 / expected.numel())
    assert not m.passed_torch


def test_worst_index_is_logical_for_a_channels_last_actual(expected):
    actual = expected.clone().contiguous(memory_format=torch.channels_last)
    actual[0, 1, 2, 3] -= 0.5
    assert compare(actual, expected, "fp32").worst_index == (0, 1, 2, 3)


def test_nan_in_actual_is_counted_and_fails(expected):
    actual = expected.clone()
    actual[0, 0, 1, 1] = math.nan
    m = compare(actual, expected, "fp16")
    assert m.nan_count == 1
    assert m.worst_index == (0, 0, 1, 1)
    assert math.isinf(m.max_abs) and math.isinf(m.rel_l2)
    assert not m.passed_torch and not m.passed_cudnn
    assert m.within_cudnn == pytest.approx(1 - 1 / expected.numel())


def test_inf_in_actual_is_counted_and_fails(expected):
    actual = expected.clone()
    actual[1, 0, 0, 0] = math.inf
    m = compare(actual, expected, "fp16")
    assert m.inf_count == 1 and not m.passed_cudnn


def test_all_nan_output_fails_every_band(expected):
    m = compare(torch.full_like(expected, math.nan), expected, "fp32")
    assert m.nan_count == m.numel
    assert m.within_torch == m.within_cudnn == 0.0


def test_low_precision_actual_is_upcast(expected):
    m = compare(expected.to(torch.bfloat16), expected, "bf16")
    assert 0 < m.max_abs < 1e-2
    assert m.passed_torch


def test_max_rel_is_finite_where_reference_is_zero():
    m = compare(torch.tensor([0.0, 1e-3]), torch.tensor([0.0, 0.0], dtype=torch.float64), "fp32")
    assert math.isfinite(m.max_rel) and m.max_rel > 1e20


def test_shape_mismatch_raises_the_kits_error(expected):
    with pytest.raises(SpecError) as info:
        compare(expected[:1], expected, "fp32")
    assert isinstance(info.value, CudnnLabError) and isinstance(info.value, ValueError)
    assert "shape" in str(info.value)


def test_unknown_dtype_raises(expected):
    with pytest.raises(SpecError, match="dtype"):
        compare(expected, expected, "fp8")


def test_bands_are_torch_testing_defaults_from_references():
    # The numbers REFERENCES.md lists for torch.testing.assert_close (rtol, atol).
    want = {"fp16": (1e-3, 1e-5), "bf16": (1.6e-2, 1e-5), "fp32": (1.3e-6, 1e-5), "fp64": (1e-7, 1e-7)}
    assert {d: (b["torch"].rtol, b["torch"].atol) for d, b in TOLERANCES.items() if d in want} == want
    # FP8 dtypes carry their GEMM's default (bf16 output) bands: torch.testing compares FP8 itself exactly
    assert set(TOLERANCES) - set(want) == {"fp8_e4m3", "fp8_e5m2"}


def test_bands_match_torch_testing_private_defaults():
    comparison = pytest.importorskip("torch.testing._comparison")
    if not hasattr(comparison, "default_tolerances"):
        pytest.skip("torch.testing._comparison.default_tolerances is gone in this torch")
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64}
    for name, dt in dtypes.items():
        assert comparison.default_tolerances(dt) == (TOLERANCES[name]["torch"].rtol, TOLERANCES[name]["torch"].atol)


def test_cudnn_band_is_looser_than_torch_for_fp16_and_fp32():
    for d in ("fp16", "fp32"):
        assert TOLERANCES[d]["cudnn"].rtol > TOLERANCES[d]["torch"].rtol
        assert TOLERANCES[d]["cudnn"].atol > TOLERANCES[d]["torch"].atol


def test_tolerance_band_is_frozen_and_serializes():
    band = TOLERANCES["fp16"]["cudnn"]
    assert band.to_dict() == {"rtol": 5e-3, "atol": 3e-3, "source": band.source}
    with pytest.raises(AttributeError):
        band.rtol = 1.0  # type: ignore[misc]
    assert isinstance(band, ToleranceBand)


def test_a_tf32_level_error_passes_cudnn_band_but_not_torch_band(expected):
    m = compare(expected * (1 + 3e-4), expected, "fp32")
    assert m.passed_cudnn and not m.passed_torch


def test_metrics_to_dict_is_json_ready(expected):
    d = compare(expected, expected, "fp32").to_dict()
    assert json.loads(json.dumps(d)) == d
    assert set(d) == {f.name for f in ErrorMetrics.__dataclass_fields__.values()}


def test_summary_is_one_line_with_verdicts(expected):
    actual = expected.clone()
    actual[0, 0, 0, 0] = math.nan
    s = compare(actual, expected, "fp16").summary()
    assert "\n" not in s and "FAIL" in s and "1 NaN" in s


def test_tf32_note_for_fp32_states_current_flags():
    note = tf32_note(ConvSpec(n=1, c=4, h=8, w=8, k=4, dtype="fp32"))
    assert note is not None
    assert f"now {torch.backends.cudnn.allow_tf32}" in note
    assert f"now {torch.backends.cuda.matmul.allow_tf32}" in note


def test_tf32_note_is_none_for_half_precision():
    assert tf32_note(MatmulSpec(m=8, n=8, k=8, dtype="fp16")) is None
    assert tf32_note(ConvSpec(n=1, c=4, h=8, w=8, k=4, dtype="bf16")) is None
