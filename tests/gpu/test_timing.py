"""gpu/timing.py: quartiles and the options it takes (no GPU), and the Timer on a real torch op (GPU)."""

from __future__ import annotations

import pytest

from cudnn_lab.options import TIMING_MODES, RunOptions
from cudnn_lab.gpu.timing import SUPPORTED_MODES, TimingOptions, TimingResult, quartiles


def test_quartiles_are_inclusive_like_torch_benchmark() -> None:
    assert quartiles([1.0, 2.0, 3.0, 4.0, 5.0]) == (2.0, 3.0, 4.0)
    assert quartiles([7.0]) == (7.0, 7.0, 7.0)
    q1, med, q3 = quartiles([4.0, 1.0, 3.0, 2.0])
    assert q1 <= med <= q3 and med == 2.5


def test_timing_options_come_from_run_options() -> None:
    t = TimingOptions.from_options(RunOptions(warmup=5, min_samples=7, max_samples=9, rel_iqr_target=0.2,
                                              time_cap_s=1.5, timing="events"))
    assert (t.mode, t.warmup, t.min_samples, t.max_samples, t.rel_iqr_target, t.time_cap_s) == \
        ("events", 5, 7, 9, 0.2, 1.5)


def test_a_runs_default_timing_is_the_timers_default() -> None:
    assert TimingOptions.from_options(RunOptions()) == TimingOptions()


def test_cold_l2_with_auto_timing_means_events() -> None:
    t = TimingOptions.from_options(RunOptions(cold_l2=True))
    assert t.mode == "events" and t.cold_l2


def test_the_timer_implements_every_run_option_mode() -> None:
    assert set(SUPPORTED_MODES) == set(TIMING_MODES)


def test_tiny_calls_get_more_calls_per_graph_up_to_the_limit() -> None:
    from cudnn_lab.gpu.timing import calls_per_graph

    o = TimingOptions()
    assert calls_per_graph(0.030, o) == 10  # 0.3 ms target
    assert calls_per_graph(0.002, o) == 500  # tiny: 1 ms target, so the replay's fixed cost is spread thin
    assert calls_per_graph(0.0186, o) == 53  # the 18.6 us ResNet 1x1 conv: its ~3 us per replay is 0.3%, not 1.2%
    assert calls_per_graph(0.0001, o) == o.max_calls == 1000
    assert calls_per_graph(5.0, o) == 1


def test_rel_iqr_of_a_result() -> None:
    r = TimingResult(median_ms=2.0, iqr_ms=0.5, q1_ms=1.8, q3_ms=2.3, min_ms=1.5, samples=10, mode="events",
                     calls_per_sample=1, capped=False, host_ms=None, cold_l2=False)
    assert r.rel_iqr == 0.25 and r.to_dict()["median_ms"] == 2.0


def test_auto_reports_cupti_below_10_us_and_a_result_says_its_replayed_time() -> None:
    o = TimingOptions()
    assert o.mode == "auto" and o.cupti_below_ms == 0.010
    r = TimingResult(median_ms=0.002, iqr_ms=0.0, q1_ms=0.002, q3_ms=0.002, min_ms=0.002, samples=10, mode="cupti",
                     calls_per_sample=1, capped=False, host_ms=0.01, cold_l2=False)
    assert r.replay_ms is None and r.to_dict()["replay_ms"] is None


def test_only_a_call_far_slower_than_the_best_so_far_is_screened() -> None:
    from cudnn_lab.gpu.timing import screened

    o = TimingOptions()
    assert o.screen_ratio == RunOptions.screen_ratio == 4.0
    assert screened(1.0, 0.1, o)  # 10x the best so far
    assert not screened(0.3, 0.1, o)  # 3x: still a contender
    assert not screened(1.0, None, o)  # nothing timed before it
    assert not screened(0.04, 0.001, o)  # under screen_min_ms the eager estimate may be the host's launch time
    assert not screened(1.0, 0.1, TimingOptions(screen_ratio=0.0))  # off
    assert TimingOptions.from_options(RunOptions(screen_ratio=0)).screen_ratio == 0.0


def test_the_host_time_measurement_takes_fewer_calls_when_calls_are_long() -> None:
    from cudnn_lab.gpu.timing import host_calls

    o = TimingOptions()
    assert host_calls(0.010, o) == 20
    assert host_calls(0.2, o) == 5  # 1 ms of GPU time to drain
    assert host_calls(12.0, o) == 2


@pytest.mark.parametrize("bad", [0.5, -1.0, float("nan"), "4", True])
def test_screen_ratio_must_be_zero_or_at_least_one(bad) -> None:
    from cudnn_lab.errors import OptionError

    with pytest.raises(OptionError, match="screen_ratio"):
        RunOptions(screen_ratio=bad)


# ------------------------------------------------------------------------------------------------ on the GPU

@pytest.fixture
def op():
    import torch

    stream = torch.cuda.Stream()
    a = torch.randn(4096, 4096, device="cuda")  # ~40 us: above the 10 us where 'auto' turns to CUPTI
    b = torch.empty_like(a)

    def fn() -> None:
        torch.mul(a, 2.0, out=b)

    return stream, fn


