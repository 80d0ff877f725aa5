"""One run on the GPU as plain records: propose, build, check and time a spec's plans (``run_records``).

The results layer turns the records into a ``RunResult`` (``cudnn_lab.runs.run`` does both); nothing here makes a
frame. What happened to each plan in this run (its status) is decided here, per run: a session's plans keep only
their build state, so a later run with another plan policy starts clean.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..options import HEURISTIC_MODES, RunOptions
from ..specs import Spec
from . import anatomy
from .cache import RunCache
from .plans import PlanEntry
from .session import Session, require_gpu, session
from .timing import Timer, TimingOptions, replay_over_kernel

Progress = Callable[[int, int, str], None]
#: The parts of a run timed in ``settings["phase_s"]`` (seconds), in the order a run does them.
PHASES: tuple[str, ...] = ("import", "device", "session", "propose", "inputs", "reference", "build", "ceilings",
                           "check", "time", "kernels", "notes", "explore", "baseline", "records")


class Phases:
    """Wall seconds per named part of a run (``with phases("build"): ...``); repeated parts add up."""

    def __init__(self) -> None:
        self.s: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t0)

    def add(self, name: str, seconds: float) -> None:
        self.s[name] = self.s.get(name, 0.0) + seconds

    def record(self, total: float) -> dict[str, float]:
        """Every phase (0 where it did not happen) in run order, then ``total``, rounded to 0.1 ms."""
        out = {name: round(self.s.get(name, 0.0), 4) for name in PHASES}
        out.update({k: round(v, 4) for k, v in self.s.items() if k not in out})
        out["total"] = round(total, 4)
        return out
#: Bins of the error histogram: log10 |actual - expected|, 1e-12 .. 1e2.
HIST_EDGES = [float(x) for x in range(-12, 3)]


def run_records(spec: Spec, options: RunOptions, progress: Progress | None = None) -> dict[str, Any]:
    """Run ``spec`` on the GPU as ``options`` say; returns plain records (``cudnn_lab.results.RECORD_KEYS``).

    ``plans`` holds one row dict per proposed plan in heuristic order, with what was measured (times, errors);
    throughput and the share of the roofline are derived from them by the results layer. ``settings`` is
    ``options.to_dict()`` plus the run's facts (``proposed``: how many plans the heuristics listed). Runs in one
    process take turns (``session.RUN_LOCK``).
    """
    from .session import RUN_LOCK

    with RUN_LOCK:
        return _run_records(spec, options, progress)


def _run_records(spec: Spec, options: RunOptions, progress: Progress | None = None) -> dict[str, Any]:
    t_start = time.perf_counter()
    phases = Phases()
    with phases("import"):  # torch and cudnn, on a process's first run
        import torch

        from .device import start_device

        starting = start_device(options.device)  # CUDA starts while cuDNN and the modules below import
        import cudnn  # noqa: F401

        from ..numerics import tf32_note
        from .baseline import torch_baseline
        from .ceilings import measure_ceilings
        from .device import device_info

    with phases("device"):
        if starting is not None:
            starting.wait(60.0)
        require_gpu(options.device)
        info = device_info(options.device)
        from .fp8 import check_requirements

        check_requirements(spec, info)  # e.g. FP8 attention's fp16 output needs Blackwell: refused here, rule named
        check_sm_count(spec, options.sm_count, info)
    notes: list[str] = []
    if (note := tf32_note(spec)) is not None:
        notes.append(note)
    if options.sm_count is not None:
        notes.append(carve_out_note(options, info))
    sess = session(spec, options.heuristics, device=options.device, seed=options.seed, check=options.check,
                   sm_count=options.sm_count)
    made, sess.phase_s = sess.phase_s, {}  # the run that made the session reports what making it took
    for name, seconds in made.items():
        phases.add(name, seconds)
    entries = sess.entries[:options.max_plans] if options.max_plans is not None else sess.entries
    cache = RunCache(spec, info, sess.handle, options.plan_cache, ask=sess.ask_heuristics, sm_count=options.sm_count)
    with torch.cuda.device(options.device):
        with phases("build"):
            chosen, status = _build(entries, options.plans, progress, cache, sess.loaded)
            if options.sm_count is not None and not chosen:
                raise refused_on_carve_out(spec, entries, status, options.sm_count, info)
            sess.ensure_workspace(max((e.workspace_bytes or 0 for e in chosen), default=0))
        topts = TimingOptions.from_options(options)
        with phases("time"):
            timer = Timer(sess.stream, topts, graph_cache=sess.graphs)
        with phases("ceilings"):
            ceil = (measure_ceilings(_ceiling_dtype(spec.dtype), options.device,
                                     refresh=options.remeasure_ceilings) if options.roofline else None)
        measured: dict[str, dict[str, Any]] = {}
        best: float | None = None  # the best median so far: a plan far slower than it is screened (timing.py)
        for i, entry in enumerate(chosen):
            if progress:
                progress(i, len(chosen), f"timing {entry.name}")
            # A repeat in this process reuses the plan's check and time (same inputs, same timing) unless asked.
            key = ("plan", entry.name, topts, options.check)
            if not options.resample and key in sess.memo:
                status[entry.name], kept = sess.memo[key]
                measured[entry.name] = {**kept, "reused": True}
            else:
                status[entry.name], measured[entry.name] = _measure(spec, entry, sess, timer, phases, best)
                measured[entry.name]["reused"] = False
                if status[entry.name][0] == "ok":
                    sess.memo[key] = (status[entry.name], dict(measured[entry.name]))
            median = measured[entry.name].get("median_ms")
            if status[entry.name][0] == "ok" and median and (best is None or median < best):
                best = median
        # Plan anatomy: kernels (CUPTI), numerical notes, determinism; configurations beyond the proposals.
        ran = {name for name, (st, _) in status.items() if st == "ok"}
        # Kernels and notes are asked apart so that each one's cost shows in phase_s.
        with phases("kernels"):
            if options.kernels:
                anatomy.kernel_and_note_columns(spec, options.replace(notes=False), sess, chosen, ran, measured,
                                                notes, progress)
        with phases("notes"):
            if options.notes:
                anatomy.kernel_and_note_columns(spec, options.replace(kernels=False), sess, chosen, ran, measured,
                                                notes, progress)
        with phases("explore"):
            explored, space, explored_histograms = anatomy.explore_rows(
                spec, options, sess, [e.name for e in sess.entries], lambda e: _measure(spec, e, sess, timer),
                _row, progress, info.get("cudnn_backend")) if options.explore else ([], {}, {})
            if space.get("error"):
                notes.append(f"Engine space {space['error']}")
        if progress:
            progress(len(chosen), len(chosen), "PyTorch baseline" if options.baselines else "done")
        torch_info: dict[str, Any] = {}
        if options.baselines:
            key = ("torch", topts)
            with phases("baseline"):
                if options.resample or key not in sess.memo:
                    sess.memo[key] = torch_baseline(spec, sess.inputs, timer)
            torch_info = dict(sess.memo[key])
    t_records = time.perf_counter()
    reused = [n for n, m in measured.items() if m.get("reused")]
    if reused:
        notes.append(f"{len(reused)} plan(s) reused their check and time from an earlier run of this spec in this "
                     f"process (column 'reused'); pass resample=True to measure them again.")
    by_cupti = [n for n, m in measured.items() if m.get("_replay_ms") is not None]
    if by_cupti:
        notes.append(f"{len(by_cupti)} plan(s) ran under {topts.cupti_below_ms * 1e3:.0f} us per call: timing 'auto' "
                     f"reports their CUPTI kernel time (timing_mode 'cupti'); inside a replayed CUDA graph each "
                     f"kernel adds a gap that is a large share of so short a call (see replay_over_kernel).")
    screened = [n for n, m in measured.items() if m.get("screened")]
    if screened:
        notes.append(f"{len(screened)} plan(s) ran over {options.screen_ratio:g}x slower than the best plan timed "
                     f"before them in warm-up: each got {topts.screen_samples} event samples, not sampling to the "
                     f"spread target (column 'screened'; screen_ratio=0 samples every plan fully).")
    capped = [n for n, m in measured.items() if m.get("capped")]
    if capped:
        notes.append(f"{len(capped)} plan(s) hit the {options.time_cap_s} s time cap before IQR/median fell below "
                     f"{options.rel_iqr_target:.0%}: their medians are less certain (see 'capped' and 'iqr_ms').")
    histograms = {name: m.pop("_histogram") for name, m in measured.items() if "_histogram" in m}
    # The source lists plans mode by mode, rank by rank: list position is the heuristic order.
    rows = [_row(e, rank, *status[e.name], measured.get(e.name, {})) for rank, e in enumerate(entries)]
    rows += explored
    histograms.update(explored_histograms)
    anatomy.knob_columns(rows, info.get("cudnn_backend"))
    for row in rows:
        row["from_cache"] = row["status"] != "not_built" and row["plan"] in sess.loaded
        replayed = row.pop("_replay_ms", None)  # auto timing's replayed time of a plan it timed by CUPTI
        if replayed is not None:
            kernel = row.get("kernel_ms") if row.get("kernel_ms") is not None else row.get("median_ms")
            row["replay_over_kernel"] = replay_over_kernel(replayed, kernel)
            if row.get("kernel_ms") is not None:
                row["launch_gap_ms"] = replayed - row["kernel_ms"]
        if row.get("kernel_ms") is not None and row.get("replay_over_kernel") is None:
            row["replay_over_kernel"] = replay_over_kernel(row.get("median_ms"), row["kernel_ms"])
    quantization = _quantization(spec, sess, options.seed)
    phases.add("records", time.perf_counter() - t_records)
    return {"plans": rows, "device": dict(info), "torch": torch_info, "ceilings": ceil.to_dict() if ceil else {},
            "settings": {**options.to_dict(), "proposed": len(sess.entries), "plan_cache_stats": cache.summary(),
                         "proposals_recalled": sess.recalled,
                         **quantization, "phase_s": phases.record(time.perf_counter() - t_start)},
            "warnings": notes,
            "histograms": histograms, "engine_space": space,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def _quantization(spec: Spec, sess: Session, seed: int) -> dict[str, Any]:
    """``{"quantization": ...}`` for an FP8 problem: what quantizing its inputs cost, per input and in the output
    (reference.quantization_report); nothing otherwise."""
    from ..reference import quantization_report

    report = quantization_report(spec, sess.inputs, seed=seed)
    return {"quantization": report} if report else {}


def check_sm_count(spec: Spec, sm_count: int | None, info: dict[str, Any]) -> None:
    """OptionError naming sm_count for a carve-out this run cannot make: a family that runs through a classic call
    (on the whole GPU), or more SMs than the GPU has (naming its count)."""
    if sm_count is None:
        return
    from ..errors import OptionError
    from .frontend import check_carve_out

    check_carve_out(spec, sm_count)
    total = info.get("sm_count")
    if isinstance(total, int) and sm_count > total:
        raise OptionError("sm_count", sm_count, f"must be at most this GPU's SM count: {info.get('gpu', 'the GPU')} "
                          f"has {total} SMs (sm_count=None runs on the whole GPU)")


def carve_out_note(options: RunOptions, info: dict[str, Any]) -> str:
    """The warning every carve-out run carries: what was scaled and what was not."""
    total = info.get("sm_count")
    of = f" of the GPU's {total}" if total else ""
    return (f"Ran on {options.sm_count}{of} SMs (sm_count={options.sm_count}, an SM carve-out): only the compute "
            f"share is scaled; memory bandwidth and L2 are the whole GPU's, and so are the roofline ceilings "
            f"(pct_of_ceiling) and PyTorch's baseline, which take no carve-out.")


#: Plans whose failed build is asked again for cuDNN's whole message when a carve-out builds none (each fails fast).
MAX_FULL_ERRORS = 8


def _whole_error(entry: PlanEntry) -> str | None:
    """cuDNN's whole message for a plan whose build failed (the plan table keeps its first 300 characters on one
    line): the build is asked once more; None where that cannot be done or it builds now."""
    if entry.recalled or entry.index < 0 or not hasattr(getattr(entry.graph, "pygraph", None), "build_plan_at_index"):
        return None
    try:
        entry.graph.pygraph.build_plan_at_index(entry.index)
    except Exception as e:  # noqa: BLE001 - the refusal itself is what is wanted
        return str(e).strip() or None
    return None


def refused_on_carve_out(spec: Spec, entries: list[PlanEntry], status: dict[str, tuple[str, str]], sm_count: int,
                         info: dict[str, Any]) -> Exception:
    """The UnsupportedGraphError of a carve-out under which no proposed plan built: its detail is cuDNN's error for
    each plan (whole for the first :data:`MAX_FULL_ERRORS`, asked again; else the line the plan table records), its
    summary how many plans were refused and why: ``why_not.summarize`` of the detail, else by ``why_not``'s
    categories of each plan's error (carve-out: the engine runs only on the whole GPU)."""
    from ..errors import UnsupportedGraphError
    from ..why_not import CATEGORIES, category_of, summarize

    failed = [(e.name, _whole_error(e) if i < MAX_FULL_ERRORS else None, status[e.name][1])
              for i, e in enumerate(e for e in entries if status.get(e.name, ("", ""))[0] == "build_failed")]
    # cuDNN's whole message where it could be had again (its per-engine reasons), else the line the table records
    detail = "\n".join(f"{name}: {whole or error}" for name, whole, error in failed)
    failed = [(name, whole or error) for name, whole, error in failed]
    cats = [category_of("", error) for _, error in failed]
    counts = {c: cats.count(c) for c in CATEGORIES if c in cats}
    why = summarize(detail)
    if not why and counts:
        why = (f"cuDNN refused {len(failed)} plan{'s' * (len(failed) != 1)}: "
               + "; ".join(f"{counts[c]} by {c} ({CATEGORIES[c]})" for c in CATEGORIES if c in counts) + ".")
    total = info.get("sm_count")
    of = f" of the GPU's {total}" if total else ""
    summary = (f"No plan of {spec.label()} could be built on {sm_count}{of} SMs (sm_count={sm_count}, an SM "
               f"carve-out). {why}").strip()
    return UnsupportedGraphError(summary, detail=detail, device=str(info.get("gpu", "")),
                                 cudnn_version=str(info.get("cudnn_backend", "")),
                                 hint=" Run it on the whole GPU (sm_count=None), or try another layout, data type "
                                      "or size.")


