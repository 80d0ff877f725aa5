"""On the GPU: a large input is drawn on the GPU it is for (issue 27: the host took 1 s for an FP8 GEMM's operands),
reproducibly, in range and in the graph's strides; a small one is the host's, bit for bit."""

from __future__ import annotations

import pytest

from cudnn_lab.reference import common

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to PyTorch")


def test_a_large_input_is_drawn_on_the_gpu_the_same_every_time() -> None:
    import torch

    dims, strides = (2049, 2049), (1, 2049)  # past DEVICE_DRAW_MIN; column-major
    assert dims[0] * dims[1] > common.DEVICE_DRAW_MIN
    a = common.uniform("B", dims, strides, "bf16", 5, -0.5, 0.5, device="cuda")
    b = common.uniform("B", dims, strides, "bf16", 5, -0.5, 0.5, device="cuda")
    assert a.device.type == "cuda" and a.stride() == strides and a.dtype == torch.bfloat16
    assert torch.equal(a, b)
    assert float(a.min()) >= -0.5 and float(a.max()) <= 0.5
    assert not torch.equal(a, common.uniform("B", dims, strides, "bf16", 6, -0.5, 0.5, device="cuda"))


def test_a_small_input_for_the_gpu_is_the_hosts_bit_for_bit() -> None:
    import torch

    host = common.uniform("X", (64, 32), (32, 1), "fp16", 2)
    gpu = common.uniform("X", (64, 32), (32, 1), "fp16", 2, device="cuda")
    assert gpu.device.type == "cpu" and torch.equal(host, gpu)  # drawn on the host; the caller moves it
