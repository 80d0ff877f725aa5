"""RunOptions: one validated object for how a spec is run: defaults, round trip, coercion, and every bad value
refused with an OptionError naming the option."""

from __future__ import annotations

import json
import math

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import OptionError
from cudnn_lab.options import HEURISTIC_MODES, PLAN_POLICIES, TIMING_MODES, RunOptions


def test_defaults_are_one_per_option() -> None:
    o = RunOptions()
    assert (o.heuristics, o.plans, o.timing, o.cold_l2) == (("A", "FALLBACK"), "all", "auto", False)
    assert o.plans in PLAN_POLICIES and o.timing in TIMING_MODES and set(o.heuristics) <= set(HEURISTIC_MODES)


def test_round_trip_through_a_dict_and_json() -> None:
    o = RunOptions(heuristics=("B",), plans="heuristic", max_plans=3, timing="events", cold_l2=True,
                   time_cap_s=0.2, warmup=1, min_samples=4, max_samples=8, rel_iqr_target=0.3, seed=9, device=1,
                   check=False, baselines=False, roofline=False)
    assert RunOptions.from_dict(o.to_dict()) == o
    assert RunOptions.from_dict(json.loads(json.dumps(o.to_dict()))) == o
    assert set(o.to_dict()) == set(RunOptions.names())


@pytest.mark.parametrize("given", [None, {}, RunOptions()])
def test_coerce_takes_none_a_dict_or_the_object(given) -> None:
    assert RunOptions.coerce(given) == RunOptions()


def test_overrides_apply_on_top_and_are_validated() -> None:
    o = RunOptions.coerce({"plans": "heuristic"}, seed=4, heuristics="b")
    assert (o.plans, o.seed, o.heuristics) == ("heuristic", 4, ("B",))
    with pytest.raises(OptionError, match="seed"):
        RunOptions.coerce({"plans": "heuristic"}, seed=-4)


def test_older_keyword_spellings_are_aliases() -> None:
    assert RunOptions.coerce(None, torch_baseline=False).baselines is False
    assert RunOptions.coerce({"device_index": 2}).device == 2


def test_replace_keeps_the_rest() -> None:
    o = RunOptions(seed=5).replace(plans="heuristic")
    assert (o.seed, o.plans) == (5, "heuristic")


def test_heuristics_are_upper_case_and_deduplicated() -> None:
    assert RunOptions(heuristics=["a", "FALLBACK", "A"]).heuristics == ("A", "FALLBACK")


def test_cold_l2_with_auto_timing_is_timed_with_events() -> None:
    assert RunOptions(cold_l2=True).timing_mode == "events"
    assert RunOptions().timing_mode == "auto"


BAD = [
    ("heuristics", 5), ("heuristics", [1, 2]), ("heuristics", []), ("heuristics", "C"), ("heuristics", None),
    ("plans", "some"), ("plans", None), ("plans", 1),
    ("max_plans", 0), ("max_plans", -1), ("max_plans", 1.5), ("max_plans", True), ("max_plans", "3"),
    ("timing", "fast"), ("timing", None),
    ("cold_l2", "yes"), ("cold_l2", 1),
    ("time_cap_s", -1), ("time_cap_s", 0), ("time_cap_s", math.nan), ("time_cap_s", math.inf), ("time_cap_s", "1"),
    ("time_cap_s", 10**400), ("time_cap_s", True),
    ("warmup", -1), ("warmup", 2.5),
    ("min_samples", 2), ("max_samples", 2), ("rel_iqr_target", 0), ("rel_iqr_target", -0.1),
    ("rel_iqr_target", math.nan), ("seed", -1), ("seed", 1.5), ("seed", 10**400),
    ("device", -1), ("device", "0"), ("device", 1.0), ("device", None),
    ("check", None), ("baselines", "no"), ("roofline", 0),
]


@pytest.mark.parametrize("option,value", BAD, ids=[f"{o}={v!r}"[:40] for o, v in BAD])
def test_every_bad_value_is_an_option_error_naming_the_option(option: str, value) -> None:
    with pytest.raises(OptionError) as info:
        RunOptions.coerce(None, **{option: value})
    assert info.value.option == option
    assert option in str(info.value) and len(str(info.value)) < 400


def test_max_samples_below_min_samples_is_refused() -> None:
    with pytest.raises(OptionError, match="max_samples"):
        RunOptions(min_samples=20, max_samples=10)


def test_cold_l2_with_cuda_graph_timing_is_refused() -> None:
    with pytest.raises(OptionError, match="cold_l2"):
        RunOptions(cold_l2=True, timing="cuda_graph")


@pytest.mark.parametrize("given", ["all", ["plans"], 3, ("A",)])
def test_options_of_the_wrong_kind_are_refused(given) -> None:
    with pytest.raises(OptionError, match="options"):
        RunOptions.coerce(given)


