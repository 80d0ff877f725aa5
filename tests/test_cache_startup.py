"""Start-up of the Lab (issue 13): showing it imports neither torch nor cudnn's GPU side; the GPU check agrees with
probe(). Runs in a fresh process so that nothing imported by other tests hides an import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("ipywidgets", reason="the Lab needs ipywidgets")

PROBE = """
import json, sys
import cudnn_lab as cl
from cudnn_lab.capabilities import gpu_visible
lab = cl.Lab()
print(json.dumps({"torch": "torch" in sys.modules, "gpu": lab._gpu, "visible": gpu_visible()}))
"""


def test_the_lab_shows_without_importing_torch() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["torch"] is False and seen["gpu"] == seen["visible"]


def test_the_quick_gpu_check_agrees_with_probe() -> None:
    import importlib.util

    from cudnn_lab.capabilities import _driver_devices, gpu_visible, probe

    driver_says = _driver_devices() > 0 and importlib.util.find_spec("torch") is not None
    assert driver_says == probe().gpu == gpu_visible()
