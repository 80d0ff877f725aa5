"""Fused cuDNN graphs against PyTorch eager's separate ops and torch.compile, on this machine's GPU.

For each pattern: the best cuDNN plan (all plans of modes A and FALLBACK, checked against float64), PyTorch eager
(one kernel per op, cudnn.benchmark off) and torch.compile of the same eager function (default mode), all timed with
the kit's timer (CUDA-graph replay where capture works); the ratios eager/cuDNN and compile/cuDNN (> 1: the fused
cuDNN graph is faster). Besides epilogues: conv + batch-norm statistics (genstats; eager: conv, then sum and sum of
squares per channel) and the BN-ReLU prologue before a conv (eager: x * scale + bias, relu, conv).

Run on a GPU machine:  python benchmarks/fusion.py [--json out.json]
"""

from __future__ import annotations

import cudnn_lab as cl
from cudnn_lab.gpu.session import session
from cudnn_lab.gpu.timing import Timer, TimingOptions
from cudnn_lab.reference import torch_op
from cudnn_lab.gpu.device import end_program
from _shared import finish, fmt, parser

CONV = dict(n=32, c=128, h=28, w=28, k=128, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
#: The fusion specs are NHWC by construction.
FUSION_CONV = {k: v for k, v in CONV.items() if k != "layout"}
PATTERNS = {
    "conv+bias+relu": cl.ConvSpec(**CONV, epilogue=("bias", "relu")),
    "conv+scale+bias+relu (folded BN)": cl.ConvSpec(**CONV, epilogue=("scale", "bias", "relu")),
    "conv+residual add+relu": cl.ConvSpec(**CONV, epilogue=("add", "relu")),
    "matmul+bias+gelu": cl.MatmulSpec(m=4096, n=3072, k=768, dtype="bf16", epilogue=("bias", "gelu")),
    "layernorm+residual add": cl.NormSpec(kind="layernorm", phase="inference", rows=8192, features=1024,
                                          dtype="bf16", residual=True),
    # Fusion beyond epilogues (issue 16): statistics after the conv, a pointwise prologue before it.
    "conv+genstats (BN statistics)": cl.ConvGenstatsSpec(**FUSION_CONV),
    "BN-ReLU prologue->conv": cl.ConvPrologueSpec(**FUSION_CONV, param_dtype="fp32"),
    # 9.19 runs the prologue with genstats only with fp16 scale and bias (docs/FINDINGS.md)
    "BN-ReLU prologue->conv+genstats": cl.ConvPrologueSpec(**FUSION_CONV, param_dtype="fp16", genstats=True),
}


def compiled_ms(spec: cl.Spec) -> tuple[float | None, str]:
    """torch.compile of the eager function on the run's own inputs; None with the reason where it fails."""
    import torch

    sess = session(spec, ("A", "FALLBACK"))
    eager = torch_op(spec, sess.inputs)
    try:
        fn = torch.compile(eager)
        with torch.cuda.stream(sess.stream):
            fn()
        sess.stream.synchronize()
        return Timer(sess.stream, TimingOptions()).time(fn).median_ms, ""
    except Exception as e:  # noqa: BLE001 - compile may be unavailable (no triton, old GPU): say so
        return None, " ".join(str(e).split())[:120]


def main() -> None:
    args = parser(__doc__).parse_args()
    rows = []
    for name, spec in PATTERNS.items():
        try:
            r = cl.run(spec, plans="all", heuristics=("A", "FALLBACK"))
        except cl.CudnnLabError as e:
            print(f"{name:<34} cuDNN could not run it: {str(e).splitlines()[0]}")
            continue
        best = r.best
        eager = r.torch.get("benchmark_off_ms")
        comp, why = compiled_ms(spec)
        row = {"pattern": name, "plans": len(r.plans), "cudnn_us": best["median_ms"] * 1e3,
               "pass": bool(best["pass_cudnn"]), "eager_us": eager * 1e3 if eager else None,
               "compile_us": comp * 1e3 if comp else None, "eager/cudnn": eager / best["median_ms"] if eager else None,
               "compile/cudnn": comp / best["median_ms"] if comp else None, "compile_error": why,
               "device": r.device["gpu"], "cudnn": r.device["cudnn_backend"]}
        rows.append(row)
        print(f"{name:<34} plans {row['plans']:>3} | cuDNN best {row['cudnn_us']:8.1f} us (pass {row['pass']}) | "
              f"eager {fmt(row['eager_us'], '8.1f')} us x{fmt(row['eager/cudnn'], '.2f')} | torch.compile "
              f"{fmt(row['compile_us'], '8.1f')} us x{fmt(row['compile/cudnn'], '.2f')} {why}", flush=True)
    finish(rows, args.json)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