def test_an_unknown_option_names_the_options_there_are() -> None:
    with pytest.raises(OptionError, match="not a run option") as info:
        RunOptions.coerce(None, warm_up=3)
    assert "warmup" in str(info.value)
    with pytest.raises(OptionError, match="not a run option"):
        RunOptions.from_dict({"x" * 10_000: 1})


def test_options_are_an_exported_name() -> None:
    assert cl.RunOptions is RunOptions


@pytest.mark.parametrize("given", [
    {"baselines": True, "torch_baseline": False}, {"torch_baseline": False, "baselines": True},
    {"baselines": False, "torch_baseline": 0}, {"device": 0, "device_index": 1}])
def test_two_spellings_of_one_option_that_disagree_are_refused_naming_both(given: dict) -> None:
    alias, canon = sorted(given, key=lambda k: k in RunOptions.ALIASES, reverse=True)
    for make in (lambda: RunOptions.from_dict(given), lambda: RunOptions.coerce(None, **given),
                 lambda: RunOptions().replace(**given)):
        with pytest.raises(OptionError) as info:
            make()
        assert info.value.option == canon and alias in str(info.value) and canon in str(info.value)


def test_two_spellings_that_agree_are_one_option() -> None:
    assert RunOptions.from_dict({"baselines": False, "torch_baseline": False}).baselines is False
    assert RunOptions.coerce({"baselines": True}, torch_baseline=False).baselines is False  # an override on top


# ------------------------------------------------------------------------------------------------ sm_count

def test_sm_count_defaults_to_the_whole_gpu_and_round_trips() -> None:
    assert RunOptions().sm_count is None and RunOptions.sm_count is None
    o = RunOptions(sm_count=66)
    assert o.sm_count == 66 and o.to_dict()["sm_count"] == 66
    assert RunOptions.from_dict(json.loads(json.dumps(o.to_dict()))) == o
    assert RunOptions.coerce({"sm_count": 114}).sm_count == 114
    assert RunOptions(sm_count=66).replace(sm_count=None).sm_count is None


@pytest.mark.parametrize("bad", [0, -1, True, False, 1.5, 66.0, "66", [66], 10**9])
def test_sm_count_must_be_a_whole_number_of_sms_or_none(bad) -> None:
    with pytest.raises(OptionError) as info:
        RunOptions.coerce(None, sm_count=bad)
    assert info.value.option == "sm_count"
    assert "whole number of SMs" in str(info.value) and "None" in str(info.value)


def test_sm_count_with_explore_is_refused_naming_sm_count() -> None:
    with pytest.raises(OptionError, match="explore") as info:
        RunOptions(sm_count=66, explore=4)
    assert info.value.option == "sm_count"
    assert RunOptions(sm_count=66, explore=0).explore == 0


def test_sm_count_has_a_cli_flag() -> None:
    from cudnn_lab import cli

    args = cli._parser().parse_args(["run", "s.json", "--sm-count", "66"])
    assert cli._run_overrides(args) == {"sm_count": 66}
    assert "sm_count" not in cli._run_overrides(cli._parser().parse_args(["run", "s.json"]))


def test_sm_count_at_its_default_keeps_old_sweep_point_ids() -> None:
    from cudnn_lab.sweeps.points import ID_SETTINGS_NEW, id_settings, point_id

    spec = cl.ConvSpec(n=1, c=8, h=8, w=8, k=8)
    now = RunOptions().to_dict()
    before = {k: v for k, v in now.items() if k != "sm_count"}  # a store written before sm_count existed
    assert "sm_count" in ID_SETTINGS_NEW
    assert point_id(spec, id_settings(now), "H200") == point_id(spec, id_settings(before), "H200")
    carved = RunOptions(sm_count=66).to_dict()
    assert point_id(spec, id_settings(carved), "H200") != point_id(spec, id_settings(now), "H200")


def test_each_timing_setting_reaches_the_timer_with_its_default() -> None:
    import dataclasses

    from cudnn_lab.gpu.timing import TimingOptions
    from cudnn_lab.options import TIMING_SETTINGS, option_info

    assert "time_cap_s" in TIMING_SETTINGS and "seed" not in TIMING_SETTINGS
    timer_fields = {f.name: f.default for f in dataclasses.fields(TimingOptions)}
    for name in TIMING_SETTINGS:
        assert timer_fields[name] == option_info(name)["default"], name
    changed = RunOptions(warmup=7, min_samples=4, max_samples=9)
    assert (TimingOptions.from_options(changed).warmup, TimingOptions.from_options(changed).max_samples) == (7, 9)


def test_every_option_says_how_it_enters_a_point_id_and_what_it_means() -> None:
    from cudnn_lab.options import POINT_ID_RULES, option_info

    for name in RunOptions.names():
        info = option_info(name)
        assert info["point_id"] in POINT_ID_RULES and info["help"] and info["flag"].startswith("--"), name
    with pytest.raises(OptionError, match="not a run option"):
        option_info("bogus")
