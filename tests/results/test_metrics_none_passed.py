"""A failing plan is never called "best" (issue 39): where every plan that ran failed cuDNN's band (the fp32 GRU
backward recordings: all three plans fail per element), the run's summary says none passed and names the fastest
as the fastest; a run with a passing plan still names its best. Recordings shipped in cudnn_lab/data/."""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab.results import metrics


def test_a_run_where_no_plan_passed_has_no_best_in_its_summary():
    r = cl.load_results("h100_rnn_gru_fp32_bwd")
    assert len(r.ok) and metrics.none_passed(r.plans)
    text = r.summary()
    assert " best " not in text and "best " + str(r.best["plan"]) not in text
    assert "no plan passed cuDNN's band" in text and f"fastest {r.best['plan']}" in text


def test_a_run_with_a_passing_plan_names_its_best():
    r = cl.load_results("h100_conv_nhwc_fp16")
    assert not metrics.none_passed(r.plans)
    assert f"best {r.best['plan']}" in r.summary() and "no plan passed" not in r.summary()
    assert not metrics.none_passed(r.plans.iloc[0:0])  # nothing ran: nothing failed either
