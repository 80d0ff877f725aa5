"""FP8 against bf16 for the same GEMM, convolution and attention sizes, on this machine's GPU.

For each problem, the bf16 twin and the FP8 (e4m3) version each run every plan of heuristic modes A and FALLBACK
(``cl.run``, checked against float64); the table shows per dtype: the best plan's median, TFLOP/s, % of the
measured bf16 and FP8 ceilings (a large torch.matmul and torch._scaled_mm), % of the datasheet's dense peak, the
FP8 speed-up, the error against float64 (the kernel's, against a reference from the same FP8 values; the
quantization's alone: in the inputs, and in the output as float64 from the FP8 values vs from the float data), and
PyTorch beside it: torch._scaled_mm for the FP8
GEMM, torch.matmul / conv2d / scaled_dot_product_attention for bf16 (PyTorch has no FP8 conv or attention op).

Run on a GPU machine:  python benchmarks/fp8.py [--json out.json] [--quick]
Without a GPU:         python benchmarks/fp8.py --dry-run   (builds every graph up to inspect(), prints the problems)
"""

from __future__ import annotations

from typing import Any

import cudnn_lab as cl
from cudnn_lab.gpu.device import end_program
from _shared import device_line, fmt, table_args, write_json

#: Datasheet dense peaks shared by H100 SXM and H200 (same GH100 compute), TFLOP/s; see ../shared/REFERENCES.md.
DATASHEET_TFLOPS = {"bf16": 989.0, "fp8": 1979.0}

FP8 = "fp8_e4m3"


def _gemm(m: int, n: int, k: int, dtype: str) -> cl.MatmulSpec:
    # Both twins are TN (A row-major, B column-major: K contiguous in both), the layout FP8 requires, so the
    # comparison is of dtypes, not of layouts.
    extra: dict[str, Any] = {"out_dtype": "bf16", "amax": False} if dtype == FP8 else {}
    return cl.MatmulSpec(m=m, n=n, k=k, dtype=dtype, transpose_b=True, **extra)


def _conv(n: int, c: int, hw: int, k: int, r: int, dtype: str, out_dtype: str = "bf16") -> cl.ConvSpec:
    extra: dict[str, Any] = {"out_dtype": out_dtype} if dtype == FP8 else {}
    return cl.ConvSpec(n=n, c=c, h=hw, w=hw, k=k, r=r, s=r, padding=r // 2, layout="NHWC", dtype=dtype, **extra)


def _sdpa(b: int, h: int, s: int, d: int, causal: bool, dtype: str) -> cl.SdpaSpec:
    # On Hopper, FP8 attention writes an FP8 O (fp16/bf16 O needs Blackwell and cuDNN 9.13).
    extra: dict[str, Any] = {"out_dtype": FP8} if dtype == FP8 else {}
    return cl.SdpaSpec(batch=b, heads=h, seq_q=s, seq_kv=s, head_dim=d, causal=causal, dtype=dtype, **extra)


#: name -> (builder, arguments without the dtype)
PROBLEMS: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "GEMM 4096^3": (_gemm, (4096, 4096, 4096)),
    "GEMM 8192^3": (_gemm, (8192, 8192, 8192)),
    "Llama-3-8B MLP up 8192x14336x4096": (_gemm, (8192, 14336, 4096)),
    "BERT-large FFN 4096x4096x1024": (_gemm, (4096, 4096, 1024)),
    "conv rn50 3x3 28px 256->256": (_conv, (32, 256, 28, 256, 3)),
    "conv rn50 1x1 56px 256->64": (_conv, (32, 256, 56, 64, 1)),
    "attention b4 h16 s4096 d128 causal": (_sdpa, (4, 16, 4096, 128, True)),
    "attention b8 h16 s2048 d128": (_sdpa, (8, 16, 2048, 128, False)),
}
QUICK = ("GEMM 4096^3", "conv rn50 3x3 28px 256->256", "attention b8 h16 s2048 d128")


def _quantization(result: Any) -> tuple[float | None, float | None]:
    """(largest quantization error over the FP8 inputs, the error quantizing alone causes in the output), from the
    run's ``settings["quantization"]``; (None, None) for bf16."""
    q = result.settings.get("quantization") or {}
    vals = [v.get("rel_l2") for v in q.values() if isinstance(v, dict) and v.get("rel_l2") is not None]
    return (max(vals) if vals else None), q.get("output_rel_l2")


def _torch_name(spec: cl.Spec) -> str:
    fp8 = getattr(spec, "fp8", False)
    return {"matmul": "torch._scaled_mm" if fp8 else "torch.matmul", "conv": "conv2d",
            "sdpa": "F.scaled_dot_product_attention"}[spec.op]


