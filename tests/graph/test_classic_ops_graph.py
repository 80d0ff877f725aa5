"""Softmax, activations and tensor transforms in the graph layer without a GPU: the classic calls' errors and
drawings; the graph API's transpose, reshape, slice and concatenate as real frontend graphs (inspect, drawing)."""

from __future__ import annotations

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph import activation as gact
from cudnn_lab.graph import softmax as gsoft
from cudnn_lab.graph import transform as gtrans
from cudnn_lab.graph import build_graph, drawing, recipe_for
from cudnn_lab.graph.classic_call import ClassicOnlyError
from cudnn_lab.graph.render import to_svg
from cudnn_lab.reference import activation as ract
from cudnn_lab.reference import softmax as rsoft
from cudnn_lab.reference import transform as rtrans
from cudnn_lab.specs.activation import ActivationSpec
from cudnn_lab.specs.softmax import SoftmaxSpec
from cudnn_lab.specs.transform import TransformSpec

SMALL = dict(n=2, c=3, h=4, w=5)


@pytest.mark.parametrize("spec,call,words", [
    (SoftmaxSpec(**SMALL), "cudnnSoftmaxForward", "only inside its SDPA node"),
    (ActivationSpec(**SMALL), "cudnnActivationForward", "epilogue"),
    (TransformSpec(**SMALL), "cudnnTransformTensor", "nchwToNhwcKernel")])
def test_classic_families_have_no_graph_and_say_what_runs(spec: cl.Spec, call: str, words: str) -> None:
    with pytest.raises(ClassicOnlyError) as info:
        cl.build_graph(spec)
    assert call in str(info.value) and words in str(info.value) and "heuristic mode" not in str(info.value)
    assert isinstance(info.value, cl.UnsupportedGraphError)
    src = drawing(spec).source
    assert f"classic {call}, no graph API" in src and ("layout NHWC" in src or "layout NCHW" in src)
    assert to_svg(drawing(spec)).startswith("<svg")


def test_classic_drawings_carry_the_call_arguments() -> None:
    info = gsoft.describe(SoftmaxSpec(**SMALL, algo="log", mode="instance"))
    assert info["nodes"][0]["params"]["algo"] == "CUDNN_SOFTMAX_LOG"
    assert info["nodes"][0]["params"]["mode"] == "CUDNN_SOFTMAX_MODE_INSTANCE"
    act = gact.describe(ActivationSpec(**SMALL, mode="swish", coef=1.5))["nodes"][0]["params"]
    assert act["mode"] == "CUDNN_ACTIVATION_SWISH" and act["swish_beta"] == 1.5 and "coef" not in act
    assert gact.classic_params(ActivationSpec(**SMALL, mode="clipped_relu"))["coef"] == 6.0
    t = gtrans.describe(TransformSpec(**SMALL, layout="NHWC", out_layout="NCHW", dtype="fp32", out_dtype="fp16"))
    assert t["nodes"][0]["params"]["x"] == "CUDNN_DATA_FLOAT NHWC"
    assert t["nodes"][0]["params"]["y"] == "CUDNN_DATA_HALF NCHW"
    assert t["tensors"]["Y"]["dtype"] == "data_type.HALF" and t["tensors"]["X"]["stride"] == [60, 1, 15, 3]


@pytest.mark.parametrize("kw,node_type", [
    (dict(kind="transpose", permutation="0312"), "TRANSPOSE"), (dict(kind="reshape"), "RESHAPE"),
    (dict(kind="slice", axis=2, start=1, stop=4), "SLICE")])
def test_graph_kinds_are_real_frontend_graphs(kw: dict, node_type: str) -> None:
    spec = TransformSpec(**SMALL, layout="NCHW", **kw)
    g = build_graph(spec)
    info = g.inspect()
    assert [n["type"] for n in info["nodes"]] == [node_type]
    assert info["tensors"]["Y"]["dim"] == list(spec.y_dims)
    assert info["tensors"]["Y"]["stride"] == list(spec.tensor_strides()["Y"])
    assert "runs alone from cuDNN 9.22.0" in drawing(spec).source
    assert gtrans.needs(spec)[1] == "9.22.0"


@pytest.mark.parametrize("kind", ["convert", "transpose", "reshape", "slice", "concatenate"])
def test_reference_code_agrees_with_the_reference(kind: str) -> None:
    spec = TransformSpec(**SMALL, kind=kind, axis=1, start=1, stop=3, dtype="fp32",
                         out_dtype="bf16" if kind == "convert" else "fp32")
    inputs = rtrans.make_inputs(spec)
    namespace: dict = {"torch": torch}
    body = "\n".join(f"    {line}" for line in gtrans.reference_code(spec))
    exec(f"def reference(inputs):\n{body}\n", namespace)  # noqa: S102 - the kit's own generated code
    torch.testing.assert_close(namespace["reference"](inputs), rtrans.reference_outputs(spec, inputs)["Y"])


@pytest.mark.parametrize("spec,module,ref", [
    (SoftmaxSpec(**SMALL, mode="instance", algo="log"), gsoft, rsoft),
    (SoftmaxSpec(**SMALL), gsoft, rsoft),
    (ActivationSpec(**SMALL, mode="elu", coef=0.5), gact, ract),
    (ActivationSpec(**SMALL, mode="swish", coef=2.0), gact, ract),
    (ActivationSpec(**SMALL, mode="clipped_relu", coef=1.5), gact, ract)])
def test_classic_reference_code_agrees_with_the_reference(spec: cl.Spec, module, ref) -> None:
    inputs = ref.make_inputs(spec)
    namespace: dict = {"torch": torch}
    body = "\n".join(f"    {line}" for line in module.reference_code(spec))
    exec(f"def reference(inputs):\n{body}\n", namespace)  # noqa: S102
    torch.testing.assert_close(namespace["reference"](inputs), ref.reference_outputs(spec, inputs)["Y"])


def test_convert_has_no_recipe_but_the_graph_kinds_do() -> None:
    with pytest.raises(ClassicOnlyError):
        recipe_for(TransformSpec(**SMALL))
    recipe = recipe_for(TransformSpec(**SMALL, kind="concatenate", axis=2, concat_size=3))
    assert recipe.ops[0].inputs == (("inputs[]", "X"), ("inputs[]", "X2"))
    assert recipe.ops[0].params == (("axis", 2),) and recipe.tensor("Y").dims == (2, 3, 7, 5)


def test_concatenate_script_passes_its_inputs_as_one_list(tmp_path) -> None:
    """A list port (concatenate's ``inputs``) goes to the frontend, and into the exported script, as one list."""
    from scripting import run_without_gpu

    spec = TransformSpec(**SMALL, kind="concatenate", axis=3, concat_size=2)
    assert "inputs=[tensors['X'], tensors['X2']]" in cl.build_graph(spec).to_script()
    printed, _ = run_without_gpu(spec, tmp_path)
    node = printed["nodes"][0]
    assert node["type"] == "CONCATENATE" and node["inputs"] == {"inputs_0": "X", "inputs_1": "X2"}
    assert printed["tensors"]["Y"]["dim"] == [2, 3, 4, 7]
