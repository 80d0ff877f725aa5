"""build_graph(spec): the real cuDNN frontend graph (inspect() needs no GPU) has exactly the spec's tensors,
with its dims, the layout's strides and dtypes, virtual intermediates only inside epilogue chains, and the right
node types and conv parameters."""

from __future__ import annotations

import pytest
import torch

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.specs import ConvSpec, MatmulSpec, Spec
from cudnn_lab.specs.base import pair
from scripting import CUDNN_DT

SMALL = dict(n=2, c=8, h=9, w=7, k=16, r=3, s=3, padding=1)


def torch_strides(dims: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """PyTorch's own strides for the layout: contiguous (NCHW), channels_last (NHWC, 4-D only)."""
    if len(dims) == 4 and layout == "NHWC":
        return torch.empty(dims, memory_format=torch.channels_last).stride()
    return torch.empty(dims).stride()


def matmul_strides(spec: MatmulSpec, name: str, dims: tuple[int, ...]) -> tuple[int, ...]:
    """Transposed operands are column-major matrices, as a transposed torch tensor is."""
    if (name == "A" and spec.transpose_a) or (name == "B" and spec.transpose_b):
        return torch.empty(dims[0], dims[2], dims[1]).transpose(1, 2).stride()
    return torch.empty(dims).stride()


def expected_strides(spec: Spec, name: str, dims: tuple[int, ...]) -> tuple[int, ...]:
    if isinstance(spec, ConvSpec):
        return torch_strides(dims, spec.layout)
    return matmul_strides(spec, name, dims)


def output_name(spec: Spec) -> str:
    return spec.io_names()[1]


def expected_virtuals(spec: Spec) -> list[str]:
    """The chain's intermediates: the main op's result, then every step's but the last."""
    if not spec.epilogue:
        return []
    main = "matmul" if isinstance(spec, MatmulSpec) else f"conv_{spec.direction}"
    names = [f"{main}::{output_name(spec)}"]
    for i, step in enumerate(spec.epilogue[:-1]):
        names.append(f"{step if spec.epilogue.count(step) == 1 else f'{step}_{i}'}::OUT")
    return names


def check_tensors(spec: Spec) -> dict:
    info = cl.build_graph(spec).inspect()
    tensors = info["tensors"]
    shapes = spec.tensor_shapes()
    real = {n for n, t in tensors.items() if not t["is_virtual"]}
    assert real == set(shapes)
    for name in real:
        t = tensors[name]
        assert tuple(t["dim"]) == shapes[name], name
        assert tuple(t["stride"]) == expected_strides(spec, name, shapes[name]), name
        assert t["dtype"] == CUDNN_DT[spec.dtype], name
    return info


CONV_CASES = [(d, lay, dt) for d in ("fprop", "dgrad", "wgrad") for lay in ("NCHW", "NHWC")
              for dt in ("fp16", "fp32", "bf16")]


@pytest.mark.parametrize("direction,layout,dtype", CONV_CASES)
def test_conv_tensors_have_spec_dims_layout_strides_and_dtype(direction: str, layout: str, dtype: str) -> None:
    spec = ConvSpec(**SMALL, direction=direction, layout=layout, dtype=dtype)
    info = check_tensors(spec)
    assert not any(t["is_virtual"] for t in info["tensors"].values())


@pytest.mark.parametrize("direction,node_type", [("fprop", "CONV_FPROP"), ("dgrad", "CONV_DGRAD"),
                                                 ("wgrad", "CONV_WGRAD")])
def test_conv_node_type_follows_direction(direction: str, node_type: str) -> None:
    nodes = cl.build_graph(ConvSpec(**SMALL, direction=direction)).inspect()["nodes"]
    assert [n["type"] for n in nodes] == [node_type]


@pytest.mark.parametrize("direction,inputs,output", [
    ("fprop", {"image": "X", "weight": "W"}, "Y"),
    ("dgrad", {"loss": "DY", "filter": "W"}, "DX"),
    ("wgrad", {"image": "X", "loss": "DY"}, "DW"),
])
def test_conv_node_reads_and_writes_the_named_tensors(direction: str, inputs: dict, output: str) -> None:
    (node,) = cl.build_graph(ConvSpec(**SMALL, direction=direction)).inspect()["nodes"]
    assert node["inputs"] == inputs
    assert list(node["outputs"].values()) == [output]


@pytest.mark.parametrize("geo", [
    dict(padding=1, stride=1, dilation=1),
    dict(padding=(1, 0), stride=(2, 1), dilation=(1, 2)),
    dict(padding=(2, 2), stride=3, dilation=(2, 1)),
    dict(padding=0, stride=(1, 3), dilation=1),
])
@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
def test_conv_params_are_as_given(geo: dict, direction: str) -> None:
    spec = ConvSpec(**{**SMALL, "h": 11, "w": 10, **geo}, direction=direction, layout="NCHW", dtype="fp32")
    check_tensors(spec)
    (node,) = cl.build_graph(spec).inspect()["nodes"]
    assert node["params"]["padding"] == list(pair(spec.padding))
    assert node["params"]["stride"] == list(pair(spec.stride))
    assert node["params"]["dilation"] == list(pair(spec.dilation))


def test_grouped_conv_weight_has_c_over_groups_channels() -> None:
    spec = ConvSpec(**{**SMALL, "groups": 4})
    info = check_tensors(spec)
    assert info["tensors"]["W"]["dim"][1] == spec.c // 4


@pytest.mark.parametrize("dtype,io", [("fp16", "data_type.HALF"), ("bf16", "data_type.BFLOAT16"),
                                      ("fp32", "data_type.FLOAT")])
def test_graph_context_carries_io_and_compute_types(dtype: str, io: str) -> None:
    ctx = cl.build_graph(ConvSpec(**SMALL, dtype=dtype)).inspect()["context"]
    assert ctx["io_data_type"] == io
    assert ctx["compute_data_type"] == "data_type.FLOAT"


def test_fp16_compute_reaches_the_graph() -> None:
    ctx = cl.build_graph(ConvSpec(**SMALL, dtype="fp16", compute_dtype="fp16")).inspect()["context"]
    assert ctx["compute_data_type"] == "data_type.HALF"


EPILOGUES = [("relu",), ("bias", "relu"), ("scale", "bias", "add", "relu"), ("bias", "gelu"),
             ("sigmoid",), ("tanh",), ("relu", "tanh", "relu"), ("add", "sigmoid", "scale")]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("epilogue", EPILOGUES, ids="+".join)
def test_conv_epilogue_tensors_and_virtual_intermediates(epilogue: tuple[str, ...], layout: str) -> None:
    spec = ConvSpec(**SMALL, layout=layout, dtype="fp16", epilogue=epilogue)
    info = check_tensors(spec)
    virtual = [n for n, t in info["tensors"].items() if t["is_virtual"]]
    assert sorted(virtual) == sorted(expected_virtuals(spec))
    for name in virtual:  # intermediates have the output's shape and layout
        assert tuple(info["tensors"][name]["dim"]) == spec.y_dims
        assert tuple(info["tensors"][name]["stride"]) == torch_strides(spec.y_dims, layout)


@pytest.mark.parametrize("epilogue", EPILOGUES, ids="+".join)
def test_conv_epilogue_is_a_chain_of_pointwise_nodes(epilogue: tuple[str, ...]) -> None:
    spec = ConvSpec(**SMALL, epilogue=epilogue)
    nodes = cl.build_graph(spec).inspect()["nodes"]
    assert nodes[0]["type"] == "CONV_FPROP"
    assert [n["type"] for n in nodes[1:]] == ["POINTWISE"] * len(epilogue)
    assert [n["params"]["mode"] for n in nodes[1:]] == list(epilogue)
    for before, after in zip(nodes, nodes[1:]):  # each step reads what the one before wrote
        assert list(before["outputs"].values())[0] == after["inputs"]["IN_0"]
    assert list(nodes[-1]["outputs"].values()) == ["Y"]


def test_operand_steps_read_their_own_tensor() -> None:
    nodes = cl.build_graph(ConvSpec(**SMALL, epilogue=("scale", "bias", "add"))).inspect()["nodes"]
    assert [n["inputs"].get("IN_1") for n in nodes[1:]] == ["scale", "bias", "residual"]


def test_repeated_step_gets_numbered_names() -> None:
    nodes = cl.build_graph(ConvSpec(**SMALL, epilogue=("relu", "tanh", "relu"))).inspect()["nodes"]
    assert [n["name"] for n in nodes] == ["conv_fprop", "relu_0", "tanh", "relu_2"]


MATMUL_CASES = [(ta, tb, dt) for ta in (False, True) for tb in (False, True) for dt in ("fp16", "fp32", "bf16")]


@pytest.mark.parametrize("ta,tb,dtype", MATMUL_CASES)
def test_matmul_tensors_have_spec_dims_transpose_strides_and_dtype(ta: bool, tb: bool, dtype: str) -> None:
    spec = MatmulSpec(batch=2, m=5, n=6, k=3, dtype=dtype, transpose_a=ta, transpose_b=tb)
    info = check_tensors(spec)
    (node,) = info["nodes"]
    assert node["type"] == "MATMUL"
    assert node["inputs"] == {"A": "A", "B": "B"}
    assert list(node["outputs"].values()) == ["C"]


@pytest.mark.parametrize("epilogue", [("bias",), ("bias", "gelu", "add"), ("scale", "tanh"), ("add", "relu"),
                                      ("sigmoid",), ("gelu", "gelu")], ids="+".join)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_matmul_epilogue_tensors_nodes_and_virtuals(epilogue: tuple[str, ...], ta: bool, tb: bool) -> None:
    spec = MatmulSpec(batch=2, m=4, n=6, k=8, dtype="bf16", transpose_a=ta, transpose_b=tb, epilogue=epilogue)
    info = check_tensors(spec)
    virtual = sorted(n for n, t in info["tensors"].items() if t["is_virtual"])
    assert virtual == sorted(expected_virtuals(spec))
    nodes = info["nodes"]
    assert [n["type"] for n in nodes] == ["MATMUL"] + ["POINTWISE"] * len(epilogue)
    assert [n["params"]["mode"] for n in nodes[1:]] == list(epilogue)
    assert list(nodes[-1]["outputs"].values()) == ["C"]


def test_roles_mark_inputs_output_and_virtuals() -> None:
    spec = ConvSpec(**SMALL, epilogue=("bias", "relu"))
    g = cl.build_graph(spec)
    roles = g.roles
    assert {n for n, r in roles.items() if r == "input"} == {"X", "W", "bias"}
    assert [n for n, r in roles.items() if r == "output"] == ["Y"]
    assert {n for n, r in roles.items() if r == "virtual"} == set(expected_virtuals(spec))
    assert {n for n, t in g.inspect()["tensors"].items() if t["is_virtual"]} == set(expected_virtuals(spec))


def test_lab_graph_keeps_tensors_by_name() -> None:
    g = cl.build_graph(MatmulSpec(batch=1, m=4, n=4, k=4, epilogue=("relu",)))
    assert set(g.tensors) == set(g.inspect()["tensors"])
    assert g.pygraph is not None and "MatmulSpec" in repr(g)


def test_uids_are_distinct() -> None:
    tensors = cl.build_graph(ConvSpec(**SMALL, epilogue=("scale", "bias", "add", "relu"))).inspect()["tensors"]
    uids = [t["uid"] for t in tensors.values()]
    assert len(set(uids)) == len(uids)


@pytest.mark.parametrize("bad", [None, {"op": "conv"}, "conv"])
def test_build_graph_refuses_non_specs(bad) -> None:
    with pytest.raises(SpecError, match="spec="):
        cl.build_graph(bad)
