"""The Lab's form for the MoE family: its fields in order, counts typed as text, a wrong count marked on its field."""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab.ui.forms import SpecForm


def test_moe_form_reads_counts_typed_as_text_and_marks_a_wrong_one() -> None:
    form = SpecForm(cl.MoeSpec())
    assert form.op.value == "moe" and list(form.active)[:4] == ["experts", "tokens", "hidden_in", "hidden_out"]
    form.active["distribution"].value = "counts"
    form.active["counts"].value = "1024, 0, 512, 512, 0, 0, 0, 0"
    spec = form.validate()
    assert spec is not None and spec.counts == (1024, 0, 512, 512, 0, 0, 0, 0) and spec.imbalance() == 4.0
    form.active["counts"].value = "1, 2"
    assert form.validate() is None and form.error.field == "counts"
    form.set_spec(cl.MoeSpec(distribution="counts", counts=(2048, 0, 0, 0, 0, 0, 0, 0)))
    assert form.validate().counts == (2048, 0, 0, 0, 0, 0, 0, 0)
