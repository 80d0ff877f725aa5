"""ConvReductionSpec, ConvConcatSpec and ConvDgradReluSpec: the conv geometry and runtime-fusion rules of the
fusion base (errors name the spec and field), their own fields, tensors, dtypes and round trips."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.specs import spec_classes, spec_from_json
from cudnn_lab.specs.fusion import CONV_REDUCTION_AXES, CONV_REDUCTION_MODES, ConvConcatSpec, ConvDgradReluSpec, \
    ConvReductionSpec

SMALL = dict(n=2, c=8, h=6, w=6, k=16)
NEW = (ConvReductionSpec, ConvConcatSpec, ConvDgradReluSpec)


@pytest.mark.parametrize("cls", NEW)
@pytest.mark.parametrize("field,value,words", [
    ("c", 12, "multiple of 8"), ("k", 20, "multiple of 8"), ("dtype", "fp32", "fp16, bf16"),
    ("padding", 3, "larger than the filter"), ("h", 0, "from 1")])
def test_bad_conv_values_name_the_field_and_the_spec(cls: type, field: str, value: object, words: str) -> None:
    with pytest.raises(SpecError) as info:
        cls(**{**SMALL, field: value})
    assert info.value.field == field and info.value.spec == cls.__name__ and words in str(info.value)


@pytest.mark.parametrize("cls", NEW)
def test_registered_exported_and_round_trip_in_bf16(cls: type) -> None:
    """bf16 is allowed: no genstats node (whose 9.19 engine takes fp16 only) is in these graphs."""
    spec = cls(**SMALL, dtype="bf16")
    assert spec_classes()[cls.op] is cls and getattr(cl, cls.__name__) is cls and cls.__name__ in cl.__all__
    assert spec_from_json(spec.to_json()) == spec and spec.flops() == spec.conv.flops() > 0
    assert spec.min_bytes() > 0 and spec.label()


def test_conv_reduction_axes_give_the_output_dims_and_modes_are_checked() -> None:
    s = ConvReductionSpec(**SMALL)
    assert s.tensor_shapes() == {"X": (2, 8, 6, 6), "W": (16, 8, 3, 3), "R": (2, 1, 6, 6)}
    assert s.replace(axes="nhw").tensor_shapes()["R"] == (1, 16, 1, 1)
    assert s.tensor_dtypes() == {"X": "fp16", "W": "fp16", "R": "fp32"} and s.output_names() == ("R",)
    assert s.replace(stride=2, padding=0).tensor_shapes()["R"] == (2, 1, 2, 2)
    for field, bad in (("mode", "mul"), ("axes", "hw"), ("mode", 1)):
        with pytest.raises(SpecError) as info:
            ConvReductionSpec(**SMALL, **{field: bad})
        assert info.value.field == field and info.value.spec == "ConvReductionSpec"
    assert ConvReductionSpec.field_choices()["mode"] == CONV_REDUCTION_MODES == ("add", "max")
    assert ConvReductionSpec.field_choices()["axes"] == CONV_REDUCTION_AXES
    assert "max per channel" in s.replace(mode="max", axes="nhw").label()


def test_conv_concat_tensors_and_k0_rules() -> None:
    s = ConvConcatSpec(**SMALL, k0=24)
    assert s.input_names() == ("X", "W", "Y0") and s.output_names() == ("Y1",)
    assert s.tensor_shapes()["Y0"] == (2, 24, 6, 6) and s.tensor_shapes()["Y1"] == (2, 40, 6, 6)
    assert s.tensor_strides()["Y1"] == (1440, 1, 240, 40)  # NHWC
    for bad, words in ((12, "multiple of 8"), (0, "from 1"), (True, "not a bool")):
        with pytest.raises(SpecError) as info:
            ConvConcatSpec(**SMALL, k0=bad)
        assert info.value.field == "k0" and words in str(info.value)
    assert ConvConcatSpec.field_limits({})["k0"][0] == 1 and "k0" in ConvConcatSpec.field_hints({})


def test_conv_dgrad_relu_reads_dy_w_and_the_forward_input() -> None:
    s = ConvDgradReluSpec(**SMALL, stride=2, padding=0)
    shapes = s.tensor_shapes()
    assert s.input_names() == ("DY", "W", "X") and s.output_names() == ("DX",)
    assert shapes["DY"] == (2, 16, 2, 2) and shapes["DX"] == shapes["X"] == (2, 8, 6, 6)
    assert set(s.tensor_dtypes().values()) == {"fp16"}
