"""Forecast speed (issue 35): a forecast of five targets after the first in a process (target <= 1 s), median of
several, on CPU from the shipped recordings; prints met/missed.

Run anywhere:  python benchmarks/forecast.py [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import cudnn_lab as cl
from cudnn_lab.specs.base import spec_from_dict
from cudnn_lab.whatif.speed_models import RECORDED_DIR
from cudnn_lab.gpu.device import end_program
from _shared import write_json

#: The source recording and five targets: the other Hopper card, two published GPUs, and two SM carve-outs.
SOURCE = RECORDED_DIR / "h200_sdpa_bf16_causal.json"
TARGETS = ("h100", "gb200", "a100_80gb_pcie", 120, 66)
BOUND_S = 1.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    spec = spec_from_dict(json.loads(SOURCE.read_text())["spec"])
    t0 = time.perf_counter()
    first = [cl.forecast(spec, t, source=SOURCE) for t in TARGETS]
    first_s = time.perf_counter() - t0
    spans = []
    for _ in range(max(1, args.repeats)):
        t0 = time.perf_counter()
        for t in TARGETS:
            cl.forecast(spec, t, source=SOURCE)
        spans.append(time.perf_counter() - t0)
    median = statistics.median(spans)
    verdict = "met" if median <= BOUND_S else "MISSED"
    print(f"forecast of {len(TARGETS)} targets after the first (median of {len(spans)}): {median:.3f} s "
          f"(target <= {BOUND_S:g} s) {verdict}; first call {first_s:.3f} s (validation table built once)")
    for f in first:
        pick = f.pick
        what = f.measure_this or (pick.measure_this if pick and pick.predicted_ms is None else "")
        got = f"measure this: {what[:90]}" if what else f"{pick.predicted_ms:.4g} ms" if pick else "no plan"
        print(f"  {f.target:<16} {got}")
    write_json(args.json, {"targets": [str(t) for t in TARGETS], "first_s": first_s, "spans_s": spans,
                           "median_s": median, "bound_s": BOUND_S, "met": median <= BOUND_S,
                           "forecasts": [f.to_dict() for f in first]})


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
