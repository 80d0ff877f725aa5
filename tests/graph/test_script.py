"""to_script(): a standalone repro (cudnn + torch + json + math only) that rebuilds the very same graph and
computes the same float64 reference as the kit."""

from __future__ import annotations

import ast
import json

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.reference import make_inputs, reference
from cudnn_lab.specs import ConvSpec, MatmulSpec, spec_from_json
from scripting import load, run_without_gpu

SPECS = {
    "conv_fprop_bias_relu_nhwc_fp16": ConvSpec(n=2, c=8, h=6, w=5, k=16, layout="NHWC", dtype="fp16",
                                               epilogue=("bias", "relu")),
    "conv_dgrad_nchw_fp32": ConvSpec(n=2, c=8, h=9, w=7, k=12, padding=(1, 0), stride=(2, 1), layout="NCHW",
                                     dtype="fp32", direction="dgrad"),
    "conv_wgrad_bf16": ConvSpec(n=2, c=8, h=7, w=7, k=8, dilation=2, padding=2, groups=2, dtype="bf16",
                                direction="wgrad"),
    "matmul_tn_bias_gelu_add": MatmulSpec(batch=2, m=5, n=6, k=7, dtype="fp16", transpose_a=True,
                                          epilogue=("bias", "gelu", "add")),
}
ALLOWED_IMPORTS = {"cudnn", "torch", "json", "math"}



@pytest.fixture(params=list(SPECS), ids=list(SPECS))
def spec(request):
    return SPECS[request.param]


@pytest.fixture
def script(spec) -> str:
    return cl.build_graph(spec).to_script()


def test_script_compiles(script: str) -> None:
    compile(script, "<repro>", "exec")


def test_script_imports_only_cudnn_torch_json_math(script: str) -> None:
    imported = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= ALLOWED_IMPORTS
    assert {"cudnn", "torch"} <= imported


def test_script_never_mentions_cudnn_lab_imports(script: str) -> None:
    assert "import cudnn_lab" not in script and "from cudnn_lab" not in script


def test_script_graph_inspects_equal_to_lab_graph(spec, script: str) -> None:
    graph, tensors = load(script)["build_graph"]()
    lab = cl.build_graph(spec)
    assert graph.inspect() == lab.inspect()
    assert set(tensors) == set(lab.tensors)


def test_loading_script_does_not_run_main(script: str, capsys) -> None:
    namespace = load(script)
    assert callable(namespace["main"])
    assert capsys.readouterr().out == ""


def test_script_docstring_carries_the_spec(spec, script: str) -> None:
    doc = ast.get_docstring(ast.parse(script))
    (line,) = [ln for ln in doc.splitlines() if ln.startswith("Spec: ")]
    assert spec_from_json(line.removeprefix("Spec: ")) == spec
    assert spec.label() in doc


def test_script_inputs_and_outputs_match_the_graph(spec, script: str) -> None:
    ns = load(script)
    tensors = cl.build_graph(spec).inspect()["tensors"]
    shapes = spec.tensor_shapes()
    _, out = spec.io_names()
    assert set(ns["INPUTS"]) == set(shapes) - {out}
    assert list(ns["OUTPUTS"]) == [out]
    for name, (dims, strides, *_rest) in {**ns["INPUTS"], **ns["OUTPUTS"]}.items():
        assert dims == tensors[name]["dim"] and strides == tensors[name]["stride"], name


def test_script_torch_dtypes_name_the_spec_dtype(spec, script: str) -> None:
    ns = load(script)
    want = {"fp32": "torch.float32", "fp16": "torch.float16", "bf16": "torch.bfloat16"}[spec.dtype]
    assert {v[2] for v in {**ns["INPUTS"], **ns["OUTPUTS"]}.values()} == {want}


@pytest.mark.parametrize("spec_name", list(SPECS))
def test_script_reference_agrees_with_kit_reference(spec_name: str) -> None:
    spec = SPECS[spec_name]
    ns = load(cl.build_graph(spec).to_script())
    inputs = make_inputs(spec, seed=3)
    got, want = ns["reference"](inputs), reference(spec, inputs)
    assert got.dtype == torch.float64 and got.shape == want.shape
    assert torch.allclose(got, want, rtol=0, atol=1e-12)
    assert want.abs().max() > 0  # a meaningful comparison, not zeros against zeros


@pytest.mark.parametrize("spec", [ConvSpec(n=1, c=3, h=5, w=5, k=4, dtype="fp32", layout="NCHW"),
                                  MatmulSpec(batch=1, m=3, n=4, k=5, dtype="fp32")], ids=["conv", "matmul"])
def test_small_problem_reference_within_1e_12(spec) -> None:
    inputs = make_inputs(spec)
    got = load(cl.build_graph(spec).to_script())["reference"](inputs)
    assert (got - reference(spec, inputs)).abs().max().item() <= 1e-12


@pytest.mark.slow
def test_script_run_without_gpu_prints_the_graph(tmp_path) -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: this checks the no-GPU path of the script")
    spec = SPECS["conv_fprop_bias_relu_nhwc_fp16"]
    printed, stdout = run_without_gpu(spec, tmp_path)
    assert "No CUDA GPU" in stdout
    assert printed == json.loads(json.dumps(cl.build_graph(spec).inspect()))
