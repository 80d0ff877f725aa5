"""ReductionSpec: cuDNN's reduction modes and the reduced axes, validation naming the field, the output dims, dtypes
and the hint the kit adds to cuDNN's refusal."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.specs import spec_classes, spec_from_json
from cudnn_lab.specs.reduction import RAN_MODES, REDUCTION_AXES, REDUCTION_MODES, ReductionSpec


def test_modes_are_cudnns_reduction_modes() -> None:
    cudnn = pytest.importorskip("cudnn")
    assert {m.upper() for m in REDUCTION_MODES} == set(cudnn.reduction_mode.__members__) - {"NOT_SET"}
    assert set(RAN_MODES) <= set(REDUCTION_MODES)


@pytest.mark.parametrize("axes,dims", [("c", (4, 1, 5, 6)), ("hw", (4, 8, 1, 1)), ("nhw", (1, 8, 1, 1)),
                                       ("chw", (4, 1, 1, 1)), ("nchw", (1, 1, 1, 1))])
def test_reduced_dims_are_one(axes: str, dims: tuple[int, ...]) -> None:
    s = ReductionSpec(n=4, c=8, h=5, w=6, axes=axes)
    assert s.tensor_shapes() == {"X": (4, 8, 5, 6), "R": dims}
    assert s.reduced == REDUCTION_AXES[axes]
    assert s.tensor_dtypes() == {"X": "fp16", "R": "fp32"}
    assert s.min_bytes() == 4 * 8 * 5 * 6 * 2 + 4 * (dims[0] * dims[1] * dims[2] * dims[3])


@pytest.mark.parametrize("field,value,words", [
    ("mode", "sum", "add, mul"), ("axes", "n", "c, hw, nhw"), ("layout", "CHWN", "NCHW, NHWC"),
    ("dtype", "fp64", "fp32, fp16, bf16"), ("n", 0, "from 1"), ("c", 2.5, "integer")])
def test_bad_values_name_the_field(field: str, value: object, words: str) -> None:
    with pytest.raises(SpecError) as info:
        ReductionSpec(**{field: value})
    assert info.value.field == field and info.value.spec == "ReductionSpec" and words in str(info.value)


def test_too_many_elements_names_the_largest_size() -> None:
    with pytest.raises(SpecError) as info:
        ReductionSpec(n=1 << 12, c=1 << 10, h=1 << 10, w=2)
    assert info.value.field == "n" and "elements" in str(info.value)


def test_registered_round_trip_and_hint() -> None:
    s = ReductionSpec(mode="norm2", axes="c", layout="NCHW", dtype="bf16")
    assert spec_classes()["reduction"] is ReductionSpec is cl.ReductionSpec and "ReductionSpec" in cl.__all__
    assert spec_from_json(s.to_json()) == s and s.flops() == s.numel
    hint = s.support_hint()
    assert "NHWC" in hint and "NCHW norm2 over c" in hint and "ConvReductionSpec" in hint
    assert ReductionSpec.field_choices()["mode"] == REDUCTION_MODES


def test_explain_adds_the_hint_to_no_engine() -> None:
    from cudnn_lab.gpu.explain import explain

    text = explain("No valid engine configs for REDUCTION", ReductionSpec(layout="NCHW"))
    assert text.startswith("No cuDNN engine") and "ran standalone reductions only in NHWC" in text
    assert "ran standalone" not in explain("CUDNN_STATUS_BAD_PARAM", ReductionSpec())
