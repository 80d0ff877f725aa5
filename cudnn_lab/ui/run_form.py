"""The run-options form: heuristic modes, plan policy and timing, producing a :class:`~cudnn_lab.options.RunOptions`.

The choices and their tooltips are :mod:`cudnn_lab.options`' own (``HEURISTIC_MODES``, ``PLAN_POLICIES``,
``TIMING_MODES`` and their ``*_HELP``); the one choice added here, "cold L2", is ``RunOptions(timing="events",
cold_l2=True)``. One checkbox, "speed-ups", leaves the helpers and cuDNN's kernel cache to the kit
(``parallel_builds='auto'``, ``kernel_cache=None``: gpu/defaults.py) or turns both off; its text says what the last
warm-up or run used (:meth:`RunForm.show_used`). Options the form does not show (time cap, samples, seed, ...) are
kept from the options set last.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..options import (HEURISTIC_HELP, HEURISTIC_MODES, PLAN_POLICIES, PLAN_POLICY_HELP, TIMING_HELP, TIMING_MODES,
                       RunOptions)
from ..graph.classic_call import is_classic_call
from ..specs import Spec
from .style import row, share_layout, shared_style

__all__ = ["COLD_L2", "SPEEDUPS_HELP", "RunForm", "call_with_options", "plan_policy_buttons", "used_text"]

#: The timing choice that flushes L2 before each timed call: (timing, cold_l2).
COLD_L2 = ("events", True)
_COLD_L2_HELP = "CUDA events with L2 flushed before every timed call (data comes from memory, not cache)"
#: Button labels of the plan policies (presentation; a policy without one shows its name).
_POLICY_LABELS = {"all": "all plans", "heuristic": "heuristic choice"}
#: Button labels of the timing modes, short enough for one line (the tooltips say what each is).
_TIMING_LABELS = {"cuda_graph": "graph"}
#: The speed-ups checkbox's tooltip, and its text before anything was used.
SPEEDUPS_HELP = ("build plans in warm helper processes where a run has several to compile and the host has cores to "
                 "spare, and use cuDNN's kernel cache where shapes share kernels (sweeps over one dimension); the "
                 "kit decides per run and the result says what it used (settings['decisions']). Untick: neither")
_SPEEDUPS_TEXT = "helpers, kernel cache: auto"


def _off(value: object) -> bool:
    return value is None or value is False or value == 0


def used_text(decisions: object) -> str:
    """The speed-ups line for what a run used (``settings["decisions"]``) or a warm-up made ready
    (``gpu.defaults.warm_state()``); the plain 'auto' text for anything else."""
    if not isinstance(decisions, dict):
        return _SPEEDUPS_TEXT
    if "state" in decisions:  # a warm-up's state
        n = decisions.get("helpers")
        return (f"helpers: {n} warm, kernel cache: auto" if decisions.get("state") == "ready" and n
                else "helpers: starting, kernel cache: auto" if decisions.get("state") == "warming"
                else _SPEEDUPS_TEXT)
    pb, kc = decisions.get("parallel_builds"), decisions.get("kernel_cache")
    helpers = pb.get("used") if isinstance(pb, dict) else None
    cache = kc.get("used") if isinstance(kc, dict) else None
    return (f"last run: {helpers if helpers else 'no'} helpers, kernel cache "
            f"{'on' if cache else 'off' if cache is False else '?'}")


def plan_policy_buttons(W: Any, value: str) -> Any:
    """Toggle buttons over ``PLAN_POLICIES`` (values are the policies, tooltips their help)."""
    return W.ToggleButtons(options=[(_POLICY_LABELS.get(p, p), p) for p in PLAN_POLICIES], value=value,
                           tooltips=[PLAN_POLICY_HELP.get(p, p) for p in PLAN_POLICIES],
                           style={"button_width": "136px"})


class RunForm:
    """Run-option widgets; :attr:`options` is the ``RunOptions`` they say, :meth:`set_options` shows one."""

    def __init__(self, options: RunOptions | None = None) -> None:
        import ipywidgets as W

        self._base = RunOptions.coerce(options)
        from ipywidgets.widgets.widget_bool import CheckboxStyle

        self.heuristics = {m: share_layout(W, W.Checkbox, {"width": "auto", "margin": "0 12px 0 0"}, value=False,
                                           description=m, indent=False, tooltip=HEURISTIC_HELP.get(m, m),
                                           style=shared_style(W, "checkbox-style", CheckboxStyle))
                           for m in HEURISTIC_MODES}
        self.policy = plan_policy_buttons(W, self._base.plans)
        choices = [(_TIMING_LABELS.get(m, m), (m, False)) for m in TIMING_MODES] + [("cold L2", COLD_L2)]
        self.timing = W.ToggleButtons(options=choices, value=(self._base.timing, False),
                                      tooltips=[TIMING_HELP.get(m, m) for m in TIMING_MODES] + [_COLD_L2_HELP],
                                      style={"button_width": "58px"}, _dom_classes=("cl-compact",))
        #: helpers and kernel cache left to the kit (ticked) or both off; its text says what was used last
        self.speedups = share_layout(W, W.Checkbox, {"width": "auto", "margin": "0"}, value=True,
                                     description=_SPEEDUPS_TEXT, indent=False, tooltip=SPEEDUPS_HELP,
                                     style=shared_style(W, "checkbox-style", CheckboxStyle))
        #: hidden for a classic call (:meth:`show_for`): no heuristics choose its plans
        self.heuristics_row = row(W, "heuristics", W.HBox(list(self.heuristics.values())))
        self.box = W.VBox([self.heuristics_row,
                           row(W, "plans", self.policy), row(W, "timing", self.timing),
                           row(W, "speed-ups", self.speedups)],
                          _dom_classes=("cl-run-options",))
        self._showing = False
        self.speedups.observe(lambda change: self._toggled(bool(change["new"])), names="value")
        self.set_options(self._base)

    @property
    def options(self) -> RunOptions:
        """The options the widgets say (OptionError naming ``heuristics`` when no mode is ticked)."""
        timing, cold = self.timing.value
        return self._base.replace(heuristics=tuple(m for m, cb in self.heuristics.items() if cb.value),
                                  plans=self.policy.value, timing=timing, cold_l2=cold)

    def set_options(self, options: Any) -> None:
        """Show ``options`` (a RunOptions, a dict as ``RunOptions.to_dict`` writes, or None for the defaults)."""
        options = RunOptions.coerce(options)
        self._base = options
        for m, cb in self.heuristics.items():
            cb.value = m in options.heuristics
        self.policy.value = options.plans
        self.timing.value = COLD_L2 if options.cold_l2 else (options.timing, False)
        self._showing = True  # the box follows the options; only a click changes them
        try:
            self.speedups.value = not (_off(options.parallel_builds) and options.kernel_cache is False)
        finally:
            self._showing = False

    def _toggled(self, on: bool) -> None:
        """A click on speed-ups: both left to the kit again (what was set by hand stays), or both off."""
        if self._showing:
            return
        base = self._base
        if on:
            self._base = base.replace(
                parallel_builds="auto" if _off(base.parallel_builds) else base.parallel_builds,
                kernel_cache=None if base.kernel_cache is False else base.kernel_cache)
        else:
            self._base = base.replace(parallel_builds=0, kernel_cache=False)

    def show_for(self, spec: Spec) -> None:
        """Show the options that apply to ``spec``: the heuristics row hidden for a classic call (asked of the graph
        layer), shown for a graph."""
        self.heuristics_row.layout.display = "none" if is_classic_call(spec) else None

    def show_used(self, used: object) -> None:
        """Say on the speed-ups line what a run used (its ``settings["decisions"]``) or a warm-up made ready."""
        self.speedups.description = used_text(used)


def call_with_options(fn: Callable[..., Any], *args: Any, options: RunOptions, **kwargs: Any) -> Any:
    """``fn(*args, options=options, **kwargs)`` (``cl.run``, ``cl.sweep``); TRANSITIONAL: where ``fn`` does not
    take ``options=`` yet, the options it takes by keyword are passed instead."""
    params = inspect.signature(fn).parameters
    if "options" in params:
        return fn(*args, options=options, **kwargs)
    aliases = {"baselines": "torch_baseline"}
    for name, value in options.to_dict().items():
        key = name if name in params else aliases.get(name, name)
        if key in params and key not in kwargs:
            kwargs[key] = tuple(value) if isinstance(value, list) else value
    return fn(*args, **kwargs)
