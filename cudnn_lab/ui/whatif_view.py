"""The Lab's What-if view: which plans cuDNN's heuristics would propose for the problem shown on GPUs this machine
does not have (recorded ones, and synthetic ones by compute capability), side by side by engine, why cuDNN gave a
target no plan, and how its answer moved between two cuDNN versions. It asks :mod:`cudnn_lab.whatif` (cuDNN itself
on a GPU host, else the answers recorded on the kit's H100 and H200); nothing here is a measurement, and the view
says so.

:class:`WhatIfView` is given the parts of the Lab it uses (status and log, busy flag, the current spec and result as
callables, whether its tab is shown) and nothing else. Its ``box`` is empty until the tab is first shown
(:meth:`WhatIfView.show`): the Lab starts without reading a recording or asking cuDNN. A problem with no recorded
answer, where cuDNN cannot be asked, gets one sentence in the view and changes nothing else in the Lab.

Its last part is Blackwell's block formats (MXFP8, NVFP4): the error they would bring to the matmul or convolution
shown, emulated on the CPU on a click (:func:`cudnn_lab.whatif.block_formats.block_format_whatif`), and cuDNN's recorded
answers for block-scaled graphs on compute capability 10.x targets.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from ..errors import NoGPUError, OptionError, CudnnLabError
from ..specs import Spec
from .status import Busy, StatusLog
from .style import row, section
from ..whatif.heuristics import recorded_whatifs
from ..whatif.devices import targets
from ..provenance import cudnn_version_text
from .. import whatif
from ..plots.registry import entries
from ..whatif.scaling import recorded_scalings
from ..whatif.forecasts import forecasts_for
from .figures import figure_bundle, fit_to_pane
from ..whatif.block_formats import BlockWhatIf, block_format_whatif, recorded_block_scale_answers
from ..reference.block_formats import BLOCK_FORMATS, SCALE_RULES

__all__ = ["DEFAULT_TARGETS", "WhatIfView", "no_answer_html", "no_answer_text", "BLOCK_OUTLIERS", "BLOCK_HINT"]

#: Targets chosen when the view is first shown (those the kit knows).
DEFAULT_TARGETS: tuple[str, ...] = ("h200", "sm80", "sm89", "sm100", "sm120")


def _recorded_problems() -> list[str]:
    return sorted({w.spec.label() for w in recorded_whatifs()})


def no_answer_text(spec: Spec) -> str:
    """One sentence: cuDNN cannot be asked here and no answer is recorded for ``spec``; which problems have one."""
    labels = _recorded_problems()
    return (f"cuDNN cannot be asked on this machine (its library needs the NVIDIA driver) and no answer of its "
            f"heuristics is recorded for {spec.label()}; answers are recorded for these {len(labels)} problems: "
            + "; ".join(labels) + ".")


def no_answer_html(spec: Spec) -> str:
    """:func:`no_answer_text` as HTML: the same sentence, each problem kept on one line."""
    labels = _recorded_problems()
    listed = "; ".join(f"<span class='cl-whatif-problem'>{html.escape(t)}</span>" for t in labels)
    return (f"<p class='cl-whatif-note cl-whatif-none'>cuDNN cannot be asked on this machine (its library needs the "
            f"NVIDIA driver) and no answer of its heuristics is recorded for <b>{html.escape(spec.label())}</b>; "
            f"answers are recorded for these {len(labels)} problems: {listed}.</p>")


#: Outlier choices of the block-format part: (share of the first operand's rows, how much larger).
BLOCK_OUTLIERS: dict[str, tuple[float, float]] = {"none": (0.0, 1.0), "1% of rows x1e3": (0.01, 1e3),
                                                  "1% of rows x1e5": (0.01, 1e5)}
BLOCK_HINT = ("<p class='cl-whatif-note cl-block-hint'>Blackwell's MXFP8 and NVFP4 run only on compute capability "
              "10.x; the error they bring is arithmetic: <b>emulate</b> computes it for the matmul or convolution "
              "shown, on this machine's CPU in float64 (emulated, not measured), beside per-tensor FP8.</p>")
#: Height of the recorded SM-scaling chart (px): its four-line title and the legend need room.
SM_FIGURE_HEIGHT = 440


class WhatIfView:
    """The What-if tab; ``box`` is its widget (empty until :meth:`show`), ``frame`` the side-by-side table shown
    (:func:`cudnn_lab.whatif.compare`'s frame, None before or without an answer), ``drift`` the
    :class:`~cudnn_lab.whatif.Drift` shown and ``message`` the sentence shown instead when there is no answer."""

    #: the block-format part (made with the view, by ``_build_block``): its controls, its emulated table and the
    #: emulated answer shown (None before emulate, or after a failed one)
    block: BlockWhatIf | None
    block_fmt: Any
    block_rule: Any
    block_outliers: Any
    block_button: Any
    block_html: Any
    block_answers_html: Any

    def __init__(self, W: Any, *, log: StatusLog, busy: Busy, spec: Callable[[], Spec], result: Callable[[], Any],
                 shown: Callable[[], bool]) -> None:
        self._W = W
        self._log, self._busy = log, busy
        self._spec, self._result, self._shown = spec, result, shown
        self.box = W.VBox([], layout=W.Layout(width="100%", min_width="0")).add_class("cl-whatif")
        self.built = False
        self.stale = True
        self.frame: Any = None
        #: the forecasts shown (whatif.forecasts.forecasts_for), None before, without targets or after an error
        self.forecasts: Any = None
        self.drift: Any = None
        self.message = ""
        self._silent = False
        self._pending: tuple[str, ...] | None = None  # targets a state chose before the view was built

    # ------------------------------------------------------------------------------------------ building

    def _build(self) -> None:
        W = self._W
        #: The part of the view each registry entry of the What-if view (plots/registry.py) is drawn in, by name.
        self.parts: dict[str, Any] = {}
        known = targets()
        names = list(dict.fromkeys(t.name for t in known))
        labels = {t.name: t.label for t in reversed(known)}  # the newest description's label per name
        wanted = self._pending if self._pending is not None else DEFAULT_TARGETS
        chosen = [n for n in wanted if n in names] or names[:1]
        self.target_buttons = {
            n: W.ToggleButton(value=n in chosen, description=n, tooltip=labels[n],
                              layout=W.Layout(width="auto", min_width="58px")).add_class(f"cl-whatif-target-{n}")
            for n in names}
        versions = sorted({t.cudnn_version for t in known if t.origin == "recorded"}, reverse=True)
        self.version = W.ToggleButtons(options=[(cudnn_version_text(v), v) for v in versions],
                                       value=min(versions) if versions else None, style={"button_width": "70px"},
                                       tooltips=[f"cuDNN {cudnn_version_text(v)}'s recorded answers against the other "
                                                 "recorded version's" for v in versions]).add_class("cl-whatif-version")
        self.version_note = W.HTML("").add_class("cl-whatif-version-note")
        self.why_target = W.Dropdown(options=[], layout=W.Layout(width="200px")).add_class("cl-whatif-why-target")
        self.drift_target = W.Dropdown(options=[], layout=W.Layout(width="200px")).add_class("cl-whatif-drift-target")
        self.label_html = W.HTML("").add_class("cl-whatif-label-box")
        self.message_html = W.HTML("").add_class("cl-whatif-message")
        self.table_html = W.HTML("").add_class("cl-whatif-compare")
        self.refused_html = W.HTML("").add_class("cl-whatif-refusals")
        self.forecast_html = W.HTML("").add_class("cl-whatif-forecast")
        self.why_html = W.HTML("").add_class("cl-whatif-why")
        self.drift_html = W.HTML("").add_class("cl-whatif-drift")
        self.sm_note = W.HTML(self._sm_scaling_note()).add_class("cl-whatif-sm-note")
        self.run_drift_html = W.HTML("").add_class("cl-whatif-run-drift")
        self.sm_figure = W.Output(layout=W.Layout(min_width="0")).add_class("cl-whatif-sm-figure")
        targets_row = W.HBox(list(self.target_buttons.values()),
                             layout=W.Layout(flex_flow="row wrap", align_items="center", min_width="0")
                             ).add_class("cl-whatif-targets")
        self.answer_box = W.VBox([
            self.label_html, row(W, "targets", targets_row), self.table_html, self.refused_html,
            section(W, "forecast: how fast cuDNN's pick would run on each target"), self.forecast_html,
            section(W, "why not: cuDNN's reasons for a target without a plan"), row(W, "target", self.why_target),
            self.why_html,
            section(W, "cuDNN version drift"), row(W, "cuDNN", self.version, self.version_note),
            row(W, "target", self.drift_target), self.drift_html,
        ], layout=W.Layout(min_width="0")).add_class("cl-whatif-answer")
        self.measured_box = W.VBox([
            section(W, "measured under another cuDNN"), self.run_drift_html,
            section(W, "fewer SMs (measured)"), self.sm_note, self.sm_figure,
        ], layout=W.Layout(min_width="0")).add_class("cl-whatif-measured")
        self.block_box = self._build_block()
        self.box.children = [self.message_html, self.answer_box, self.measured_box, self.block_box]
        self.parts.update({"whatif_label": self.label_html, "whatif_compare": self.table_html,
                           "whatif_refusals": self.refused_html, "forecast": self.forecast_html,
                           "whatif_reasons": self.why_html,
                           "whatif_drift": self.drift_html, "run_drift": self.run_drift_html,
                           "sm_scaling": self.sm_figure, "block_emulated": self.block_html,
                           "block_answers": self.block_answers_html})
        guard = self._log.guard
        for button in self.target_buttons.values():
            button.observe(lambda ch: self._silent or guard(self.refresh), names="value")
        self.why_target.observe(lambda ch: self._silent or guard(self.draw_why), names="value")
        self.drift_target.observe(lambda ch: self._silent or guard(self.draw_drift), names="value")
        self.version.observe(lambda ch: self._silent or guard(self.draw_drift), names="value")
        self.built = True
        self._busy.subscribe(self._set_enabled)

    @staticmethod
    def _sm_scaling_note() -> str:
        """A pointer to ``cl.sm_scaling`` (whatif/scaling.py, imported above): fewer SMs are measured on a GPU, not
        answered."""
        return ("<p class='cl-whatif-note'>Fewer SMs of the same GPU: on a GPU, <code>cl.sm_scaling(spec)</code> "
                "measures how the plans' times grow under SM carve-outs; the recorded one (the ResNet-50 3x3 conv "
                "on an H100) is drawn when it is this problem.</p>")

    def _set_enabled(self, busy: bool) -> None:
        for w in [*self.target_buttons.values(), self.version, self.why_target, self.drift_target,
                  self.block_fmt, self.block_outliers, self.block_button]:
            w.disabled = busy
        self.block_rule.disabled = busy or not self.block_fmt.value.startswith("mxfp8")
        if not busy:
            self.why_target.disabled = not self.why_target.options
            self.drift_target.disabled = not self.drift_target.options
            self.version.disabled = len(self.version.options) < 2

    # ------------------------------------------------------------------------------------------ public

    @property
    def targets(self) -> list[str]:
        """The targets chosen (names), in the list's order."""
        if self.built:
            return [n for n, b in self.target_buttons.items() if b.value]
        return list(self._pending if self._pending is not None else DEFAULT_TARGETS)

    @targets.setter
    def targets(self, names: Any) -> None:
        wanted = self.check_targets(names)  # refused before the view is built or anything changes
        self.show()
        self._choose(wanted)
        self.refresh()

    def check_targets(self, names: Any) -> list[str]:
        """``names`` (one target name, or a list or tuple of them) as a list of known target names; OptionError
        naming ``targets`` and the names allowed otherwise. Nothing changes."""
        known = self._known_names()
        allowed = "one or more of " + ", ".join(known)
        if isinstance(names, str):
            wanted = [names]
        elif isinstance(names, (list, tuple)):
            wanted = list(names)
        else:
            raise OptionError("targets", names, f"must be a target name or a list of them: {allowed}",
                              where="What-if")
        unknown = [n for n in wanted if not isinstance(n, str) or n not in known]
        if unknown or not wanted:
            raise OptionError("targets", names, allowed, where="What-if")
        return wanted

    def state_targets(self) -> tuple[str, ...] | None:
        """The targets a Lab state keeps: those chosen, or None while the view still shows its defaults unbuilt."""
        if self.built:
            return tuple(self.targets)
        return self._pending

    def restore(self, names: Any) -> None:
        """Choose the targets a Lab state kept (None: leave the choice as it is); the view answers again when
        shown. Check them first with :meth:`check_targets`: this refuses the same way before changing anything."""
        if names is None:
            return
        wanted = self.check_targets(names)
        if not self.built:
            self._pending = tuple(wanted)
            self.stale = True
            return
        self._choose(wanted)
        self.changed()

    def _known_names(self) -> list[str]:
        """The names of the targets the kit knows, as the view lists them."""
        if self.built:
            return list(self.target_buttons)
        return list(dict.fromkeys(t.name for t in targets()))

    def _choose(self, wanted: list[str]) -> None:
        """Set the target buttons to ``wanted`` without answering per button."""
        self._silent = True
        try:
            for n, b in self.target_buttons.items():
                b.value = n in wanted
        finally:
            self._silent = False

    def show(self) -> None:
        """Build the view (first time) and answer for the problem shown where it changed since."""
        if not self.built:
            self._build()
        if self.stale:
            self.refresh()

    def changed(self) -> None:
        """The problem or the result shown changed: answer again now if the tab is shown, else when it is."""
        self.stale = True
        if self.built and self._shown():
            self._log.guard(self.refresh)

    def refresh(self) -> None:
        """Ask (or read the recordings) for the chosen targets and draw every part of the view."""
        if not self.built:
            self._build()
        spec, result = self._spec(), self._result()
        self._clear_block(spec)
        names = self.targets
        measured = result if result is not None and getattr(result, "spec", None) == spec else None
        # Busy while cuDNN is asked (every button disabled); inside a Lab action that is busy already, that one's.
        self.draw_measured(spec)
        with (nullcontext() if self._busy.busy else self._busy.working()):
            try:
                frame = whatif.compare(spec, names, measured=measured) if names else None
            except NoGPUError:
                self._no_answer(spec)
                return
        self.stale = False
        self.message, self.frame = "", frame
        self.message_html.value = ""
        self.answer_box.layout.display = "flex"
        if frame is None:
            self.label_html.value = "<p class='cl-whatif-note'>Choose one or more targets.</p>"
            self.table_html.value = self.refused_html.value = ""
        else:
            self.draw_answer("compare", frame)
        self.draw_forecast(spec, names)
        self._offer(self.why_target, list(frame.attrs["refused"] if frame is not None else {}))
        self._offer(self.drift_target, names, keep="h200")
        self._set_enabled(self._busy.busy)
        self.draw_why()
        self.draw_drift()

    def draw_measured(self, spec: Spec) -> None:
        """What was measured for this spec beyond the heuristics' answers: its runs under another cuDNN and its
        SM-scaling what-if, from the recordings (one sentence where none was recorded)."""
        drifts = whatif.recorded_run_drifts(spec)
        self.draw_answer("run drift", drifts[0] if drifts else None)
        if not drifts:
            self.run_drift_html.value = ("<p class='cl-whatif-note'>No run of this problem under another cuDNN was "
                                         "recorded; on a GPU, <code>whatif.run_drift(spec, folder)</code> runs it.</p>")
        scalings = recorded_scalings(spec)
        self.draw_answer("sm scaling", scalings[0] if scalings else None)

    def draw_answer(self, source: str, answer: Any) -> None:
        """Draw every entry of the What-if view drawn from ``source`` (plots/registry.py) from ``answer`` into its
        part: a table's HTML, a figure fitted to the pane; None empties them."""
        for entry in entries(source, view="What-if"):
            part = self.parts[entry.name]
            if entry.kind == "table":
                part.value = "" if answer is None else entry.draw(answer)
                continue
            part.outputs = ()
            if answer is not None:
                fig = fit_to_pane(entry.draw(answer), SM_FIGURE_HEIGHT)
                part.outputs = ({"output_type": "display_data", "data": figure_bundle(fig), "metadata": {}},)

    def draw_forecast(self, spec: Spec, names: list[str]) -> None:
        """The forecast part: :func:`cudnn_lab.whatif.forecasts.forecasts_for` for the problem shown and the chosen
        targets (``forecasts``), or the kit's error as one sentence (``forecasts`` None)."""
        self.forecasts = None
        if not names:
            self.forecast_html.value = ""
            return
        try:
            self.forecasts = forecasts_for(spec, names)
        except CudnnLabError as e:
            said = (str(e).splitlines() or [""])[0].strip().rstrip(".")
            self.forecast_html.value = (f"<p class='cl-whatif-note cl-forecast-none'>No forecast for this problem: "
                                        f"{html.escape(said)}.</p>")
            return
        self.draw_answer("forecast", self.forecasts)

    def draw_why(self) -> None:
        """The why-not part: cuDNN's reasons for the chosen refused target, or one sentence."""
        name = self.why_target.value
        if self.frame is None or not name:
            self.why_html.value = ("<p class='cl-whatif-note'>Every target chosen got plans: cuDNN refused none.</p>"
                                   if self.frame is not None else "")
            return
        answer = next(w for w in self.frame.attrs["answers"] if w.target == name)
        self.draw_answer("whatif", answer)

    def draw_drift(self) -> None:
        """The drift part: the answers of the chosen cuDNN version against the other recorded one's."""
        target, version = self.drift_target.value, self.version.value
        if self.frame is None or not target or version is None:
            self.drift_html.value = self.version_note.value = ""
            self.drift = None
            return
        try:
            drift = whatif.drift(self._spec(), int(version), target)
        except NoGPUError as e:
            self.drift = None
            self.version_note.value = ""
            self.drift_html.value = f"<p class='cl-whatif-note'>{html.escape(str(e))}.</p>"
            return
        self.drift = drift
        other = drift.new if drift.old.cudnn_version == version else drift.old
        other_version = cudnn_version_text(other.cudnn_version)
        self.version_note.value = (f"<span class='cl-hint'>against cuDNN {other_version}, for "
                                   f"{html.escape(target)}</span>")
        self.draw_answer("drift", drift)

    def draw_block(self) -> None:
        """The block-format part: the problem shown emulated in the chosen format beside per-tensor FP8 (CPU work,
        so on a click), or why it cannot be (another family, a problem too large for the CPU)."""
        spec, fmt = self._spec(), self.block_fmt.value
        share, factor = self.block_outliers.value
        with (nullcontext() if self._busy.busy else self._busy.working()):
            try:
                self.block = block_format_whatif(spec, fmt, outliers=share, outlier_factor=factor,
                                                 scale_rule=self.block_rule.value if fmt.startswith("mxfp8")
                                                 else None)
            except CudnnLabError as e:
                self.block = None
                self.block_html.value = f"<p class='cl-whatif-note cl-block-none'>{html.escape(str(e))}</p>"
                return
        self.draw_answer("block whatif", self.block)

    # ------------------------------------------------------------------------------------------ internals

    def _build_block(self) -> Any:
        """The Blackwell block formats' part: format, E8M0 scale rule and outliers, the emulate button, the emulated
        table, and cuDNN's recorded answers for block-scaled graphs (a small file, read when the tab is shown)."""
        W = self._W
        self.block = None
        self.block_fmt = W.Dropdown(options=list(BLOCK_FORMATS), value="mxfp8_e4m3",
                                    layout=W.Layout(width="140px")).add_class("cl-block-fmt")
        self.block_rule = W.ToggleButtons(options=list(SCALE_RULES["e8m0"]), value="floor",
                                          style={"button_width": "60px"},
                                          tooltips=["OCP MX: 2**(floor(log2 amax) - emax); large amax mantissas clip",
                                                    "the smallest power of two that clips nothing (NVIDIA's recipe)"]
                                          ).add_class("cl-block-rule")
        self.block_outliers = W.Dropdown(options=list(BLOCK_OUTLIERS.items()), value=BLOCK_OUTLIERS["none"],
                                         layout=W.Layout(width="220px")).add_class("cl-block-outliers")
        self.block_button = W.Button(description="emulate", tooltip="compute the error on this machine's CPU "
                                     "(float64; nothing runs on a GPU)").add_class("cl-block-emulate")
        self.block_html = W.HTML(BLOCK_HINT).add_class("cl-block-emulated")
        self.block_answers_html = W.HTML().add_class("cl-block-answers-box")
        self.parts["block_answers"] = self.block_answers_html
        self.draw_answer("block answers", recorded_block_scale_answers())
        guard = self._log.guard
        self.block_button.on_click(lambda _: guard(self.draw_block))
        self.block_fmt.observe(lambda ch: self._set_enabled(self._busy.busy), names="value")
        return W.VBox([
            section(W, "Blackwell block formats (MXFP8, NVFP4): emulated error"),
            row(W, "format", self.block_fmt, self.block_rule), row(W, "outliers", self.block_outliers,
                                                                   self.block_button),
            self.block_html, section(W, "cuDNN's answer for block-scaled graphs (compute capability 10.x)"),
            self.block_answers_html,
        ], layout=W.Layout(min_width="0")).add_class("cl-whatif-block")

    def _clear_block(self, spec: Spec) -> None:
        """Take an emulated table of another problem off the view."""
        if self.block is not None and self.block.spec != spec:
            self.block = None
            self.block_html.value = BLOCK_HINT

    def _offer(self, dropdown: Any, options: list[str], keep: str | None = None) -> None:
        before = dropdown.value
        self._silent = True
        try:
            dropdown.options = options
            dropdown.value = (before if before in options else keep if keep in options
                              else options[0] if options else None)
        finally:
            self._silent = False

    def _no_answer(self, spec: Spec) -> None:
        """No answer for this problem here: one sentence, and nothing of a former problem's answer left shown."""
        self.stale = False
        self.frame = self.drift = None
        self.message = no_answer_text(spec)
        self.message_html.value = no_answer_html(spec)
        self.answer_box.layout.display = "none"
