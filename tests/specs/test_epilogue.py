"""Epilogue chains: which steps exist, order kept, operand steps at most once, at most 6 steps."""

from __future__ import annotations

import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.specs import EPILOGUES, ConvSpec, MatmulSpec
from cudnn_lab.specs.epilogue import WITH_OPERAND, check_epilogue


def test_every_epilogue_has_a_description() -> None:
    assert set(EPILOGUES) == {"bias", "scale", "add", "relu", "gelu", "sigmoid", "tanh"}
    assert all(isinstance(v, str) and v for v in EPILOGUES.values())


def test_operand_steps_are_known_epilogues() -> None:
    assert set(WITH_OPERAND) <= set(EPILOGUES)


@pytest.mark.parametrize("step", list(EPILOGUES))
def test_each_step_alone_is_accepted(step: str) -> None:
    assert check_epilogue("S", (step,)) == (step,)


def test_single_string_becomes_one_step() -> None:
    assert check_epilogue("S", "relu") == ("relu",)


def test_empty_string_is_no_epilogue() -> None:
    assert check_epilogue("S", "") == ()


def test_list_becomes_tuple_in_order() -> None:
    assert check_epilogue("S", ["scale", "bias", "add", "relu"]) == ("scale", "bias", "add", "relu")


def test_activation_may_repeat() -> None:
    assert check_epilogue("S", ("relu", "tanh", "relu")) == ("relu", "tanh", "relu")


@pytest.mark.parametrize("step", WITH_OPERAND)
def test_operand_step_may_appear_once(step: str) -> None:
    with pytest.raises(SpecError, match=f"'{step}' may appear once") as info:
        check_epilogue("S", (step, "relu", step))
    assert info.value.field == "epilogue"


def test_six_steps_allowed_seven_refused() -> None:
    assert len(check_epilogue("S", ("relu",) * 6)) == 6
    with pytest.raises(SpecError, match="at most 6"):
        check_epilogue("S", ("relu",) * 7)


def test_unknown_step_names_step_and_choices() -> None:
    with pytest.raises(SpecError) as info:
        check_epilogue("ConvSpec", ("bias", "swish"))
    assert "epilogue='swish'" in str(info.value) and "relu" in str(info.value)
    assert str(info.value).startswith("ConvSpec.")


@pytest.mark.parametrize("value", [None, 5, {"relu": 1}])
def test_non_sequence_is_refused(value) -> None:
    with pytest.raises(SpecError, match="must be a sequence"):
        check_epilogue("S", value)


@pytest.mark.parametrize("step", [["relu"], 3, None, "RELU"])
def test_non_string_or_wrong_case_step_is_a_spec_error(step) -> None:
    with pytest.raises(SpecError, match="is not an epilogue"):
        check_epilogue("S", ("bias", step))


@pytest.mark.parametrize("cls", [ConvSpec, MatmulSpec])
def test_specs_store_the_validated_chain(cls) -> None:
    assert cls(epilogue=["bias", "relu"]).epilogue == ("bias", "relu")
    assert cls(epilogue="gelu").epilogue == ("gelu",)


@pytest.mark.parametrize("cls", [ConvSpec, MatmulSpec])
def test_specs_refuse_a_bad_chain(cls) -> None:
    with pytest.raises(SpecError, match=f"{cls.__name__}.epilogue"):
        cls(epilogue=("add", "add"))


@pytest.mark.parametrize("cls,operand", [(ConvSpec, "bias"), (ConvSpec, "scale"), (ConvSpec, "residual"),
                                         (MatmulSpec, "bias"), (MatmulSpec, "scale"), (MatmulSpec, "residual")])
def test_each_operand_step_brings_one_tensor(cls, operand: str) -> None:
    step = {"residual": "add"}.get(operand, operand)
    assert operand in cls(epilogue=(step,)).tensor_shapes()
    assert operand not in cls(epilogue=("relu",)).tensor_shapes()