def _run(spec: cl.Spec) -> dict[str, Any]:
    """One all-plan run; the best plan's figures and PyTorch's, or the reason it could not run."""
    try:
        r = cl.run(spec, plans="all", heuristics=("A", "FALLBACK"))
        best = r.best  # a pandas Series: one plan row
    except cl.CudnnLabError as e:
        return {"label": spec.label(), "error": str(e).splitlines()[0]}
    torch_ms = r.torch.get("benchmark_off_ms")
    get = best.get
    quant_in, quant_out = _quantization(r)
    return {"label": spec.label(), "plans": len(r.plans), "plan": get("plan"), "us": get("median_ms") * 1e3,
            "tflops": get("tflops"), "kernel_rel_l2": get("rel_l2"), "pass": bool(get("pass_cudnn")),
            "quant_rel_l2": quant_in, "quant_out_rel_l2": quant_out,
            "torch_us": torch_ms * 1e3 if torch_ms else None, "torch_op": _torch_name(spec),
            "torch_error": (r.torch.get("benchmark_off_error") or "")[:60],
            "device": r.device.get("gpu"), "cudnn": r.device.get("cudnn_backend"), "driver": r.device.get("driver"),
            "cuda": r.device.get("cuda")}


def _ceilings() -> dict[str, Any]:
    from cudnn_lab.gpu.ceilings import measure_ceilings

    return {"bf16": measure_ceilings("bf16").to_dict(), "fp8": measure_ceilings(FP8).to_dict()}


def _pct(tflops: float | None, roof: float | None) -> float | None:
    return 100 * tflops / roof if tflops and roof else None


def _print_row(name: str, kind: str, row: dict[str, Any], roofs: dict[str, Any]) -> None:
    if "error" in row:
        print(f"{name:<38} {kind:<5} cuDNN could not run it: {row['error']}", flush=True)
        return
    t = row["tflops"]
    print(f"{name:<38} {kind:<5} {row['us']:10.1f} us {fmt(t, '8.1f')} TF/s "
          f"{fmt(_pct(t, roofs['fp8']['tflops']), '5.1f')}% fp8roof {fmt(_pct(t, roofs['bf16']['tflops']), '5.1f')}%"
          f" bf16roof {fmt(_pct(t, DATASHEET_TFLOPS[kind]), '5.1f')}% sheet | err kernel "
          f"{fmt(row['kernel_rel_l2'], '.1e')} pass {row['pass']}, quantization: inputs "
          f"{fmt(row['quant_rel_l2'], '.1e')} output {fmt(row['quant_out_rel_l2'], '.1e')} | "
          f"{row['torch_op']} {fmt(row['torch_us'], '.1f')} us {row['torch_error']}", flush=True)


def dry_run(names: tuple[str, ...]) -> None:
    """Build each twin's real cuDNN graph (no GPU needed) and print the problems and their FLOPs."""
    from cudnn_lab.graph.render import dtype_name

    for name in names:
        make, args = PROBLEMS[name]
        for dtype in ("bf16", FP8):
            spec = make(*args, dtype)
            g = cl.build_graph(spec)
            dtypes = sorted({dtype_name(t["dtype"]) for t in g.inspect()["tensors"].values()} - {"None"})
            print(f"{name:<38} {spec.label():<60} {spec.flops() / 1e9:10.1f} GFLOP  tensors: {', '.join(dtypes)}")


def main() -> None:
    args, names = table_args(__doc__, QUICK, PROBLEMS)
    if args.dry_run:
        dry_run(names)
        return
    roofs = _ceilings()
    print(f"ceilings: bf16 {roofs['bf16']['tflops']:.0f} TFLOP/s, fp8 {roofs['fp8']['tflops']:.0f} TFLOP/s "
          f"(measured); datasheet dense bf16 {DATASHEET_TFLOPS['bf16']:.0f}, fp8 {DATASHEET_TFLOPS['fp8']:.0f}")
    rows = []
    for name in names:
        make, pargs = PROBLEMS[name]
        pair = {"bf16": _run(make(*pargs, "bf16")), "fp8": _run(make(*pargs, FP8))}
        if name.startswith("conv") and "error" in pair["fp8"]:  # an fp16 output is what the first probe ran
            pair["fp8"] = {**_run(make(*pargs, FP8, "fp16")), "note": "fp16 output (bf16 output refused)"}
        for kind in ("bf16", "fp8"):
            _print_row(name, kind, pair[kind], roofs)
        a, b = pair["bf16"].get("us"), pair["fp8"].get("us")
        speedup = a / b if a and b else None
        print(f"{'':<38} FP8 speed-up over bf16: {fmt(speedup, '.2f')}x", flush=True)
        rows.append({"problem": name, "bf16": pair["bf16"], "fp8": pair["fp8"], "speedup": speedup})
    if rows:
        first = next((r[k] for r in rows for k in ("bf16", "fp8") if "device" in r[k]), {})
        print(device_line(first))
    write_json(args.json, {"ceilings": roofs, "datasheet_tflops": DATASHEET_TFLOPS, "rows": rows})


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
