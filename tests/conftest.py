"""Shared test setup: skip `gpu` tests without a GPU and `browser` tests without Chromium, each with a reason."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import ClassVar

import pytest

from cudnn_lab.specs import Spec

if os.environ.get("PYTEST_XDIST_WORKER"):  # several test processes share the cores: no helpers by default (issue 36)
    os.environ.setdefault("CUDNN_LAB_AUTO_HELPERS", "0")

NO_GPU = "no CUDA GPU visible to PyTorch (torch.cuda.is_available() is False)"
NO_CHROMIUM = "headless Chromium not found (/usr/bin/chromium or `chromium` on PATH): apt-get install chromium"


def chromium_path() -> str | None:
    """Debian's Chromium, which the browser tests drive through Playwright."""
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else shutil.which("chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_tests = [item for item in items if item.get_closest_marker("gpu")]
    if gpu_tests:  # probe only when needed: it imports torch
        from cudnn_lab.capabilities import probe

        if not probe().gpu:
            for item in gpu_tests:
                item.add_marker(pytest.mark.skip(reason=NO_GPU))
    browser_tests = [item for item in items if item.get_closest_marker("browser")]
    if browser_tests and chromium_path() is None:
        for item in browser_tests:
            item.add_marker(pytest.mark.skip(reason=NO_CHROMIUM))


@dataclasses.dataclass(frozen=True)
class NewSpec(Spec):
    """A family no layer knows: no module in any layer, and op left empty, so not registered as a spec kind."""

    op: ClassVar[str] = ""
    n: int = 1

    def label(self) -> str:
        return "new"


@pytest.fixture
def unregistered_spec() -> Spec:
    """A spec of a family that has no recipe, drawing, reference or controls (:class:`NewSpec`)."""
    return NewSpec()


@pytest.fixture(scope="session")
def old_conv_recording() -> str:
    """The path of the H200's conv recording of 2026-11-21, made before exploration and kernel profiling existed
    (shipped until the H200 was recorded again on 2026-11-26; kept here as a real file of the older kind)."""
    return str(Path(__file__).parent / "data" / "h200_2026-11-21_conv_nhwc_fp16_bias_relu.json")


@pytest.fixture
def temp_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The kit's caches (plans, ceilings, heuristics) in a fresh folder under ``tmp_path``, switched on."""
    from cudnn_lab import cache_dir

    root = tmp_path / "cache"
    monkeypatch.setenv(cache_dir.ENV_DIR, str(root))
    monkeypatch.delenv(cache_dir.ENV_OFF, raising=False)
    cache_dir.reset()
    yield root
    cache_dir.reset()


@pytest.fixture(autouse=True, scope="module")
def gpu_memory_left_after_each_module():
    """After a module that used a GPU: the kit's cached sessions (inputs, outputs, float64 references) dropped and
    torch's cached blocks handed back, so that an 8-worker run does not hold every module's tensors at once. Four
    suites on one H200 at once ran out of memory for a helper's start (2026-11-29, docs/FINDINGS.md)."""
    yield
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return
    from cudnn_lab.gpu.device import release_gpu_state

    release_gpu_state()
    torch.cuda.empty_cache()
