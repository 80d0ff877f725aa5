"""Two GPU-side problems of issue 37, probed (run on a GPU host; about 90 s):

(a) exit aborts: "free(): invalid pointer" (SIGABRT) after benchmarks/whatif.py's table, "External init callback must
    run in same thread as registerClient" then "free(): invalid size" after scripts/live_rows.py. Short child
    processes per variant, several at once, and a table of how each ended (exit code or signal; whether its work
    finished first, so an abort at exit is told from one during the work). Variants:
      query        a what-if deviceless query (what benchmarks/whatif.py does first), nothing run
      run          a run without CUPTI (kernels and notes off); the run variants take no helper processes
      run_cupti    a run with kernels recorded (CUPTI through torch's kineto profiler)
      run_norel    run_cupti with the kit's release at exit turned off (gpu/device.RELEASE_AT_EXIT)
      run_osexit   run_cupti ending with os._exit(0) (no teardown at all)
      query_run    query, then run_cupti (benchmarks/whatif.py's mix)
      run_helpers  run_cupti with the default helper processes (parallel builds): what a user's run does
      cupti_only   one torch profiler session around a fill, no cuDNN
      cupti_thread the profiler session on a thread other than the main one (kineto's "External init callback")
(b) the determinism test's failure under 8 pytest workers (a plan without the NONDETERMINISTIC note whose whole output
    differed over 3 runs): the test's own recipe (fp32 NCHW conv, every plan without the note, 3 runs each, fresh
    outputs and workspace each round) repeated under conditions that each stand for one explanation:
      alone        nothing else: cuDNN itself
      busy_default outputs made on a default stream kept busy (the recipe's stream is not ordered after it: before
                   check_determinism waited for the caller's stream, every round failed with the whole output
                   unwritten, H200 2026-11-29; a failure here now means that wait is gone)
      ws_poison    the workspace overwritten with junk between runs (a plan reading workspace it did not write)
      threads      a thread in this process allocating on one stream and freeing while another still uses the
                   memory (the caching allocator hands it out again: the kit's cross-stream reuse)
      procs        7 other processes keeping the GPU busy (8 pytest workers on one GPU)

  python scripts/probe_exit.py [--seconds 90] [--repeats 4] [--part exit|det|both] [--json out.json]

Without a GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXIT_VARIANTS = ("query", "run", "run_cupti", "run_norel", "run_osexit", "query_run", "run_helpers", "cupti_only",
                 "cupti_thread")
DET_VARIANTS = ("alone", "busy_default", "ws_poison", "threads", "procs")
DONE = "PROBE-WORK-DONE"
MARKS = ("free()", "External init callback", "double free", "corrupted", "Segmentation", "terminate called",
         "CUPTI", "Traceback", "Error")


# ------------------------------------------------------------------------------------------------ (a) the children
def _small_spec() -> Any:
    import cudnn_lab as cl

    return cl.ConvSpec(n=8, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


def _query() -> None:
    from cudnn_lab import whatif as wi

    wi.plans_for(_small_spec(), wi.profile(), recorded=False, modes=("A",))


def _run(cupti: bool, helpers: bool = False) -> None:
    import cudnn_lab as cl

    more: dict[str, Any] = {} if helpers else {"parallel_builds": 0}
    result = cl.run(_small_spec(), plans="all", kernels=cupti, notes=cupti, time_cap_s=0.05, **more)
    print("plans", len(result.plans), flush=True)


def _cupti_session() -> None:
    import torch

    from cudnn_lab.gpu.kernels import cupti_profiler

    x = torch.zeros(1 << 20, device="cuda")
    with cupti_profiler():
        x.fill_(1.0)
        torch.cuda.synchronize()


def child(variant: str) -> None:
    """One child's work, then its exit as the variant says."""
    if variant == "query":
        _query()
    elif variant in ("run", "run_cupti", "run_norel", "run_osexit"):
        if variant == "run_norel":
            from cudnn_lab.gpu import device

            device.RELEASE_AT_EXIT = False
        _run(cupti=variant != "run")
    elif variant == "query_run":
        _query()
        _run(cupti=True)
    elif variant == "run_helpers":
        _run(cupti=True, helpers=True)
    elif variant == "cupti_only":
        _cupti_session()
    elif variant == "cupti_thread":
        import torch

        torch.zeros(1, device="cuda")
        t = threading.Thread(target=_cupti_session)
        t.start()
        t.join()
        _cupti_session()  # and then on the main thread
    else:
        raise SystemExit(f"unknown variant {variant!r}; one of {', '.join(EXIT_VARIANTS)}")
    print(DONE, time.time(), flush=True)
    if variant == "run_osexit":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def _ended(rc: int | None) -> str:
    if rc is None:
        return "timeout"
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"rc {rc}"


