"""MoeSpec: the routing's token counts (balanced, Zipf, hot expert, explicit), offsets, tensors, FLOPs and bytes, the
form's rules, and bad input refused with a SpecError naming the field."""

from __future__ import annotations

import math

import pytest

import cudnn_lab as cl
from cudnn_lab.errors import SpecError
from cudnn_lab.specs import spec_classes, spec_from_json
from cudnn_lab.specs.moe import DISTRIBUTIONS, MOE_DTYPES, MoeSpec

SMALL = dict(experts=4, tokens=100, hidden_in=32, hidden_out=48)


def test_registered_exported_and_after_the_first_five_families() -> None:
    assert spec_classes()["moe"] is MoeSpec is cl.MoeSpec and "MoeSpec" in cl.__all__
    assert list(spec_classes()).index("moe") >= 5


@pytest.mark.parametrize("routing", [dict(), dict(distribution="zipf", skew=2.5), dict(distribution="hot"),
                                     dict(distribution="hot", hot_share=1.0, seed=9),
                                     dict(distribution="counts", counts=(0, 99, 1, 0))])
def test_counts_sum_to_tokens_and_offsets_are_their_running_sums(routing: dict) -> None:
    spec = MoeSpec(**SMALL, **routing)
    counts, bounds = spec.expert_counts(), spec.boundaries()
    assert len(counts) == spec.experts and sum(counts) == spec.tokens and min(counts) >= 0
    assert bounds[0] == 0 and bounds[-1] == spec.tokens and len(bounds) == spec.experts + 1
    assert all(bounds[i + 1] - bounds[i] == c for i, c in enumerate(counts))
    assert spec.offsets() == bounds[:-1]  # the tensor holds each expert's first row


def test_uniform_splits_evenly_with_the_remainder_first() -> None:
    assert MoeSpec(**SMALL).expert_counts() == (25, 25, 25, 25)
    assert MoeSpec(**{**SMALL, "tokens": 102}).expert_counts() == (26, 26, 25, 25)
    assert MoeSpec(**SMALL).imbalance() == 1.0


def test_zipf_shares_fall_with_rank_and_steeper_skew_is_more_imbalanced() -> None:
    mild, steep = (MoeSpec(**SMALL, distribution="zipf", skew=s) for s in (0.5, 3.0))
    for spec in (mild, steep):
        assert list(spec.expert_counts()) == sorted(spec.expert_counts(), reverse=True)
    assert steep.imbalance() > mild.imbalance() > 1.0
    # 1 / (i + 1)^1 over 4 experts: 100 * (12, 6, 4, 3) / 25
    assert MoeSpec(**SMALL, distribution="zipf", skew=1.0).expert_counts() == (48, 24, 16, 12)


def test_hot_expert_takes_its_share_and_one_hot_leaves_the_others_idle() -> None:
    assert MoeSpec(**SMALL, distribution="hot", hot_share=0.7).expert_counts() == (70, 10, 10, 10)
    one_hot = MoeSpec(**SMALL, distribution="hot", hot_share=1.0)
    assert one_hot.expert_counts() == (100, 0, 0, 0) and one_hot.imbalance() == one_hot.experts
    assert MoeSpec(**{**SMALL, "experts": 1}, distribution="hot", hot_share=0.2).expert_counts() == (100,)


def test_seed_permutes_which_expert_gets_which_share_but_not_explicit_counts() -> None:
    base = MoeSpec(**SMALL, distribution="zipf", skew=1.0)
    seeded = [base.replace(seed=s).expert_counts() for s in range(1, 8)]
    assert all(sorted(c) == sorted(base.expert_counts()) for c in seeded)
    assert any(c != base.expert_counts() for c in seeded)
    assert base.replace(seed=3).expert_counts() == base.replace(seed=3).expert_counts()  # reproducible
    counts = MoeSpec(**SMALL, distribution="counts", counts=(10, 20, 30, 40), seed=5)
    assert counts.expert_counts() == (10, 20, 30, 40)


def test_tensors_strides_and_dtypes() -> None:
    spec = MoeSpec(**SMALL)
    t, k, n, e = 100, 32, 48, 4
    assert spec.tensor_shapes() == {"X": (1, t, k), "W": (e, k, n), "offsets": (e, 1, 1), "Y": (1, t, n)}
    strides = spec.tensor_strides()
    assert strides["W"] == (k * n, 1, k)  # column-major per expert: the frontend's weight layout
    assert strides["X"] == (t * k, k, 1) and strides["Y"] == (t * n, n, 1)
    assert spec.tensor_dtypes() == {"X": "bf16", "W": "bf16", "offsets": "int32", "Y": "bf16"}
    assert spec.io_names() == (("X", "W", "offsets"), "Y")


