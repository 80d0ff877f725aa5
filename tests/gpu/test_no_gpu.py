"""Without a GPU, cl.run refuses with NoGPUError and says what still works."""

from __future__ import annotations

import pytest

import cudnn_lab as cl


def test_run_without_gpu_raises_no_gpu_error() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present: this test checks the no-GPU path")
    with pytest.raises(cl.NoGPUError, match="recorded"):
        cl.run(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8))


def test_no_gpu_error_is_a_runtime_error() -> None:
    assert issubclass(cl.NoGPUError, RuntimeError)


def test_a_run_imports_pandas_on_a_thread_while_the_gpu_layer_starts() -> None:
    # A fresh process: cl.run starts importing pandas before torch and CUDA (it is done by the time results are made).
    import subprocess
    import sys

    code = ("import sys, threading, cudnn_lab as cl\n"
            "assert 'pandas' not in sys.modules\n"
            "try:\n    cl.run(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8))\nexcept cl.CudnnLabError:\n    pass\n"
            "for t in threading.enumerate():\n"
            "    if t.name.startswith('cudnn_lab-preload'):\n        t.join(60)\n"
            "print('pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.strip().splitlines()[-1] == "True"
