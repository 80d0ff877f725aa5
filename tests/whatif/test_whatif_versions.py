"""Running a spec under another cuDNN (cudnn_lab/whatif/versions.py) through the kit's one worker seam: the module's
imports leave the frontend's cuDNN the first one loaded in the worker, a failure comes back to the parent as data
and as the kit's error kinds (DataError for the run's own failure, NoGPUError for a deadline or a worker that ends
without a result). The run itself under another cuDNN is in tests/gpu (it needs a GPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError, NoGPUError, OptionError
from cudnn_lab.gpu.workers import call_once
from cudnn_lab.options import RunOptions
from cudnn_lab.whatif import versions

SPEC = cl.MatmulSpec(batch=1, m=64, n=64, k=64, dtype="bf16")
SELFTEST = "cudnn_lab.gpu.workers.selftest:"


def test_importing_the_worker_loads_neither_torch_nor_cudnn() -> None:
    code = "import sys, cudnn_lab.whatif.versions; print([m for m in ('torch', 'cudnn') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_role_answers_a_failure_as_data(tmp_path: Path) -> None:
    reply = call_once(versions.ROLE, {"spec": "{not json", "options": {}, "out": str(tmp_path / "r.json")},
                      timeout_s=300)
    assert set(reply) == {"error", "message"} and reply["error"] and reply["message"]
    assert not (tmp_path / "r.json").exists()


def test_a_failed_run_in_the_worker_is_a_data_error_naming_the_folder(tmp_path: Path) -> None:
    # No GPU here: the run in the worker fails (no driver, or no GPU for the run), and says so as data.
    with pytest.raises(DataError, match="the run under this cuDNN failed") as info:
        versions._run_in_worker(SPEC, RunOptions.coerce(None), tmp_path, timeout_s=300)
    assert str(tmp_path) in str(info.value)


def test_a_worker_past_its_deadline_is_no_result_within_the_timeout(tmp_path: Path) -> None:
    with pytest.raises(NoGPUError, match="gave no result within"):
        versions._run_in_worker(SPEC, RunOptions.coerce(None), tmp_path, timeout_s=0.5, target=SELFTEST + "sleep")


def test_a_worker_that_dies_is_no_result_with_how_it_ended(tmp_path: Path) -> None:
    with pytest.raises(NoGPUError, match=r"ended without a result \(exit code 7"):
        versions._run_in_worker(SPEC, RunOptions.coerce(None), tmp_path, timeout_s=60, target=SELFTEST + "crash")


def test_run_under_checks_its_arguments_before_starting_a_worker(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="spec"):
        versions.run_under("not a spec", tmp_path)  # type: ignore[arg-type]
    with pytest.raises(cl.errors.PathError):
        versions.run_under(SPEC, tmp_path)  # no libcudnn*.so.9 in it
    assert versions.ask is versions.run_under
