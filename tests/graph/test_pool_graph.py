"""Pooling and the graph layer without a GPU: build_graph says there is no graph and what runs instead; the drawing
of the classic call; the reference code a script would carry; the resample JSON that reproduces finding (a)."""

from __future__ import annotations

import json

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.graph import pool as gpool
from cudnn_lab.graph import recipe_for
from cudnn_lab.graph.render import SafeDigraph
from cudnn_lab.reference import make_inputs, reference_outputs
from cudnn_lab.specs import PoolSpec

SPEC = PoolSpec(n=2, c=8, h=9, w=7, mode="avg", window=(3, 2), stride=(2, 1), padding=(1, 0), layout="NHWC",
                dtype="bf16")


def test_build_graph_raises_a_clear_unsupported_graph_error() -> None:
    with pytest.raises(cl.UnsupportedGraphError) as info:
        cl.build_graph(SPEC)
    err = info.value
    assert isinstance(err, gpool.PoolingHasNoGraphError) and isinstance(err, cl.CudnnLabError)
    msg = str(err)
    for part in ("not in the cuDNN frontend 1.32 graph API", "cudnnPoolingForward", "max, avg, avg_exclude_pad",
                 "NCHW, NHWC", "fp16, bf16, fp32", "to_dot", SPEC.label()):
        assert part in msg
    assert "heuristic mode" not in msg  # the generic advice would mislead here
    assert err.summary == gpool.NO_GRAPH_SUMMARY


def test_recipe_for_raises_the_same() -> None:
    with pytest.raises(gpool.PoolingHasNoGraphError):
        recipe_for(SPEC)


def test_describe_has_inspect_shape_with_layout_strides_and_classic_params() -> None:
    info = gpool.describe(SPEC)
    assert set(info["tensors"]) == {"X", "Y"}
    x, y = info["tensors"]["X"], info["tensors"]["Y"]
    assert x["dim"] == list(SPEC.x_dims) and x["stride"] == list(SPEC.tensor_strides()["X"])
    assert y["dim"] == list(SPEC.y_dims) and y["dtype"] == "data_type.BFLOAT16"
    (node,) = info["nodes"]
    assert node["inputs"] == {"x": "X"} and node["outputs"] == {"y": "Y"}
    assert node["params"] == {"mode": "CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING",
                              "maxpoolingNanOpt": "CUDNN_PROPAGATE_NAN", "window": [3, 2], "padding": [1, 0],
                              "stride": [2, 1]}


@pytest.mark.parametrize("mode,name", [("max", "CUDNN_POOLING_MAX"),
                                       ("avg", "CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING"),
                                       ("avg_exclude_pad", "CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING")])
def test_drawing_shows_call_mode_tensors_and_layout(mode: str, name: str) -> None:
    dot = gpool.to_dot(SPEC.replace(mode=mode))
    assert isinstance(dot, SafeDigraph)
    src = dot.source
    for part in ("cudnnPoolingForward", name, "window=3x2", "padding=1x0", "stride=2x1", "layout NHWC", "bf16",
                 f"dims {list(SPEC.x_dims)}", f"dims {list(SPEC.y_dims)}", "no graph API", "input", "output"):
        assert part in src, part
    assert src.count("->") == 2


def test_nchw_drawing_says_nchw() -> None:
    assert "layout NCHW" in gpool.to_dot(SPEC.replace(layout="NCHW")).source


@pytest.mark.parametrize("mode", ["max", "avg", "avg_exclude_pad"])
def test_reference_code_runs_and_matches_the_reference(mode: str) -> None:
    spec = SPEC.replace(mode=mode, dtype="fp32")
    body = "\n".join(f"    {line}" for line in gpool.reference_code(spec))
    scope: dict = {"torch": torch}
    exec(f"def reference(inputs):\n{body}\n", scope)  # noqa: S102 - the kit's own generated code
    inputs = make_inputs(spec)
    assert torch.equal(scope["reference"](inputs), reference_outputs(spec, inputs)["Y"])


def test_resample_graph_json_is_the_frontends_format() -> None:
    g = json.loads(gpool.resample_graph_json(SPEC))
    assert g["json_version"] == "2.0" and isinstance(g["gid"], int)
    (node,) = g["nodes"]
    assert node["tag"] == "RESAMPLE" and node["resample_mode"] == "AVGPOOL_INCLUDE_PADDING"
    assert node["padding_mode"] == "ZERO_PAD" and node["generate_index"] is False
    assert (node["window"], node["stride"], node["pre_padding"], node["post_padding"]) == ([3, 2], [2, 1], [1, 0],
                                                                                           [1, 0])
    tensors = {t["uid"]: t for t in g["tensors"]}
    assert tensors[node["inputs"]["X"]]["dim"] == list(SPEC.x_dims)
    assert tensors[node["outputs"]["Y"]]["stride"] == list(SPEC.tensor_strides()["Y"])
    assert {t["data_type"] for t in g["tensors"]} == {"BFLOAT16"}
    assert json.loads(gpool.resample_graph_json(SPEC.replace(mode="max")))["nodes"][0]["padding_mode"] == "NEG_INF_PAD"


def test_pygraph_has_no_pooling_method() -> None:
    """Finding (a), the part a CPU can check: neither the Python graph nor its C++ builder has resample/pool."""
    import cudnn

    names = set(dir(cudnn.pygraph())) | set(dir(cudnn._pybind_module.backend_graph))
    assert not {n for n in names if "resampl" in n.lower() or "pool" in n.lower()}
