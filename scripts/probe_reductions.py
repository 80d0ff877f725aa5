"""Ask this GPU's cuDNN, through ``cl.run``, about the fusion specs of issue 28 (conv + reduction, conv +
concatenate in place, conv_dgrad + relu_backward) and the standalone reduction family: per spec, plans proposed, how
many ran, whether every plan that ran is inside cuDNN's band, NaNs left (elements never written), the best median,
or cuDNN's refusal with its per-engine reasons (``why_not``). One JSON line per spec to stdout and to ``--json``.

Run on a GPU machine:  python scripts/probe_reductions.py [--json out.json] [--budget-s 140]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import cudnn_lab as cl
from cudnn_lab.gpu.device import end_program

SMALL = dict(n=8, c=64, h=28, w=28, k=64)
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.02)


def specs() -> list[cl.Spec]:
    """The questions, most important first (a budget cut leaves the last unasked)."""
    out: list[cl.Spec] = [
        cl.ConvReductionSpec(**SMALL), cl.ConvReductionSpec(**SMALL, axes="nhw"),
        cl.ConvReductionSpec(**SMALL, mode="max"), cl.ConvReductionSpec(**SMALL, mode="max", axes="nhw"),
        cl.ConvConcatSpec(**SMALL, k0=64), cl.ConvConcatSpec(**SMALL, k0=32),
        cl.ConvDgradReluSpec(**SMALL), cl.ConvDgradReluSpec(**SMALL, dtype="bf16"),
        cl.ReductionSpec(), cl.ReductionSpec(layout="NCHW"),
        cl.ConvReductionSpec(**SMALL, dtype="bf16"), cl.ConvConcatSpec(**SMALL, dtype="bf16"),
        cl.ConvDgradReluSpec(n=8, c=64, h=28, w=28, k=128, stride=2),
    ]
    out += [cl.ReductionSpec(axes=a) for a in ("c", "hw", "chw", "nchw")]
    out += [cl.ReductionSpec(mode=m) for m in ("max", "min", "amax", "mul", "avg", "norm1", "norm2", "mul_no_zeros")]
    out += [cl.ReductionSpec(dtype="fp32"), cl.ReductionSpec(layout="NCHW", axes="c")]
    return out


def ask(spec: cl.Spec) -> dict[str, Any]:
    """One spec's answer: from its plan table, or from the error cuDNN's refusal became."""
    from cudnn_lab.gpu.reasons import read_reasons

    row: dict[str, Any] = {"spec": spec.to_dict(), "label": spec.label()}
    t0 = time.perf_counter()
    try:
        r = cl.run(spec, **QUICK)
        p = r.plans
        ok = p[p["status"] == "ok"]
        row.update(plans=len(p), ok=len(ok), all_pass_cudnn=bool(ok["pass_cudnn"].all()) if len(ok) else None,
                   any_pass_cudnn=bool(ok["pass_cudnn"].any()) if len(ok) else None,
                   nan_max=int(ok["nan_count"].max()) if len(ok) else None,
                   rel_l2_max=float(ok["rel_l2"].max()) if len(ok) else None,
                   best_ms=float(ok["median_ms"].min()) if len(ok) else None,
                   engines=sorted({int(e) for e in p["engine_id"].dropna()}),
                   errors=sorted({str(e)[:160] for e in p["error"].dropna() if e})[:3], device=str(r.device)[:80])
    except Exception as e:  # noqa: BLE001 - cuDNN's answer is the result
        detail = getattr(e, "detail", "") or ""
        reasons = sorted({x.reason for x in read_reasons(detail)})[:6]
        row.update(error_type=type(e).__name__, summary=str(getattr(e, "summary", str(e)))[:600], reasons=reasons)
        if not reasons:  # no per-engine blocks: what cuDNN said instead
            row["detail_head"] = " ".join(detail.split())[:400]
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the rows to this JSON file (rewritten after each spec)")
    parser.add_argument("--budget-s", type=float, default=140.0, help="stop asking after this many seconds")
    args = parser.parse_args()
    start, rows = time.perf_counter(), []
    for spec in specs():
        if time.perf_counter() - start > args.budget_s:
            print(json.dumps({"skipped": spec.label()}), flush=True)
            continue
        row = ask(spec)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "spec"}), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
