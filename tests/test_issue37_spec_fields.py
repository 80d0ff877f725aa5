"""Spec fields a file or a caller gets wrong are refused naming the field and what it takes (issue 37): a junk
activation coefficient (text, bool, NaN, infinity, a number no mode takes, an integer too large for a float) is
refused whatever the mode, not dropped; a coefficient a mode could take but this one ignores is still dropped with a
warning naming it; a 401-digit epsilon names epsilon and its range."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

import cudnn_lab as cl
from cudnn_lab.specs.activation import ACTIVATIONS, COEF_DEFAULTS, MAX_COEF, ActivationSpec, IgnoredFieldWarning

SMALL = {"n": 2, "c": 8, "h": 4, "w": 4}
NO_COEF = [m for m in ACTIVATIONS if m not in COEF_DEFAULTS]
JUNK: list[Any] = ["junk", "x" * 5000, True, float("nan"), float("inf"), -1.0, 0.0, MAX_COEF * 10, 10**400, [1.0],
                   {"beta": 1}]


@pytest.mark.parametrize("mode", list(ACTIVATIONS))
@pytest.mark.parametrize("coef", JUNK, ids=lambda v: type(v).__name__ + (repr(v)[:12] if len(repr(v)) < 40 else ""))
def test_a_junk_coefficient_is_refused_naming_coef_whatever_the_mode(mode: str, coef: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused, not dropped with a warning
        with pytest.raises(cl.SpecError) as caught:
            ActivationSpec(**SMALL, mode=mode, coef=coef)
    err = caught.value
    assert err.field == "coef" and "greater than 0" in err.allowed and f"{MAX_COEF:g}" in err.allowed
    if mode not in COEF_DEFAULTS:  # and says that this mode takes none
        assert mode in err.allowed and "leave coef out" in err.allowed
    assert len(str(err)) < 400


@pytest.mark.parametrize("mode", NO_COEF)
def test_a_coefficient_another_mode_takes_is_dropped_with_a_warning(mode: str) -> None:
    with pytest.warns(IgnoredFieldWarning, match="coef"):
        assert ActivationSpec(**SMALL, mode=mode, coef=1.5).coef is None


@pytest.mark.parametrize("coef", ["junk", float("nan"), 10**400], ids=["text", "nan", "401 digits"])
def test_a_junk_coefficient_in_a_spec_json_names_the_field(coef: Any) -> None:
    text = json.dumps({"op": "activation", "mode": "relu", "coef": coef, **SMALL}, allow_nan=True)
    with pytest.raises(cl.SpecError, match=r"ActivationSpec\.coef=.*greater than 0"):
        cl.spec_from_json(text)


def test_a_401_digit_epsilon_names_epsilon_and_its_range() -> None:
    text = '{"op": "norm", "kind": "layernorm", "epsilon": 1' + "0" * 400 + "}"
    with pytest.raises(cl.SpecError) as caught:
        cl.spec_from_json(text)
    assert caught.value.field == "epsilon" and "greater than 0 and at most 1" in caught.value.allowed
    with pytest.raises(cl.SpecError, match="epsilon.*greater than 0 and at most 1"):
        cl.NormSpec(epsilon=10**400)
