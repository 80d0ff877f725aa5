"""The kit's one way to start a child process for a worker: :class:`Worker` runs a *role* (a ``"package.module:
function"`` target, imported in the child only, so this layer never imports the layer that defines it) in
``python -m cudnn_lab.gpu.workers TARGET``, with the caller's environment, a ready line, JSON lines both ways, a
deadline per request, one restart on a crash, and an end at exit or on garbage collection.

Roles of the kit: heuristics asking (``cudnn_lab.gpu.ask_worker:answer``), plan-building helpers
(``cudnn_lab.gpu.build_role:build``), and the what-if package's runs under another cuDNN and block-format asking;
:mod:`.selftest` holds tiny roles that test the seam without a GPU.
"""

from __future__ import annotations

from .process import Role, Worker, call_once, role, worker_env
from ...errors import WorkerError

__all__ = ["Worker", "call_once", "role", "Role", "worker_env", "WorkerError"]
