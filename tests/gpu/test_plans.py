"""Plan bookkeeping that needs no GPU: knob settings read losslessly from plan names, plan sources by spec class,
and a plan's build state kept across runs."""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab.gpu.classic.pool import classic_plans, pool_lab
from cudnn_lab.gpu.frontend import graph_plans, knobs_of
from cudnn_lab.gpu.plans import PLAN_SOURCES, PlanEntry


def test_knobs_come_from_the_plan_name_by_knob_number() -> None:
    assert knobs_of("eng32_k2=2_k6=3_k13=1_k14=0_k22=1", {}) == {"k2": 2, "k6": 3, "k13": 1, "k14": 0, "k22": 1}


def test_negative_knob_values_survive() -> None:
    assert knobs_of("eng4_k24=-1", {}) == {"k24": -1}


def test_plan_without_knobs_has_none() -> None:
    assert knobs_of("eng0", {}) == {}


def test_pooling_has_its_classic_source_and_every_other_family_the_graphs() -> None:
    assert PLAN_SOURCES[cl.PoolSpec(n=1, c=8, h=8, w=8)] is classic_plans
    for spec in (cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), cl.MatmulSpec(m=64, n=64, k=64),
                 cl.SdpaSpec(batch=1, heads=1, seq_q=64, seq_kv=64, head_dim=64), cl.NormSpec()):
        assert PLAN_SOURCES[spec] is graph_plans, type(spec).__name__


def test_a_plan_is_built_at_most_once_per_session() -> None:
    entry = PlanEntry(name="p", engine_id=-1, knobs={}, graph=pool_lab(cl.PoolSpec(n=1, c=8, h=8, w=8)),
                      index=0)
    assert entry.built is None
    first = entry.build()
    assert entry.built is first
    if first:  # cuDNN's library is here: built, no workspace
        assert entry.workspace_bytes == 0 and entry.build_ms is not None and not entry.build_error
    else:  # no libcudnn: the failure is recorded, not raised, and says why
        assert "libcudnn" in entry.build_error
    graph = entry.graph
    entry.graph = None  # a second build must not touch the graph again
    assert entry.build() is first
    entry.graph = graph
