"""The helper process that runs a spec under another cuDNN (cudnn_lab/whatif/versions.py as a script): its imports
leave the frontend's cuDNN the first one loaded, and a failure comes back to the parent as data. The run itself under
another cuDNN is in tests/gpu (it needs a GPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_importing_the_worker_loads_neither_torch_nor_cudnn() -> None:
    code = "import sys, cudnn_lab.whatif.versions; print([m for m in ('torch', 'cudnn') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_failure_is_written_for_the_parent(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-m", "cudnn_lab.whatif.versions", "{not json", "{}", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(out.read_text())
    assert data["error"] and data["message"]
