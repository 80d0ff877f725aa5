"""Temporary probe (W2b-fix): where a fresh process's first run goes, and replay vs CUPTI for tiny kernels."""
import json
import os
import subprocess
import sys
import tempfile
import time

FRESH = r"""
import cProfile, io, json, pstats, sys, time
t0 = time.perf_counter()
import cudnn_lab as cl
spec = cl.spec_from_json(sys.argv[1])
prof = cProfile.Profile() if sys.argv[2] == "1" else None
t1 = time.perf_counter()
if prof: prof.enable()
r = cl.run(spec, plans="all")
if prof: prof.disable()
t2 = time.perf_counter()
again = cl.run(spec, plans="all")
t3 = time.perf_counter()
print("import", round(t1 - t0, 3), "run", round(t2 - t1, 3), "repeat", round(t3 - t2, 3), "ceil", r.ceilings.get("source"))
print("phase_s", json.dumps(r.settings.get("phase_s")))
print("repeat phase_s", json.dumps(again.settings.get("phase_s")))
print("plan_cache", json.dumps(r.settings.get("plan_cache")))
p = r.plans
best = r.best
cols = [c for c in ("plan", "median_ms", "kernel_ms", "kernel_count", "replay_over_kernel", "timing_mode", "calls_per_sample") if c in p.columns]
print(p.sort_values("median_ms")[cols].head(6).to_string())
print("best kernels", best.get("kernels"))
if prof:
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45)
    print(s.getvalue()[:9000])
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
    print(s.getvalue()[:6000])
"""

MICRO = r"""
import time, subprocess
T = time.perf_counter
t = T(); import torch; print("import torch", round(T() - t, 3))
t = T(); torch.cuda.init(); x = torch.zeros(1, device="cuda"); torch.cuda.synchronize(); print("cuda init", round(T() - t, 3))
t = T(); import cudnn; print("import cudnn", round(T() - t, 3))
t = T(); h = cudnn.create_handle(); print("create_handle", round(T() - t, 3), cudnn.backend_version(), "torch cudnn", torch.backends.cudnn.version())
t = T(); subprocess.run(["nvidia-smi", "--id=0", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True); print("nvidia-smi", round(T() - t, 3))
from torch.profiler import profile, ProfilerActivity
for i in range(3):
    t = T()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        x.add_(1); torch.cuda.synchronize()
    t2 = T(); ev = list(p.profiler.kineto_results.events()); print(f"profiler session {i}", round(t2 - t, 3), "events", round(T() - t2, 3))
a = torch.randn(32, 64, 56, 56, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
w = torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
for bench in (False, True, True):
    torch.backends.cudnn.benchmark = bench
    t = T(); torch.nn.functional.conv2d(a, w, padding=1); torch.cuda.synchronize(); print("torch conv benchmark", bench, round(T() - t, 3))
t = T(); torch.nn.functional.conv2d(a.double(), w.double(), padding=1); torch.cuda.synchronize(); print("torch conv fp64 first", round(T() - t, 3))
"""

