"""Classic calls worded as classic calls (issue 39): pooling, softmax, activation, transform and RNN results run a
classic cuDNN call, not heuristics-ranked engines: no "heuristic pick" arrow, no "engine -1" legend entry, no
`explore=200` suggestion. Recordings shipped in cudnn_lab/data/; a frontend graph's result keeps its words."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab import plots
from cudnn_lab.plots.anatomy import no_sample_text
from cudnn_lab.plots.run import classic_call

CLASSIC = ("h100_pool_max_fp16", "h100_softmax_fp16_channel", "h100_activation_swish_fp16",
           "h100_transform_nchw_to_nhwc_fp16", "h100_rnn_gru_fp32_bwd", "h100_rnn_lstm_fp16")


def _words(fig) -> str:
    return " ".join([*(a.text or "" for a in fig.layout.annotations), *(t.name or "" for t in fig.data)])


@pytest.mark.parametrize("name", CLASSIC)
def test_a_classic_calls_figures_say_no_heuristic_words(name):
    r = cl.load_results(name)
    assert classic_call(r) is not None
    for make in (plots.latency_bar, plots.heuristic_vs_measured, plots.roofline):
        words = _words(make(r))
        assert "heuristic pick" not in words and "engine -1" not in words, (make.__name__, words)
    text = no_sample_text(r)
    assert "explore=" not in text and "classic" in text


def test_a_graph_results_figures_keep_the_pick_and_engines():
    r = cl.load_results("h100_conv_nhwc_fp16")
    words = _words(plots.latency_bar(r))
    assert "heuristic pick" in words and "engine " in words
    assert "explore=200" in no_sample_text(r) or r.exploration["explored"]


def test_the_latency_chart_calls_no_failing_plan_best():
    r = cl.load_results("h100_rnn_gru_fp32_bwd")  # every plan failed cuDNN's band
    words = _words(plots.latency_bar(r))
    assert "fastest (no plan passed)" in words and "best" not in words.replace("fastest", "")


def test_an_empty_comparison_has_no_placeholder_titles():
    frame = cl.load_results("h100_fp8_gemm")
    empty_rows = frame[frame["op"] == "conv"]  # the filter of issue 39: no point of it in an FP8 GEMM sweep
    title = plots.compare_gpus(empty_rows, empty_rows).layout.title.text
    assert "a: a" not in title and "b: b" not in title and "no point shown" in title
