"""Quick GPU exploration used while developing: which small graphs build, how many plans, first errors."""

import json
import sys
import time
import traceback

import cudnn_lab as cl

cases = {
    "conv fp16 nhwc c3": cl.ConvSpec(n=2, c=3, h=32, w=32, k=16, dtype="fp16"),
    "conv grouped": cl.ConvSpec(n=2, c=32, h=16, w=16, k=32, groups=4, dtype="fp16"),
    "conv depthwise": cl.ConvSpec(n=2, c=32, h=16, w=16, k=32, groups=32, dtype="fp16"),
    "conv dil2 str2 bf16 nchw": cl.ConvSpec(n=2, c=16, h=33, w=33, k=16, dilation=2, stride=2, padding=2,
                                            layout="NCHW", dtype="bf16"),
    "conv fp32 fused gelu tanh": cl.ConvSpec(n=2, c=16, h=16, w=16, k=16, dtype="fp32", layout="NCHW",
                                             epilogue=("gelu", "tanh")),
    "matmul odd sizes fp16": cl.MatmulSpec(m=127, n=33, k=65, dtype="fp16"),
    "matmul bf16 sigmoid+add": cl.MatmulSpec(m=256, n=256, k=64, dtype="bf16", epilogue=("sigmoid", "add")),
}
out = {}
for name, spec in cases.items():
    t0 = time.perf_counter()
    try:
        r = cl.run(spec, plans="all", torch_baseline=False, roofline=False, time_cap_s=0.05)
        out[name] = {"plans": len(r.plans), "ok": len(r.ok), "pick": r.heuristic_pick["plan"],
                     "pass": bool(r.heuristic_pick["pass_cudnn"]), "rel_l2": float(r.heuristic_pick["rel_l2"]),
                     "errors": sorted(set(r.plans["error"]))[:3]}
    except cl.CudnnLabError as e:
        out[name] = {"error_type": type(e).__name__, "message": str(e)[:600]}
    except Exception:  # noqa: BLE001 - a crash is what this exploration records; the next problem still runs
        out[name] = {"crash": traceback.format_exc()[-1500:]}
    out[name]["s"] = round(time.perf_counter() - t0, 2)
    print(name, json.dumps(out[name]), flush=True)
with open(sys.argv[1] if len(sys.argv) > 1 else "explore.json", "w") as f:
    json.dump(out, f, indent=1)