def test_flops_do_not_depend_on_the_routing_and_bytes_skip_idle_experts() -> None:
    balanced = MoeSpec(**SMALL)
    one_hot = MoeSpec(**SMALL, distribution="hot", hot_share=1.0)
    assert balanced.flops() == one_hot.flops() == 2 * 100 * 32 * 48
    m, n, k = balanced.dense_equivalent()
    assert 2 * m * n * k == balanced.flops()
    io = 2 * 100 * (32 + 48) + 4 * 4
    assert balanced.min_bytes() == io + 2 * 4 * 32 * 48
    assert one_hot.min_bytes() == io + 2 * 1 * 32 * 48


def test_labels_name_the_routing() -> None:
    assert "uniform" in MoeSpec().label()
    assert "zipf 2" in MoeSpec(distribution="zipf", skew=2.0).label()
    assert "hot 1" in MoeSpec(distribution="hot", hot_share=1.0).label()
    assert "seed 4" in MoeSpec(seed=4).label() and "seed" not in MoeSpec().label()


@pytest.mark.parametrize("spec", [MoeSpec(), MoeSpec(**SMALL, distribution="counts", counts=(1, 2, 3, 94),
                                                     dtype="fp16", seed=2)])
def test_json_round_trip(spec: MoeSpec) -> None:
    assert spec_from_json(spec.to_json()) == spec and cl.spec_from_dict(spec.to_dict()) == spec


def test_counts_as_text_from_a_form_are_read() -> None:
    for text in ("1, 2, 3, 94", "(1, 2, 3, 94)", "[1 2 3 94]"):
        assert MoeSpec(**SMALL, distribution="counts", counts=text).counts == (1, 2, 3, 94)
    assert MoeSpec(counts=None).counts == () == MoeSpec(counts="").counts


@pytest.mark.parametrize("changes,field,words", [
    (dict(distribution="counts", counts=(50, 50)), "counts", "one count per expert"),
    (dict(distribution="counts", counts=(10, 10, 10, 10)), "counts", "sum to tokens=100"),
    (dict(distribution="counts"), "counts", "one count per expert"),
    (dict(counts=(1, -1)), "counts", "from 0"),
    (dict(counts="a, b"), "counts", "whole numbers"),
    (dict(counts=5), "counts", "list of whole numbers"),
    (dict(distribution="pareto"), "distribution", ", ".join(DISTRIBUTIONS)),
    (dict(dtype="fp32"), "dtype", ", ".join(MOE_DTYPES)),
    (dict(experts=0), "experts", "from 1"),
    (dict(tokens=-5), "tokens", "from 1"),
    (dict(hidden_in=0), "hidden_in", "from 1"),
    (dict(hidden_out=2.5), "hidden_out", "integer"),
    (dict(skew=0.0), "skew", "greater than 0"),
    (dict(skew=math.inf), "skew", "number"),
    (dict(hot_share=1.5), "hot_share", "from 0 to 1"),
    (dict(seed=-1), "seed", "from 0"),
    (dict(tokens=1 << 20, hidden_in=1 << 12), "tokens", "larger than"),  # the largest of its sizes is named
])
def test_bad_input_names_the_field(changes: dict, field: str, words: str) -> None:
    with pytest.raises(SpecError) as info:
        MoeSpec(**{**SMALL, **changes})
    assert info.value.field == field and words in str(info.value), str(info.value)


def test_form_rules_hide_the_parameters_the_distribution_does_not_read() -> None:
    hidden = {d: MoeSpec.hidden_fields({"distribution": d}) for d in DISTRIBUTIONS}
    assert hidden["uniform"] == {"skew", "hot_share", "counts"}
    assert hidden["zipf"] == {"hot_share", "counts"}
    assert hidden["hot"] == {"skew", "counts"}
    assert hidden["counts"] == {"skew", "hot_share"}
    assert MoeSpec.hidden_fields({"distribution": 3}) == hidden["uniform"]  # junk: nothing read
    assert MoeSpec.field_limits({})["seed"] == (0, 2**31 - 1) and MoeSpec.field_limits({})["experts"][0] == 1
    assert "12 numbers" in MoeSpec.field_hints({"experts": 12})["counts"]
    assert MoeSpec.field_choices() == {"dtype": MOE_DTYPES, "distribution": DISTRIBUTIONS}