def _sane(r: TimingResult, opts: TimingOptions) -> None:
    assert r.min_ms <= r.q1_ms <= r.median_ms <= r.q3_ms
    assert r.min_ms <= r.median_ms <= r.q3_ms
    assert r.iqr_ms == pytest.approx(r.q3_ms - r.q1_ms)
    assert opts.min_samples <= r.samples <= opts.max_samples + 4  # samples come in batches of 5
    assert r.median_ms > 0 and r.host_ms is not None and r.host_ms > 0


@pytest.mark.gpu
@pytest.mark.parametrize("mode,expected", [("auto", "cuda_graph"), ("cuda_graph", "cuda_graph"),
                                           ("events", "events")])
def test_timer_on_a_torch_op(op, mode: str, expected: str) -> None:
    from cudnn_lab.gpu.timing import Timer

    stream, fn = op
    opts = TimingOptions(mode=mode, time_cap_s=0.2)
    r = Timer(stream, opts).time(fn)
    _sane(r, opts)
    assert r.mode == expected and not r.cold_l2
    assert (r.calls_per_sample >= 1) if expected == "cuda_graph" else r.calls_per_sample == 1


@pytest.mark.gpu
def test_cold_l2_times_with_events(op) -> None:
    from cudnn_lab.gpu.timing import Timer

    stream, fn = op
    opts = TimingOptions.from_options(RunOptions(cold_l2=True, time_cap_s=0.2))
    r = Timer(stream, opts).time(fn)
    _sane(r, opts)
    assert r.mode == "events" and r.cold_l2


@pytest.mark.gpu
def test_an_unreachable_spread_target_stops_at_max_samples_and_says_capped(op) -> None:
    from cudnn_lab.gpu.timing import Timer

    stream, fn = op
    opts = TimingOptions(mode="events", min_samples=5, max_samples=10, rel_iqr_target=1e-9, time_cap_s=60.0)
    r = Timer(stream, opts).time(fn)
    assert r.capped and r.samples == 10


@pytest.mark.gpu
def test_a_captured_graph_is_replayed_by_key(op) -> None:
    from cudnn_lab.gpu.timing import Timer

    stream, fn = op
    cache: dict = {}
    timer = Timer(stream, TimingOptions(mode="cuda_graph", time_cap_s=0.1), graph_cache=cache)
    first = timer.time(fn, key="mul")
    graph = cache["mul"]
    again = timer.time(fn, key="mul")
    assert cache["mul"] is graph and again.calls_per_sample == first.calls_per_sample


@pytest.mark.gpu
def test_cupti_mode_gives_kernel_time_per_call(op) -> None:
    from cudnn_lab.gpu.timing import Timer

    stream, fn = op
    opts = TimingOptions(mode="cupti", min_samples=10, max_samples=20)
    r = Timer(stream, opts).time(fn)
    assert r.mode == "cupti" and r.calls_per_sample == 1 and r.samples >= 10
    assert 0 < r.min_ms <= r.median_ms
    replay = Timer(stream, TimingOptions(mode="cuda_graph", time_cap_s=0.2)).time(fn)
    assert replay.median_ms >= 0.5 * r.median_ms  # replayed time cannot be far below the kernels' own time


@pytest.mark.gpu
def test_auto_times_a_tiny_call_by_cupti_and_keeps_the_replayed_time() -> None:
    import torch

    from cudnn_lab.gpu.timing import Timer

    stream = torch.cuda.Stream()
    x = torch.zeros(256, device="cuda")

    def fn() -> None:
        x.add_(1.0)  # one kernel of ~2 us

    r = Timer(stream, TimingOptions(time_cap_s=0.2)).time(fn)
    assert r.mode == "cupti" and r.replay_ms is not None
    assert r.median_ms < 0.010 and r.replay_ms >= 0.5 * r.median_ms
    # the graph was sized from a replay's GPU time, not from host-bound eager calls: enough calls for ~1 ms
    graph = Timer(stream, TimingOptions(mode="cuda_graph", time_cap_s=0.2)).time(fn)
    assert graph.mode == "cuda_graph" and graph.calls_per_sample >= 200


@pytest.mark.gpu
def test_a_call_far_slower_than_the_contender_gets_a_few_event_samples() -> None:
    import torch

    from cudnn_lab.gpu.timing import Timer

    stream = torch.cuda.Stream()
    a = torch.randn(12288, 8192, device="cuda")  # ~0.2 ms: above screen_min_ms, so its warm-up is the GPU time
    b = torch.empty_like(a)

    def fn() -> None:
        torch.mul(a, 2.0, out=b)

    opts = TimingOptions(time_cap_s=0.2)
    full = Timer(stream, opts).time(fn)
    assert full.median_ms >= opts.screen_min_ms
    quick = Timer(stream, opts).time(fn, contender_ms=full.median_ms / 20)
    assert quick.screened and quick.mode == "events" and quick.samples == opts.screen_samples
    assert 0.5 * full.median_ms < quick.median_ms < 3 * full.median_ms  # the same work, fewer samples
    kept = Timer(stream, opts).time(fn, contender_ms=full.median_ms)  # a contender is sampled fully
    assert not kept.screened and kept.mode == "cuda_graph"
    off = Timer(stream, TimingOptions(time_cap_s=0.2, screen_ratio=0.0)).time(fn, contender_ms=full.median_ms / 20)
    assert not off.screened
