"""cl.run on a real GPU: every op x layout x dtype of the foundation's specs, plans, numerics and errors."""

from __future__ import annotations

import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

SMALL = dict(n=4, c=32, h=16, w=16, k=64, r=3, s=3, padding=1)
# The heuristics' pick only (RunOptions' default plan policy is "all").
QUICK = dict(plans="heuristic", baselines=False, roofline=False, time_cap_s=0.05)


def _assert_pick_is_right(result: cl.RunResult) -> None:
    pick = result.heuristic_pick
    assert pick["status"] == "ok"
    assert pick["nan_count"] == 0
    assert bool(pick["pass_cudnn"]), pick.to_dict()
    assert pick["median_ms"] > 0


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("direction", ["fprop", "dgrad", "wgrad"])
def test_conv_heuristic_pick_matches_reference(direction: str, layout: str, dtype: str) -> None:
    spec = cl.ConvSpec(**SMALL, layout=layout, dtype=dtype, direction=direction)
    _assert_pick_is_right(cl.run(spec, **QUICK))


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_matmul_heuristic_pick_matches_reference(dtype: str, ta: bool, tb: bool) -> None:
    spec = cl.MatmulSpec(batch=2, m=128, n=256, k=64, dtype=dtype, transpose_a=ta, transpose_b=tb)
    _assert_pick_is_right(cl.run(spec, **QUICK))


@pytest.mark.parametrize("epilogue", [("bias", "relu"), ("scale", "bias", "relu"), ("add", "relu"),
                                      ("bias", "gelu"), ("sigmoid",), ("tanh",)])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_conv_fused_epilogue_matches_reference(epilogue: tuple[str, ...], dtype: str) -> None:
    spec = cl.ConvSpec(**SMALL, layout="NHWC", dtype=dtype, epilogue=epilogue)
    _assert_pick_is_right(cl.run(spec, **QUICK))


@pytest.mark.parametrize("epilogue", [("bias",), ("bias", "gelu"), ("add", "relu"), ("scale", "tanh")])
def test_matmul_fused_epilogue_matches_reference(epilogue: tuple[str, ...]) -> None:
    spec = cl.MatmulSpec(batch=1, m=256, n=256, k=128, dtype="fp16", epilogue=epilogue)
    _assert_pick_is_right(cl.run(spec, **QUICK))


def test_fp32_matmul_runs_with_io_type_set() -> None:
    # The product page's matmul + bias example failed without io_data_type (GPU_FACTS.md).
    spec = cl.MatmulSpec(batch=1, m=256, n=256, k=256, dtype="fp32", epilogue=("bias",))
    _assert_pick_is_right(cl.run(spec, **QUICK))


