"""gpu/pin.py's arguments (CPU only): spec, engine id, knobs and plan name are checked with bounds and refused with
the kit's errors naming the argument before a GPU is asked for; good arguments without a GPU are a NoGPUError."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab import capabilities
from cudnn_lab.errors import NoGPUError, OptionError, SpecError
from cudnn_lab.gpu import pin
from cudnn_lab.gpu.pin import MAX_ENGINE_ID, MAX_KNOB_VALUE, MAX_PLAN_NAME, check_knobs, check_request, pin_plan

SPEC = cl.ConvSpec(n=1, c=8, h=8, w=8, k=8, r=3, s=3, padding=1)


@pytest.fixture
def no_gpu_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking for a GPU (probe, a handle, a graph) fails the test: bad arguments must be refused before that."""

    def asked(*_: object, **__: object) -> None:
        raise AssertionError("a GPU was asked for before the arguments were checked")

    monkeypatch.setattr(capabilities, "probe", asked)
    monkeypatch.setattr(pin, "_default_handle", asked)
    monkeypatch.setattr(pin, "prepared_graph", asked)


BAD_PLANS = ["eng-1_k2=0", f"eng{MAX_ENGINE_ID + 1}", "eng1_k2=-3", "eng1_k2=0_k2=1", "eng1_k9999=0",
             f"eng1_k2={MAX_KNOB_VALUE + 1}", "engine62", "", "eng1_k2=" + "9" * 5000, "eng" + "1" * 5000,
             "x" * (MAX_PLAN_NAME + 1), 62, 1.5, True, b"eng1", ["eng1"]]


@pytest.mark.parametrize("plan", BAD_PLANS, ids=[repr(p)[:30] for p in BAD_PLANS])
def test_bad_plan_names_are_refused_naming_plan(no_gpu_asked: None, plan: object) -> None:
    with pytest.raises(OptionError) as err:
        pin_plan(SPEC, plan=plan)  # type: ignore[arg-type]
    assert err.value.option == "plan" and "plan" in str(err.value) and len(str(err.value)) < 600


BAD_ENGINES = [-1, MAX_ENGINE_ID + 1, 10**400, True, False, 1.0, "3", None, [3]]


@pytest.mark.parametrize("engine_id", BAD_ENGINES, ids=[repr(e)[:30] for e in BAD_ENGINES])
def test_bad_engine_ids_are_refused_naming_engine_id(no_gpu_asked: None, engine_id: object) -> None:
    with pytest.raises(OptionError) as err:
        pin_plan(SPEC, engine_id)  # type: ignore[arg-type]
    assert err.value.option == "engine_id" and "engine_id" in str(err.value) and len(str(err.value)) < 600


BAD_KNOBS = [{"k2": True}, {"k2": -1}, {"k2": 1.5}, {"k2": 2.0}, {"k2": MAX_KNOB_VALUE + 1}, {"k2": 10**400},
             {"k2": "0"}, {"k2": None}, {-1: 0}, {5000: 0}, {True: 0}, {(1, 2): 0}, {1.5: 0}, {"NO_SUCH_KNOB": 0},
             {"k" + "9" * 60: 0}, {"x" * 100: 0}, {"k2": 0, "TILE_SIZE": 1}, {f"k{i}": 0 for i in range(65)},
             [("k2", 0)], 5, "not json", "[" * 4000, '{"k2": 1e999}', '{"k2": 99999999999999999999999}',
             '{"k2": NaN}', '{"k2": [1]}', "[1, 2]", "x" * 5000, "eng1_k2=-1", "eng1_k2=0_k2=1"]


@pytest.mark.parametrize("knobs", BAD_KNOBS, ids=[repr(k)[:30] for k in BAD_KNOBS])
def test_bad_knobs_are_refused_naming_knobs(no_gpu_asked: None, knobs: object) -> None:
    with pytest.raises(OptionError) as err:
        pin_plan(SPEC, 3, knobs)
    assert err.value.option == "knobs" and "knobs" in str(err.value) and len(str(err.value)) < 900


@pytest.mark.parametrize("spec", [5, "conv", None, [SPEC], cl.ConvSpec])
def test_a_spec_that_is_no_spec_is_refused_naming_spec(no_gpu_asked: None, spec: object) -> None:
    with pytest.raises(OptionError) as err:
        pin_plan(spec, 3)
    assert err.value.option == "spec"


def test_a_spec_dict_is_made_a_spec_and_a_bad_one_is_a_spec_error(no_gpu_asked: None) -> None:
    with pytest.raises(SpecError, match="n"):
        pin_plan({"op": "conv", "n": -1}, 3)
    with pytest.raises(SpecError, match="op"):
        pin_plan({"op": "nope"}, 3)
    assert pin.check_spec(SPEC.to_dict()) == SPEC


@pytest.mark.parametrize("name,value", [("build", 1), ("build", "yes"), ("check_ranges", None)])
def test_flags_must_be_bools(no_gpu_asked: None, name: str, value: object) -> None:
    with pytest.raises(OptionError, match=name):
        pin_plan(SPEC, 3, **{name: value})


def test_a_plan_and_an_engine_id_or_knobs_that_disagree_are_refused_naming_both(no_gpu_asked: None) -> None:
    with pytest.raises(OptionError, match="engine_id.*plan"):
        pin_plan(SPEC, 4, plan="eng3_k2=0")
    with pytest.raises(OptionError, match="knobs.*plan"):
        pin_plan(SPEC, 3, {"k2": 1}, plan="eng3_k2=0")


def test_good_arguments_parse_to_engine_and_backend_knobs() -> None:
    assert check_request(None, None, "eng62_k2=0_k13=1") == (62, {2: 0, 13: 1})
    assert check_request(None, None, "conv_eng62_k2=0") == (62, {2: 0})  # an operation tag in front
    assert check_request(62, {"TILE_SIZE": 0, "k13": 1}, "eng62_k2=0_k13=1") == (62, {2: 0, 13: 1})
    assert check_request(7, {2: 0}, None) == (7, {2: 0})
    assert check_knobs('{"k2": 3}') == {2: 3} and check_knobs("eng1_k3=4") == {3: 4} and check_knobs(" ") == {}
    assert check_knobs(None) == {}


def test_good_arguments_without_a_gpu_are_a_no_gpu_error(monkeypatch: pytest.MonkeyPatch) -> None:
    if capabilities.probe().gpu:
        pytest.skip("a GPU is present")

    def touched(*_: object, **__: object) -> None:
        raise AssertionError("torch.cuda was asked for a device without a GPU")

    monkeypatch.setattr(pin, "_default_handle", touched)
    monkeypatch.setattr(pin, "prepared_graph", touched)
    with pytest.raises(NoGPUError, match="pin_plan"):
        pin_plan(SPEC, plan="eng62_k2=0_k13=1")
    with pytest.raises(NoGPUError):
        cl.pin_plan(SPEC.to_dict(), 3, {"TILE_SIZE": 0})
