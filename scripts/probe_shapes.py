"""Ask this GPU's cuDNN which attention head sizes it runs (issue 38): for every head size 8..256 step 8, a few odd
ones (4, 12, 100, 264, 288) and MLA (Q/K 192, V/O 128), forward (training: O and Stats) and backward, fp16 and bf16,
build the kit's SDPA graph with the head size forced past SdpaSpec's own rule (so the answer is cuDNN's), then
validate + check_support + build one plan (heuristics A, then FALLBACK) and run it once against the kit's float64
reference. Prints a table (one row per case: plans, rel L2 of the main output, inside the 2e-2 band, or cuDNN's
refusal) and the rule the answers imply, and writes them as JSON.

Small problems (b1 h4 s128) so the whole probe takes well under 2 minutes on an H100/H200.

Run on a GPU machine:  python scripts/probe_shapes.py [--json out.json] [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import cudnn_lab as cl
from cudnn_lab.gpu.device import end_program

BASE = dict(batch=1, heads=4, seq_q=128, seq_kv=128, causal=True)
#: SDPA's band for fp16/bf16 (cuDNN's own SDPA tests: specs/sdpa_rules.HALF_BANDS).
BAND = 2e-2
ODD = (4, 12, 100, 264, 288)
#: ``--beyond``: forward head sizes past 256 (cuDNN 9.19 on an H200 ran 264 and 288 forward, 2026-11-29) and pairs
#: with one side past 256.
BEYOND = (264, 272, 280, 288, *range(304, 513, 16), 520, 576, 640, 768, 1024)
BEYOND_PAIRS = [(128, 512), (512, 128), (256, 512), (576, 512), (192, 256)]


def forced(spec: cl.SdpaSpec, **fields: Any) -> cl.SdpaSpec:
    """``spec`` with ``fields`` set without the spec's validation (the probe's question is cuDNN's)."""
    for k, v in fields.items():
        object.__setattr__(spec, k, v)
    return spec


def case_spec(d_qk: int, d_v: int, direction: str, dtype: str) -> cl.SdpaSpec:
    """The probe's problem at head sizes (d_qk, d_v), forced where SdpaSpec would refuse them."""
    spec = cl.SdpaSpec(**BASE, head_dim=64, direction=direction, dtype=dtype)  # type: ignore[arg-type]
    return forced(spec, head_dim=d_qk, head_dim_v=None if d_v == d_qk else d_v)


_HANDLE: list[Any] = []


def _handle() -> Any:
    """One cuDNN handle for the whole probe (creating one per case costs time)."""
    import cudnn

    if not _HANDLE:
        _HANDLE.append(cudnn.create_handle())
    return _HANDLE[0]


def ask(spec: cl.SdpaSpec) -> dict[str, Any]:
    """cuDNN's answer for ``spec``: plans proposed, then one plan built and run against float64 (rel L2 of the main
    output), or the refusal's first 300 characters and the step that refused."""
    import cudnn
    import torch

    from cudnn_lab.graph.build import build_pygraph
    from cudnn_lab.graph.families import recipe_for
    from cudnn_lab.reference import make_inputs, make_outputs, reference_outputs

    row: dict[str, Any] = {"plans": 0, "rel_l2": None, "inside": False, "step": "", "error": ""}
    step = "handle"
    try:
        handle = _handle()
        step = "build"
        g, tensors = build_pygraph(recipe_for(spec), handle)
        step = "validate"
        g.validate()
        g.build_operation_graph()
        step = "plans"
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        step = "check_support"
        g.check_support()
        row["plans"] = g.get_execution_plan_count()
        step = "build_plans"
        g.build_plans(cudnn.build_plan_policy.HEURISTICS_CHOICE)
        step = "run"
        inputs = make_inputs(spec, device="cuda")
        outputs = make_outputs(spec, device="cuda")
        pack = {tensors[n]: t for n, t in {**inputs, **outputs}.items() if n in tensors}
        ws = torch.empty(max(g.get_workspace_size(), 1), dtype=torch.uint8, device="cuda")
        g.execute(pack, ws, handle=handle)
        torch.cuda.synchronize()
        ref = reference_outputs(spec, inputs)
        errs = []
        for name, want in ref.items():
            got = outputs[name].double()
            errs.append(float(torch.linalg.vector_norm(got - want) / max(float(torch.linalg.vector_norm(want)),
                                                                           1e-30)))
        row["rel_l2"] = max(errs)
        row["inside"] = bool(row["rel_l2"] <= BAND)
    except Exception as e:  # noqa: BLE001 - the refusal is the answer
        row["step"] = step
        row["error"] = f"{type(e).__name__}: " + " ".join(str(e).split())[:300]
    return row


