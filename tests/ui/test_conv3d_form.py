"""The Lab's form for Conv3dSpec comes from the spec's own rules (issue 38): triples typed as text, limits and hints."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.ui.fields import OPS, controls_from_spec, field_kind, field_text, fields_of, hints, spec_from_controls


def test_conv3d_is_an_operation_with_its_fields() -> None:
    assert OPS["conv3d"] is cl.Conv3dSpec
    assert fields_of("conv3d")[:10] == ("direction", "n", "c", "d", "h", "w", "k", "t", "r", "s")
    assert field_kind("conv3d", "padding") == "pair" and field_kind("conv3d", "epilogue") == "tags"


def test_triples_typed_as_text_build_the_spec() -> None:
    values = controls_from_spec(cl.Conv3dSpec())
    values.update(padding="1x0x0", stride="1x2x2", t="3", r="1", s="1")
    spec = spec_from_controls(values)
    assert spec == cl.Conv3dSpec(padding=(1, 0, 0), stride=(1, 2, 2), t=3, r=1, s=1)
    assert field_text("pair", spec.stride) == "1x2x2"
    with pytest.raises(cl.SpecError) as info:
        spec_from_controls({**values, "padding": "1x0"})
    assert info.value.field == "padding"


def test_hints_come_from_the_spec() -> None:
    h = hints(controls_from_spec(cl.Conv3dSpec(c=32, k=48)))
    assert "divides 16" in h["groups"]
