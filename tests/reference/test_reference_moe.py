"""The MoE grouped GEMM's PyTorch side on the CPU: inputs in the graph's layout with the routing's offsets, the
float64 per-expert reference, the eager loop, the dense-GEMM and torch._grouped_mm baselines, and the GEMM bands."""

from __future__ import annotations

import pytest
import torch

import cudnn_lab.reference as ref
from cudnn_lab.errors import SpecError
from cudnn_lab.numerics import tolerance_bands
from cudnn_lab.reference.moe import extra_baselines, grouped_mm_available
from cudnn_lab.specs.moe import MoeSpec

SMALL = dict(experts=4, tokens=64, hidden_in=32, hidden_out=48)
ROUTINGS = [dict(), dict(distribution="zipf", skew=2.0), dict(distribution="hot", hot_share=1.0, seed=3),
            dict(distribution="counts", counts=(0, 61, 0, 3))]


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def test_inputs_have_the_graphs_layout_and_the_routings_offsets() -> None:
    spec = MoeSpec(**SMALL, distribution="zipf", skew=1.0)
    inputs = ref.make_inputs(spec, seed=1)
    assert tuple(inputs) == ("X", "W", "offsets")
    assert inputs["W"].stride() == (32 * 48, 1, 32) and inputs["W"].dtype == torch.bfloat16
    assert inputs["offsets"].dtype == torch.int32 and inputs["offsets"].shape == (4, 1, 1)
    assert tuple(inputs["offsets"].flatten().tolist()) == spec.offsets()
    assert inputs["W"].abs().max().item() <= 32 ** -0.5 and (inputs["X"] != 0).float().mean() > 0.99
    assert not torch.equal(inputs["X"], ref.make_inputs(spec, seed=2)["X"])  # fresh values per seed


@pytest.mark.parametrize("routing", ROUTINGS, ids=["uniform", "zipf", "one_hot", "counts"])
def test_reference_is_a_per_expert_product_and_eager_agrees(routing: dict) -> None:
    spec = MoeSpec(**SMALL, **routing)
    inputs = ref.make_inputs(spec)
    y = ref.reference(spec, inputs)
    assert y.dtype == torch.float64 and y.shape == (1, 64, 48) and not y.isnan().any()
    x, w = inputs["X"].double()[0], inputs["W"].double()
    o = spec.boundaries()
    for e in range(spec.experts):  # each row is its expert's product, written once
        assert torch.allclose(y[0, o[e]:o[e + 1]], x[o[e]:o[e + 1]] @ w[e])
    eager = ref.torch_eager(spec, inputs)
    assert eager.dtype == torch.bfloat16 and _rel(eager, y) < 1e-2


def test_a_wrong_expert_changes_the_reference() -> None:
    """The reference reads each expert's own weight (a routing bug would show)."""
    spec = MoeSpec(**SMALL)
    inputs = ref.make_inputs(spec)
    swapped = dict(inputs, W=inputs["W"].flip(0))
    assert _rel(ref.reference(spec, swapped), ref.reference(spec, inputs)) > 0.5


def test_offsets_that_are_not_the_specs_are_refused() -> None:
    spec = MoeSpec(**SMALL)
    inputs = ref.make_inputs(spec)
    bad = dict(inputs, offsets=torch.zeros_like(inputs["offsets"]))
    with pytest.raises(SpecError, match="offsets"):
        ref.reference(spec, bad)


def test_cpu_reference_is_refused_above_the_flop_limit() -> None:
    spec = MoeSpec(**SMALL)
    with pytest.raises(SpecError) as info:
        ref.reference(spec, ref.make_inputs(spec), cpu_flop_limit=spec.flops() - 1)
    assert info.value.field == "tokens"


def test_extra_baselines_are_the_dense_gemm_and_grouped_mm() -> None:
    spec = MoeSpec(**SMALL, distribution="hot", hot_share=0.75)
    inputs = ref.make_inputs(spec)
    ops = extra_baselines(spec, inputs)
    dense = ops["dense_gemm"]()
    assert dense.shape == (64, 48)
    assert torch.allclose(dense.double(), inputs["X"][0].double() @ inputs["W"][0].double(), atol=2e-2)
    assert ("grouped_mm" in ops) == grouped_mm_available()
    if "grouped_mm" in ops:
        try:
            got = ops["grouped_mm"]()
        except (RuntimeError, NotImplementedError) as e:
            pytest.skip(f"torch._grouped_mm has no kernel on this CPU build: {e}")
        assert _rel(got, ref.reference(spec, inputs)[0]) < 1e-2


def test_bands_are_the_gemms() -> None:
    for dtype in ("bf16", "fp16"):
        assert tolerance_bands(dtype, "moe") == tolerance_bands(dtype, "matmul")
