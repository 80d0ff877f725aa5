"""A Lab's state link keeps the What-if view's targets: Lab.state() records them, Lab.from_state restores them, and
a state naming a target the kit does not know is refused (OptionError naming ``whatif_targets``) before the Lab
changes."""

from __future__ import annotations

import pytest
from lab_samples import CONV_RECORDING

import cudnn_lab as cl
from cudnn_lab.ui import Lab
from cudnn_lab.ui.state import LabState


def test_a_state_link_keeps_the_whatif_targets() -> None:
    lab = Lab(gpu=False)
    lab.whatif_view.targets = ["sm86", "h200"]
    code = LabState.from_dict(lab.state()).to_code()
    again = Lab.from_state(LabState.from_code(code), gpu=False)
    assert again.whatif_view.targets == ["h200", "sm86"]  # the view's order, as the first Lab shows them
    assert again.state()["whatif_targets"] == ["h200", "sm86"]


def test_a_fresh_lab_keeps_no_targets_and_its_state_restores_the_defaults() -> None:
    lab = Lab(gpu=False)
    state = lab.state()
    assert "whatif_targets" not in state  # nothing chosen: the link stays as short as before
    assert Lab.from_state(state, gpu=False).whatif_view.targets == lab.whatif_view.targets


def test_a_state_with_an_unknown_target_is_refused_and_changes_nothing() -> None:
    lab = Lab(gpu=False)
    lab.load_recorded(CONV_RECORDING)
    lab.whatif_view.targets = ["sm80"]
    before = lab.state()
    data = {**before, "recorded": None, "view": "What-if", "whatif_targets": ["b300"]}
    with pytest.raises(cl.OptionError) as caught:
        lab.apply_state(LabState.from_dict(data))
    assert caught.value.option == "whatif_targets"
    assert "h200" in caught.value.allowed  # says which names are allowed
    assert lab.state() == before and lab.whatif_view.targets == ["sm80"]
    with pytest.raises(cl.OptionError, match="whatif_targets"):
        Lab.from_state(data, gpu=False)
