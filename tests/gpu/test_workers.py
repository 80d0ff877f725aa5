"""sweeps/executors.py: GPUExecutor refuses to start without GPUs; on the device, each worker sees one GPU."""

from __future__ import annotations

import concurrent.futures as cf
import os

import pytest

import cudnn_lab as cl
from cudnn_lab.sweeps.executors import GPUExecutor


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


def test_thread_share_splits_the_host_between_workers() -> None:
    from cudnn_lab.sweeps.executors import thread_share

    assert thread_share(4, cpus=64) == 16 and thread_share(3, cpus=64) == 21
    assert thread_share(8, cpus=2) == 1  # never below one thread
    assert thread_share(1) >= 1
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(cl.OptionError, match="workers"):
            thread_share(bad)  # type: ignore[arg-type]


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def test_workers_take_their_cpu_threads_before_torch_starts() -> None:
    # The pool's initializer runs on a host without a GPU too: only CUDA work needs one. torch, imported after it,
    # sizes its thread pool from the option: one thread by default, each worker's share of the host with None.
    from cudnn_lab.sweeps.executors import THREAD_VARS, thread_share

    with GPUExecutor(gpus=[0, 1], threads=None) as ex:
        seen = {ex.submit(os.getenv, var).result() for var in THREAD_VARS for _ in range(2)}
        torch_threads = {ex.submit(_torch_threads).result() for _ in range(2)}
    assert seen == {str(thread_share(2))}
    assert torch_threads == {thread_share(2)}
    with GPUExecutor(gpus=[0]) as ex:  # the default: one thread, fewer than the worker's share
        assert ex.threads == 1 and (thread_share(1) > 1 or os.cpu_count() == 1)
        assert ex.submit(_torch_threads).result() == 1 and ex.submit(os.getenv, "OMP_NUM_THREADS").result() == "1"


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
def test_bad_thread_counts_are_refused_naming_threads(bad) -> None:
    with pytest.raises(cl.OptionError, match="threads"):
        GPUExecutor(gpus=[0], threads=bad)
