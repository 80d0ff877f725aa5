"""cudnn_lab.capabilities: a real probe of this machine, and each missing or broken piece made to fail on purpose."""

from __future__ import annotations

import builtins
import dataclasses
import json
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

from cudnn_lab import capabilities
from cudnn_lab.capabilities import Capabilities, probe


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test probes anew; the cached reading from before the test comes back after it."""
    monkeypatch.setattr(capabilities, "_cached", None)


def fake_program(folder: Path, name: str, script: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)
    return path


def hide_import(monkeypatch: pytest.MonkeyPatch, name: str, error: Exception) -> None:
    real_import = builtins.__import__

    def guarded(module: str, *args: object, **kwargs: object) -> object:
        if module == name or module.startswith(name + "."):
            raise error
        return real_import(module, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)


def test_gpu_matches_what_torch_sees() -> None:
    import torch

    assert probe().gpu is torch.cuda.is_available()


def test_without_gpu_the_gpu_fields_are_empty_and_explained() -> None:
    caps = probe()
    if caps.gpu:
        pytest.skip("this machine has a GPU")
    assert (caps.gpu_name, caps.compute_capability, caps.sm_count) == (None, None, None)
    assert "GPU" in caps.reasons["gpu"]


def test_versions_of_installed_packages_are_read() -> None:
    import cudnn
    import torch

    caps = probe()
    assert caps.torch_version == str(torch.__version__)
    assert caps.cuda_runtime == torch.version.cuda
    assert caps.torch_cuda_build is bool(torch.version.cuda)
    assert caps.cudnn_frontend_version == cudnn.__version__


def test_probe_is_cached() -> None:
    assert probe() is probe()


def test_refresh_probes_again() -> None:
    first = probe()
    assert probe(refresh=True) is not first


def test_capabilities_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        probe().gpu = True  # type: ignore[misc]


def test_dot_path_follows_shutil_which(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capabilities.shutil, "which", lambda name: "/opt/graphviz/bin/dot" if name == "dot" else None)
    assert probe().dot_path == "/opt/graphviz/bin/dot"


def test_dot_is_found_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    dot = fake_program(tmp_path, "dot", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert probe().dot_path == str(dot)


def test_missing_dot_is_explained_with_an_install_hint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    caps = probe()
    assert caps.dot_path is None
    assert "apt-get install graphviz" in caps.reasons["dot"]
    assert "in-browser" in caps.reasons["dot"]


def test_driver_version_is_read_from_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_program(tmp_path, "nvidia-smi", '[ "$1" = --query-gpu=driver_version ] && echo 580.159.04')
    monkeypatch.setenv("PATH", str(tmp_path))
    caps = probe()
    assert caps.driver_version == "580.159.04"
    assert "driver" not in caps.reasons


def test_without_nvidia_smi_the_driver_is_none_and_explained(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    caps = probe()
    assert caps.driver_version is None
    assert "nvidia-smi" in caps.reasons["driver"]


def test_failing_nvidia_smi_gives_no_driver_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake_program(tmp_path, "nvidia-smi", "echo 'NVIDIA-SMI has failed' >&2; exit 9")
    monkeypatch.setenv("PATH", str(tmp_path))
    caps = probe()
    assert caps.driver_version is None
    assert "nvidia-smi failed" in caps.reasons["driver"]


def test_torch_blocked_in_sys_modules_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    caps = probe()
    assert (caps.gpu, caps.torch_version, caps.torch_cuda_build) == (False, None, False)
    assert "PyTorch is not importable" in caps.reasons["torch"]


def test_torch_import_error_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_import(monkeypatch, "torch", ImportError("No module named 'torch'"))
    caps = probe()
    assert (caps.gpu, caps.torch_version, caps.cudnn_backend_version) == (False, None, None)
    assert "ImportError" in caps.reasons["torch"]


def test_broken_torch_library_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_import(monkeypatch, "torch", OSError("libcudart.so.13: cannot open shared object file"))
    caps = probe()
    assert caps.torch_version is None
    assert "libcudart.so.13" in caps.reasons["torch"]


@pytest.mark.parametrize("module,field,absent,reason,install", [
    ("cudnn", "cudnn_frontend_version", None, "cudnn_frontend", "pip install 'nvidia-cudnn-frontend"),
    ("ipywidgets", "widgets", False, "widgets", "pip install 'ipywidgets>=8'"),
    ("anywidget", "anywidget", False, "anywidget", "pip install anywidget"),
], ids=["cudnn_frontend", "ipywidgets", "anywidget"])
def test_missing_package_is_explained(monkeypatch: pytest.MonkeyPatch, module: str, field: str, absent: object,
                                      reason: str, install: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    caps = probe()
    assert getattr(caps, field) is absent
    assert install in caps.reasons[reason]


def fake_cuda_build(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    import torch

    monkeypatch.setattr(torch.version, "cuda", "13.0")
    return torch


def test_cuda_init_warning_becomes_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = fake_cuda_build(monkeypatch)

    def unavailable() -> bool:
        warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old", UserWarning, stacklevel=2)
        return False

    monkeypatch.setattr(torch.cuda, "is_available", unavailable)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        caps = probe()
    assert caps.gpu is False
    assert "driver on your system is too old" in caps.reasons["gpu"]


def test_cuda_check_that_raises_does_not_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = fake_cuda_build(monkeypatch)

    def broken() -> bool:
        raise RuntimeError("CUDA driver initialization failed")

    monkeypatch.setattr(torch.cuda, "is_available", broken)
    caps = probe()
    assert caps.gpu is False
    assert "CUDA driver initialization failed" in caps.reasons["gpu"]


def test_visible_gpu_is_described(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = fake_cuda_build(monkeypatch)
    props = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", major=9, minor=0, multi_processor_count=132)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    caps = probe()
    assert (caps.gpu, caps.gpu_name, caps.compute_capability, caps.sm_count) == (
        True,
        "NVIDIA H100 80GB HBM3",
        (9, 0),
        132,
    )
    assert "gpu" not in caps.reasons


def test_with_a_gpu_the_backend_version_comes_from_cudnn(monkeypatch: pytest.MonkeyPatch) -> None:
    import cudnn

    torch = fake_cuda_build(monkeypatch)
    props = types.SimpleNamespace(name="GPU", major=9, minor=0, multi_processor_count=132)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: props)
    monkeypatch.setattr(cudnn, "backend_version", lambda: 91900)
    caps = probe()
    assert caps.cudnn_backend_version == 91900
    assert "cudnn_backend" not in caps.reasons


def test_without_a_gpu_the_backend_version_comes_from_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    import cudnn
    import torch

    def needs_driver() -> int:
        raise AssertionError("cudnn.backend_version() must not be called without a GPU")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(cudnn, "backend_version", needs_driver)
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 91900)
    assert probe().cudnn_backend_version == 91900


def test_summary_shows_each_capability_and_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    caps = probe()
    text = caps.summary()
    for label in ("GPU", "NVIDIA driver", "PyTorch", "cuDNN frontend", "cuDNN library", "graphviz dot", "ipywidgets"):
        assert label in text
    assert caps.reasons["dot"] in text


def test_to_dict_is_json_ready() -> None:
    caps = dataclasses.replace(probe(), compute_capability=(9, 0))
    d = json.loads(json.dumps(caps.to_dict()))
    assert set(d) == {f.name for f in dataclasses.fields(Capabilities)}
    assert d["compute_capability"] == [9, 0]


def test_importing_the_module_imports_no_heavy_package() -> None:
    code = (
        "import sys, cudnn_lab; before = set(sys.modules); import cudnn_lab.capabilities; "
        "print(sorted(m for m in set(sys.modules) - before "
        "if m.split('.')[0] in {'torch', 'cudnn', 'ipywidgets', 'anywidget', 'plotly', 'numpy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
