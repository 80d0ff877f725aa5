"""Without a GPU, cl.run refuses with NoGPUError and says what still works."""

from __future__ import annotations

import pytest

import cudnn_lab as cl


def test_run_without_gpu_raises_no_gpu_error() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present: this test checks the no-GPU path")
    with pytest.raises(cl.NoGPUError, match="recorded"):
        cl.run(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8))


def test_no_gpu_error_is_a_runtime_error() -> None:
    assert issubclass(cl.NoGPUError, RuntimeError)
