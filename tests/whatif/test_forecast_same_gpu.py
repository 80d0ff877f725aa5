"""A forecast whose only source run is on the target itself says so, instead of 'no validation row from X to X'."""

from __future__ import annotations

import json
from pathlib import Path

import cudnn_lab as cl
from cudnn_lab.specs.base import spec_from_dict


def test_a_problem_recorded_only_on_the_target_is_answered_measure_this_naming_the_missing_pair() -> None:
    data = json.loads((Path(cl.__file__).parent / "data" / "recorded" / "h200_conv3d_wan_vae_bf16.json").read_text())
    answer = cl.forecast(spec_from_dict(data["spec"]), "h200")
    assert not answer.plans and "h200 itself" in answer.measure_this
    assert "another GPU" in answer.measure_this and "from h200 to h200" not in answer.measure_this
