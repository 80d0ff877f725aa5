"""Run sweep points on several GPUs: one worker process per visible GPU, each seeing only its own device.

Two ways, one shape (a ``concurrent.futures`` executor for ``cl.sweep(executor=...)``): the kit's
:class:`GPUExecutor` (a process pool on this host), or a Dask cluster with one worker per GPU (:func:`dask_cluster`,
then ``client.get_executor()``), which is how a sweep moves on to several hosts. Warm workers (``warm=True`` /
:func:`warm_dask`) import torch, cuDNN and pandas, start CUDA and CUPTI and run one tiny problem before the first
point, so points do not wait on start-up;
plans and ceilings come from the disk caches (``gpu/cache.py``, ``gpu/ceilings.py``) that all workers share.
Here, beside the sweep that uses them, not in ``gpu/``: a worker runs whole points (``cl.run``, the results layer).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import numbers
import os
import time
from typing import Any

from ..errors import MissingDependencyError, NoGPUError, OptionError, shorten
from ..gpu import run_records  # noqa: F401 - registers the plan sources a worker runs
from ..gpu.device import device_info
from ..gpu.kernels import cupti_first_use_s
from ..gpu.session import cudnn_handle
from ..runs import run
from ..specs import spec_from_dict
import cudnn_lab.results  # noqa: F401 - the results layer every point returns through

__all__ = ["GPUExecutor", "warm_worker", "dask_cluster", "warm_dask", "thread_share", "check_gpus", "WARM_SPEC"]

_BARRIER: Any = None
#: Environment variables that size a process's CPU thread pools (OpenMP, MKL, OpenBLAS), set in every worker.
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _count(name: str, value: Any, what: str, where: str) -> int:
    """``value`` as a whole number, 1 or more (not a bool), or the kit's OptionError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(name, value, f"must be {what}, 1 or more", where=where)
    return value


#: GPU indices are 0..MAX_GPUS-1, and one executor or cluster takes at most MAX_GPUS of them.
MAX_GPUS = 1024
_GPUS_FORM = ("a list of distinct GPU indices, whole numbers 0 or more (e.g. [0, 1]; the first n GPUs: "
              "list(range(n))), or None for every visible GPU")


def check_gpus(gpus: Any, where: str) -> list[int] | None:
    """``gpus`` as a list of distinct device indices (None stays None: every visible GPU), checked before any
    process starts; anything else (a count, text, floats, bools, -1) is an OptionError naming ``gpus``."""
    if gpus is None:
        return None
    if isinstance(gpus, int) and not isinstance(gpus, bool):
        raise OptionError("gpus", gpus, f"must be {_GPUS_FORM}; a single number is ambiguous (GPU {gpus} or "
                          f"{gpus} GPUs?): give [{gpus}] or list(range({gpus}))" if 0 <= gpus < MAX_GPUS
                          else f"must be {_GPUS_FORM}", where=where)
    if not isinstance(gpus, (list, tuple, range)):
        raise OptionError("gpus", gpus, f"must be {_GPUS_FORM}", where=where)
    if len(gpus) > MAX_GPUS:
        raise OptionError("gpus", gpus, f"names {len(gpus)} GPUs; must be {_GPUS_FORM}, at most {MAX_GPUS}",
                          where=where)
    out: list[int] = []
    for g in gpus:
        if isinstance(g, bool) or not isinstance(g, numbers.Integral) or not 0 <= int(g) < MAX_GPUS:
            raise OptionError("gpus", gpus, f"must be {_GPUS_FORM} below {MAX_GPUS} ({shorten(g, 30)} is not)",
                              where=where)
        if int(g) in out:
            raise OptionError("gpus", gpus, f"names GPU {int(g)} twice (each GPU takes one worker); must be "
                              f"{_GPUS_FORM}", where=where)
        out.append(int(g))
    return out


def thread_share(workers: int, cpus: int | None = None) -> int:
    """CPU threads each of ``workers`` processes may use so that together they do not oversubscribe the host (as
    Dask's nannies do, which set 1): the host's usable cores split evenly, at least 1."""
    _count("workers", workers, "a whole number of worker processes", "thread_share")
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cpus // workers)


def _pin(queue: Any, barrier: Any = None, threads: int | None = None) -> None:
    # Each worker takes one GPU index and hides the others before torch initializes CUDA, and takes its share of
    # the host's cores before torch sizes its thread pool (N workers x all cores each would oversubscribe the CPU).
    global _BARRIER
    os.environ["CUDA_VISIBLE_DEVICES"] = str(queue.get())
    if threads:
        for var in THREAD_VARS:
            os.environ[var] = str(threads)
        os.environ.setdefault("CUDNN_LAB_AUTO_HELPERS", str(max(0, threads - 2)))  # helpers within its share
    _BARRIER = barrier


#: The problem a worker runs once while warming (tiny, every part of a run: heuristics, a check, a captured graph,
#: CUPTI, notes), so that none of those first-use costs lands on the worker's first real point.
WARM_SPEC = {"op": "conv", "n": 1, "c": 16, "h": 8, "w": 8, "k": 16, "r": 3, "s": 3, "padding": 1, "layout": "NHWC",
             "dtype": "fp16"}


