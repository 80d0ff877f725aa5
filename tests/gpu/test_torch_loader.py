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
