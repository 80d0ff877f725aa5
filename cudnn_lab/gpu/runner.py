"""``run(spec)``: propose, build, check and time every plan of a spec's graph on the GPU; the only GPU entry point."""

from __future__ import annotations

import datetime
import functools
import json
import math
from collections.abc import Callable
from typing import Any

from ..errors import NoGPUError, ResourceError, SpecError
from ..results import RunResult, plans_frame
from ..specs import DTYPE_BYTES, Spec
from .plans import PlanEntry, check_modes, propose
from .timing import Timer, TimingOptions

PLAN_POLICIES = ("heuristic", "all")
Progress = Callable[[int, int, str], None]


@functools.cache
def _handle(device: int) -> Any:
    import cudnn
    import torch

    with torch.cuda.device(device):
        return cudnn.create_handle()


def _require_gpu(device: int) -> None:
    import torch

    if not torch.cuda.is_available():
        raise NoGPUError("no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False"
                         + ("; this torch is a CPU build" if not torch.version.cuda else "") + ")")
    if device >= torch.cuda.device_count():
        raise SpecError("device", device, f"must be below the number of visible GPUs ({torch.cuda.device_count()})")


def estimate_bytes(spec: Spec) -> int:
    """GPU memory a run needs before workspaces: native tensors, their float64 copies and the reference."""
    numel = sum(math.prod(d) for d in spec.tensor_shapes().values())
    return numel * (DTYPE_BYTES[spec.dtype] + 2 * 8)


def _check_memory(need: int, device: int, what: str) -> None:
    import torch

    free, _ = torch.cuda.mem_get_info(device)
    if need > 0.9 * free:
        raise ResourceError(need, free, what)


class Session:
    """A spec's graphs, plans, inputs and buffers on one GPU, kept so that a repeated run rebuilds nothing."""

    def __init__(self, spec: Spec, modes: tuple[str, ...], device: int, seed: int, check: bool) -> None:
        import cudnn
        import torch

        from ..reference import make_inputs, make_outputs, reference_outputs
        from .device import device_info

        self.spec, self.device = spec, device
        info = device_info(device)
        _check_memory(estimate_bytes(spec), device, spec.label())
        with torch.cuda.device(device):
            self.handle = _handle(device)
            self.stream = torch.cuda.Stream(device)
            cudnn.set_stream(handle=self.handle, stream=self.stream.cuda_stream)
            self.entries = propose(spec, self.handle, modes, info["gpu"], str(info["cudnn_backend"]))
            with torch.cuda.stream(self.stream):
                self.inputs = make_inputs(spec, device=f"cuda:{device}", seed=seed)
                self.outputs = make_outputs(spec, device=f"cuda:{device}")
                self.expected = reference_outputs(spec, self.inputs) if check else None
            self.stream.synchronize()
        self.workspace = torch.empty(1, dtype=torch.uint8, device=f"cuda:{device}")
        self.graphs: dict[Any, Any] = {}  # captured CUDA graphs per plan, replayed by later runs

    def ensure_workspace(self, size: int) -> None:
        import torch

        if size > self.workspace.numel():
            _check_memory(size, self.device, "the largest plan's workspace")
            self.workspace = torch.empty(size, dtype=torch.uint8, device=f"cuda:{self.device}")
            self.graphs.clear()  # captured graphs point at the old workspace

    def call(self, entry: PlanEntry) -> Callable[[], None]:
        """A zero-argument callable that executes ``entry``'s plan once on the session's stream."""
        import cudnn

        lab = entry.graph
        feed = {lab.tensors[name]: t for name, t in {**self.inputs, **self.outputs}.items()}
        g, ws, handle, index = lab.pygraph, self.workspace, self.handle, entry.index
        cudnn.set_stream(handle=handle, stream=self.stream.cuda_stream)

        def call() -> None:
            g.execute_plan_at_index(feed, ws, index=index, handle=handle)

        return call


_SESSIONS: dict[tuple[Any, ...], Session] = {}


def session(spec: Spec, heuristics: Any = ("A", "FALLBACK"), *, device: int = 0, seed: int = 0,
            check: bool = True) -> Session:
    """The cached :class:`Session` for these arguments (made on first use; needs a GPU)."""
    modes = check_modes(heuristics)
    _require_gpu(device)
    key = (spec, modes, device, seed, check)
    if key not in _SESSIONS:
        made = Session(spec, modes, device, seed, check)
        if len(_SESSIONS) >= 8:  # keep GPU memory bounded: drop the oldest session
            _SESSIONS.pop(next(iter(_SESSIONS)))
        _SESSIONS[key] = made
    return _SESSIONS[key]


