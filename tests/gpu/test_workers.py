"""gpu/workers.py: GPUExecutor refuses to start without GPUs; on the device, each worker sees one GPU."""

from __future__ import annotations

import concurrent.futures as cf
import os

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu.workers import GPUExecutor


def test_no_gpus_is_refused_with_no_gpu_error() -> None:
    with pytest.raises(cl.NoGPUError, match="GPUExecutor"):
        GPUExecutor(gpus=[])


def test_without_a_gpu_the_default_is_refused() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    with pytest.raises(cl.NoGPUError):
        GPUExecutor()


@pytest.mark.gpu
def test_each_worker_sees_only_its_own_gpu() -> None:
    import torch

    with GPUExecutor() as ex:
        assert isinstance(ex, cf.Executor) and ex.gpus == list(range(torch.cuda.device_count()))
        seen = {ex.submit(os.getenv, "CUDA_VISIBLE_DEVICES").result() for _ in range(4 * len(ex.gpus))}
        counts = {ex.submit(torch.cuda.device_count).result() for _ in range(len(ex.gpus))}
    assert seen <= {str(g) for g in ex.gpus} and seen
    assert counts == {1}
