"""SoftmaxSpec, ActivationSpec and TransformSpec: bad values name their field (a softmax mode that does not exist,
a transform between incompatible shapes), shapes and strides of each kind, coefficients, round trips."""

from __future__ import annotations

import math

import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import spec_from_json
from cudnn_lab.specs.activation import ACTIVATIONS, COEF_DEFAULTS, ActivationSpec, IgnoredFieldWarning
from cudnn_lab.specs.softmax import SOFTMAX_ALGOS, SOFTMAX_MODES, SoftmaxSpec
from cudnn_lab.specs.transform import GRAPH_KIND_NEEDS, TRANSFORM_KINDS, TransformSpec

SMALL = dict(n=2, c=3, h=4, w=5)


@pytest.mark.parametrize("cls,field,value", [
    (SoftmaxSpec, "mode", "spatial"), (SoftmaxSpec, "algo", "exact"), (SoftmaxSpec, "c", 0),
    (SoftmaxSpec, "layout", "NCWH"), (ActivationSpec, "mode", "gelu"), (ActivationSpec, "coef", -1.0),
    (ActivationSpec, "coef", float("nan")), (ActivationSpec, "n", 0), (TransformSpec, "kind", "rotate"),
    (TransformSpec, "out_layout", "CHWN"), (TransformSpec, "out_dtype", "int8"), (TransformSpec, "axis", 4),
    (TransformSpec, "permutation", (0, 2, 3, 1)), (TransformSpec, "permutation", "0232"),
    (TransformSpec, "reshape_to", "n,hw,c"), (TransformSpec, "start", -1)])
def test_bad_values_name_their_field(cls: type, field: str, value: object) -> None:
    kw = {"mode": "elu"} if cls is ActivationSpec and field == "coef" else {}
    with pytest.raises(SpecError) as info:
        cls(**{**SMALL, **kw, field: value})
    assert info.value.field == field and info.value.spec == cls.__name__


def test_softmax_modes_and_algorithms() -> None:
    assert SOFTMAX_MODES == ("channel", "instance") and SOFTMAX_ALGOS == ("accurate", "fast", "log")
    s = SoftmaxSpec(**SMALL, mode="instance", algo="log")
    assert s.reduced_dims() == (1, 2, 3) and SoftmaxSpec(**SMALL).reduced_dims() == (1,)
    assert s.tensor_shapes() == {"X": (2, 3, 4, 5), "Y": (2, 3, 4, 5)}
    assert s.tensor_strides()["X"] == (60, 1, 15, 3)  # NHWC by default
    assert s.flops() == 5 * 120 and s.min_bytes() == 2 * 120 * 2
    assert spec_from_json(s.to_json()) == s


def test_activation_coefficients_default_and_are_dropped_where_unused() -> None:
    for mode in ACTIVATIONS:
        a = ActivationSpec(**SMALL, mode=mode)
        assert a.coef == COEF_DEFAULTS.get(mode)
        assert spec_from_json(a.to_json()) == a
    with pytest.warns(IgnoredFieldWarning, match="coef"):  # dropped, and said so by name
        assert ActivationSpec(**SMALL, mode="relu", coef=3.0).coef is None
    assert ActivationSpec(**SMALL, mode="swish", coef=1.702).coef == 1.702
    with pytest.raises(SpecError, match="ceiling"):
        ActivationSpec(**SMALL, mode="clipped_relu", coef=1e-6)
    assert ActivationSpec.hidden_fields({"mode": "tanh"}) == {"coef"}
    assert ActivationSpec.hidden_fields({"mode": "elu"}) == frozenset()
    assert ActivationSpec.field_hints({"mode": "swish"})["coef"] == "beta"


def test_transform_convert_changes_strides_and_dtype_only() -> None:
    t = TransformSpec(**SMALL, layout="NCHW", out_layout="NHWC", dtype="fp32", out_dtype="bf16")
    assert t.tensor_shapes() == {"X": (2, 3, 4, 5), "Y": (2, 3, 4, 5)}
    assert t.tensor_strides() == {"X": (60, 20, 5, 1), "Y": (60, 1, 15, 3)}
    assert t.tensor_dtypes() == {"X": "fp32", "Y": "bf16"}
    assert t.min_bytes() == 120 * 4 + 120 * 2 and t.flops() == 120
    assert "NCHW fp32 -> NHWC bf16" in t.label()