def warm_worker() -> dict[str, Any]:
    """Import torch, cuDNN, pandas and the kit's GPU layer, start CUDA, a cuDNN handle and CUPTI on device 0 (the
    worker's GPU), and run one tiny problem (:data:`WARM_SPEC`, the heuristics' pick) through every part of a run.

    Returns what the worker is and how long warming took (``warm_run_s``: the tiny run; ``warm_error``: why it
    failed, if it did: the worker still takes points). Safe to call more than once.
    """
    t0 = time.perf_counter()
    import pandas  # noqa: F401 - every point returns its rows as a frame
    import torch

    threads = os.environ.get("OMP_NUM_THREADS", "")
    if threads.isdigit() and int(threads) > 0:  # torch caps the variable at the cores; the option is the number
        torch.set_num_threads(int(threads))
    torch.cuda.init()
    cudnn_handle(0)
    info = device_info(0)
    report: dict[str, Any] = {"pid": os.getpid(), "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
                              "gpu": info["gpu"], "threads": torch.get_num_threads()}
    t1 = time.perf_counter()
    try:
        run(spec_from_dict(WARM_SPEC), plans="heuristic", baselines=False, roofline=False, time_cap_s=0.02)
    except Exception as e:  # noqa: BLE001 - a worker that cannot warm fully still runs points (and says why there)
        report["warm_error"] = " ".join(str(e).split())[:300]
    report["warm_run_s"] = time.perf_counter() - t1
    report["cupti_s"] = cupti_first_use_s()  # None: CUPTI did not start here (kernels will not be listed)
    report["warm_s"] = time.perf_counter() - t0
    return report


def _warm_pool_worker(timeout: float) -> dict[str, Any]:
    if _BARRIER is not None:  # one task per worker: each waits until every worker holds one
        _BARRIER.wait(timeout)
    return warm_worker()


class GPUExecutor(cf.ProcessPoolExecutor):
    """A process pool with one worker per GPU (``gpus``: a list of distinct device indices, default all visible),
    for ``sweep(executor=...)``; bad arguments are refused (OptionError) before any process starts.

    ``warm=True`` starts every worker and warms it (:func:`warm_worker`) before returning; :meth:`warm` does the
    same later. ``warmed`` holds each worker's report. Each worker gets ``threads`` CPU threads (torch's and the
    BLAS pools): by default one, as Dask's nannies give theirs (a point's CPU work is Python in one thread; more
    threads only wait and spin, and N workers x all cores oversubscribe the host); ``None``: each its share of the
    host's cores (:func:`thread_share`), for CPU-heavy work of your own in the workers.
    """

    def __init__(self, gpus: list[int] | None = None, *, warm: bool = False, threads: int | None = 1) -> None:
        gpus = check_gpus(gpus, "GPUExecutor")
        if not isinstance(warm, bool):
            raise OptionError("warm", warm, "must be True or False", where="GPUExecutor")
        if gpus is None:
            import torch

            gpus = list(range(torch.cuda.device_count()))
        if not gpus:
            raise NoGPUError("GPUExecutor needs at least one visible GPU")
        self.threads = thread_share(len(gpus)) if threads is None else _count(
            "threads", threads, "None (each worker takes its share of the host's cores) or a whole number of CPU "
            "threads per worker", "GPUExecutor")
        ctx = mp.get_context("spawn")  # CUDA cannot be used in forked children
        queue: Any = ctx.Queue()
        for g in gpus:
            queue.put(g)
        self.gpus = list(gpus)
        self.warmed: list[dict[str, Any]] = []
        super().__init__(max_workers=len(gpus), mp_context=ctx, initializer=_pin,
                         initargs=(queue, ctx.Barrier(len(gpus)), self.threads))
        if warm:
            self.warm()

    def warm(self, timeout: float = 600.0) -> list[dict[str, Any]]:
        """Start every worker (one per GPU) and warm it; returns the workers' reports."""
        futures = [self.submit(_warm_pool_worker, timeout) for _ in self.gpus]
        self.warmed = [f.result(timeout=timeout) for f in futures]
        return self.warmed


#: Dask settings of the kit's GPU workers: no statistical profiler (it samples the thread running a point every 10 ms,
#: and the point's Python work shares the interpreter with it).
DASK_WORKER_CONFIG: dict[str, Any] = {"distributed.worker.profile.enabled": False}


def dask_cluster(gpus: list[int] | None = None) -> Any:
    """A local Dask cluster with one single-threaded worker per GPU, each seeing only its GPU, profiler off.

    dask-cuda's ``LocalCUDACluster`` where it is installed; else ``distributed`` workers (nannies) each started with
    its own ``CUDA_VISIBLE_DEVICES``. Use ``distributed.Client(cluster).get_executor()`` as the sweep's executor.
    """
    gpus = check_gpus(gpus, "dask_cluster")
    if gpus is None:
        import torch

        gpus = list(range(torch.cuda.device_count()))
    if not gpus:
        raise NoGPUError("a Dask GPU cluster needs at least one visible GPU")
    try:
        import dask
        from dask_cuda import LocalCUDACluster

        with dask.config.set(DASK_WORKER_CONFIG):  # the workers take the config their nannies were made with
            return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, gpus)), threads_per_worker=1,
                                    dashboard_address=None)
    except ImportError:
        pass
    try:
        from distributed import Nanny, Scheduler, SpecCluster
    except ImportError:
        raise MissingDependencyError("Dask's 'distributed' package", "Install it: pip install distributed") from None
    workers = {f"gpu{g}": {"cls": Nanny, "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(g)},
                                                     "config": DASK_WORKER_CONFIG}}
               for g in gpus}
    return SpecCluster(workers=workers, scheduler={"cls": Scheduler, "options": {"dashboard_address": None}},
                       name="cudnn_lab-gpus")


def warm_dask(client: Any) -> dict[str, Any]:
    """Warm every worker of a Dask client's cluster (:func:`warm_worker` on each); returns reports by worker."""
    return client.run(warm_worker)
