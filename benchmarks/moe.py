"""MoE grouped GEMM: cuDNN's best plan against PyTorch, balanced and imbalanced, on this machine's GPU.

For each routing of the same tokens (balanced, Zipf-skewed, one hot expert, one-hot), ``cl.run`` runs every plan of
heuristic modes A and FALLBACK (checked against a float64 per-expert loop) and times PyTorch beside it: the eager
loop of one ``torch.matmul`` per expert, ``torch._grouped_mm`` where this PyTorch has it, and one dense GEMM of the
same FLOPs (all tokens through one weight), which is what the grouped GEMM would cost with no routing at all. The
table shows each one's median, TFLOP/s, and cuDNN's best over the dense GEMM (the price of grouping and imbalance).

Run on a GPU machine:  python benchmarks/moe.py [--json out.json] [--quick]
Without a GPU:         python benchmarks/moe.py --dry-run   (builds every graph up to inspect(), prints the problems)
"""

from __future__ import annotations

from typing import Any

import cudnn_lab as cl
from cudnn_lab.gpu.device import end_program
from _shared import device_line, fmt, table_args, write_json

#: 8 experts x 2048 tokens each on average, 2048 -> 2048 (the size GPU_FACTS.md first ran), routed four ways.
BASE = dict(experts=8, tokens=8 * 2048, hidden_in=2048, hidden_out=2048, dtype="bf16")
PROBLEMS: dict[str, dict[str, Any]] = {
    "balanced": dict(distribution="uniform"),
    "zipf 1.2": dict(distribution="zipf", skew=1.2),
    "zipf 2.0": dict(distribution="zipf", skew=2.0),
    "hot expert 50%": dict(distribution="hot", hot_share=0.5),
    "one-hot": dict(distribution="hot", hot_share=1.0),
}
QUICK = ("balanced", "zipf 1.2", "one-hot")


def _us(ms: Any) -> float | None:
    return float(ms) * 1e3 if isinstance(ms, (int, float)) and ms == ms else None


def _tflops(spec: cl.MoeSpec, us: float | None) -> float | None:
    return spec.flops() / (us * 1e-6) / 1e12 if us else None


def _run(spec: cl.MoeSpec) -> dict[str, Any]:
    """One all-plan run with PyTorch's baselines; the best plan's figures and each baseline's, or the reason."""
    try:
        r = cl.run(spec, plans="all", heuristics=("A", "FALLBACK"), baselines=True)
        best = r.best  # a pandas Series: one plan row
    except cl.CudnnLabError as e:
        return {"label": spec.label(), "error": str(e).splitlines()[0]}
    t = r.torch
    row = {"label": spec.label(), "counts": list(spec.expert_counts()), "imbalance": spec.imbalance(),
           "plans": len(r.plans), "ok": len(r.ok), "all_pass": bool(r.ok["pass_cudnn"].astype(bool).all()),
           "plan": best.get("plan"), "us": _us(best.get("median_ms")), "rel_l2": best.get("rel_l2"),
           "loop_us": _us(t.get("benchmark_off_ms")), "dense_us": _us(t.get("dense_gemm_ms")),
           "grouped_mm_us": _us(t.get("grouped_mm_ms")), "grouped_mm_error": t.get("grouped_mm_error"),
           "device": r.device.get("gpu"), "cudnn": r.device.get("cudnn_backend"), "driver": r.device.get("driver")}
    for key in ("us", "loop_us", "dense_us", "grouped_mm_us"):
        row[key.replace("us", "tflops")] = _tflops(spec, row[key])
    row["over_dense"] = row["us"] / row["dense_us"] if row["us"] and row["dense_us"] else None
    return row


def _print_row(name: str, row: dict[str, Any]) -> None:
    if "error" in row:
        print(f"{name:<15} cuDNN could not run it: {row['error']}", flush=True)
        return
    gmm = (f"{fmt(row['grouped_mm_us'], '8.1f')} us {fmt(row['grouped_mm_tflops'], '6.1f')} TF/s"
           if row["grouped_mm_us"] else f"n/a ({(row['grouped_mm_error'] or 'not in this PyTorch')[:40]})")
    print(f"{name:<15} imb {row['imbalance']:4.2f} | cuDNN {row['us']:8.1f} us {fmt(row['tflops'], '6.1f')} TF/s "
          f"({row['ok']}/{row['plans']} plans, all in band {row['all_pass']}, rel L2 {fmt(row['rel_l2'], '.1e')}) | "
          f"loop {fmt(row['loop_us'], '8.1f')} us | _grouped_mm {gmm} | dense GEMM "
          f"{fmt(row['dense_us'], '8.1f')} us {fmt(row['dense_tflops'], '6.1f')} TF/s | cuDNN/dense "
          f"{fmt(row['over_dense'], '.2f')}x", flush=True)


def dry_run(names: tuple[str, ...]) -> None:
    """Build each problem's real cuDNN graph (no GPU needed) and print its routing and FLOPs."""
    for name in names:
        spec = cl.MoeSpec(**BASE, **PROBLEMS[name])
        cl.build_graph(spec).inspect()
        print(f"{name:<15} {spec.label():<55} {spec.flops() / 1e9:8.1f} GFLOP  tokens per expert "
              f"{list(spec.expert_counts())}")


def main() -> None:
    args, names = table_args(__doc__, QUICK, PROBLEMS)
    if args.dry_run:
        dry_run(names)
        return
    rows = []
    for name in names:
        row = _run(cl.MoeSpec(**BASE, **PROBLEMS[name]))
        _print_row(name, row)
        rows.append({"problem": name, **row})
    first = next((r for r in rows if "device" in r), {})
    print(f"{device_line(first)}, driver {first.get('driver')}")
    write_json(args.json, {"base": BASE, "rows": rows}, default=str)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
