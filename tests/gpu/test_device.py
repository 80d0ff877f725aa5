"""gpu/device.py: the one-line description (no GPU) and the device record on the device (GPU)."""

from __future__ import annotations

import shutil

import pytest

from cudnn_lab.gpu.device import _nvidia_smi, describe


def test_describe_names_gpu_driver_and_versions() -> None:
    line = describe({"gpu": "NVIDIA H200", "compute_capability": "9.0", "driver": "580.1", "cuda": "13.0",
                     "cudnn_backend": 91900, "cudnn_frontend": "1.32.0"})
    for part in ("NVIDIA H200", "sm 9.0", "driver 580.1", "CUDA 13.0", "cuDNN 91900", "frontend 1.32.0"):
        assert part in line


def test_without_nvidia_smi_the_query_answers_none() -> None:
    if shutil.which("nvidia-smi"):
        pytest.skip("nvidia-smi is installed here")
    assert _nvidia_smi("driver_version", 0) is None


@pytest.mark.gpu
def test_device_info_matches_torch_and_cudnn() -> None:
    import cudnn
    import torch

    from cudnn_lab.gpu.device import device_info

    info = device_info(0)
    props = torch.cuda.get_device_properties(0)
    assert info["gpu"] == props.name and info["sm_count"] == props.multi_processor_count
    assert info["compute_capability"] == f"{props.major}.{props.minor}"
    assert info["cudnn_backend"] == cudnn.backend_version() and info["cudnn_frontend"] == cudnn.__version__
    assert info["memory_gib"] > 1 and info["l2_mib"] > 1
    assert info["driver"] is None or info["driver"][0].isdigit()
    assert device_info(0) is info  # cached


def test_starting_the_device_on_a_thread_signals_and_leaves_the_info_ready() -> None:
    import torch

    from cudnn_lab.gpu import device

    ready = device.start_device(0)
    if ready is None:  # started earlier in this process (another test's run)
        assert device._LIBRARIES_STARTED and torch.cuda.is_initialized()
        return
    assert ready.wait(60)
    if torch.cuda.is_available():
        assert torch.cuda.is_initialized() and device.device_info.cache_info().currsize >= 1
        assert device.start_device(0) is None  # all started: nothing more to do