@pytest.fixture(scope="module")
def all_plans() -> cl.RunResult:
    spec = cl.ConvSpec(n=8, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    return cl.run(spec, plans="all", heuristics=("A", "B", "FALLBACK"), time_cap_s=0.1)


def test_all_plans_lists_several_engines(all_plans: cl.RunResult) -> None:
    assert len(all_plans.plans) > 1
    assert all_plans.plans["engine_id"].nunique() > 1


def test_all_plans_are_built_or_say_why(all_plans: cl.RunResult) -> None:
    frame = all_plans.plans
    assert set(frame["status"]) <= {"ok", "build_failed", "run_failed"}
    failed = frame[frame["status"] != "ok"]
    assert (failed["error"].str.len() > 0).all()


def test_every_plan_that_ran_is_checked(all_plans: cl.RunResult) -> None:
    ok = all_plans.ok
    assert ok["rel_l2"].notna().all()
    assert ok["pass_cudnn"].notna().all()


def test_best_is_not_slower_than_heuristic_pick(all_plans: cl.RunResult) -> None:
    assert all_plans.best["median_ms"] <= all_plans.heuristic_pick["median_ms"]
    assert all_plans.regret >= 1.0


def test_ranks_per_mode_are_recorded(all_plans: cl.RunResult) -> None:
    frame = all_plans.plans
    assert frame["rank_A"].notna().any()
    assert frame["rank_FALLBACK"].notna().any()
    assert list(frame["heuristic_rank"]) == list(range(len(frame)))


def test_torch_baseline_states_benchmark_and_tf32(all_plans: cl.RunResult) -> None:
    t = all_plans.torch
    assert t["benchmark_off_ms"] > 0 and t["benchmark_on_ms"] > 0
    assert isinstance(t["allow_tf32_cudnn"], bool)


def test_roofline_places_every_plan_below_the_roof(all_plans: cl.RunResult) -> None:
    ok = all_plans.ok
    assert all_plans.ceilings["tflops"] > 1 and all_plans.ceilings["gbps"] > 50
    assert ((ok["pct_of_ceiling"] > 0) & (ok["pct_of_ceiling"] < 110)).all()


def test_device_record_names_gpu_and_versions(all_plans: cl.RunResult) -> None:
    d = all_plans.device
    assert d["gpu"] and d["sm_count"] > 0 and d["cudnn_backend"] >= 90000
    assert d["cudnn_frontend"]


def test_result_round_trips_through_json(all_plans: cl.RunResult, tmp_path) -> None:
    loaded = cl.RunResult.load(all_plans.save(tmp_path / "r.json"))
    assert loaded.spec == all_plans.spec
    assert list(loaded.plans["plan"]) == list(all_plans.plans["plan"])
    assert loaded.best["plan"] == all_plans.best["plan"]


def test_small_problem_is_timed_by_cuda_graph_replay() -> None:
    spec = cl.ConvSpec(n=1, c=64, h=14, w=14, k=64, r=1, s=1, padding=0, layout="NHWC", dtype="fp16")
    pick = cl.run(spec, timing="cuda_graph", **QUICK).heuristic_pick
    assert pick["timing_mode"] == "cuda_graph"
    assert pick["calls_per_sample"] > 1
    assert pick["host_ms"] > 0


def test_auto_timing_reports_kernel_time_below_ten_microseconds_with_the_replay_beside_it() -> None:
    spec = cl.ConvSpec(n=1, c=64, h=14, w=14, k=64, r=1, s=1, padding=0, layout="NHWC", dtype="fp16")
    pick = cl.run(spec, **QUICK).heuristic_pick
    assert pick["median_ms"] < 0.010, pick.to_dict()  # a ~2 us kernel: 'auto' switches to CUPTI kernel time
    assert pick["timing_mode"] == "cupti" and pick["replay_over_kernel"] > 0, pick.to_dict()


def test_cold_l2_uses_events() -> None:
    spec = cl.ConvSpec(**SMALL)
    pick = cl.run(spec, cold_l2=True, **QUICK).heuristic_pick
    assert pick["timing_mode"] == "events"


def test_problem_too_large_for_memory_is_refused_before_allocation() -> None:
    import torch

    spec = cl.MatmulSpec(batch=8, m=16384, n=16384, k=16384, dtype="fp32", epilogue=("add",))
    before = torch.cuda.memory_allocated()
    with pytest.raises(cl.ResourceError, match="GiB"):
        cl.run(spec, **QUICK)
    assert torch.cuda.memory_allocated() == before


def test_bad_heuristic_mode_names_the_option() -> None:
    with pytest.raises(cl.OptionError, match="heuristics"):
        cl.run(cl.ConvSpec(**SMALL), heuristics=("Z",))


def test_unsupported_graph_says_why_in_one_sentence_and_keeps_backend_detail() -> None:
    # Seen on an H200 with cuDNN 9.19: no engine fuses gelu + tanh after an fp32 NCHW conv.
    spec = cl.ConvSpec(n=2, c=16, h=16, w=16, k=16, dtype="fp32", layout="NCHW", epilogue=("gelu", "tanh"))
    with pytest.raises(cl.UnsupportedGraphError) as info:
        cl.run(spec, **QUICK)
    err = info.value
    assert str(err).startswith("No cuDNN engine")
    assert err.device and err.cudnn_version
    assert "Backend message" in str(err) and err.detail


def test_repeated_run_reuses_built_plans_and_names_them_again() -> None:
    spec = cl.ConvSpec(**SMALL, layout="NHWC", dtype="fp16")
    quick = {**QUICK, "plans": "all"}
    first = cl.run(spec, **quick)
    again = cl.run(spec, **quick)
    assert list(first.plans["plan"]) == list(again.plans["plan"])
    assert (again.plans["build_ms"] == first.plans["build_ms"]).all()


def test_a_heuristic_run_after_an_all_plan_run_reports_only_its_own_plans() -> None:
    """Plan statuses belong to one run: an 'all' run's ok plans do not show up in a later 'heuristic' run of the same
    session (the cause of 51 rows where 10 were expected in a resumed H100 sweep, 2026-11-22)."""
    spec = cl.ConvSpec(**SMALL, layout="NHWC", dtype="fp16")
    everything = cl.run(spec, **{**QUICK, "plans": "all"})
    assert len(everything.ok) > 1
    pick_only = cl.run(spec, **QUICK)
    assert len(pick_only.ok) == 1
    tried = pick_only.plans[pick_only.plans["status"] != "not_built"]
    assert set(tried["status"]) <= {"ok", "build_failed"}
    assert pick_only.plans.loc[pick_only.plans["status"] == "not_built", "median_ms"].isna().all()


def test_settings_are_the_run_options_and_the_proposed_count() -> None:
    result = cl.run(cl.ConvSpec(**SMALL), cl.RunOptions(plans="heuristic", baselines=False, roofline=False,
                                                        time_cap_s=0.05, seed=3))
    # the run's facts (proposed, plan_cache_stats, phase_s) sit beside the options, never over them
    assert cl.RunOptions.from_dict({k: v for k, v in result.settings.items() if k in cl.RunOptions.names()}) == \
        cl.RunOptions(plans="heuristic", baselines=False, roofline=False, time_cap_s=0.05, seed=3)
    assert result.settings["proposed"] >= len(result.ok) >= 1
    phase = result.settings["phase_s"]
    assert phase["total"] >= phase["build"] + phase["time"] and phase["baseline"] == 0.0  # baselines off


def test_device_index_past_the_visible_gpus_is_an_option_error() -> None:
    import torch

    with pytest.raises(cl.OptionError, match="device"):
        cl.run(cl.ConvSpec(**SMALL), device=torch.cuda.device_count(), **QUICK)


def test_plans_far_slower_than_the_best_so_far_are_screened_and_said_to_be() -> None:
    # The ResNet-50 3x3 conv's plans span about 500x on an H100/H200 (a fallback plan takes ~12 ms, the best ~24 us).
    spec = cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    # no helpers: plans are timed in heuristic order (with a warm pool, outside xdist, 'auto' times the plans helpers
    # stored while it waits for the pick, so a slow plan could be timed before any fast one)
    quick = dict(plans="all", baselines=False, roofline=False, kernels=False, notes=False, resample=True,
                 parallel_builds=0)
    r = cl.run(spec, **quick)
    ok = r.ok.sort_values("heuristic_rank")
    best, first = ok["median_ms"].min(), ok["median_ms"].iloc[0]
    # Timed after a plan they are 40x slower than: 10x the screen ratio, for the noise of a shared GPU. At 10x, one
    # of 9 suites (three at once on an H200, 2026-11-29) had a plan 10x slower by its median but not screened: the
    # best-so-far it is screened against was measured under the same contention.
    slow = ok.iloc[1:][ok["median_ms"].iloc[1:] > 40 * first]
    if slow.empty:
        pytest.skip("no plan here is 40x slower than the first one timed: nothing to screen")
    screened = ok[ok["screened"].astype(bool)]
    assert not screened.empty and set(slow["plan"]) <= set(screened["plan"])
    assert (screened["median_ms"] > 2 * best).all() and (screened["timing_mode"] == "events").all()
    assert (screened["samples"] <= 5).all() and bool(ok.loc[ok["median_ms"].idxmin(), "screened"]) is False
    assert any("screened" in w for w in r.warnings)
    assert (screened["pass_cudnn"].astype(bool)).all()  # screened plans are still checked
    full = cl.run(spec, **quick, screen_ratio=0)
    assert not full.ok["screened"].astype(bool).any()
