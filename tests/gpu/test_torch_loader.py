"""Which thread loaded torch (gpu/kernels.import_torch_here): the profiler's first session belongs to it, so a Lab's
warm-up starts CUPTI only when its own thread ran torch's import (issue 37's exit crash). Fresh interpreters, CPU."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = """
import sys, threading
from cudnn_lab.gpu.kernels import import_torch_here
assert "torch" not in sys.modules, "importing the kit must not load torch"
mode, got = sys.argv[1], []
def ask():
    got.append(import_torch_here())
if mode == "main_first":
    import torch
threads = [threading.Thread(target=ask) for _ in range(1 if mode != "race" else 4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sorted(got), import_torch_here())
"""


@pytest.mark.parametrize(("mode", "printed"), [
    ("thread", "[True] False"),         # the thread ran the import; asked again (loaded), nobody is the loader now
    ("main_first", "[False] False"),    # the caller's thread loaded torch first: not the warm-up's
    ("race", "[False, False, False, True] False"),  # four threads at once: exactly the one that ran the import
])
def test_only_the_thread_that_ran_torchs_import_is_its_loader(mode: str, printed: str) -> None:
    out = subprocess.run([sys.executable, "-c", CODE, mode], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == printed


WARM_ENGINES = """
import sys
import cudnn_lab as cl
from cudnn_lab.gpu import kernels
from cudnn_lab.gpu.frontend import warm_engine_family_async
assert "torch" not in sys.modules
warm_engine_family_async(cl.NormSpec(kind="rmsnorm", rows=64, features=256, dtype="bf16")).join()
print("torch" in sys.modules, kernels.torch_loaded_by())
"""


def test_the_engine_warm_up_loads_torch_through_the_kit_so_its_thread_owns_the_first_session() -> None:
    """The frontend's engine-family modules import torch; a Lab's engine warm-up thread that ran that import without
    the kit's loader left the profiler's first session to another thread (kineto's "External init callback" error,
    then SIGSEGV at exit: H200, 2026-11-29, 2 live-rows runs in 8)."""
    out = subprocess.run([sys.executable, "-c", WARM_ENGINES], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True cudnn_lab-warm-engines"
