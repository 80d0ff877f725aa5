"""explain() for the MoE grouped GEMM: a 'no engine' message gets the family's hint (the cuDNN version that added the
operation); other messages get none."""

from __future__ import annotations

from cudnn_lab.gpu.explain import explain
from cudnn_lab.specs.moe import MoeSpec

NO_ENGINE_MSG = "cudnnGraphNotSupportedError: no engine ... proposed a plan"


def test_no_engine_points_at_the_version_that_added_the_operation() -> None:
    text = explain(NO_ENGINE_MSG, MoeSpec())
    assert text.startswith("No cuDNN engine") and "9.15" in text and "moe_grouped_matmul" in text


def test_other_messages_get_no_moe_hint() -> None:
    assert "9.15" not in explain("CUDNN_STATUS_ALLOC_FAILED", MoeSpec())