def _ceiling_dtype(dtype: str) -> str:
    from .fp8 import ceiling_dtype

    return ceiling_dtype(dtype)


def _build(entries: list[PlanEntry], policy: str, progress: Progress | None, cache: RunCache,
           loaded: dict[str, Any]) -> tuple[list[PlanEntry], dict[str, tuple[str, str]]]:
    """Build all plans, or walk the heuristic order until one builds (what cuDNN itself would run).

    A plan kept in the plan cache is loaded instead of built (``cache.build``; ``loaded`` receives it).
    Returns the plans to time and every plan's (status, error) in this run: built, build_failed or not_built.
    """
    built: list[PlanEntry] = []
    status = {e.name: ("not_built", "") for e in entries}
    for i, entry in enumerate(entries):
        if progress:
            progress(i, len(entries), f"building {entry.name}")
        if cache.build(entry, loaded):  # once per session: a built plan stays built, a failed one is not retried
            status[entry.name] = ("built", "")
            built.append(entry)
            if policy == "heuristic":
                break
        else:
            status[entry.name] = ("build_failed", entry.build_error)
    return built, status


def _measure(spec: Spec, entry: PlanEntry, sess: Session, timer: Timer, phases: Phases | None = None,
             contender_ms: float | None = None) -> tuple[tuple[str, str], dict[str, Any]]:
    """Check one plan's numbers (on NaN-poisoned outputs), then time it: ((status, error), measured columns).
    ``contender_ms``: the best median so far in this run (a far slower plan is screened)."""
    import torch

    phases = phases or Phases()
    call, outputs, stream, expected = sess.call(entry), sess.outputs, sess.stream, sess.expected
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        with torch.cuda.stream(stream):
            for t in outputs.values():
                if t.is_floating_point():
                    t.fill_(float("nan"))
            call()
        stream.synchronize()
    except Exception as e:  # noqa: BLE001 - a plan that fails to run is recorded, the others go on
        return ("run_failed", " ".join(str(e).split())[:300]), out
    if expected is not None:
        out.update(_check_outputs(spec, outputs, expected, sess.inputs))
    phases.add("check", time.perf_counter() - t0)
    try:
        with phases("time"):
            t = timer.time(call, key=entry.name, contender_ms=contender_ms)
    except Exception as e:  # noqa: BLE001
        return ("run_failed", f"timing failed: {' '.join(str(e).split())[:280]}"), out
    out.update(timing_mode=t.mode, calls_per_sample=t.calls_per_sample, median_ms=t.median_ms, iqr_ms=t.iqr_ms,
               min_ms=t.min_ms, samples=t.samples, capped=t.capped, host_ms=t.host_ms, screened=t.screened)
    if t.replay_ms is not None:
        out["_replay_ms"] = t.replay_ms
    return ("ok", ""), out


