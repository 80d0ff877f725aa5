"""cl.chain with fields its spec does not have, or huge step names: a SpecError naming the unknown fields and listing
the allowed ones, every message bounded."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

CHAINS = [(("conv", "relu"), "ConvSpec"), (("matmul", "add"), "MatmulSpec"), (("conv", "genstats"), "ConvGenstatsSpec"),
          (("scale", "bias", "relu", "conv"), "ConvPrologueSpec")]


@pytest.mark.parametrize("steps,cls", CHAINS, ids=[c for _, c in CHAINS])
@pytest.mark.parametrize("field", ["bogus", "kernel_size", "op", "x" * 5000])
def test_an_unknown_field_is_named_with_the_allowed_ones(steps: tuple[str, ...], cls: str, field: str) -> None:
    with pytest.raises(cl.SpecError) as err:
        cl.chain(*steps, **{field: 3})
    msg = str(err.value)
    assert err.value.field == field or (len(field) > 40 and field[:15] in err.value.field)
    assert cls in msg and "fields are" in msg and "dtype" in msg and len(msg) < 700
    assert "epilogue" not in msg.split("fields are")[1]  # set by the chain's steps, not a field to give


def test_every_unknown_field_is_named_up_to_a_few() -> None:
    with pytest.raises(cl.SpecError) as err:
        cl.chain("conv", "relu", alpha=1, beta=2, n=2)
    assert "alpha" in str(err.value) and "beta" in str(err.value)
    many = {f"f{i}": i for i in range(50)}
    with pytest.raises(cl.SpecError) as err:
        cl.chain("matmul", **many)
    assert "f0" in str(err.value) and "and 45 more" in str(err.value) and "f49" not in str(err.value)


def test_genstats_given_as_a_field_of_conv_genstats_is_refused() -> None:
    with pytest.raises(cl.SpecError, match="genstats"):
        cl.chain("conv", "genstats", genstats=True)


@pytest.mark.parametrize("steps", [("x" * 100_000,), ("conv", "y" * 100_000)])
def test_huge_step_names_are_shortened(steps: tuple[str, ...]) -> None:
    with pytest.raises(cl.SpecError) as err:
        cl.chain(*steps)
    assert len(str(err.value)) < 1000


def test_known_fields_still_build_the_spec() -> None:
    assert cl.chain("conv", "genstats", n=2) == cl.ConvGenstatsSpec(n=2)
    assert cl.chain("scale", "bias", "relu", "conv", "genstats", k=16, param_dtype="fp16").genstats is True
