"""Run sweep points on several GPUs: one worker process per visible GPU, each seeing only its own device."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
from typing import Any


def _pin(queue: Any) -> None:
    # Each worker takes one GPU index and hides the others before torch initializes CUDA.
    os.environ["CUDA_VISIBLE_DEVICES"] = str(queue.get())


class GPUExecutor(cf.ProcessPoolExecutor):
    """A process pool with one worker per GPU (``gpus`` indices, default all visible), for ``sweep(executor=...)``."""

    def __init__(self, gpus: list[int] | None = None) -> None:
        if gpus is None:
            import torch

            gpus = list(range(torch.cuda.device_count()))
        if not gpus:
            from ..errors import NoGPUError

            raise NoGPUError("GPUExecutor needs at least one visible GPU")
        ctx = mp.get_context("spawn")  # CUDA cannot be used in forked children
        queue: Any = ctx.Queue()
        for g in gpus:
            queue.put(g)
        self.gpus = list(gpus)
        super().__init__(max_workers=len(gpus), mp_context=ctx, initializer=_pin, initargs=(queue,))
