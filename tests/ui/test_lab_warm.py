"""A Lab on a GPU machine warms what a first Run needs in the background (issue 36); elsewhere it stays as light as
before: no warm-up thread, no torch import. The GPU part checks the warm-up ends ready and the Run form says so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import cudnn_lab as cl
from cudnn_lab.capabilities import gpu_visible
from cudnn_lab.ui.lab import Lab


def test_a_lab_without_a_gpu_starts_no_warm_up_and_imports_no_torch() -> None:
    code = ("import json, sys, warnings; warnings.simplefilter('ignore'); import cudnn_lab as cl; "
            "lab = cl.Lab(gpu=True); "
            "print(json.dumps({'torch': 'torch' in sys.modules, 'warming': lab.warming is not None, "
            "'visible': cl.capabilities.gpu_visible(), 'speedups': lab.run_form.speedups.description}))")
    out = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                    timeout=300).stdout.strip().splitlines()[-1])
    if out["visible"]:
        pytest.skip("a GPU driver is present: the warm-up is expected here")
    assert out == {"torch": False, "warming": False, "visible": False, "speedups": "helpers, kernel cache: auto"}


def test_the_run_form_offers_the_speed_ups_in_the_lab() -> None:
    lab = Lab(gpu=False)
    assert lab.warming is None and lab.run_form.speedups.value is True
    assert lab.run_options.parallel_builds == "auto"
    lab.run_form.speedups.value = False
    assert lab.run_options.parallel_builds == 0 and lab.run_options.kernel_cache is False
    assert lab.state()["run"]["parallel_builds"] == 0  # kept with the panel's state


@pytest.mark.gpu
def test_a_lab_on_a_gpu_warms_torch_cuda_and_the_helpers_in_the_background(monkeypatch) -> None:
    from cudnn_lab.gpu.defaults import ENV_AUTO_HELPERS, warm_state

    monkeypatch.setenv(ENV_AUTO_HELPERS, "2")  # a test process: two helpers are enough to show the pool warm
    assert gpu_visible()
    lab = cl.Lab()
    assert lab.warming is not None
    lab.warming.join(300)
    state = warm_state()
    assert not lab.warming.is_alive() and state["state"] == "ready", state
    assert "torch_cuda" in state["seconds"]
    if state["helpers"]:
        assert lab.run_form.speedups.description == f"helpers: {state['helpers']} warm, kernel cache: auto"
