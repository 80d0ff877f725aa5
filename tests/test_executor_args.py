"""GPUExecutor's and dask_cluster's ``gpus`` are checked before any process starts, and a sweep refuses an executor
that was shut down or broke (before its first point, or while it runs) with an OptionError saying what to do.
CPU only."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import OptionError
from cudnn_lab.sweeps.executors import MAX_GPUS, GPUExecutor, check_gpus, dask_cluster

BASE = cl.ConvSpec(n=1, c=8, h=8, w=8, k=8)

BAD_GPUS = [-1, 0, 1, 2, 10**400, True, 1.5, "0", "01", "0,1", b"0", [-1], [0, -1], [1.0], [True], ["0"], [0, 0],
            [MAX_GPUS], [None], (0, "1"), {0, 1}, {0: 1}, range(MAX_GPUS + 1), iter([0]), object()]


@pytest.mark.parametrize("gpus", BAD_GPUS, ids=[repr(g)[:30] for g in BAD_GPUS])
def test_bad_gpus_are_refused_naming_gpus_before_any_process_starts(gpus: object) -> None:
    before = set(mp.active_children())
    with pytest.raises(OptionError) as err:
        GPUExecutor(gpus)  # type: ignore[arg-type]
    assert err.value.option == "gpus" and "gpus" in str(err.value) and "GPU indices" in str(err.value)
    assert len(str(err.value)) < 500
    assert set(mp.active_children()) <= before


@pytest.mark.parametrize("gpus", [3, -2, "1", [0, 0], [1.5]])
def test_dask_cluster_checks_gpus_the_same_way(gpus: object) -> None:
    with pytest.raises(OptionError, match="gpus"):
        dask_cluster(gpus)  # type: ignore[arg-type]


def test_a_count_is_refused_with_both_readings_spelled_out() -> None:
    with pytest.raises(OptionError, match=r"\[2\] or list\(range\(2\)\)"):
        GPUExecutor(2)  # type: ignore[arg-type]


def test_good_gpus_are_lists_of_distinct_indices() -> None:
    assert check_gpus([0, 1], "x") == [0, 1] and check_gpus((3,), "x") == [3] and check_gpus(range(2), "x") == [0, 1]
    assert check_gpus(None, "x") is None and check_gpus([], "x") == []
    with pytest.raises(cl.NoGPUError):  # an empty list is no GPU, as before
        GPUExecutor([])


@pytest.mark.parametrize("warm", [1, "yes", None])
def test_warm_must_be_a_bool(warm: object) -> None:
    with pytest.raises(OptionError, match="warm"):
        GPUExecutor([0], warm=warm)  # type: ignore[arg-type]


def _shut(executor: cf.Executor) -> cf.Executor:
    executor.shutdown()
    return executor


@pytest.mark.parametrize("make", [lambda: cf.ThreadPoolExecutor(1), lambda: cf.ProcessPoolExecutor(1),
                                  lambda: GPUExecutor([0])], ids=["threads", "processes", "GPUExecutor"])
def test_a_sweep_refuses_a_shut_down_executor_saying_what_to_do(tmp_path, make) -> None:
    ex = _shut(make())
    with pytest.raises(OptionError) as err:
        cl.sweep(BASE, {"n": [1, 2]}, store=tmp_path / "s", executor=ex, progress=False)
    assert err.value.option == "executor" and "shut down" in str(err.value) and "make a new one" in str(err.value)
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())  # refused before any point


def test_a_sweep_refuses_a_broken_process_pool() -> None:
    ex = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("fork"))
    with pytest.raises(cf.process.BrokenProcessPool):
        ex.submit(os._exit, 1).result(timeout=60)
    with pytest.raises(OptionError, match="executor.*broken.*make a new one"):
        cl.sweep(BASE, {"n": [1]}, executor=ex, progress=False)
    ex.shutdown()


class ShutsDownAfter(cf.ThreadPoolExecutor):
    """A real thread pool that is shut down (as by another thread) after it took ``limit`` points."""

    def __init__(self, limit: int) -> None:
        super().__init__(1)
        self.limit, self.taken = limit, 0

    def submit(self, *args, **kwargs):  # type: ignore[override]
        if self.taken == self.limit:
            self.shutdown(wait=True)
        self.taken += 1
        return super().submit(*args, **kwargs)


def test_an_executor_shut_down_while_the_sweep_runs_is_an_option_error(tmp_path) -> None:
    ex = ShutsDownAfter(1)
    with pytest.raises(OptionError) as err:
        cl.sweep(BASE, {"n": [1, 2, 3]}, store=tmp_path / "s", executor=ex, progress=False)
    assert err.value.option == "executor" and "shut down while the sweep ran" in str(err.value)
