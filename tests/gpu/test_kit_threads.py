"""The kit's background threads (CUDA start, engine-family import, warm-up, parallel prebuild) are waited for at exit:
a daemon thread still inside CUDA or cuDNN while the interpreter finalizes can abort the process (issue 37)."""

from __future__ import annotations

import subprocess
import sys


def test_a_kit_thread_finishes_before_the_process_exits(tmp_path):
    done = tmp_path / "done"
    code = ("import time\nfrom cudnn_lab.gpu.device import kit_thread\n"
            f"kit_thread(lambda: (time.sleep(0.5), open({str(done)!r}, 'w').write('x')), 'cudnn_lab-test')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert done.read_text() == "x"  # a plain daemon thread would have been cut at exit, leaving no file


def test_the_kits_threads_are_started_through_kit_thread():
    import pathlib

    import cudnn_lab

    root = pathlib.Path(cudnn_lab.__file__).parent / "gpu"
    raw = [p.relative_to(root).as_posix() for p in root.rglob("*.py")
           if "threading.Thread(" in p.read_text() and p.name not in ("device.py",)]
    # the worker seam's stderr drain reads a pipe (no CUDA): the one other thread the GPU layer starts
    assert raw == ["workers/process.py"], raw