def one_child(variant: str, timeout_s: float) -> dict[str, Any]:
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, __file__, "--child", variant], cwd=ROOT, capture_output=True, text=True,
                           timeout=max(5.0, timeout_s))
        rc: int | None = p.returncode
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, _text(e.stdout), _text(e.stderr)
    ended_at = time.time()
    done = [ln.split() for ln in out.splitlines() if ln.startswith(DONE)]
    exit_s = round(ended_at - float(done[0][1]), 2) if done and len(done[0]) > 1 else None
    lines = [ln.strip() for ln in err.splitlines() if any(m in ln for m in MARKS)]
    return {"variant": variant, "ended": _ended(rc), "rc": rc, "work_done": bool(done), "exit_s": exit_s,
            "seconds": round(time.monotonic() - t0, 2), "stderr_marks": lines[-4:]}


def _text(data: Any) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else str(data or "")


def exit_probe(seconds: float, repeats: int, variants: tuple[str, ...], parallel: int) -> list[dict[str, Any]]:
    """Up to ``repeats`` children per variant, ``parallel`` at once, started while ``seconds`` last."""
    end = time.monotonic() + seconds
    queue = [v for _ in range(repeats) for v in variants]  # round robin: each variant gets its share early
    results: list[dict[str, Any]] = []

    def work(v: str) -> dict[str, Any] | None:
        left = end - time.monotonic()
        return one_child(v, left + 5) if left > 8 else None

    with ThreadPoolExecutor(parallel) as pool:
        for r in pool.map(work, queue):
            if r is not None:
                results.append(r)
    return results


