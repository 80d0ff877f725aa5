"""The only layer that touches the GPU: sessions, plan sources, execution, timing, ceilings, the classic API.

It returns plain records (:func:`~cudnn_lab.gpu.runner.run_records`); ``cudnn_lab.runs.run`` makes them a
``RunResult``. Importing the package registers every family's plan source (``gpu/plans.py`` ``PLAN_SOURCES``): the
frontend graph for every spec; the classic API for pooling, softmax, activations, tensor transforms and RNNs.
"""

from . import classic, frontend  # noqa: F401 - register the plan sources
from .runner import run_records

__all__ = ["run_records"]