@pytest.mark.parametrize("kw,y_dims", [
    (dict(kind="transpose", permutation="0231"), (2, 4, 5, 3)),
    (dict(kind="transpose", permutation="3210"), (5, 4, 3, 2)),
    (dict(kind="reshape"), (2, 3, 20)),
    (dict(kind="reshape", reshape_to="nc,hw"), (6, 20)),
    (dict(kind="reshape", reshape_to="nchw"), (120,)),
    (dict(kind="slice", axis=3, start=2, stop=5), (2, 3, 4, 3)),
    (dict(kind="slice", axis=1, start=0, stop=3), (2, 3, 4, 5)),
    (dict(kind="concatenate", axis=1, concat_size=7), (2, 10, 4, 5)),
    (dict(kind="concatenate", axis=3, concat_size=1), (2, 3, 4, 6))])
def test_graph_kinds_output_dims(kw: dict, y_dims: tuple) -> None:
    t = TransformSpec(**SMALL, **kw)
    assert t.y_dims == y_dims and t.tensor_shapes()["Y"] == y_dims
    assert spec_from_json(t.to_json()) == t
    assert t.kind in GRAPH_KIND_NEEDS and GRAPH_KIND_NEEDS[t.kind][1] == "9.22.0"
    assert math.prod(t.y_dims) == t.flops()
    if t.kind == "concatenate":
        assert t.input_names() == ("X", "X2") and t.tensor_shapes()["X2"][t.axis] == t.concat_size
        assert math.prod(t.y_dims) == math.prod(t.x_dims) + math.prod(t.x2_dims)


@pytest.mark.parametrize("kw,field,words", [
    (dict(kind="slice", axis=3, start=0, stop=6), "stop", "start < stop <= 5"),
    (dict(kind="slice", axis=1, start=3, stop=3), "start", "would be empty"),
    (dict(kind="slice", axis=0, start=0, stop=3), "stop", "(n = 2)"),
    (dict(kind="transpose", permutation="0123x"), "permutation", "must be one of")])
def test_incompatible_shapes_are_refused_naming_the_field(kw: dict, field: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        TransformSpec(**SMALL, **kw)
    assert info.value.field == field and words in str(info.value)


def test_slice_limits_follow_the_axis() -> None:
    lim = TransformSpec.field_limits({**SMALL, "axis": 3, "start": 1, "stop": 4})
    assert lim["stop"] == (2, 5) and lim["start"] == (0, 3)
    assert TransformSpec.field_limits({**SMALL, "axis": 0, "start": 0, "stop": 1})["stop"] == (1, 2)


def test_graph_kinds_keep_the_dtype_and_layout() -> None:
    t = TransformSpec(**SMALL, kind="transpose", dtype="fp32", out_dtype="fp16", out_layout="NCHW", layout="NHWC")
    assert (t.out_dtype, t.out_layout) == ("fp32", "NHWC") and t.tensor_dtypes()["Y"] == "fp32"


def test_transform_form_shows_only_the_kinds_fields() -> None:
    hidden = TransformSpec.hidden_fields({"kind": "slice"})
    assert {"axis", "start", "stop"}.isdisjoint(hidden) and {"permutation", "reshape_to", "out_layout"} <= hidden
    assert "out_layout" not in TransformSpec.hidden_fields({"kind": "convert"})
    assert TransformSpec.field_hints({"kind": "transpose"})["kind"] == "runs from cuDNN 9.22.0"
    assert TransformSpec.field_choices()["kind"] == TRANSFORM_KINDS


@pytest.mark.parametrize("mode", [m for m in ACTIVATIONS if m not in COEF_DEFAULTS])
@pytest.mark.parametrize("coef", [0.5, 3.0])  # junk is refused: tests/test_issue37_spec_fields.py
def test_a_coefficient_the_mode_ignores_is_warned_about_by_name(mode: str, coef) -> None:
    with pytest.warns(IgnoredFieldWarning) as record:
        assert ActivationSpec(**SMALL, mode=mode, coef=coef).coef is None
    msg = str(record[0].message)
    assert "coef" in msg and mode in msg and "swish" in msg and len(msg) < 300


def test_replacing_the_mode_drops_the_old_coefficient_quietly() -> None:
    import warnings

    swish = ActivationSpec(**SMALL, mode="swish", coef=1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert swish.replace(mode="relu").coef is None and swish.replace(mode="elu").coef == 1.5
    with pytest.warns(IgnoredFieldWarning, match="coef"):  # given with the mode: said so
        swish.replace(mode="tanh", coef=2.0)