def run(spec: Spec, *, heuristics: Any = ("A", "FALLBACK"), plans: str = "heuristic", timing: str = "auto",
        cold_l2: bool = False, check: bool = True, torch_baseline: bool = True, roofline: bool = True,
        time_cap_s: float = 0.5, seed: int = 0, device: int = 0, max_plans: int | None = None,
        progress: Progress | None = None) -> RunResult:
    """Run ``spec`` on the GPU: every plan the heuristics propose (``plans='all'``) or only their pick.

    Each plan that runs is checked against a float64 PyTorch reference (output NaN-poisoned first) and timed with
    CUDA events (CUDA-graph replay by default where capture works). Returns a :class:`RunResult`.
    """
    import torch

    modes = check_modes(heuristics)
    if plans not in PLAN_POLICIES:
        raise SpecError("plans", plans, f"must be one of {', '.join(PLAN_POLICIES)}")
    options = TimingOptions(mode=timing, cold_l2=cold_l2, time_cap_s=time_cap_s)
    if max_plans is not None and (isinstance(max_plans, bool) or not isinstance(max_plans, int) or max_plans < 1):
        raise SpecError("max_plans", max_plans, "must be a positive integer or None")
    if not isinstance(spec, Spec):
        raise SpecError("spec", type(spec).__name__, "must be a cudnn_lab spec such as ConvSpec or MatmulSpec")
    _require_gpu(device)
    from ..numerics import compare, tf32_note
    from .ceilings import measure_ceilings
    from .device import device_info

    info = device_info(device)
    notes: list[str] = []
    if (note := tf32_note(spec)) is not None:
        notes.append(note)
    sess = session(spec, modes, device=device, seed=seed, check=check)
    entries = sess.entries[:max_plans] if max_plans is not None else sess.entries
    with torch.cuda.device(device):
        chosen = _build(entries, plans, progress)
        sess.ensure_workspace(max((e.workspace_bytes or 0 for e in chosen), default=0))
        timer = Timer(sess.stream, options, graph_cache=sess.graphs)
        ceil = measure_ceilings(_ceiling_dtype(spec.dtype), device) if roofline else None
        measured: dict[str, dict[str, Any]] = {}
        for i, entry in enumerate(chosen):
            if progress:
                progress(i, len(chosen), f"timing {entry.name}")
            measured[entry.name] = _measure(spec, entry, sess, timer, compare, ceil)
        if progress:
            progress(len(chosen), len(chosen), "PyTorch baseline" if torch_baseline else "done")
        torch_info = _torch_baseline(spec, sess.inputs, timer) if torch_baseline else {}
    capped = [n for n, m in measured.items() if m.get("capped")]
    if capped:
        notes.append(f"{len(capped)} plan(s) hit the {time_cap_s} s time cap before IQR/median fell below 10%: "
                     "their medians are less certain (see 'capped' and 'iqr_ms').")
    # propose() lists plans mode by mode, rank by rank: list position is the heuristic order.
    histograms = {name: m.pop("_histogram") for name, m in measured.items() if "_histogram" in m}
    rows = [_row(e, rank, measured.get(e.name, {})) for rank, e in enumerate(entries)]
    settings = {"heuristics": list(modes), "plans": plans, "timing": timing, "cold_l2": cold_l2, "check": check,
                "time_cap_s": time_cap_s, "seed": seed, "device_index": device, "proposed": len(sess.entries)}
    return RunResult(spec=spec, plans=plans_frame(rows), device=info, torch=torch_info,
                     ceilings=ceil.to_dict() if ceil else {}, settings=settings, warnings=notes,
                     histograms=histograms,
                     created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


def _ceiling_dtype(dtype: str) -> str:
    return dtype if dtype in ("fp16", "bf16") else "fp32"


def _build(entries: list[PlanEntry], policy: str, progress: Progress | None) -> list[PlanEntry]:
    """Build all plans, or walk the heuristic order until one builds (what cuDNN itself would run)."""
    built: list[PlanEntry] = []
    for i, entry in enumerate(entries):
        if progress:
            progress(i, len(entries), f"building {entry.name}")
        if entry.status in ("built", "ok", "run_failed"):  # built by an earlier run of this session
            entry.status, entry.error = "built", ""
            built.append(entry)
            if policy == "heuristic":
                break
            continue
        if entry.status == "not_built":
            entry.status = "proposed"
        if entry.status == "proposed" and entry.build():
            built.append(entry)
            if policy == "heuristic":
                break
    for entry in entries:
        if entry.status == "proposed":
            entry.status = "not_built"
    return built


def _measure(spec: Spec, entry: PlanEntry, sess: Session, timer: Timer, compare: Any, ceil: Any) -> dict[str, Any]:
    """Check one plan's numbers (on NaN-poisoned outputs), then time it."""
    import torch

    call, outputs, stream, expected = sess.call(entry), sess.outputs, sess.stream, sess.expected
    out: dict[str, Any] = {}
    try:
        with torch.cuda.stream(stream):
            for t in outputs.values():
                if t.is_floating_point():
                    t.fill_(float("nan"))
            call()
        stream.synchronize()
    except Exception as e:  # noqa: BLE001 - a plan that fails to run is recorded, the others go on
        entry.status, entry.error = "run_failed", " ".join(str(e).split())[:300]
        return out
    if expected is not None:
        out.update(_check_outputs(spec, outputs, expected, compare))
    try:
        t = timer.time(call, key=entry.name)
    except Exception as e:  # noqa: BLE001
        entry.status, entry.error = "run_failed", f"timing failed: {' '.join(str(e).split())[:280]}"
        return out
    entry.status = "ok"
    secs = t.median_ms * 1e-3
    tflops = spec.flops() / secs / 1e12
    gbps = spec.min_bytes() / secs / 1e9
    out.update(timing_mode=t.mode, calls_per_sample=t.calls_per_sample, median_ms=t.median_ms, iqr_ms=t.iqr_ms,
               min_ms=t.min_ms, samples=t.samples, capped=t.capped, host_ms=t.host_ms, tflops=tflops, gbps=gbps)
    if ceil is not None:
        intensity = spec.flops() / spec.min_bytes()
        roof = min(ceil.tflops, ceil.gbps * 1e9 * intensity / 1e12)
        out["pct_of_ceiling"] = 100.0 * tflops / roof
    return out


def _check_outputs(spec: Spec, outputs: dict[str, Any], expected: dict[str, Any], compare: Any) -> dict[str, Any]:
    """Error columns over every output: the worst error, the least share within each band, all must pass."""
    metrics = [compare(outputs[name], ref, spec.dtype, op=spec.op) for name, ref in expected.items()]
    main = next(iter(expected))
    return {"rel_l2": max(m.rel_l2 for m in metrics), "max_abs": max(m.max_abs for m in metrics),
            "max_rel": max(m.max_rel for m in metrics), "nan_count": sum(m.nan_count for m in metrics),
            "inf_count": sum(m.inf_count for m in metrics), "within_torch": min(m.within_torch for m in metrics),
            "within_cudnn": min(m.within_cudnn for m in metrics), "pass_torch": all(m.passed_torch for m in metrics),
            "pass_cudnn": all(m.passed_cudnn for m in metrics),
            "_histogram": error_histogram(outputs[main], expected[main])}


HIST_EDGES = [float(x) for x in range(-12, 3)]  # log10 |actual - expected|, 1e-12 .. 1e2


def error_histogram(actual: Any, expected: Any) -> dict[str, list[float]]:
    """Counts of log10 |actual - expected| per decade; exact matches fall in the first bin, NaN/Inf in the last."""
    import torch

    err = (actual.double() - expected).abs().nan_to_num(nan=float("inf")).clamp(min=1e-12, max=1e2)
    counts = torch.histc(err.log10().float(), bins=len(HIST_EDGES) - 1, min=HIST_EDGES[0], max=HIST_EDGES[-1])
    return {"edges": HIST_EDGES, "counts": [int(c) for c in counts.tolist()]}


def _row(entry: PlanEntry, rank: int, measured: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "plan": entry.name, "engine_id": entry.engine_id, "knobs": json.dumps(entry.knobs, sort_keys=True),
        "heuristic_rank": rank,
        "behavior_notes": ",".join(entry.behavior_notes), "workspace_bytes": entry.workspace_bytes,
        "build_ms": entry.build_ms, "status": entry.status, "error": entry.error,
    }
    for mode in ("A", "B", "FALLBACK"):
        row[f"rank_{mode}"] = entry.ranks.get(mode)
    row.update(measured)
    return row


def _torch_baseline(spec: Spec, inputs: dict[str, Any], timer: Timer) -> dict[str, Any]:
    """PyTorch eager latency for the same op with cudnn.benchmark off and on, and its TF32 settings."""
    import torch

    from ..reference import torch_op

    fn = torch_op(spec, inputs)
    flags = torch.backends.cudnn
    info: dict[str, Any] = {"allow_tf32_cudnn": bool(flags.allow_tf32),
                            "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
    saved = flags.benchmark
    try:
        for key, bench in (("benchmark_off", False), ("benchmark_on", True)):
            flags.benchmark = bench
            try:
                t = timer.time(fn)
                info[f"{key}_ms"], info[f"{key}_iqr_ms"], info[f"{key}_mode"] = t.median_ms, t.iqr_ms, t.mode
            except Exception as e:  # noqa: BLE001
                info[f"{key}_error"] = " ".join(str(e).split())[:300]
    finally:
        flags.benchmark = saved
    return info
