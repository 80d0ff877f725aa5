"""Ask this GPU's cuDNN what it does with paged K/V caches and sink tokens beyond what SdpaSpec offers: each case is
an SdpaSpec's graph with one field forced past the spec's own rule (so the question is cuDNN's, not the kit's),
planned with heuristics A and FALLBACK: plans, or cuDNN's refusal. Then the sink's convention: the heuristic's pick
against the kit's float64 reference (sink logit compared with the scaled scores) at attn_scale 1 and the default.

With ``--runs``: instead, every plan of a sink prefill over a paged cache (status, error, rel L2 per plan) and the
first and repeated all-plan run times of the recorded problems (scripts/record.py) with a paged cache or sinks.

Run on a GPU machine:  python scripts/probe_paged_sink.py [--json out.json] [--runs]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import cudnn_lab as cl
from cudnn_lab.gpu.device import end_program

BASE = dict(batch=2, heads=8, seq_q=64, seq_kv=512, head_dim=128, dtype="bf16", causal=True,
            diagonal_alignment="bottom_right")


def forced(spec: cl.SdpaSpec, **fields: Any) -> cl.SdpaSpec:
    """``spec`` with ``fields`` set without the spec's validation (a probe's question only)."""
    for k, v in fields.items():
        object.__setattr__(spec, k, v)
    return spec


def ask(spec: cl.SdpaSpec) -> dict[str, Any]:
    """Plans cuDNN proposes and builds for ``spec``'s graph, or its refusal (first lines)."""
    import cudnn

    from cudnn_lab.graph.build import build_pygraph
    from cudnn_lab.graph.families import recipe_for

    handle = cudnn.create_handle()
    try:
        g, _ = build_pygraph(recipe_for(spec), handle)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        return {"plans": g.get_execution_plan_count(), "error": ""}
    except Exception as e:  # noqa: BLE001 - the refusal is the answer
        return {"plans": 0, "error": f"{type(e).__name__}: " + " ".join(str(e).split())[:300]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the answers to this JSON file")
    parser.add_argument("--runs", action="store_true", help="plans of sink + paged, and the recorded problems' times")
    args = parser.parse_args()
    if args.runs:
        return runs(args.json)
    cases = {
        "sink decode (seq_q=1)": forced(cl.SdpaSpec(**{**BASE, "seq_q": 2}, sink=True), seq_q=1),
        "sink decode, no causal": forced(cl.SdpaSpec(**{**BASE, "seq_q": 2, "causal": False}, sink=True), seq_q=1),
        "sink backward": forced(cl.SdpaSpec(**BASE, sink=True), direction="bwd"),
        "paged page 48 (not a power of 2)": cl.SdpaSpec(**{**BASE, "seq_kv": 480}, page_size=48),
        "paged page 8": cl.SdpaSpec(**BASE, page_size=8),
        "paged page 512": cl.SdpaSpec(**BASE, page_size=512),
        "paged + bias tensor": forced(cl.SdpaSpec(**BASE, page_size=64), bias="tensor"),
        "paged + alibi": forced(cl.SdpaSpec(**BASE, page_size=64), bias="alibi", diagonal_alignment="top_left"),
        "paged, no causal": cl.SdpaSpec(**{**BASE, "causal": False}, page_size=64),
        "paged + sink decode": forced(cl.SdpaSpec(**{**BASE, "seq_q": 2}, sink=True, page_size=64), seq_q=1),
        "paged fp16 head_dim 64": cl.SdpaSpec(**{**BASE, "head_dim": 64, "dtype": "fp16"}, page_size=64),
    }
    out: dict[str, Any] = {}
    for name, spec in cases.items():
        out[name] = ask(spec)
        print(f"| {name} | {out[name]['plans']} | {out[name]['error'][:200]} |", flush=True)
    for scale in (1.0, None):
        spec = cl.SdpaSpec(batch=2, heads=8, seq_q=256, seq_kv=256, head_dim=64, dtype="bf16", causal=True,
                           sink=True, attn_scale=scale)
        try:
            pick = cl.run(spec, plans="heuristic", baselines=False, roofline=False, kernels=False).heuristic_pick
            row = {"rel_l2": float(pick["rel_l2"]), "pass_cudnn": bool(pick["pass_cudnn"]), "status": pick["status"]}
        except cl.CudnnLabError as e:
            row = {"error": str(e).splitlines()[0]}
        out[f"sink convention attn_scale={scale}"] = row
        print(f"sink convention attn_scale={scale}: {row}", flush=True)
    import cudnn
    import torch

    out["device"] = {"gpu": torch.cuda.get_device_name(), "cudnn": cudnn.backend_version()}
    print(out["device"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


def runs(json_path: str | None) -> None:
    """Every plan of a sink prefill over a paged cache; first and repeated run times of the recorded problems."""
    out: dict[str, Any] = {}
    spec = cl.SdpaSpec(batch=2, heads=8, seq_q=128, seq_kv=1024, head_dim=128, dtype="bf16", causal=True,
                       diagonal_alignment="bottom_right", sink=True, page_size=64)
    for name, s in (("sink+paged", spec), ("sink+paged, no causal", spec.replace(causal=False)),
                    ("sink+paged, top-left", spec.replace(diagonal_alignment="top_left"))):
        try:
            plans = cl.run(s, plans="all", baselines=False, roofline=False, kernels=False).plans
            cols = [c for c in ("plan", "status", "error", "rel_l2", "nan_count", "pass_cudnn") if c in plans]
            out[name] = plans[cols].astype(str).to_dict("records")
            print(name, "\n", plans[cols].to_string(max_colwidth=200), flush=True)
        except cl.CudnnLabError as e:
            out[name] = str(e)
            print(name, ":", " ".join(str(e).split())[:400], flush=True)
    sys.path.insert(0, str(Path(__file__).parent))
    from record import PROBLEMS

    for name in ("sdpa_paged_decode_bf16", "sdpa_sink_bf16"):
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            r = cl.run(PROBLEMS[name], plans="all")
            times.append(round(time.perf_counter() - t0, 2))
        best = r.best
        out[name] = {"s": times, "plans": len(r.plans), "best_us": float(best["median_ms"]) * 1e3,
                     "rel_l2": float(best["rel_l2"]), "torch_us": (r.torch.get("benchmark_off_ms") or 0) * 1e3}
        print(name, out[name], flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
