"""MatmulSpec: validation, shapes of A/B/C and epilogue operands, FLOPs, bytes, label, JSON round trip."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import MatmulSpec, spec_from_dict, spec_from_json
from cudnn_lab.specs.base import DTYPE_BYTES, MAX_ELEMENTS


def mm(**kw) -> MatmulSpec:
    return MatmulSpec(**{**dict(batch=3, m=5, n=7, k=4, dtype="fp32"), **kw})


@st.composite
def matmul_specs(draw) -> MatmulSpec:
    operands = draw(st.lists(st.sampled_from(["bias", "scale", "add"]), unique=True, max_size=3))
    acts = draw(st.lists(st.sampled_from(["relu", "gelu", "sigmoid", "tanh"]), max_size=3))
    return MatmulSpec(batch=draw(st.integers(1, 8)), m=draw(st.integers(1, 4096)), n=draw(st.integers(1, 4096)),
                      k=draw(st.integers(1, 4096)), dtype=draw(st.sampled_from(["fp32", "fp16", "bf16"])),
                      transpose_a=draw(st.booleans()), transpose_b=draw(st.booleans()),
                      epilogue=tuple(draw(st.permutations(operands + acts))))


@settings(max_examples=150, deadline=None)
@given(matmul_specs())
def test_random_valid_matmul_spec_round_trips_through_json(spec: MatmulSpec) -> None:
    again = spec_from_json(spec.to_json())
    assert again == spec and type(again) is MatmulSpec


@settings(max_examples=50, deadline=None)
@given(matmul_specs())
def test_random_valid_matmul_spec_round_trips_through_dict(spec: MatmulSpec) -> None:
    assert spec_from_dict(spec.to_dict()) == spec


def test_tensor_shapes_are_a_b_c() -> None:
    spec = mm()
    assert spec.tensor_shapes() == {"A": (3, 5, 4), "B": (3, 4, 7), "C": (3, 5, 7)}


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_transposes_do_not_change_logical_dims(ta: bool, tb: bool) -> None:
    assert mm(transpose_a=ta, transpose_b=tb).tensor_shapes() == mm().tensor_shapes()


def test_logical_shapes_match_torch_matmul() -> None:
    spec = mm()
    shapes = spec.tensor_shapes()
    assert tuple(torch.matmul(torch.zeros(shapes["A"]), torch.zeros(shapes["B"])).shape) == shapes["C"]


def test_epilogue_operands_appear_in_tensor_shapes() -> None:
    spec = mm(epilogue=("bias", "scale", "add", "gelu"))
    shapes = spec.tensor_shapes()
    assert shapes["bias"] == shapes["scale"] == (1, 1, spec.n)
    assert shapes["residual"] == shapes["C"]


def test_bias_broadcasts_over_c_in_torch() -> None:
    shapes = mm(epilogue=("bias",)).tensor_shapes()
    assert tuple((torch.zeros(shapes["C"]) + torch.zeros(shapes["bias"])).shape) == shapes["C"]


def test_io_names() -> None:
    assert mm().io_names() == (("A", "B"), "C")


@pytest.mark.parametrize("dims", [dict(batch=1, m=1, n=1, k=1), dict(batch=3, m=5, n=7, k=4),
                                  dict(batch=2, m=128, n=64, k=256)])
def test_flops_is_two_batch_m_n_k(dims: dict) -> None:
    spec = mm(**dims)
    assert spec.flops() == 2 * spec.batch * spec.m * spec.n * spec.k


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_min_bytes_counts_every_tensor_once(dtype: str) -> None:
    spec = mm(dtype=dtype, epilogue=("bias", "add"))
    assert spec.min_bytes() == DTYPE_BYTES[dtype] * sum(math.prod(d) for d in spec.tensor_shapes().values())


@pytest.mark.parametrize("ta,tb,code", [(False, False, "NN"), (True, False, "TN"), (False, True, "NT"),
                                        (True, True, "TT")])
def test_label_shows_blas_transpose_code(ta: bool, tb: bool, code: str) -> None:
    assert f"matmul {code} " in mm(transpose_a=ta, transpose_b=tb).label()


def test_label_shows_batch_sizes_and_epilogue() -> None:
    label = mm(batch=3, m=5, n=7, k=4, dtype="bf16", epilogue=("bias", "gelu")).label()
    assert "3x5x7x4" in label and "bf16" in label and label.endswith("+bias+gelu")


def test_label_omits_batch_of_one() -> None:
    assert "matmul NN fp32 5x7x4" == mm(batch=1).label()


BAD = [
    (dict(batch=0), "batch", ["batch=0"]),
    (dict(m=-1), "m", ["m=-1"]),
    (dict(n=2.5), "n", ["n=2.5"]),
    (dict(k=None), "k", ["k=None"]),
    (dict(m=True), "m", ["m=True", "not a bool"]),
    (dict(dtype="fp8"), "dtype", ["dtype='fp8'"]),
    (dict(compute_dtype="fp16", dtype="fp16"), "compute_dtype", ["compute_dtype='fp16'", "fp32"]),
    (dict(transpose_a=1), "transpose_a", ["transpose_a=1", "True or False"]),
    (dict(transpose_b="yes"), "transpose_b", ["transpose_b='yes'"]),
    (dict(epilogue=("bias", "bias")), "epilogue", ["epilogue=('bias', 'bias')", "once"]),
    (dict(epilogue=("softmax",)), "epilogue", ["epilogue='softmax'"]),
    (dict(batch=1024, m=4096, n=4096, k=8), "m", ["m=4096", str(MAX_ELEMENTS)]),
    (dict(batch=4096, m=512, n=4096, k=8), "batch", ["batch=4096", str(MAX_ELEMENTS)]),
]


@pytest.mark.parametrize("changes,field,parts", BAD, ids=[str(b[0]) for b in BAD])
def test_invalid_value_raises_spec_error_naming_field_and_value(changes: dict, field: str, parts: list[str]) -> None:
    with pytest.raises(SpecError) as info:
        mm(**changes)
    assert info.value.field == field
    assert str(info.value).startswith(f"MatmulSpec.{field}=")
    for part in parts:
        assert part in str(info.value), (part, str(info.value))


def test_defaults_are_valid() -> None:
    spec = MatmulSpec()
    assert spec.tensor_shapes()["C"] == (spec.batch, spec.m, spec.n)
