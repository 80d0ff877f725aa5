"""The PyTorch baseline's extra rows are registered by family: the MoE grouped GEMM adds one dense GEMM of the same
FLOPs and torch._grouped_mm beside its eager loop; other families add none."""

from __future__ import annotations

import pytest

from cudnn_lab.gpu.baseline import EXTRA_BASELINES
from cudnn_lab.reference.moe import extra_baselines
from cudnn_lab.specs import spec_classes
from cudnn_lab.specs.moe import MoeSpec


def test_moe_registers_its_extra_baselines() -> None:
    assert EXTRA_BASELINES[MoeSpec()] is extra_baselines


@pytest.mark.parametrize("cls", [c for c in spec_classes().values() if c is not MoeSpec], ids=lambda c: c.__name__)
def test_other_families_add_no_extra_baseline(cls: type) -> None:
    assert cls not in EXTRA_BASELINES
