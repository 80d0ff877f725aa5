"""The kit against NVIDIA's own numbers (issue 35, item 3): NVIDIA's published H200 attention configurations run
with the kit, the heuristics' pick only, beside NVIDIA's times.

The rows come from the shipped cudnn-frontend CSV for the H200 (``cudnn_lab/data/forecast/published/``, checked
on read by ``whatif.published``): Llama 3.1 shapes (batch 2, 64 query heads, 8 KV heads, head dim 128) at the
published sequence lengths, causal (``top_left``) and not, forward and backward in bf16, and the fp8 forward.
Rows NVIDIA timed with ``deterministic_bwd=True`` are left out (the kit's SdpaSpec has no deterministic switch);
so are the fp8 backward rows (the brief asks for fp8 forward only). NVIDIA ran cuDNN 9.27 through frontend 1.31 on
2026-09-28 (their README: median of the kernels' device time, warm L2, heuristic modes A then FALLBACK, first
plan); the kit here runs whatever cuDNN is installed (9.19 at the time of writing; read from the run), heuristic
modes A and FALLBACK, the first plan that builds, timed by the kit's default (CUDA-graph replay; one call per
replay at these sizes, so the kernel time). Their forward is a training forward (it feeds the backward), so the
kit runs ``direction='fwd_training'`` (Stats written).

Run on a GPU host:  python benchmarks/published_attention.py [--quick] [--json out.json] [--budget-s S]
Without a GPU it says so in one sentence and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

import cudnn_lab as cl
from cudnn_lab.whatif.published import PublishedRow, load_published
from cudnn_lab.gpu.device import end_program

#: Within this share of NVIDIA's time counts as agreeing.
AGREE = 0.10
#: The --quick subset: (dtype, seq, pass, mask); fwd and bwd, causal and not, the smallest and largest seq.
QUICK = (("bfloat16", 2048, "fwd", "no_mask"), ("bfloat16", 2048, "bwd", "top_left"),
         ("bfloat16", 8192, "fwd", "top_left"), ("bfloat16", 8192, "bwd", "no_mask"),
         ("bfloat16", 32768, "fwd", "no_mask"), ("bfloat16", 32768, "bwd", "top_left"))
#: --quick starts no row after this many seconds unless --budget-s says otherwise (the whole run stays under 3 min).
QUICK_BUDGET_S = 120.0
#: NVIDIA's provenance of the H200 file (also in provenance.json): what the kit's numbers are set beside.
NVIDIA = "cuDNN 9.27.0, cudnn-frontend 1.31.0, 2026-09-28"


@dataclass(frozen=True)
class Case:
    """One published H200 row and the kit spec that asks the same problem."""

    row: PublishedRow
    spec: Any

    @property
    def config(self) -> str:
        """A short name: dtype, pass, mask and sequence length."""
        r = self.row
        mask = "causal" if r.attn_mask == "top_left" else "full"
        return f"{'bf16' if r.data_type == 'bfloat16' else 'fp8'} {r.pass_} {mask} s{r.seq_q}"


def spec_of(row: PublishedRow) -> Any:
    """The kit's SdpaSpec for a published row (BSHD, as NVIDIA's benchmark lays Q, K, V out)."""
    return cl.SdpaSpec(batch=row.batch, heads=row.heads_q, kv_heads=row.heads_kv, seq_q=row.seq_q,
                       seq_kv=row.seq_kv, head_dim=row.head_dim, causal=row.attn_mask == "top_left",
                       dtype="bf16" if row.data_type == "bfloat16" else "fp8_e4m3",
                       direction="bwd" if row.pass_ == "bwd" else "fwd_training", layout="BSHD")


def cases(quick: bool = False) -> list[Case]:
    """The H200 rows this benchmark runs (smallest first), each with its spec; ``quick``: the QUICK subset."""
    rows = [r for r in load_published() if r.gpu == "h200" and r.phase == "training" and not r.deterministic
            and (r.data_type == "bfloat16" or r.pass_ == "fwd")]
    if quick:
        rows = [r for r in rows if (r.data_type, r.seq_q, r.pass_, r.attn_mask) in QUICK]
    rows.sort(key=lambda r: (r.seq_q, r.data_type != "bfloat16", r.pass_ != "fwd", r.attn_mask))
    return [Case(r, spec_of(r)) for r in rows]


def options(quick: bool) -> Any:
    """Quick run options: the pick only, no check, baselines, roofline, kernels or notes; few samples."""
    return cl.RunOptions(plans="heuristic", heuristics=("A", "FALLBACK"), check=False, baselines=False,
                         roofline=False, kernels=False, notes=False, parallel_builds=False, warmup=1,
                         min_samples=3 if quick else 5, max_samples=20, time_cap_s=0.3 if quick else 1.0)


def cudnn_version(result: Any) -> str:
    """The cuDNN the kit ran (from the run's device record, else cudnn.backend_version())."""
    raw = result.device.get("cudnn_backend", result.device.get("cudnn")) if result is not None else None
    if raw is None:
        try:
            import cudnn

            raw = cudnn.backend_version()
        except Exception:  # noqa: BLE001 - a version we cannot read is named unknown, not fatal
            return "unknown"
    try:
        n = int(raw)
        return f"{n // 10000}.{n % 10000 // 100}.{n % 100}"
    except (TypeError, ValueError):
        return str(raw)


def run_case(case: Case, opts: Any) -> dict[str, Any]:
    """One row run with the kit: NVIDIA's time, the kit's pick and median, their ratio and the verdict."""
    out: dict[str, Any] = {"config": case.config, "spec": case.spec.to_dict(), "nvidia_ms": case.row.time_ms,
                           "nvidia_file": case.row.file, "nvidia_row": case.row.row}
    t0 = time.perf_counter()
    try:
        result = cl.run(case.spec, opts)
        pick = result.heuristic_pick
        kit_ms = float(pick["median_ms"])
        out.update(kit_ms=kit_ms, plan=str(pick["plan"]), ratio=kit_ms / case.row.time_ms,
                   within=abs(kit_ms / case.row.time_ms - 1.0) <= AGREE, gpu=result.device.get("gpu"),
                   kit_cudnn=cudnn_version(result))
    except cl.NoGPUError:
        raise
    except Exception as exc:  # noqa: BLE001 - one row's failure is reported in the table, the others still run
        out.update(kit_ms=None, ratio=None, within=None, error=f"{type(exc).__name__}: {exc}"[:300])
    out["wall_s"] = time.perf_counter() - t0
    return out


def table(rows: list[dict[str, Any]], kit_cudnn: str) -> str:
    """The printed table: config, NVIDIA ms, kit ms, ratio, within 10% yes/no."""
    lines = [f"NVIDIA: {NVIDIA} (H200)    kit: cuDNN {kit_cudnn} here",
             f"{'config':<24} {'NVIDIA ms':>10} {'kit ms':>10} {'kit/NV':>7}  within {AGREE:.0%}  plan"]
    for r in rows:
        if r.get("kit_ms") is None:
            lines.append(f"{r['config']:<24} {r['nvidia_ms']:>10.3f} {'-':>10} {'-':>7}  {'-':<10}  "
                         f"{r.get('error') or r.get('skipped', '')}")
            continue
        lines.append(f"{r['config']:<24} {r['nvidia_ms']:>10.3f} {r['kit_ms']:>10.3f} {r['ratio']:>7.3f}  "
                     f"{'yes' if r['within'] else 'no':<10}  {r['plan']}")
    ran = [r for r in rows if r.get("kit_ms") is not None]
    agree = sum(1 for r in ran if r["within"])
    lines.append(f"{agree} of {len(ran)} rows that ran within {AGREE:.0%} of NVIDIA's time; {len(rows) - len(ran)} "
                 "not run")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the rows (GPU needed: exit 2 without one), print the table, write --json; 0 once done."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a subset of 6 rows (fwd/bwd, causal/not, s2048..s32768)")
    ap.add_argument("--json", help="write the rows and versions to this file")
    ap.add_argument("--budget-s", type=float, default=None,
                    help=f"start no row after this many seconds (0: no limit; --quick: {QUICK_BUDGET_S:g} by default)")
    ap.add_argument("--list", action="store_true", help="list the rows it would run and exit (no GPU needed)")
    args = ap.parse_args(argv)
    todo = cases(args.quick)
    if args.list:
        for c in todo:
            print(f"{c.config:<24} NVIDIA {c.row.time_ms:.3f} ms  {c.spec.label()}")
        return 0
    from cudnn_lab.gpu.session import require_gpu

    try:
        require_gpu(0)
    except cl.NoGPUError:
        print("published_attention.py: needs a CUDA GPU (an H200, to compare like with like), and PyTorch sees "
              "none here.", file=sys.stderr)
        return 2
    opts = options(args.quick)
    budget = args.budget_s if args.budget_s is not None else (QUICK_BUDGET_S if args.quick else 0.0)
    start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for case in todo:
        if budget and time.perf_counter() - start > budget:
            rows.append({"config": case.config, "nvidia_ms": case.row.time_ms, "kit_ms": None, "ratio": None,
                         "within": None, "skipped": f"not started: past the budget of {budget:g} s"})
            continue
        rows.append(run_case(case, opts))
        r = rows[-1]
        print(f"  {r['config']}: " + (f"{r['kit_ms']:.3f} ms (NVIDIA {r['nvidia_ms']:.3f})" if r.get("kit_ms")
                                      else r.get("error", "")) + f" [{r['wall_s']:.1f} s]", flush=True)
    kit_cudnn = next((r["kit_cudnn"] for r in rows if r.get("kit_cudnn")), cudnn_version(None))
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "unknown")
    print(f"GPU here: {gpu}")
    print(table(rows, kit_cudnn))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"nvidia": NVIDIA, "kit_cudnn": kit_cudnn, "gpu": gpu, "quick": args.quick,
                       "agree_within": AGREE, "wall_s": time.perf_counter() - start, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
