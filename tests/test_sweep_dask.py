"""A Dask distributed client's executor drives a sweep the same way as any concurrent.futures executor."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

distributed = pytest.importorskip("distributed", reason="the Dask test needs the 'distributed' package")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_dask_executor_runs_every_point_into_the_store(client, tmp_path) -> None:
    # On this CPU-only machine every point runs on a Dask worker and fails there with NoGPUError: the rows say so,
    # which shows the points travelled to the workers and back into the store.
    with client.get_executor() as ex:
        frame = cl.sweep(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), {"n": [1, 2, 3]}, store=tmp_path / "s",
                         executor=ex, progress=False)
    assert frame["point_id"].nunique() == 3
    expected = "ok" if cl.probe().gpu else "failed"
    assert set(frame["point_status"]) == {expected}
    if expected == "failed":
        assert frame["point_error"].str.contains("GPU").all()


def test_a_dask_executor_is_given_work_for_every_worker_thread(client) -> None:
    # The sweep keeps IN_FLIGHT_PER_WORKER points queued per worker thread: with a Dask client that is the cluster's
    # thread count (2 here), not a fixed guess, so no worker idles while its next point makes the round trip.
    from cudnn_lab.sweeps.runner import _workers

    with client.get_executor() as ex:
        assert _workers(ex) == sum(client.nthreads().values()) == 2


def test_the_kits_gpu_cluster_runs_its_workers_without_the_profiler() -> None:
    # dask_cluster names its GPUs; none is touched here (each worker only sees CUDA_VISIBLE_DEVICES)
    import os

    import dask

    from cudnn_lab.sweeps.executors import dask_cluster

    cluster = dask_cluster([0])
    try:
        with distributed.Client(cluster) as c:
            got = c.run(lambda: (dask.config.get("distributed.worker.profile.enabled"),
                                 os.environ.get("CUDA_VISIBLE_DEVICES")))
    finally:
        cluster.close()
    assert list(got.values()) == [(False, "0")]
