"""ConvGenstatsSpec and ConvPrologueSpec: the conv geometry checked as ConvSpec checks it (errors name the fusion
spec), the runtime-fusion constraints (NHWC, fp16/bf16, channels in 16-byte vectors), tensors and dtypes, round
trips."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.specs import spec_from_json
from cudnn_lab.specs.fusion import ConvGenstatsSpec, ConvPrologueSpec

SMALL = dict(n=2, c=8, h=6, w=6, k=16)


@pytest.mark.parametrize("cls", [ConvGenstatsSpec, ConvPrologueSpec])
@pytest.mark.parametrize("field,value,words", [
    ("c", 12, "multiple of 8"), ("k", 20, "multiple of 8"), ("dtype", "fp32", "fp16, bf16"),
    ("padding", 3, "larger than the filter"), ("h", 0, "from 1"), ("stride", 0, "from 1")])
def test_bad_values_name_the_field_and_the_fusion_spec(cls: type, field: str, value: object, words: str) -> None:
    with pytest.raises(SpecError) as info:
        cls(**{**SMALL, field: value})
    assert info.value.field == field and info.value.spec == cls.__name__ and words in str(info.value)


def test_genstats_tensors() -> None:
    s = ConvGenstatsSpec(**SMALL)
    assert s.tensor_shapes() == {"X": (2, 8, 6, 6), "W": (16, 8, 3, 3), "Y": (2, 16, 6, 6), "SUM": (1, 16, 1, 1),
                                 "SQ_SUM": (1, 16, 1, 1)}
    assert s.tensor_dtypes()["SUM"] == "fp32" and s.tensor_dtypes()["Y"] == "fp16"
    assert s.tensor_strides()["X"] == (288, 1, 48, 8)  # NHWC
    assert s.output_names() == ("Y", "SUM", "SQ_SUM") and s.flops() == s.conv.flops()
    assert s.conv == cl.ConvSpec(**SMALL, layout="NHWC", dtype="fp16")
    assert spec_from_json(s.to_json()) == s


def test_prologue_parameters_and_optional_statistics() -> None:
    s = ConvPrologueSpec(**SMALL, dtype="bf16", param_dtype="bf16")
    assert s.input_names() == ("X", "scale", "bias", "W") and s.output_names() == ("Y",)
    assert s.tensor_shapes()["scale"] == (1, 8, 1, 1) and s.tensor_dtypes()["bias"] == "bf16"
    assert s.replace(param_dtype="fp32").tensor_dtypes()["scale"] == "fp32"
    g = ConvPrologueSpec(**SMALL, dtype="fp16", param_dtype="fp16", genstats=True)
    assert g.output_names() == ("Y", "SUM", "SQ_SUM") and g.tensor_dtypes()["scale"] == "fp16"
    with pytest.raises(SpecError) as info:
        ConvPrologueSpec(**SMALL, dtype="bf16", param_dtype="fp16")
    assert info.value.field == "param_dtype"
    with pytest.raises(SpecError) as info:
        ConvPrologueSpec(**SMALL, genstats=1)
    assert info.value.field == "genstats"
    assert spec_from_json(g.to_json()) == g and "genstats" in g.label()
    assert ConvPrologueSpec.field_choices()["param_dtype"] == ("fp32", "fp16", "bf16")


def test_what_cudnn_9_19_refuses_with_genstats_is_refused_naming_the_field_and_version() -> None:
    """Measured on an H100 with cuDNN 9.19 (2026-11-22): conv + genstats has no engine in bf16, nor the prologue
    with genstats when scale and bias are fp32; without genstats both bf16 and fp32 parameters run."""
    for spec_cls, extra in ((ConvGenstatsSpec, {}), (ConvPrologueSpec, {"genstats": True, "param_dtype": "bf16"})):
        with pytest.raises(SpecError) as info:
            spec_cls(**SMALL, dtype="bf16", **extra)
        assert info.value.field == "dtype" and "9.19" in str(info.value) and "bf16" in str(info.value)
    with pytest.raises(SpecError) as info:
        ConvPrologueSpec(**SMALL, dtype="fp16", param_dtype="fp32", genstats=True)
    assert info.value.field == "param_dtype" and "9.19" in str(info.value) and "fp16" in str(info.value)
    assert ConvGenstatsSpec.field_choices()["dtype"] == ("fp16",)
    assert ConvPrologueSpec(**SMALL, dtype="bf16", param_dtype="fp32").dtype == "bf16"
