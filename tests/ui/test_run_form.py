"""The run form makes a RunOptions from options.py's own choices; it shows one back; bad input is refused."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.options import HEURISTIC_MODES, PLAN_POLICIES, PLAN_POLICY_HELP, TIMING_HELP, TIMING_MODES, RunOptions
from cudnn_lab.ui.run_form import COLD_L2, RunForm, call_with_options


def test_defaults_are_run_options_defaults() -> None:
    assert RunForm().options == RunOptions()


def test_choices_and_tooltips_come_from_options() -> None:
    form = RunForm()
    assert tuple(form.heuristics) == HEURISTIC_MODES
    assert [v for _, v in form.policy.options] == list(PLAN_POLICIES)
    assert list(form.policy.tooltips) == [PLAN_POLICY_HELP[p] for p in PLAN_POLICIES]
    assert [v[0] for _, v in form.timing.options][:len(TIMING_MODES)] == list(TIMING_MODES)
    assert list(form.timing.tooltips)[:len(TIMING_MODES)] == [TIMING_HELP[m] for m in TIMING_MODES]


def test_widgets_make_run_options() -> None:
    form = RunForm()
    form.heuristics["B"].value = True
    form.policy.value = "heuristic"
    form.timing.value = COLD_L2
    assert form.options == RunOptions(heuristics=("A", "B", "FALLBACK"), plans="heuristic", timing="events",
                                      cold_l2=True)
    form.timing.value = ("cupti", False)
    assert form.options.timing == "cupti" and not form.options.cold_l2


def test_set_options_shows_them_and_keeps_the_rest() -> None:
    form = RunForm()
    options = RunOptions(heuristics=("B",), plans="heuristic", timing="events", time_cap_s=2.0, seed=7)
    form.set_options(options)
    assert form.options == options  # time cap and seed have no widget but are kept
    assert [m for m, cb in form.heuristics.items() if cb.value] == ["B"]
    form.set_options({"cold_l2": True})
    assert form.timing.value == COLD_L2 and form.options.cold_l2
    with pytest.raises(cl.OptionError):
        form.set_options({"timing": "sundial"})


def test_no_heuristic_mode_is_refused_naming_the_option() -> None:
    form = RunForm()
    for cb in form.heuristics.values():
        cb.value = False
    with pytest.raises(cl.OptionError) as info:
        _ = form.options
    assert info.value.option == "heuristics"


def test_call_with_options_passes_what_the_function_takes() -> None:
    seen: dict = {}

    def takes_options(spec, *, options=None, progress=None):
        seen["options"] = options

    def takes_keywords(spec, *, plans="heuristic", timing="auto", torch_baseline=True, progress=None):
        seen.update(plans=plans, timing=timing, torch_baseline=torch_baseline)

    options = RunOptions(plans="all", timing="events", baselines=False)
    call_with_options(takes_options, cl.ConvSpec(), options=options)
    assert seen["options"] is options
    call_with_options(takes_keywords, cl.ConvSpec(), options=options)
    assert seen == {"options": options, "plans": "all", "timing": "events", "torch_baseline": False}
