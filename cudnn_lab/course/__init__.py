"""Named helpers for the course notebooks: the pandas wrangling a lesson needs, under names a student can read.

Pure functions over results (a ``RunResult`` or a sweep frame) and over frontend graphs' ``inspect()`` output: they
label, pick and reshape, and never run a GPU. ``check`` is the exercises' referee: it compares a student's answer
with the data and says right or wrong, and why. ``recording_for`` finds the shipped recording of a spec (reading
the recordings, nothing else).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

__all__ = ["Verdict", "verdict", "check", "check_parts", "say", "kept_benchmark", "cudnn_version", "provenance",
           "recording_for", "plans_table", "PLAN_TABLE_COLUMNS", "named_knobs", "ties", "band_shares", "inspect_diff",
           "check_graph", "best_per_point", "gpu_ratios", "regret_per_point", "waves", "tile_shape", "kernels_frame",
           "main_tile", "KEPT_BENCHMARKS"]

from .exercises import (OPEN, RIGHT, UNMEASURED, WRONG, Verdict, _is_number, check, check_parts,  # noqa: F401
                        say, verdict)
from .. import knobs
from ..errors import CudnnLabError
from ..kernel_names import read as read_kernel_name
from ..provenance import Provenance, cudnn_version_text
from ..provenance import provenance as provenance_of
from ..results import recorded_datasets
from ..results.anatomy import kernels_table
from ..results.metrics import sweep_regret
from ..specs import spec_from_dict

# ------------------------------------------------------------------------------------------------ provenance

def cudnn_version(value: Any) -> str:
    """cuDNN's version number as people write it: 91900 -> '9.19.0' (:mod:`cudnn_lab.provenance`'s rule)."""
    return cudnn_version_text(value)


def _sweep_provenances(frame: Any, recorded: bool) -> list[Any]:
    """One Provenance per GPU of a sweep frame (its gpu, driver, cuda, cudnn and created columns)."""
    out: list[Any] = []
    if "gpu" not in getattr(frame, "columns", ()):
        return out
    for gpu, group in frame.dropna(subset=["gpu"]).groupby("gpu", sort=True):
        first = group.iloc[0]

        def text(col: str, first: Any = first) -> str:
            value = first.get(col)
            return "unknown" if value is None or value != value or value == "" else str(value)

        date = str(group["created"].min())[:10] if "created" in group.columns else "undated"
        out.append(Provenance(kind="recorded" if recorded else "measured", gpu=str(gpu), driver=text("driver"),
                              cudnn=cudnn_version(first.get("cudnn")), cuda=text("cuda"), date=date))
    return out


def provenance(result: Any, *, measured_here: bool | None = None, name: str | None = None) -> str:
    """Where a result's numbers come from, in the kit's one wording (:func:`cudnn_lab.provenance.provenance`):
    'RECORDED on NVIDIA H200 · driver … · CUDA … · cuDNN 9.19.0 · 2026-11-21' or 'MEASURED HERE on this machine's …'.

    ``measured_here``: whether this session ran it (a notebook passes its ``live`` flag); left None, the kit's rule
    decides (a result loaded from a file is recorded). A sweep frame gives one line per GPU, joined by '; ' (None
    counts as recorded). ``name``: the recording's name, shown after the device.
    """
    if hasattr(result, "device"):
        recorded = None if measured_here is None else not measured_here
        return provenance_of(result, recorded=recorded, name=name).text
    lines = _sweep_provenances(result, recorded=not measured_here)
    return "; ".join(p.text for p in lines) if lines else "RECORDED on an unknown GPU"


def recording_for(spec: Any, *, gpu: str | None = None) -> tuple[str | None, bool]:
    """The shipped single-run recording of ``spec``: (name, True) when one recorded exactly this problem, else the
    closest recording of the same kind of problem (name, False), or (None, False) when there is none. Among equals
    the newest recording wins (it has the most the kit can record: kernels, notes).

    ``gpu`` keeps recordings whose GPU name contains it (e.g. "H200"). Closeness counts equal spec fields.
    """
    datasets = recorded_datasets(kind="run")
    if gpu:
        datasets = datasets[datasets["gpu"].fillna("").str.contains(gpu, case=False, regex=False)]
    want = spec.to_dict()
    scored = []
    for name, path, date in zip(datasets["name"], datasets["path"], datasets["date"]):
        try:
            have = spec_from_dict(json.loads(Path(path).read_text(encoding="utf-8"))["spec"])
        except (OSError, ValueError, KeyError, CudnnLabError):
            continue
        if type(have) is not type(spec):
            continue
        fields = have.to_dict()
        scored.append((have == spec, sum(fields.get(k) == v for k, v in want.items()), str(date or ""), name))
    if not scored:
        return None, False
    exact, _, _, name = max(scored)
    return name, exact


#: Where the benchmark outputs the course reads ship: in the package (cudnn_lab/data/benchmarks/), so a lesson reads
#: the same file in a source checkout and in an install without one (Binder's ``pip install --no-deps .``).
KEPT_BENCHMARKS = Path(__file__).resolve().parents[1] / "data" / "benchmarks"


def kept_benchmark(benchmark: str, folder: Path | None = None) -> tuple[Any, str] | None:
    """The newest benchmark output shipped with the kit (``cudnn_lab/data/benchmarks/<gpu>_<date>_<benchmark>.json``,
    a copy of a script's ``--json`` kept in ``benchmarks/results/``) and its provenance line; None when there is
    none. ``folder``: read another folder of such files instead (tests)."""
    found = sorted((folder or KEPT_BENCHMARKS).glob(f"*_*_{benchmark}.json"), key=lambda f: f.name.split("_")[1])
    if not found:
        return None
    data = json.loads(found[-1].read_text(encoding="utf-8"))

    def first(value: Any, key: str) -> Any:  # the first value of ``key`` anywhere in the JSON
        if isinstance(value, dict):
            return value[key] if key in value else next((f for v in value.values() if (f := first(v, key))), None)
        return next((f for v in value if (f := first(v, key))), None) if isinstance(value, list) else None

    origin = Provenance(kind="recorded", gpu=str(first(data, "device") or "unknown GPU"),
                        driver=str(first(data, "driver") or "unknown"), cudnn=cudnn_version(first(data, "cudnn")),
                        cuda=str(first(data, "cuda") or "unknown"), date=found[-1].name.split("_")[1],
                        name=f"cudnn_lab/data/benchmarks/{found[-1].name}")
    return data, origin.text


# ------------------------------------------------------------------------------------------------ plan tables

#: Raw plan-table column -> (title, formatter) for :func:`plans_table`.
PLAN_TABLE_COLUMNS: dict[str, tuple[str, Any]] = {
    "plan": ("plan", str),
    "engine_id": ("engine", lambda v: int(v)),
    "knobs": ("knobs", None),  # named by :func:`named_knobs`
    "heuristic_rank": ("heuristic rank", lambda v: int(v)),
    "median_ms": ("median (us)", lambda v: round(float(v) * 1e3, 1)),
    "iqr_ms": ("IQR (us)", lambda v: round(float(v) * 1e3, 2)),
    "build_ms": ("build (ms)", lambda v: round(float(v), 1)),
    "tflops": ("TFLOP/s", lambda v: round(float(v), 1)),
    "gbps": ("GB/s", lambda v: round(float(v))),
    "pct_of_ceiling": ("% of measured roof", lambda v: round(float(v))),
    "rel_l2": ("rel L2 error", lambda v: float(f"{float(v):.3g}")),
    "within_torch": ("share within PyTorch band", lambda v: round(float(v), 4)),
    "within_cudnn": ("share within cuDNN band", lambda v: round(float(v), 4)),
    "pass_torch": ("passes PyTorch band", bool),
    "pass_cudnn": ("passes cuDNN band", bool),
    "behavior_notes": ("behavior notes", str),
    "workspace_bytes": ("workspace (bytes)", lambda v: int(v)),
    "status": ("status", str),
    "kernel_count": ("kernels per call", lambda v: round(float(v), 1)),
    "kernel_ms": ("kernel time (us)", lambda v: round(float(v) * 1e3, 1)),
    "launch_gap_ms": ("launch gaps (us)", lambda v: round(float(v) * 1e3, 1)),
    "numeric_notes": ("numerical notes", str),
    "deterministic": ("deterministic", bool),
    "proposed": ("proposed by the heuristics", bool),
}
DEFAULT_PLAN_COLUMNS = ("plan", "engine_id", "knobs", "heuristic_rank", "median_ms", "tflops", "rel_l2",
                        "pass_torch", "pass_cudnn")


def named_knobs(plan: Any, version: Any = None) -> dict[str, int]:
    """A plan's knobs by name, from its plan name (``eng41_k2=7_k13=1``) or a plans-table row: ``{"TILE_SIZE": 7,
    "TILEK": 1}``.

    The numbers in a plan name are cuDNN *backend* knob types; :mod:`cudnn_lab.knobs` names them from the backend
    enum of the cuDNN ``version`` (a number unknown there keeps its ``k<number>`` key: never guessed).
    """
    name = plan.get("plan") if hasattr(plan, "get") else plan
    return knobs.named(str(name or ""), version)


def _knob_text(row: Any, version: Any = None) -> str:
    return knobs.safe_label(str(row.get("plan") or ""), version) or "(none)"


def plans_table(result: Any, columns: tuple[str, ...] | list[str] | None = None, *, sort: str | None = "median_ms",
                only_ran: bool = True, top: int | None = None) -> Any:
    """The plan table with chosen columns, readable titles and rounded numbers (microseconds, 3 significant digits).

    ``columns`` are raw column names (see ``PLAN_TABLE_COLUMNS``); extra columns of the frame pass through as they
    are. Rows: plans that ran (``only_ran``), sorted by ``sort`` (fastest first), the first ``top`` of them.
    """
    import pandas as pd

    frame = result.plans if hasattr(result, "plans") else result
    if only_ran and "status" in frame.columns:
        frame = frame[frame["status"] == "ok"]
    if sort and sort in frame.columns:
        frame = frame.sort_values(sort, kind="stable")
    if top is not None:
        frame = frame.head(top)
    out: dict[str, list[Any]] = {}
    for col in columns or DEFAULT_PLAN_COLUMNS:
        if col == "knobs":
            version = (getattr(result, "device", None) or {}).get("cudnn_backend")
            out["knobs"] = [_knob_text(row, version) for _, row in frame.iterrows()]
            continue
        if col not in frame.columns:
            continue
        title, fmt = PLAN_TABLE_COLUMNS.get(col, (col, None))
        values = frame[col]
        out[title] = [None if _missing(v) else (fmt(v) if fmt else v) for v in values]
    return pd.DataFrame(out, index=range(1, len(frame) + 1))


def _missing(value: Any) -> bool:
    import pandas as pd

    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def ties(frame: Any, column: str, *, rel: float = 1e-3, lowest: bool = True) -> Any:
    """Rows whose ``column`` is within ``rel`` (relative) of the column's minimum (``lowest``) or maximum: the
    plans that tie for most accurate, fastest, ... A single row means a clear winner."""
    import pandas as pd

    values = pd.to_numeric(frame[column], errors="coerce")
    target = values.min() if lowest else values.max()
    if pd.isna(target):
        return frame.iloc[0:0]
    return frame[(values - target).abs() <= rel * abs(target)]


def band_shares(result: Any) -> Any:
    """One row per (plan, band): the share of output elements inside the band and whether the plan passes it.

    A plan passes a band when every element is inside it and no output is NaN or Inf, so a share below 1 is a fail:
    the figure of these shares and the pass/fail columns of the plan table cannot disagree.
    """
    import pandas as pd

    ran = result.ok if hasattr(result, "ok") else result
    rows = []
    for _, row in ran.iterrows():
        for band, share, passed in (("PyTorch", "within_torch", "pass_torch"), ("cuDNN", "within_cudnn",
                                                                                "pass_cudnn")):
            if _missing(row.get(share)):
                continue
            rows.append({"plan": row["plan"], "engine": int(row["engine_id"]), "band": band,
                         "share within": float(row[share]), "outside": 1.0 - float(row[share]),
                         "passes": bool(row[passed]) if not _missing(row.get(passed)) else None,
                         "rel L2": float(row["rel_l2"]) if not _missing(row.get("rel_l2")) else None,
                         "median (us)": float(row["median_ms"]) * 1e3})
    return pd.DataFrame(rows, columns=["plan", "engine", "band", "share within", "outside", "passes", "rel L2",
                                       "median (us)"])


# ------------------------------------------------------------------------------------------------ graphs

def _inspected(graph: Any) -> dict[str, Any]:
    return graph if isinstance(graph, dict) else graph.inspect()


def inspect_diff(mine: Any, kit: Any) -> Any:
    """Where two frontend graphs differ, from their ``inspect()``: one row per difference (what, name, yours, kit's).

    Tensors are matched by name (dims, strides, dtype, virtual or not); operations by order (type, inputs, outputs,
    parameters). uids are ignored. An empty frame means the graphs are the same.
    """
    import pandas as pd

    a, b = _inspected(mine), _inspected(kit)
    rows = []
    ta, tb = a.get("tensors", {}), b.get("tensors", {})
    for name in list(tb) + [n for n in ta if n not in tb]:
        if name not in ta or name not in tb:
            rows.append(("tensor", name, "present" if name in ta else "missing",
                         "present" if name in tb else "missing"))
            continue
        for key in ("dim", "stride", "dtype", "is_virtual"):
            if ta[name].get(key) != tb[name].get(key):
                rows.append((f"tensor {key}", name, ta[name].get(key), tb[name].get(key)))
    na, nb = a.get("nodes", []), b.get("nodes", [])
    for i in range(max(len(na), len(nb))):
        x = na[i] if i < len(na) else None
        y = nb[i] if i < len(nb) else None
        label = (y or x or {}).get("name", f"node {i}")
        if x is None or y is None:
            rows.append(("operation", label, "present" if x else "missing", "present" if y else "missing"))
            continue
        for key in ("type", "inputs", "outputs", "params"):
            if x.get(key) != y.get(key):
                rows.append((f"operation {key}", label, x.get(key), y.get(key)))
    return pd.DataFrame(rows, columns=["what", "name", "yours", "kit's"])


def check_graph(graph: Any, kit: Any, *, name: str = "answer") -> bool:
    """Referee for a graph the student wrote with ``cudnn.pygraph``: compare its ``inspect()`` with the kit's graph
    (:func:`inspect_diff`) and print right, or wrong with every difference (a table). ``None``: not answered yet.
    Returns whether they are the same, so a check cell can go on to the prediction."""
    if graph is None or graph is Ellipsis:
        print(verdict(None, None, name=name).text)
        return False
    diff = inspect_diff(graph, kit)
    if diff.empty:
        print(f"{RIGHT}: {name} is the kit's graph: the same tensors (dims, strides, dtypes, virtual or not) and the "
              "same operations in the same order.")
        return True
    print(f"{WRONG}: {name} differs from the kit's graph in {len(diff)} place(s):")
    print(diff.to_string(index=False))
    return False


# ------------------------------------------------------------------------------------------------ sweeps, GPUs

def best_per_point(frame: Any) -> Any:
    """One row per sweep point that ran: its best plan (the sweep's ``is_best`` flag), with ``intensity`` (FLOP per
    byte at minimal bytes) and ``us`` (the median in microseconds) added."""
    ok = frame[(frame["status"] == "ok") & frame["median_ms"].notna()]
    if "point_status" in ok.columns:
        ok = ok[ok["point_status"] == "ok"]
    flag = ok["is_best"].fillna(False).astype(bool) if "is_best" in ok.columns else None
    best = (ok[flag] if flag is not None else ok.sort_values("median_ms")).drop_duplicates("point_id").copy()
    best["intensity"] = best["flops"].astype("float64") / best["min_bytes"].astype("float64")
    best["us"] = best["median_ms"].astype("float64") * 1e3
    return best.reset_index(drop=True)


def regret_per_point(frame: Any) -> Any:
    """One row per sweep point that ran: the heuristic's pick with ``regret`` (pick's median over the best's),
    ``best_plan`` and ``best_ms`` (the results layer's one definition of pick, best and regret)."""
    return sweep_regret(frame)


def gpu_ratios(frame_a: Any, frame_b: Any) -> Any:
    """The problems two sweeps both ran, side by side: one row per problem (by label) with each GPU's best time, the
    speedup of B over A (time A / time B), the intensity and each GPU's measured ceilings."""
    a, b = best_per_point(frame_a), best_per_point(frame_b)
    keep = ["label", "op", "spec_dtype", "flops", "min_bytes", "intensity", "us", "tflops", "ceiling_tflops",
            "ceiling_gbps", "gpu"]
    a = a[[c for c in keep if c in a.columns]]
    b = b[[c for c in keep if c in b.columns]]
    both = a.merge(b[["label", "us", "tflops", "ceiling_tflops", "ceiling_gbps", "gpu"]], on="label",
                   suffixes=("_a", "_b"))
    both["speedup"] = both["us_a"] / both["us_b"]
    return both.rename(columns={"spec_dtype": "dtype"}).sort_values("intensity").reset_index(drop=True)


def waves(tiles: int, sms: int, per_sm: int = 1) -> dict[str, float]:
    """Wave quantization: ``tiles`` thread blocks on ``sms`` multiprocessors holding ``per_sm`` each run in
    ceil(tiles / (sms * per_sm)) waves; ``busy`` is the share of block slots busy averaged over all the waves,
    tiles / (whole waves * slots), and ``last wave busy`` the share the last wave alone keeps busy."""
    slots = sms * per_sm
    full = math.ceil(tiles / slots)
    return {"tiles": tiles, "slots": slots, "waves": tiles / slots, "whole waves": full,
            "busy": tiles / (full * slots), "last wave busy": (tiles - slots * (full - 1)) / slots}


def tile_shape(kernel: str) -> tuple[int, ...] | None:
    """The tile a kernel's name announces (``..._tilesize128x128x64_...``, ``..._128x128x32_...``), or None; the
    reading is :func:`cudnn_lab.kernel_names.read`'s."""
    tile = read_kernel_name(kernel or "").tile
    if not tile:
        return None
    return tuple(int(t) for t in re.findall(r"\d+", tile))


def kernels_frame(result: Any) -> Any:
    """One row per (plan, kernel) of a result whose plan table carries kernels (measured with CUPTI), with the plain
    reading of each name and its tile as a tuple: the results layer's ``kernels_table``; empty for a result made
    without kernels."""
    plans = result.plans if hasattr(result, "plans") else result
    table = kernels_table(plans).rename(columns={"engine_id": "engine"})
    table["tile"] = [tuple(int(t) for t in re.findall(r"\d+", tile)) or None if isinstance(tile, str) else None
                     for tile in table["tile"]]
    for col in ("count", "us", "total_us"):
        table[col] = table[col].astype("float64")
    return table[["plan", "engine", "kernel", "kind", "reading", "count", "us", "total_us", "tile"]]


def main_tile(kernels: Any) -> tuple[int, ...] | None:
    """The tile of the kernel that takes most of a plan's time, from a plan row's ``kernels`` value (JSON text or a
    list of {name, count, us, total_us}); None when no kernel names a tile or the value is missing."""
    if kernels is None or (not isinstance(kernels, (list, tuple, str)) and _missing(kernels)):
        return None
    try:
        items = json.loads(kernels) if isinstance(kernels, str) else list(kernels)
    except ValueError:
        return None
    best: tuple[float, tuple[int, ...]] | None = None
    for item in items:
        if not isinstance(item, dict):
            continue
        tile = tile_shape(str(item.get("name") or ""))
        weight = item.get("total_us", item.get("us", 0))
        weight = float(weight) if _is_number(weight) else 0.0
        if tile and (best is None or weight > best[0]):
            best = (weight, tile)
    return best[1] if best else None


# ------------------------------------------------------------------------------------------------ heuristics (03)

def proposal_times() -> Any:
    """One row per shipped single-run recording whose plans came from cuDNN's heuristics: its ``propose`` phase in
    seconds (``settings["phase_s"]``: for each heuristic mode a graph, ``validate``, ``build_operation_graph``,
    ``create_execution_plans``, ``check_support``, then each plan's name, knobs and notes) and whether the run was the
    first of its process (it alone paid the ``import`` phase). Left out: recordings without phase times, those whose
    proposals were recalled from the kit's heuristics cache, and those whose proposal phase is zero (plans from
    cuDNN's classic API, no heuristics)."""
    import pandas as pd

    rows = []
    runs = recorded_datasets(kind="run")
    for name, gpu, path in zip(runs["name"], runs["gpu"], runs["path"]):
        try:
            settings = json.loads(Path(path).read_text(encoding="utf-8")).get("settings") or {}
        except (OSError, ValueError):
            continue
        phases = settings.get("phase_s") or {}
        propose = phases.get("propose")
        if settings.get("proposals_recalled"):  # read back from the kit's heuristics cache, not asked
            continue
        if not _is_number(propose) or float(propose) <= 0:
            continue
        imported = phases.get("import")
        first = _is_number(imported) and float(imported) > 0
        rows.append({"name": name, "gpu": gpu, "propose_s": float(propose), "first_in_process": bool(first)})
    return pd.DataFrame(rows, columns=["name", "gpu", "propose_s", "first_in_process"])


def ranks_from_zero(fig: Any) -> Any:
    """:func:`cudnn_lab.plots.heuristic_vs_measured`'s figure with both ranks counted from 0, as the plan table's
    ``heuristic_rank`` is (x: 0 = the heuristic's pick; y: 0 = the fastest plan): the points, the diagonal, the axis
    ranges, the axis titles and the hover text move down by one. Returns the same figure."""

    def down(values: Any) -> Any:
        return None if values is None else tuple(v - 1 for v in values)

    def relabel(text: Any) -> str:
        return re.sub(r"\b(heuristic rank|measured rank) (\d+)", lambda m: f"{m[1]} {int(m[2]) - 1}", str(text))

    for trace in fig.data:
        trace.x, trace.y = down(trace.x), down(trace.y)
        if trace.hovertext is not None and not isinstance(trace.hovertext, str):
            trace.hovertext = [relabel(t) for t in trace.hovertext]
    for axis, title in ((fig.layout.xaxis, "heuristic rank among plans that ran (0 = the pick)"),
                        (fig.layout.yaxis, "measured rank (0 = fastest median)")):
        axis.title.text = title
        if axis.range is not None:
            axis.range = [axis.range[0] - 1, axis.range[1] - 1]
    return fig