def exit_table(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for r in results:
        row = table.setdefault(r["variant"], {"children": 0, "ended": {}, "aborted_after_work": 0,
                                              "slow_exit": 0, "exit_s": [], "marks": []})
        row["children"] += 1
        row["ended"][r["ended"]] = row["ended"].get(r["ended"], 0) + 1
        if r["work_done"] and r["ended"] == "timeout":  # still exiting when its time was up: slow, not an abort
            row["slow_exit"] += 1
        elif r["work_done"] and r["ended"] != "rc 0":
            row["aborted_after_work"] += 1
        if r.get("exit_s") is not None and r["ended"] == "rc 0":
            row["exit_s"].append(r["exit_s"])
        row["marks"] += [m for m in r["stderr_marks"] if m not in row["marks"]][:3]
    return table


# ----------------------------------------------------------------------------------------- (b) determinism stress
class Recipe:
    """tests/gpu/test_anatomy_gpu.py's determinism recipe: the fp32 NCHW conv, its plans without NONDETERMINISTIC."""

    def __init__(self) -> None:
        import cudnn
        import torch

        import cudnn_lab as cl
        from cudnn_lab.gpu.notes import numeric_notes
        from cudnn_lab.reference import make_inputs

        self.spec = cl.ConvSpec(n=4, c=32, h=28, w=28, k=32, r=3, s=3, padding=1, layout="NCHW", dtype="fp32")
        self.handle = cudnn.create_handle()
        self.stream = torch.cuda.Stream()
        cudnn.set_stream(handle=self.handle, stream=self.stream.cuda_stream)
        self.lab = cl.build_graph(self.spec, handle=self.handle)
        g = self.lab.pygraph
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        names = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
        notes = numeric_notes(self.spec, self.handle, ("A", "FALLBACK")).notes
        self.plans: list[tuple[int, str]] = []
        for i, name in enumerate(names):
            if "NONDETERMINISTIC" in notes.get(name, ()):
                continue
            try:
                g.build_plan_at_index(i)
                self.plans.append((i, name))
            except Exception:  # noqa: BLE001 - plans that do not build are not under test
                pass
        self.ws_size = max([int(g.get_workspace_size_plan_at_index(i)) for i, _ in self.plans] + [1])
        self.inputs = make_inputs(self.spec, device="cuda", seed=0)
        from cudnn_lab.reference import make_outputs

        self.out_numel = next(iter(make_outputs(self.spec, device="cuda").values())).numel()  # 100,352

    def round(self, variant: str, noise: Any = None) -> list[dict[str, Any]]:
        """Every plan once through check_determinism (3 runs) with fresh outputs and workspace; the failures."""
        import torch

        from cudnn_lab.gpu.notes import check_determinism
        from cudnn_lab.reference import make_outputs

        if variant == "busy_default":  # the default stream busy, then the outputs made on it, not waited for
            a = torch.randn(4096, 4096, device="cuda")
            for _ in range(8):
                a = a @ a / 64
        outputs = make_outputs(self.spec, device="cuda")
        ws = torch.empty(self.ws_size, dtype=torch.uint8, device="cuda")
        g, handle = self.lab.pygraph, self.handle
        feed = {self.lab.tensors[n]: t for n, t in {**self.inputs, **outputs}.items()}
        failures = []
        for index, name in self.plans:
            def call(index: int = index) -> None:
                if variant == "ws_poison":
                    ws.random_(0, 256)  # on the recipe's stream (run_poisoned makes it current)
                g.execute_plan_at_index(feed, ws, index=index, handle=handle)

            verdict = check_determinism(call, outputs, self.stream, runs=3)
            if verdict.deterministic is not True:
                failures.append({"plan": name, "differing": verdict.differing, "unwritten": verdict.unwritten,
                                 "error": verdict.error})
        if variant == "busy_default":
            torch.cuda.synchronize()
        return failures


def _thread_noise(stop: threading.Event) -> None:
    """Memory allocated on the default stream, used by a long kernel on another stream and freed before it ends."""
    import torch

    side = torch.cuda.Stream()
    while not stop.is_set():
        a = torch.empty(4096, 4096, device="cuda")  # allocated on the default stream
        with torch.cuda.stream(side):
            for _ in range(4):
                a.normal_()
                a.mul_(0.5)
        del a  # freed without record_stream: the block is handed out again at once
        time.sleep(0.001)
    side.synchronize()


_NOISE = """import time, torch
a = torch.randn(8192, 8192, device="cuda")
end = time.monotonic() + {s}
while time.monotonic() < end:
    b = a @ a
    torch.cuda.synchronize()
"""


def det_probe(seconds: float, variants: tuple[str, ...]) -> dict[str, Any]:
    import torch

    t0 = time.monotonic()
    recipe = Recipe()
    setup = time.monotonic() - t0
    share = max(2.0, (seconds - setup) / max(1, len(variants)))
    out: dict[str, Any] = {"plans": len(recipe.plans), "setup_s": round(setup, 2), "variants": {}}
    for variant in variants:
        stop = threading.Event()
        helpers: list[Any] = []
        if variant == "threads":
            helpers = [threading.Thread(target=_thread_noise, args=(stop,), daemon=True)]
            helpers[0].start()
        elif variant == "procs":
            helpers = [subprocess.Popen([sys.executable, "-c", _NOISE.format(s=share + 10)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(7)]
            time.sleep(3.0)  # their contexts up and busy
        end = time.monotonic() + share
        rounds = 0
        failures: list[dict[str, Any]] = []
        error = ""
        try:
            while time.monotonic() < end:
                failures += recipe.round(variant)
                rounds += 1
        except Exception as e:  # noqa: BLE001 - say what broke the variant, keep the others
            error = " ".join(str(e).split())[:300]
        finally:
            stop.set()
            for h in helpers:
                if isinstance(h, threading.Thread):
                    h.join(10)
                else:
                    h.kill()
                    h.wait()
            torch.cuda.synchronize()
        out["variants"][variant] = {
            "rounds": rounds, "checks": rounds * len(recipe.plans), "failed": len(failures),
            "whole_output": sum(f["differing"] == recipe.out_numel for f in failures),
            "with_unwritten": sum(f["unwritten"] > 0 for f in failures), "first": failures[:3], "error": error}
    return out


# ----------------------------------------------------------------------------------------------------------- main
def gpu_present() -> str:
    """'' when a CUDA GPU is visible to torch, else why not."""
    try:
        import torch
    except ImportError as e:
        return f"torch cannot be imported ({e})"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False)"
    return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=90.0, help="the whole probe's time (default 90)")
    ap.add_argument("--repeats", type=int, default=3, help="children per exit variant at most (default 3)")
    ap.add_argument("--parallel", type=int, default=4, help="children at once (default 4)")
    ap.add_argument("--part", choices=("exit", "det", "both"), default="both")
    ap.add_argument("--variants", help="comma-separated exit variants (default all)")
    ap.add_argument("--det-variants", help="comma-separated determinism variants (default all)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    if args.seconds <= 0 or args.repeats < 1 or args.parallel < 1:
        ap.error("--seconds must be positive, --repeats and --parallel at least 1")
    variants = tuple(args.variants.split(",")) if args.variants else EXIT_VARIANTS
    det_variants = tuple(args.det_variants.split(",")) if args.det_variants else DET_VARIANTS
    for v in variants:
        if v not in EXIT_VARIANTS:
            ap.error(f"unknown exit variant {v!r}; one of {', '.join(EXIT_VARIANTS)}")
    for v in det_variants:
        if v not in DET_VARIANTS:
            ap.error(f"unknown determinism variant {v!r}; one of {', '.join(DET_VARIANTS)}")
    report: dict[str, Any] = {"seconds": args.seconds}
    why = gpu_present()
    if why:
        print(f"probe_exit: skipped, it needs a GPU: {why}")
        report["skipped"] = why
    else:
        exit_s = args.seconds * (0.55 if args.part == "both" else 1.0)
        if args.part in ("exit", "both"):
            t0 = time.monotonic()
            results = exit_probe(exit_s, args.repeats, variants, args.parallel)
            table = exit_table(results)
            report["exit"] = {"children": results, "table": table, "seconds": round(time.monotonic() - t0, 1)}
            print(f"{'variant':<14} {'children':>8}  {'ended':<30} {'abort after work':>16} {'slow exit':>9} "
                  f"{'exit s':>11}  stderr")
            for v, row in table.items():
                ended = ", ".join(f"{k}: {n}" for k, n in sorted(row["ended"].items()))
                span = f"{min(row['exit_s']):.1f}-{max(row['exit_s']):.1f}" if row["exit_s"] else "-"
                print(f"{v:<14} {row['children']:>8}  {ended:<30} {row['aborted_after_work']:>16} "
                      f"{row['slow_exit']:>9} {span:>11}  {' | '.join(row['marks'])[:100]}")
        if args.part in ("det", "both"):
            det_s = args.seconds - (time.monotonic() - _T0) - 5
            det = det_probe(max(10.0, det_s), det_variants)
            report["determinism"] = det
            print(f"determinism recipe: {det['plans']} plans without NONDETERMINISTIC, setup {det['setup_s']} s")
            print(f"{'condition':<14} {'rounds':>6} {'checks':>7} {'failed':>6} {'whole':>6} {'unwritten':>9}  first")
            for v, row in det["variants"].items():
                first = row["first"][0] if row["first"] else row["error"]
                print(f"{v:<14} {row['rounds']:>6} {row['checks']:>7} {row['failed']:>6} {row['whole_output']:>6} "
                      f"{row['with_unwritten']:>9}  {first}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    return 0


_T0 = time.monotonic()

if __name__ == "__main__":
    sys.exit(main())
