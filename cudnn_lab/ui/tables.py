"""The Plans view's table (:mod:`cudnn_lab.plots.tables`, shared with the HTML report) and the result labels, as
plain values (frames and HTML strings) that tests compare. Pick, best and regret are
:mod:`cudnn_lab.results.metrics`'."""

from __future__ import annotations

import html
import math
from typing import Any

from ..plots.tables import (ALL_COLUMN_TITLES, PLAN_TABLE_COLUMNS, full_table_html, plan_table, plan_table_html, sig3,
                            us_text)
from ..provenance import cudnn_version_text, provenance
from ..plots.run import classic_call, no_heuristics_text
from ..results import metrics

_us = us_text

__all__ = ["ALL_COLUMN_TITLES", "PLAN_TABLE_COLUMNS", "cudnn_version_text", "full_table_html", "heuristic_summary",
           "plan_table", "plan_table_html", "result_label", "sig3"]

def result_label(result: Any, source: str = "") -> str:
    """'GPU · driver · CUDA · cuDNN · date' of a result, with where it came from."""
    text = provenance(result).device
    return f"{source}: {text}" if source else text


def heuristic_summary(result: Any) -> str:
    """One sentence: did the heuristics' first choice turn out the fastest? (pick, best and regret are
    :mod:`cudnn_lab.results.metrics`')"""
    if classic_call(result) is not None:  # pooling, softmax, activation, transform, RNN: nothing chose a plan
        return html.escape(no_heuristics_text(result), quote=False)
    pick, best, regret = metrics.pick(result.plans), metrics.best(result.plans), metrics.regret(result.plans)
    if pick is None or best is None:
        return "No plan ran, so the heuristics' choice cannot be compared."
    if regret is None or not math.isfinite(regret):
        return "The heuristics' pick has no measured time."
    p, b = html.escape(str(pick["plan"])), html.escape(str(best["plan"]))
    if pick["plan"] == best["plan"]:
        return (f"The heuristics' first choice <b>{p}</b> ({_us(pick['median_ms'])} µs) is also the fastest "
                "passing plan.")
    return (f"The heuristics' first choice <b>{p}</b> takes {_us(pick['median_ms'])} µs; the fastest passing plan "
            f"<b>{b}</b> takes {_us(best['median_ms'])} µs: the pick is <b>{regret:.2f}x</b> slower.")