TINY = r"""
import json, torch, time
import cudnn_lab as cl
from cudnn_lab.gpu.session import session
from cudnn_lab.gpu.timing import Timer, TimingOptions
from cudnn_lab.gpu.kernels import _device_events
from torch.profiler import profile, ProfilerActivity
SPECS = {"tiny": cl.ConvSpec(n=1, c=64, h=14, w=14, k=64, r=1, s=1, padding=0, layout="NHWC", dtype="fp16"),
         "56px": cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16"),
         "gemm": cl.MatmulSpec(m=4096, n=3072, k=768, dtype="bf16")}
for label, spec in SPECS.items():
    r = cl.run(spec, plans="all", heuristics=("A", "B", "FALLBACK"), baselines=False, notes=False)
    pick = r.heuristic_pick
    print("==", label, pick["plan"], "median_us", round(pick["median_ms"] * 1e3, 2), "kernel_us", round((pick.get("kernel_ms") or 0) * 1e3, 2), "calls", pick.get("calls_per_sample"))
    print("  kernels", pick.get("kernels"))
    sess = session(spec, ("A", "B", "FALLBACK"))
    entry = next(e for e in sess.entries if e.name == pick["plan"])
    fn = sess.call(entry)
    for replay_ms, maxc in ((0.3, 1000), (3.0, 1000), (3.0, 10000)):
        o = TimingOptions(target_replay_ms=replay_ms, tiny_replay_ms=replay_ms, max_calls=maxc)
        t = Timer(sess.stream, o).time(fn)
        print(f"  graph replay_ms={replay_ms} max_calls={maxc}: {t.median_ms*1e3:.3f} us calls {t.calls_per_sample}")
    t = Timer(sess.stream, TimingOptions(mode="cupti")).time(fn)
    print(f"  cupti mode: {t.median_ms*1e3:.3f} us iqr {t.iqr_ms*1e3:.3f}")
    # the GPU timeline inside one replay of a 50-call graph
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=sess.stream):
        for _ in range(50):
            fn()
    g.replay(); sess.stream.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        with torch.cuda.stream(sess.stream):
            g.replay()
        sess.stream.synchronize()
    ev = sorted(_device_events(p))
    names = {}
    for e in ev:
        names[e[2][:60] + "/" + e[3]] = names.get(e[2][:60] + "/" + e[3], 0) + 1
    gaps = [b[0] - a[1] for a, b in zip(ev, ev[1:])]
    dur = [e[1] - e[0] for e in ev]
    if ev:
        span = ev[-1][1] - ev[0][0]
        gaps.sort(); dur.sort()
        print(f"  in-graph: {len(ev)} activities, span/50 {span/50/1e3:.3f} us, median dur {dur[len(dur)//2]/1e3:.3f} us, median gap {gaps[len(gaps)//2]/1e3:.3f} us, min gap {gaps[0]/1e3:.3f}, max gap {gaps[-1]/1e3:.3f}")
        print("  names", names)
    # stream (no graph) back-to-back
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        with torch.cuda.stream(sess.stream):
            for _ in range(50):
                fn()
        sess.stream.synchronize()
    ev = sorted(_device_events(p))
    gaps = sorted(b[0] - a[1] for a, b in zip(ev, ev[1:]))
    if gaps:
        print(f"  eager stream: {len(ev)} activities, median gap {gaps[len(gaps)//2]/1e3:.3f} us")
"""


def sh(code, *args, env=None):
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=250)
    print(f"--- ({time.perf_counter() - t:.1f} s wall, rc {out.returncode})")
    print(out.stdout[-14000:])
    if out.returncode:
        print(out.stderr[-3000:])


if __name__ == "__main__":
    import cudnn_lab as cl
    env = dict(os.environ, CUDNN_LAB_CACHE_DIR=tempfile.mkdtemp())
    from cudnn_lab import cache_dir
    env[cache_dir.ENV_DIR] = env["CUDNN_LAB_CACHE_DIR"]
    env.pop(cache_dir.ENV_OFF, None)
    conv = cl.ConvSpec(n=32, c=64, h=56, w=56, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16").to_json()
    gemm = cl.MatmulSpec(m=4096, n=3072, k=768, dtype="bf16").to_json()
    which = sys.argv[1:] or ["micro", "conv", "gemm", "tiny"]
    if "micro" in which:
        print("##### micro"); sh(MICRO, env=env)
    if "conv" in which:
        print("##### conv cold (cProfile)"); sh(FRESH, conv, "1", env=env)
        print("##### conv warm"); sh(FRESH, conv, "0", env=env)
    if "gemm" in which:
        print("##### gemm cold"); sh(FRESH, gemm, "0", env=env)
        print("##### gemm warm (cProfile)"); sh(FRESH, gemm, "1", env=env)
    if "tiny" in which:
        print("##### tiny"); sh(TINY, env=env)
