"""RnnSpec: bad values name their field, tensor shapes as PyTorch's modules have them, cuDNN's weight slots, FLOPs,
round trips."""

from __future__ import annotations

import pytest
import torch

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import spec_from_dict, spec_from_json
from cudnn_lab.specs.rnn import ALGO_CHOICES, CELLS, GATES, MATH_TYPES, RnnSpec

SMALL = dict(hidden_size=5, input_size=3, seq_len=4, batch=2)


@pytest.mark.parametrize("field,value", [("hidden_size", 0), ("layers", 0), ("seq_len", 0), ("batch", 0),
                                         ("input_size", -1), ("layers", 65), ("cell", "xlstm"), ("cell", 3),
                                         ("algo", "persist"), ("math_type", "tf32"), ("direction", "bwd_data"),
                                         ("dtype", "fp8"), ("bidirectional", "yes"), ("hidden_size", 2.5)])
def test_bad_values_name_their_field(field: str, value: object) -> None:
    with pytest.raises(SpecError) as info:
        RnnSpec(**{field: value})
    assert info.value.field == field and info.value.spec == "RnnSpec"
    assert field in str(info.value)


def test_weight_too_large_for_cudnn_is_refused_naming_the_size() -> None:
    with pytest.raises(SpecError) as info:
        RnnSpec(hidden_size=40000, input_size=40000, seq_len=1, batch=1)
    assert info.value.field in ("hidden_size", "input_size")


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_parameter_shapes_are_pytorchs(cell: str, bidirectional: bool) -> None:
    spec = RnnSpec(cell=cell, layers=2, bidirectional=bidirectional, **SMALL)
    module = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}.get(cell, torch.nn.RNN)
    m = module(3, 5, 2, bidirectional=bidirectional)
    assert {n: tuple(p.shape) for n, p in m.named_parameters()} == spec.param_shapes()
    assert spec.param_names() == tuple(n for n, _ in m.named_parameters())  # PyTorch's order too
    shapes = spec.tensor_shapes()
    d = 2 if bidirectional else 1
    assert shapes["X"] == (4, 2, 3) and shapes["Y"] == (4, 2, 5 * d) and shapes["Hx"] == (2 * d, 2, 5)
    assert ("Cx" in shapes) == ("Cy" in shapes) == (cell == "lstm")


def test_weight_slots_cover_every_row_once_in_cudnn_numbering() -> None:
    spec = RnnSpec(cell="lstm", layers=2, bidirectional=True, **SMALL)
    slots = spec.weight_slots()
    assert len(slots) == 2 * 2 * 8 * 2  # layers x directions x 8 matrices x (matrix, bias)
    for param in spec.param_shapes():
        rows = sorted(s.rows for s in slots if s.param == param)
        assert rows == [(k * 5, (k + 1) * 5) for k in range(4)], param
    first = [s for s in slots if s.pseudo_layer == 1 and not s.bias]
    assert [(s.lin_layer_id, s.gate, s.recurrent) for s in first] == [
        (0, "i", False), (1, "f", False), (2, "g", False), (3, "o", False),
        (4, "i", True), (5, "f", True), (6, "g", True), (7, "o", True)]
    assert {s.param for s in first} == {"weight_ih_l0_reverse", "weight_hh_l0_reverse"}
    gru = RnnSpec(cell="gru", **SMALL).weight_slots()
    assert [s.gate for s in gru if not s.bias] == ["r", "z", "n", "r", "z", "n"] == [*GATES["gru"]] * 2


def test_backward_names_and_shapes() -> None:
    spec = RnnSpec(cell="gru", direction="bwd", **SMALL)
    assert spec.input_names()[-2:] == ("DY", "DHy")
    assert spec.output_names()[:2] == ("DX", "DHx") and "dweight_hh_l0" in spec.output_names()
    shapes = spec.tensor_shapes()
    assert shapes["DX"] == shapes["X"] and shapes["dweight_ih_l0"] == (15, 3)
    assert "Cx" not in shapes and "DCx" not in shapes


def test_flops_count_the_gemms_and_three_passes_for_bwd() -> None:
    spec = RnnSpec(cell="lstm", layers=2, bidirectional=True, **SMALL)
    per_step = 2 * (2 * 4 * 5 * (3 + 5)) + 2 * (2 * 4 * 5 * (10 + 5))  # layer 0 and 1, both directions
    assert spec.forward_flops() == spec.flops() == 4 * 2 * per_step
    assert spec.replace(direction="bwd").flops() == 3 * spec.flops()
    assert spec.min_bytes() == 2 * sum(torch.Size(d).numel() for d in spec.tensor_shapes().values())


def test_round_trips_and_form_rules() -> None:
    spec = RnnSpec(cell="rnn_relu", layers=3, bidirectional=True, dtype="fp32", algo="persist_static",
                   math_type="fma", direction="bwd", **SMALL)
    assert spec_from_json(spec.to_json()) == spec and spec_from_dict(spec.to_dict()) == spec
    choices = RnnSpec.field_choices()
    assert choices["algo"] == ALGO_CHOICES and choices["math_type"] == MATH_TYPES and choices["cell"] == CELLS
    assert RnnSpec.field_limits({})["layers"] == (1, 64)
    assert "i/f/g/o" in RnnSpec.field_hints({"cell": "lstm"})["cell"]
    assert set(RnnSpec.field_order) == {f for f in spec.to_dict() if f != "op"}
    assert "rnn_relu" in spec.label() and "bidir" in spec.label()
