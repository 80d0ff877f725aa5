"""Paged-cache decode: cuDNN's best plan reading K/V through block tables against PyTorch's best path, on this GPU.

Problems: Llama-3-70B decode (64 query heads, 8 K/V heads, head_dim 128, one query per sequence, bf16) over 8k and
32k-token caches in pages of 16, 64 and 256 tokens (shuffled over the pool, every sequence full). cuDNN: every plan of
modes A and FALLBACK, checked against float64, best median; beside it cuDNN's best plan on the same cache stored
contiguously (what paging costs inside cuDNN). PyTorch has no paged SDPA: its best path is SDPA on a
contiguous cache; we time it two ways, on a cache gathered once beforehand (what a server keeping a contiguous cache
pays) and gather + SDPA per call (what a paged server would pay), each with the fastest of PyTorch's SDPA backends
that runs it (flash, memory-efficient, cuDNN, math). All times with the kit's timer (CUDA-graph replay where capture
works). Ratios > 1: cuDNN's paged plan is faster.

Run on a GPU machine:  python benchmarks/paged_decode.py [--json out.json] [--quick]
"""

from __future__ import annotations

from typing import Any

import cudnn_lab as cl
from cudnn_lab.gpu.session import session
from cudnn_lab.gpu.timing import Timer, TimingOptions
from cudnn_lab.reference.sdpa_paged import gather_pages
from cudnn_lab.gpu.device import end_program
from _shared import finish, fmt, table_parser

LLAMA3_70B_DECODE = dict(heads=64, kv_heads=8, seq_q=1, head_dim=128, dtype="bf16", causal=True,
                         diagonal_alignment="bottom_right")
PROBLEMS = {f"b{b} kv{s // 1024}k page{p}": cl.SdpaSpec(batch=b, seq_kv=s, page_size=p, **LLAMA3_70B_DECODE)
            for b, s in ((16, 8192), (4, 32768)) for p in (16, 64, 256)}
QUICK = ("b16 kv8k page64", "b4 kv32k page64")


def torch_best(spec: cl.SdpaSpec, timer: Timer, inputs: dict[str, Any]) -> dict[str, Any]:
    """The fastest PyTorch SDPA backend on the gathered cache, and gather + that backend per call (ms each)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = inputs["Q"]
    k, v = (gather_pages(inputs[n], inputs[f"Page_table_{n}"], spec.seq_kv) for n in ("K", "V"))
    out: dict[str, Any] = {"backend": None, "sdpa_ms": None, "gather_sdpa_ms": None, "tried": {}}
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                    SDPBackend.MATH):
        def call(kk: Any = k, vv: Any = v, be: Any = backend) -> Any:
            with sdpa_kernel(be):  # every sequence is full and the one query sees all keys: no mask needed
                return F.scaled_dot_product_attention(q, kk, vv, scale=spec.scale, enable_gqa=True)
        try:
            with torch.cuda.stream(timer.stream):
                call()
            timer.stream.synchronize()
            ms = timer.time(call).median_ms
        except Exception as e:  # noqa: BLE001 - a backend that cannot take this problem: say why, go on
            out["tried"][backend.name] = " ".join(str(e).split())[:80]
            continue
        out["tried"][backend.name] = ms
        if out["sdpa_ms"] is None or ms < out["sdpa_ms"]:
            out["backend"], out["sdpa_ms"] = backend, ms
    if out["backend"] is not None:
        def gather_call() -> Any:
            kk, vv = (gather_pages(inputs[n], inputs[f"Page_table_{n}"], spec.seq_kv) for n in ("K", "V"))
            with sdpa_kernel(out["backend"]):
                return F.scaled_dot_product_attention(q, kk, vv, scale=spec.scale, enable_gqa=True)
        out["gather_sdpa_ms"] = timer.time(gather_call).median_ms
        out["backend"] = out["backend"].name
    return out


def main() -> None:
    args = table_parser(__doc__, QUICK, dry_run=False).parse_args()
    rows = []
    for name, spec in PROBLEMS.items():
        if args.quick and name not in QUICK:
            continue
        try:
            r = cl.run(spec, plans="all", heuristics=("A", "FALLBACK"), baselines=False, kernels=False)
        except cl.CudnnLabError as e:
            print(f"{name:<22} cuDNN could not run it: {str(e).splitlines()[0]}")
            continue
        best = r.best
        try:
            flat = cl.run(spec.replace(page_size=0), plans="all", heuristics=("A", "FALLBACK"), baselines=False,
                          kernels=False).best["median_ms"]
        except cl.CudnnLabError:
            flat = None
        sess = session(spec, ("A", "FALLBACK"))
        t = torch_best(spec, Timer(sess.stream, TimingOptions()), sess.inputs)
        cu = best["median_ms"]
        row = {"problem": name, "plans": len(r.plans), "cudnn_us": cu * 1e3, "pass": bool(best["pass_cudnn"]),
               "rel_l2": float(best["rel_l2"]), "cudnn_contiguous_us": flat * 1e3 if flat else None,
               "contiguous/paged": flat / cu if flat else None, "torch_backend": t["backend"],
               "torch_sdpa_us": t["sdpa_ms"] * 1e3 if t["sdpa_ms"] else None,
               "torch_gather_sdpa_us": t["gather_sdpa_ms"] * 1e3 if t["gather_sdpa_ms"] else None,
               "sdpa/cudnn": t["sdpa_ms"] / cu if t["sdpa_ms"] else None,
               "gather_sdpa/cudnn": t["gather_sdpa_ms"] / cu if t["gather_sdpa_ms"] else None,
               "kv_gb_per_s": 2 * spec.batch * spec.seq_kv * spec.h_kv * spec.head_dim * 2 / (cu * 1e-3) / 1e9,
               "torch_tried": {k: v for k, v in t["tried"].items()},
               "device": r.device["gpu"], "cudnn": r.device["cudnn_backend"]}
        rows.append(row)
        print(f"{name:<18} plans {row['plans']:>2} | cuDNN paged {row['cudnn_us']:8.1f} us (pass {row['pass']}, "
              f"{row['kv_gb_per_s']:6.0f} GB/s K+V) | cuDNN contiguous {fmt(row['cudnn_contiguous_us'], '8.1f')} us "
              f"| torch {row['torch_backend'] or 'n/a'} on gathered cache "
              f"{fmt(row['torch_sdpa_us'], '8.1f')} us x{fmt(row['sdpa/cudnn'], '.2f')} | gather+sdpa "
              f"{fmt(row['torch_gather_sdpa_us'], '8.1f')} us x{fmt(row['gather_sdpa/cudnn'], '.2f')}", flush=True)
    finish(rows, args.json)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
