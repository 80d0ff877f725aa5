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


def test_speed_ups_are_left_to_the_kit_by_default_and_one_box_turns_them_off_and_on() -> None:
    """Issue 36: one checkbox; unticked means no helpers and no kernel cache; ticked again leaves both to the kit,
    and a count set by hand is kept while the box stays ticked."""
    form = RunForm()
    assert form.speedups.value is True and form.options.parallel_builds == "auto" and form.options.kernel_cache is None
    form.speedups.value = False
    assert form.options.parallel_builds == 0 and form.options.kernel_cache is False
    form.speedups.value = True
    assert form.options.parallel_builds == "auto" and form.options.kernel_cache is None
    form.set_options(RunOptions(parallel_builds=3, kernel_cache=True))
    assert form.speedups.value is True and form.options.parallel_builds == 3 and form.options.kernel_cache is True
    form.set_options(RunOptions(parallel_builds=0))  # helpers off, kernel cache left to the kit: shown, not changed
    assert form.speedups.value is True and form.options == RunOptions(parallel_builds=0)
    form.set_options({"parallel_builds": None, "kernel_cache": False})
    assert form.speedups.value is False and form.options.parallel_builds is None


def test_the_speed_ups_line_says_what_was_used() -> None:
    from cudnn_lab.ui.run_form import used_text

    form = RunForm()
    assert "auto" in form.speedups.description and "helper" in form.speedups.tooltip
    form.show_used({"parallel_builds": {"asked": "auto", "used": 7, "why": "auto: 7 helpers"},
                    "kernel_cache": {"asked": "auto", "used": False, "why": "auto: off"}})
    assert form.speedups.description == "last run: 7 helpers, kernel cache off"
    assert used_text({"parallel_builds": {"used": 0}, "kernel_cache": {"used": True}}) == ("last run: no helpers, "
                                                                                          "kernel cache on")
    assert used_text({"state": "ready", "helpers": 8}) == "helpers: 8 warm, kernel cache: auto"
    assert used_text({"state": "warming", "helpers": 0}).startswith("helpers: starting")
    assert used_text(None) == used_text({"state": "failed", "helpers": 0}) == "helpers, kernel cache: auto"