def _check_outputs(spec: Spec, outputs: dict[str, Any], expected: dict[str, Any],
                   inputs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Error columns over every output: the worst error, the least share within each band, all must pass."""
    from ..numerics import band_args, compare
    from ..reference import comparable_outputs

    # FP8 outputs dequantized, rows a padding mask leaves undefined zeroed, as the references state them
    outputs = dict(comparable_outputs(spec, outputs, inputs)) if inputs is not None else outputs
    metrics = [compare(outputs[name], ref, **band_args(spec)) for name, ref in expected.items()]
    main = next(iter(expected))
    return {"rel_l2": max(m.rel_l2 for m in metrics), "max_abs": max(m.max_abs for m in metrics),
            "max_rel": max(m.max_rel for m in metrics), "nan_count": sum(m.nan_count for m in metrics),
            "inf_count": sum(m.inf_count for m in metrics), "within_torch": min(m.within_torch for m in metrics),
            "within_cudnn": min(m.within_cudnn for m in metrics), "pass_torch": all(m.passed_torch for m in metrics),
            "pass_cudnn": all(m.passed_cudnn for m in metrics),
            "_histogram": error_histogram(outputs[main], expected[main])}


def error_histogram(actual: Any, expected: Any) -> dict[str, list[float]]:
    """Counts of log10 |actual - expected| per decade; exact matches fall in the first bin, NaN/Inf in the last."""
    import torch

    err = (actual.double() - expected).abs().nan_to_num(nan=float("inf")).clamp(min=1e-12, max=1e2)
    counts = torch.histc(err.log10().float(), bins=len(HIST_EDGES) - 1, min=HIST_EDGES[0], max=HIST_EDGES[-1])
    return {"edges": HIST_EDGES, "counts": [int(c) for c in counts.tolist()]}


def _row(entry: PlanEntry, rank: int, status: str, error: str, measured: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "plan": entry.name, "engine_id": entry.engine_id, "knobs": json.dumps(entry.knobs, sort_keys=True),
        "heuristic_rank": rank, "behavior_notes": ",".join(entry.behavior_notes),
        "workspace_bytes": entry.workspace_bytes, "build_ms": entry.build_ms, "status": status, "error": error,
    }
    if status == "not_built":  # built by an earlier run of the session, perhaps, but not part of this one
        row["workspace_bytes"] = row["build_ms"] = None
    for mode in HEURISTIC_MODES:
        row[f"rank_{mode}"] = entry.ranks.get(mode)
    row.update(measured)
    return row
