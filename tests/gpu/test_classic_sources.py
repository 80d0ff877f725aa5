"""The classic-API plan sources without a GPU: each new family finds its source by spec class; the structural
transforms are refused below the cuDNN version that runs them, naming it; where cuDNN's library cannot be loaded
(this machine may have none) a source says so before any input is made."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu.classic import ops as classic_ops
from cudnn_lab.gpu.classic import rnn as classic_rnn
from cudnn_lab.gpu.classic.ops import NeedsNewerCudnnError, check_graph_kind
from cudnn_lab.gpu.plans import PLAN_SOURCES

SMALL = dict(n=2, c=3, h=4, w=5)


def test_each_family_has_its_plan_source() -> None:
    assert PLAN_SOURCES[cl.RnnSpec()] is classic_rnn.rnn_plans
    assert PLAN_SOURCES[cl.SoftmaxSpec()] is classic_ops.softmax_plans
    assert PLAN_SOURCES[cl.ActivationSpec()] is classic_ops.activation_plans
    assert PLAN_SOURCES[cl.TransformSpec()] is classic_ops.transform_plans
    from cudnn_lab.gpu.frontend import graph_plans

    assert PLAN_SOURCES[cl.ConvGenstatsSpec()] is graph_plans and PLAN_SOURCES[cl.ConvPrologueSpec()] is graph_plans


@pytest.mark.parametrize("kind", ["transpose", "reshape", "slice", "concatenate"])
def test_structural_graphs_are_refused_below_9_22_naming_the_version(kind: str) -> None:
    spec = cl.TransformSpec(**SMALL, kind=kind, stop=2)
    with pytest.raises(NeedsNewerCudnnError) as info:
        check_graph_kind(spec, 91900, "NVIDIA H100 80GB HBM3", "91900")
    msg = str(info.value)
    assert f"A {kind} graph on its own needs cuDNN 9.22.0" in msg and "this is cuDNN 9.19.0" in msg
    assert "NVIDIA H100" in msg and isinstance(info.value, cl.UnsupportedGraphError)
    check_graph_kind(spec, 92200)  # from 9.22.0 on, the frontend graph's plans are tried
    check_graph_kind(cl.TransformSpec(**SMALL), 80000)  # convert is the classic call: no version gate


def test_rnn_plan_names_say_the_algorithm_and_the_direction() -> None:
    spec = cl.RnnSpec()
    assert classic_rnn.plan_name(spec, "persist_dynamic") == "classic cudnnRNNForward persist_dynamic"
    assert "bwd data+bwd weights standard" in classic_rnn.plan_name(spec.replace(direction="bwd"), "standard")


def test_without_cudnns_library_the_sources_say_so() -> None:
    from cudnn_lab.gpu.classic import loader as classic

    try:
        classic.library()
    except cl.UnsupportedGraphError:
        pass
    else:
        pytest.skip("cuDNN's library loads here: the sources would go on to make plans")
    for spec, source in ((cl.RnnSpec(), classic_rnn.rnn_plans), (cl.SoftmaxSpec(), classic_ops.softmax_plans),
                         (cl.ActivationSpec(), classic_ops.activation_plans),
                         (cl.TransformSpec(), classic_ops.transform_plans)):
        with pytest.raises(cl.UnsupportedGraphError, match="libcudnn.so.9"):
            source(spec, None, (), "", "")


def test_a_classic_source_refuses_graph_options_naming_sm_count() -> None:
    """Every source takes the plan-source seam's ``graph_options``; a classic call runs on the whole GPU, so a
    carve-out is refused naming sm_count (before cuDNN's library is needed)."""
    from cudnn_lab.gpu.classic import pool as classic_pool

    for spec, source in ((cl.RnnSpec(), classic_rnn.rnn_plans), (cl.SoftmaxSpec(), classic_ops.softmax_plans),
                         (cl.ActivationSpec(), classic_ops.activation_plans),
                         (cl.TransformSpec(), classic_ops.transform_plans),
                         (cl.PoolSpec(), classic_pool.classic_plans)):
        assert PLAN_SOURCES[spec] is source
        with pytest.raises(cl.OptionError, match="whole GPU") as info:
            source(spec, None, (), "", "", graph_options={"sm_count": 66})
        assert info.value.option == "sm_count" and type(spec).__name__ in str(info.value)
