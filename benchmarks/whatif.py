"""What-if speed (issue 26): a deviceless query after the first in a process, the side-by-side answer for five
targets after a spec change, and an SM-scaling what-if of a ResNet-50 conv at four SM counts. Prints met/missed.

Run on a GPU host:  python benchmarks/whatif.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import cudnn_lab as cl
from cudnn_lab.whatif import devices as tg
from cudnn_lab import whatif as wi
from cudnn_lab.gpu.device import end_program

RN50 = cl.ConvSpec(n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
FIVE = ("h100", "h200", "sm80", "sm89", "sm120")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    card = wi.profile()
    t0 = time.perf_counter()
    wi.plans_for(RN50, card, recorded=False, modes=("A",))
    first = time.perf_counter() - t0
    times = []
    for i in range(10):
        spec = RN50.replace(n=8 + i)
        t0 = time.perf_counter()
        wi.plans_for(spec, card, recorded=False, modes=("A",))
        times.append(time.perf_counter() - t0)
    rows.append(("deviceless query after the first (median of 10)", 0.05, statistics.median(times),
                 f"first {first:.3f} s; {min(times):.4f}-{max(times):.4f} s"))
    names = [n for n in FIVE if n in {t.name for t in tg.targets()}]
    spans = []
    for i in range(3):
        spec = RN50.replace(k=128 + 64 * i)
        t0 = time.perf_counter()
        wi.compare(spec, names, recorded=False)
        spans.append(time.perf_counter() - t0)
    rows.append((f"side by side for {len(names)} targets after a spec change (median of 3)", 1.0,
                 statistics.median(spans), ", ".join(names)))
    try:
        from cudnn_lab.whatif.scaling import sm_scaling

        t0 = time.perf_counter()
        sm_scaling(RN50, sm_counts=(None, 114, 78, 66))
        rows.append(("SM scaling of a ResNet-50 conv at 4 SM counts", 10.0, time.perf_counter() - t0, ""))
    except ImportError as e:
        rows.append(("SM scaling of a ResNet-50 conv at 4 SM counts", 10.0, float("nan"), f"not run: {e}"))
    print(f"{'what':<70} {'target':>8} {'measured':>10}  verdict")
    for what, bound, got, note in rows:
        verdict = "met" if got <= bound else "missed"
        print(f"{what:<70} {bound:>7.2f}s {got:>9.3f}s  {verdict}  {note}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": card.description["deviceName"], "rows": [dict(zip(("what", "bound_s", "seconds",
                       "note"), r)) for r in rows]}, f, indent=1)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