def implied_rule(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (direction, dtype): the head sizes that ran inside the band, and whether they are exactly the kit's rule
    (multiples of 8 up to 256)."""
    from cudnn_lab.specs.sdpa_rules import head_dim_ok

    out: dict[str, Any] = {}
    for r in rows:
        if r["d_qk"] != r["d_v"]:
            continue
        key = f"{r['direction']} {r['dtype']}"
        out.setdefault(key, {"ran": [], "refused": [], "outside_band": []})
        bucket = "ran" if r["inside"] else ("outside_band" if r["rel_l2"] is not None else "refused")
        out[key][bucket].append(r["d_qk"])
    for key, v in out.items():
        dtype = key.split()[1]
        tried = sorted(v["ran"] + v["refused"] + v["outside_band"])
        v["matches_kit_rule"] = all((d in v["ran"]) == head_dim_ok(dtype, d) for d in tried)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="probe_shapes.json", help="where to write the answers (JSON)")
    parser.add_argument("--quick", action="store_true", help="only 64, 72, 80, 96, 100, 264 and MLA")
    parser.add_argument("--beyond", action="store_true", help="the forward past 256 instead (inference and "
                        "training): 264-288 step 8, 304-512 step 16, 520, 576, 640, 768, 1024, and MLA pairs with a "
                        "side past 256 (DeepSeek's absorbed MLA is 576/512)")
    args = parser.parse_args()
    import cudnn
    import torch

    sizes = (64, 72, 80, 96, 100, 264) if args.quick else BEYOND if args.beyond else (*range(8, 257, 8), *ODD)
    pairs = [(d, d) for d in sizes] + (BEYOND_PAIRS if args.beyond else [(192, 128), (128, 64)])
    directions = ("fwd_inference", "fwd_training") if args.beyond else ("fwd_training", "bwd")
    t0 = time.perf_counter()
    rows = []
    print("| direction | dtype | d_qk | d_v | plans | rel L2 | inside | refusal |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for direction in directions:
        for dtype in ("fp16", "bf16"):
            for d_qk, d_v in pairs:
                row = {"direction": direction, "dtype": dtype, "d_qk": d_qk, "d_v": d_v,
                       **ask(case_spec(d_qk, d_v, direction, dtype))}
                rows.append(row)
                err = f"{row['step']}: {row['error'][:160]}" if row["error"] else ""
                rel = f"{row['rel_l2']:.2e}" if row["rel_l2"] is not None else ""
                print(f"| {direction} | {dtype} | {d_qk} | {d_v} | {row['plans']} | {rel} | {row['inside']} | {err} |",
                      flush=True)
    result = {"device": {"gpu": torch.cuda.get_device_name(), "cudnn": cudnn.backend_version(),
                         "frontend": getattr(cudnn, "__version__", "")},
              "seconds": round(time.perf_counter() - t0, 1), "problem": BASE, "band": BAND, "rows": rows,
              "rule": implied_rule(rows)}
    for key, v in result["rule"].items():
        print(f"{key}: ran {len(v['ran'])}, refused {v['refused']}, outside band {v['outside_band']}, "
              f"matches the kit's rule: {v['matches_kit_rule']}")
    print(result["device"], f"{result['seconds']} s")
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    end_program(main)  # exit 0 after the work, not an abort in the native teardown (gpu/device.py)
