"""Free chaining of operations: what becomes a spec, and what is explained instead."""

from __future__ import annotations

import pytest

import cudnn_lab as cl


def test_matmul_add_relu_becomes_a_matmul_with_that_epilogue() -> None:
    spec = cl.chain("matmul", "add", "relu", m=64, n=64, k=32)
    assert spec == cl.MatmulSpec(m=64, n=64, k=32, epilogue=("add", "relu"))


def test_conv_chain_keeps_step_order() -> None:
    assert cl.chain("conv", "scale", "bias", "relu").epilogue == ("scale", "bias", "relu")


def test_second_compute_op_is_explained() -> None:
    with pytest.raises(cl.SpecError, match="second compute op"):
        cl.chain("conv", "relu", "matmul")


def test_norm_as_head_points_to_its_own_fused_pattern() -> None:
    with pytest.raises(cl.SpecError, match="residual=True"):
        cl.chain("layernorm", "relu")


def test_unknown_step_lists_the_pointwise_choices() -> None:
    with pytest.raises(cl.SpecError, match="gelu"):
        cl.chain("matmul", "softmax")


def test_chain_validates_sizes_as_the_spec_does() -> None:
    with pytest.raises(cl.SpecError, match="padding"):
        cl.chain("conv", "relu", padding=5)


def test_empty_chain_is_refused() -> None:
    with pytest.raises(cl.SpecError, match="chain"):
        cl.chain()
