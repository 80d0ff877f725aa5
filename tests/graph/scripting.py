"""Helpers for the tests of exported scripts (imported by the test modules of this folder; not collected)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cudnn_lab as cl


def load(script: str) -> dict:
    """Execute the script as an imported module would be (its main() must not run)."""
    namespace: dict = {"__name__": "cudnn_lab_repro"}
    exec(compile(script, "<repro>", "exec"), namespace)  # noqa: S102 - the kit's own generated code
    return namespace


def run_without_gpu(spec: cl.Spec, folder: Path) -> tuple[dict[str, Any], str]:
    """Run the spec's script as a program with no GPU visible; returns (the graph it printed, its stdout)."""
    path = folder / "repro.py"
    path.write_text(cl.build_graph(spec).to_script())
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env,
                          cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout[: proc.stdout.rindex("}") + 1]), proc.stdout
