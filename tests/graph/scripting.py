"""Helpers the graph tests of this folder share (imported by its test modules; not collected): the frontend's
dtype names, the graph's context, and the checks of exported scripts."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

import cudnn_lab as cl
from cudnn_lab.reference import make_inputs, reference_outputs


#: The frontend's name of each data type, as inspect() prints it.
CUDNN_DT = {"fp32": "data_type.FLOAT", "fp16": "data_type.HALF", "bf16": "data_type.BFLOAT16"}


def assert_float_compute_context(spec: cl.Spec) -> None:
    """The graph's context: I/O in the spec's dtype, compute in float32."""
    context = cl.build_graph(spec).inspect()["context"]
    assert context["io_data_type"] == CUDNN_DT[spec.dtype]
    assert context["compute_data_type"] == "data_type.FLOAT"


def load(script: str) -> dict:
    """Execute the script as an imported module would be (its main() must not run)."""
    namespace: dict = {"__name__": "cudnn_lab_repro"}
    exec(compile(script, "<repro>", "exec"), namespace)  # noqa: S102 - the kit's own generated code
    return namespace


def assert_drawing_shows_every_tensor(spec: cl.Spec) -> None:
    """Every tensor of the spec is named in its drawing."""
    source = cl.build_graph(spec).to_dot().source
    for name in spec.tensor_shapes():
        assert name in source


def rebuilt_by_script(spec: cl.Spec) -> tuple[dict, dict]:
    """The script parses and its build_graph() rebuilds the kit's graph (same inspect(), same tensors, OUTPUTS in
    the spec's order); returns the script's namespace and the tensors it built."""
    script = cl.build_graph(spec).to_script()
    ast.parse(script)
    ns = load(script)
    graph, tensors = ns["build_graph"]()
    lab = cl.build_graph(spec)
    assert graph.inspect() == lab.inspect()
    assert set(tensors) == set(lab.tensors)
    assert list(ns["OUTPUTS"]) == list(spec.output_names())
    return ns, tensors


def assert_flat_reference_code(lines: list[str]) -> None:
    """A family's reference code: top-level lines that end by returning y."""
    assert lines[-1] == "return y"
    assert all(not line.startswith(" ") for line in lines)


def script_and_kit_main_output(spec: cl.Spec, seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """(the script's reference, the kit's float64 reference) of the main output on the same inputs; both float64,
    the same shape, and not all zeros."""
    ns = load(cl.build_graph(spec).to_script())
    inputs = make_inputs(spec, seed=seed)
    got, want = ns["reference"](inputs), reference_outputs(spec, inputs)[spec.output_names()[0]]
    assert got.dtype == torch.float64 and got.shape == want.shape
    assert want.abs().max() > 0
    return got, want


def run_without_gpu(spec: cl.Spec, folder: Path) -> tuple[dict[str, Any], str]:
    """Run the spec's script as a program with no GPU visible; returns (the graph it printed, its stdout)."""
    path = folder / "repro.py"
    path.write_text(cl.build_graph(spec).to_script())
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env,
                          cwd=folder)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout[: proc.stdout.rindex("}") + 1]), proc.stdout
