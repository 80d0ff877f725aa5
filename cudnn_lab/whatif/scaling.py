"""How a graph's time grows as it is given fewer SMs: ``sm_scaling(spec)`` runs it on the whole GPU and under SM
carve-outs (``cudnn.pygraph(sm_count=N)``, the run option ``sm_count``) and lines the counts up.

Each count is one ordinary run (``cudnn_lab.runs.run`` with ``RunOptions(sm_count=n)``; None is the whole GPU):
every plan the heuristics propose there is built, checked against the float64 reference and timed, so the frame has
one row per (count, plan). Per count, :attr:`ScalingResult.per_count` gives the best plan's time and the *ideal*
time, the whole GPU's best scaled by full/n, as if time were inversely proportional to the SMs given. Only the
compute share shrinks under a carve-out: memory bandwidth and L2 stay the whole GPU's (:data:`LABEL`), so a
memory-bound graph may lose little.

Not every engine takes a carve-out (measured on an H200, 2026-11-26): convolution engines do (a ResNet-50 3x3 conv
NHWC fp16 32x256x28x28, k=256: best plan 48.9 us on 132 SMs, 56.7 on 114, 71.4 on 78, 75.0 on 66; 2 of 40 plans
were no longer proposed), while matmul, SDPA, genstats-fusion and FP8 engines refuse with cuDNN's reason
``target_sm_count != deviceProp.multiProcessorCount``. :attr:`ScalingResult.refused` lists, per carve-out, the plans
that failed there with cuDNN's reason, the plans the heuristics listed on the whole GPU but not under the carve-out,
and, where no plan ran at all, the engines cuDNN's message names.

Wave quantization is left out: the kit's results do not record a plan's grid (the CTAs a kernel launches, split-K,
CTAs per SM, persistent scheduling), only its kernels' names and times. The tile a kernel's name announces is given
(column ``tile``) where there is one; turning it into a CTA count would be a guess about how the engine maps the
problem, so no wave count is made up.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import DataError, NoGPUError, OptionError, UnsupportedGraphError, shorten
from ..options import RunOptions, check_sm_count
from ..specs import Spec
from ..capabilities import gpu_visible
from ..course import main_tile, waves
from ..results import metrics, recordings
from ..results.labels import SCALING_LABEL
from ..results.loading import parse_json, read_text, spec_from_data
from ..results.run import json_ready, typed_columns
from ..runs import check_carve_out, check_progress, check_runnable, check_spec, run
from ..gpu.reasons import category_of, read_reasons

__all__ = ["ask", "LABEL", "DEFAULT_SM_COUNTS", "FRAME_COLUMNS", "REFUSED_COLUMNS", "PER_COUNT_COLUMNS",
           "ScalingResult", "sm_scaling", "check_sm_counts"]

#: What a carve-out scales and what it does not; every ScalingResult and its figure carry it.
LABEL = SCALING_LABEL
#: The counts asked by default: the whole GPU, then carve-outs (an H100/H200 has 132 SMs; 114 is an H100 PCIe's).
DEFAULT_SM_COUNTS: tuple[int | None, ...] = (None, 114, 78, 66)
FORMAT = "cudnn-lab sm-scaling"
VERSION = 1
#: Most counts one call takes (each is a full run).
MAX_COUNTS = 64

#: One row per (count, plan): ``sm_count`` as asked (<NA>: the whole GPU), ``sms`` the SMs it ran on, then the
#: run's plan columns (``results.run.PLAN_COLUMNS``), ``tile`` (the main kernel's tile, from its name) and
#: ``is_best`` (the run's best plan: the fastest passing cuDNN's band).
FRAME_COLUMNS: tuple[str, ...] = (
    "sm_count", "sms", "plan", "engine_id", "knobs", "heuristic_rank", "status", "error", "median_ms", "iqr_ms",
    "min_ms", "tflops", "gbps", "kernel_ms", "tile", "pass_cudnn", "from_cache", "reused", "is_best")
#: One row per plan or engine a carve-out refused: ``how`` is build_failed / run_failed (the plan table's status),
#: not_proposed (listed on the whole GPU, not under the carve-out; cuDNN gives no reason) or no_plan (nothing ran:
#: the engines cuDNN's message names, or the message itself); ``category`` is ``why_not``'s.
REFUSED_COLUMNS: tuple[str, ...] = ("sm_count", "sms", "plan", "engine_id", "how", "category", "reason")
#: One row per count (:attr:`ScalingResult.per_count`).
PER_COUNT_COLUMNS: tuple[str, ...] = (
    "sm_count", "sms", "best_plan", "best_engine", "best_ms", "ideal_ms", "over_ideal", "tile", "tiles", "waves",
    "plans_listed", "plans_ok", "refused", "error")
_INT = ("sm_count", "sms", "engine_id", "heuristic_rank")
_FLOAT = ("median_ms", "iqr_ms", "min_ms", "tflops", "gbps", "kernel_ms")
_BOOL = ("pass_cudnn", "from_cache", "reused", "is_best")
_TEXT = ("plan", "knobs", "status", "error", "how", "category", "reason")
#: Longest text a row's cell may hold (cuDNN's reasons included).
MAX_CELL_TEXT = 20_000
_TILE = re.compile(r"[0-9]{1,5}(?:x[0-9]{1,5}){1,2}")
NOT_PROPOSED = "listed by the heuristics on the whole GPU but not under this carve-out (cuDNN gives no reason)"


def check_sm_counts(sm_counts: Any) -> tuple[int | None, ...]:
    """The counts to run: a non-empty list or tuple holding None (the whole GPU, the base of the ideal time) and
    whole numbers >= 1, each once; OptionError naming sm_counts otherwise. (A count above the GPU's SMs is refused
    once the GPU is known.)"""
    allowed = ("must be a list or tuple of SM counts with None (the whole GPU) among them: None and whole numbers "
               ">= 1, each once, e.g. (None, 114, 78, 66)")
    if not isinstance(sm_counts, (list, tuple)) or not sm_counts:
        raise OptionError("sm_counts", sm_counts, allowed, where="sm_scaling")
    if len(sm_counts) > MAX_COUNTS:
        raise OptionError("sm_counts", f"<{len(sm_counts)} counts>", f"at most {MAX_COUNTS} counts (each is a run)",
                          where="sm_scaling")
    out: list[int | None] = []
    for n in sm_counts:
        if n is None:
            out.append(None)
            continue
        try:
            out.append(check_sm_count(n, "sm_counts"))
        except OptionError as e:
            raise OptionError("sm_counts", sm_counts, f"{allowed}; {shorten(n, 30)} {e.allowed}",
                              where="sm_scaling") from None
    if len(set(out)) != len(out):
        twice = sorted({str(n) for n in out if out.count(n) > 1})
        raise OptionError("sm_counts", sm_counts, f"{allowed}; given twice: {', '.join(twice)}", where="sm_scaling")
    if None not in out:
        raise OptionError("sm_counts", sm_counts, f"{allowed}; None is missing (the whole GPU's best is the base of "
                          "the ideal time)", where="sm_scaling")
    return tuple(out)


def _count_text(sm_count: Any, sms: Any) -> str:
    return f"whole GPU ({sms} SMs)" if sm_count is None else f"{sm_count} SMs"


def _na(value: Any) -> bool:
    try:
        import pandas as pd

        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


@dataclasses.dataclass(frozen=True, eq=False)
class ScalingResult:
    """What :func:`sm_scaling` measured: one row per (count, plan) in :attr:`rows` (:meth:`frame`), the refusals in
    :attr:`refused`, per count the best and ideal times in :attr:`per_count`, and :attr:`label` (only the compute
    share is scaled). ``errors`` holds, per carve-out under which no plan ran, the run's error (cuDNN's reasons)."""

    spec: Spec
    sm_counts: tuple[int | None, ...]
    #: the GPU's SM count (what None ran on)
    full_sm_count: int
    #: pandas.DataFrame with FRAME_COLUMNS (written as the record's ``frame`` field: recorded files read as before)
    rows: Any
    refused: Any  # pandas.DataFrame with REFUSED_COLUMNS
    device: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the run options every count shared (sm_count aside)
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    errors: tuple[tuple[int, str], ...] = ()
    label: str = LABEL
    created: str = ""

    # ------------------------------------------------------------------ views
    def sms(self, sm_count: int | None) -> int:
        """The SMs a count ran on (None: the whole GPU's)."""
        return self.full_sm_count if sm_count is None else int(sm_count)

    @property
    def whole_gpu_best_ms(self) -> float | None:
        """The whole GPU's best time (ms), the base of the ideal times; None when no plan ran there."""
        rows = self._best_rows(None)
        return float(rows["median_ms"].iloc[0]) if len(rows) else None

    def _rows(self, sm_count: int | None) -> Any:
        col = self.rows["sm_count"]
        return self.rows[col.isna()] if sm_count is None else self.rows[col.notna() & (col == sm_count)]

    def _best_rows(self, sm_count: int | None) -> Any:
        rows = self._rows(sm_count)
        best = rows[rows["is_best"].fillna(False).astype(bool)]
        return best[best["median_ms"].notna()]

    @property
    def per_count(self) -> Any:
        """One row per count, in the order asked: the best plan and its time, the ideal time (the whole GPU's best
        x full/n) and the best over the ideal, the best plan's tile (from its kernel's name), the output tiles
        it makes of the GEMM view (conv fprop, matmul) and their waves at one tile per SM at a time (an assumption),
        how many plans were listed, ran and were refused, and the error where none ran."""
        import pandas as pd

        base = self.whole_gpu_best_ms
        errors = dict(self.errors)
        rows = []
        for n in self.sm_counts:
            sms = self.sms(n)
            listed = self._rows(n)
            best = self._best_rows(n)
            b = best.iloc[0] if len(best) else None
            best_ms = float(b["median_ms"]) if b is not None else math.nan
            ideal = base * self.full_sm_count / sms if base is not None else math.nan
            refused = self.refused[self.refused["sm_count"].isna() if n is None else
                                   (self.refused["sm_count"].notna() & (self.refused["sm_count"] == n))]
            rows.append({"sm_count": n, "sms": sms, "best_plan": None if b is None else b["plan"],
                         "best_engine": None if b is None else b["engine_id"], "best_ms": best_ms,
                         "ideal_ms": ideal, "over_ideal": best_ms / ideal if ideal and not math.isnan(ideal) else
                         math.nan, "tile": None if b is None else b["tile"], "plans_listed": len(listed),
                         "plans_ok": int((listed["status"] == "ok").sum()), "refused": len(refused),
                         "error": errors.get(n) if n is not None else None,
                         **_waves(self.spec, None if b is None else b["tile"], sms)})
        out = pd.DataFrame(rows, columns=list(PER_COUNT_COLUMNS))
        for col in ("sm_count", "sms", "best_engine", "plans_listed", "plans_ok", "refused"):
            out[col] = out[col].astype("Int64")
        for col in ("best_ms", "ideal_ms", "over_ideal", "tiles", "waves"):
            out[col] = out[col].astype("float64")
        return out

    def frame(self) -> Any:
        """One row per (count, plan): a copy of :attr:`rows` (FRAME_COLUMNS), the what-if answer types' table."""
        return self.rows.copy()

    def refused_at(self, sm_count: int) -> Any:
        """The refusals of one carve-out (rows of :attr:`refused`)."""
        col = self.refused["sm_count"]
        return self.refused[col.notna() & (col == sm_count)].reset_index(drop=True)

    def summary(self) -> str:
        """A few lines: the GPU, then per count the best time against the ideal, and what was refused."""
        gpu = self.device.get("gpu", "unknown GPU")
        lines = [f"{self.spec.label()} on {gpu} ({self.full_sm_count} SMs); {self.label}"]
        for _, r in self.per_count.iterrows():
            where = _count_text(None if _na(r["sm_count"]) else int(r["sm_count"]), self.full_sm_count)
            if _na(r["best_plan"]):
                lines.append(f"{where}: no plan ran ({(r['error'] or 'see .refused').splitlines()[0][:200]})")
                continue
            lines.append(f"{where}: best {r['best_plan']} {r['best_ms'] * 1e3:.1f} us, ideal "
                         f"{r['ideal_ms'] * 1e3:.1f} us ({r['over_ideal']:.2f}x); {r['plans_ok']} of "
                         f"{r['plans_listed']} plans ran" + (f", {r['refused']} refused" if r["refused"] else ""))
        return "\n".join(lines)

    # ------------------------------------------------------------------ records
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN and <NA> as None), read back by :meth:`from_dict`."""
        def records(frame: Any) -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = frame.astype(object).where(frame.notna(), None).to_dict("records")
            return out

        data: dict[str, Any] = json_ready({
            "format": FORMAT, "version": VERSION, "spec": self.spec.to_dict(), "sm_counts": list(self.sm_counts),
            "full_sm_count": self.full_sm_count, "device": dict(self.device), "settings": dict(self.settings),
            "label": self.label, "created": self.created, "frame": records(self.rows),
            "refused": records(self.refused), "errors": [{"sm_count": n, "error": e} for n, e in self.errors]})
        return data

    @classmethod
    def from_dict(cls, data: Any, *, source: Any = "sm-scaling dict") -> ScalingResult:
        """Inverse of :meth:`to_dict`; DataError naming ``source`` and the field for anything not of its shape."""
        if not isinstance(data, dict):
            raise DataError(source, f"an SM-scaling record must be an object, not {type(data).__name__}")
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise DataError(source, f"not an SM-scaling record (format must be {FORMAT!r}, version {VERSION})")
        spec = spec_from_data(data.get("spec"), source)
        try:
            counts = check_sm_counts(data.get("sm_counts"))
        except OptionError as e:
            raise DataError(source, f"field sm_counts: {e.allowed}") from None
        full = data.get("full_sm_count")
        if type(full) is not int or full < 1 or any(n is not None and n > full for n in counts):
            raise DataError(source, "field full_sm_count must be the GPU's SM count, a whole number >= every count")
        for key in ("device", "settings"):
            if not isinstance(data.get(key, {}), dict):
                raise DataError(source, f"field {key} must be an object")
        for key in ("label", "created"):
            if not isinstance(data.get(key, ""), str):
                raise DataError(source, f"field {key} must be text")
        errors = data.get("errors", [])
        if not isinstance(errors, list) or not all(
                isinstance(e, dict) and type(e.get("sm_count")) is int and e["sm_count"] in counts
                and isinstance(e.get("error"), str) for e in errors):
            raise DataError(source, "field errors must be a list of {sm_count: one of sm_counts, error: text}")
        return cls(spec=spec, sm_counts=counts, full_sm_count=full,
                   rows=_frame(data.get("frame"), FRAME_COLUMNS, source, "frame", counts),
                   refused=_frame(data.get("refused"), REFUSED_COLUMNS, source, "refused", counts),
                   device=dict(data.get("device", {})), settings=dict(data.get("settings", {})),
                   errors=tuple((int(e["sm_count"]), e["error"]) for e in errors),
                   label=data.get("label", LABEL), created=data.get("created", ""))

    def _repr_html_(self) -> str:
        import html

        table: str = self.per_count.to_html(index=False)
        return (f"<p><b>{html.escape(self.spec.label())}</b> on {html.escape(str(self.device.get('gpu', '')))}: "
                f"{html.escape(self.label)}</p>" + table)


def _frame(rows: Any, columns: tuple[str, ...], source: Any, field: str, counts: tuple[int | None, ...]) -> Any:
    """Rows as a frame with exactly ``columns`` and the kit's dtypes; DataError for rows not of that shape."""
    import pandas as pd

    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataError(source, f"field {field} must be a list of row objects")
    for i, r in enumerate(rows):
        unknown = [k for k in r if k not in columns]
        if unknown:
            raise DataError(source, f"field {field}[{i}] has unknown column {shorten(unknown[0], 40)}")
        if r.get("sm_count") not in counts:
            raise DataError(source, f"field {field}[{i}].sm_count must be one of sm_counts")
        for k in _INT:
            v = r.get(k)
            if k in r and v is not None and type(v) is not int:
                raise DataError(source, f"field {field}[{i}].{k} must be a whole number or null")
        for k in _FLOAT:
            v = r.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                                  or v < 0):
                raise DataError(source, f"field {field}[{i}].{k} must be a finite number >= 0 or null, not "
                                        f"{shorten(v, 40)}")
        for k in _TEXT:
            v = r.get(k)
            if v is not None and (not isinstance(v, str) or len(v) > MAX_CELL_TEXT):
                raise DataError(source, f"field {field}[{i}].{k} must be text of at most {MAX_CELL_TEXT} characters "
                                        f"or null, not {shorten(v, 40)}")
        if "tile" in r and r["tile"] is not None and _tile_dims(r["tile"]) is None:
            raise DataError(source, f"field {field}[{i}].tile must be a kernel tile such as 128x128x64 (2 or 3 "
                                    f"whole numbers >= 1 joined by x) or null, not {shorten(r['tile'], 40)}")
        for k in _BOOL:
            if r.get(k) is not None and not isinstance(r[k], bool):
                raise DataError(source, f"field {field}[{i}].{k} must be true, false or null")
    return _typed(pd.DataFrame(rows, columns=list(columns)))


def _typed(frame: Any) -> Any:
    """The kit's dtypes: whole numbers as Int64 (<NA> for the whole GPU's sm_count), times as float64, flags as
    boolean, text as object."""
    return typed_columns(frame, _INT, _FLOAT, _BOOL).reset_index(drop=True)


# ---------------------------------------------------------------------------------------------- measuring


def _tile_dims(tile: Any) -> tuple[int, ...] | None:
    """A kernel tile's dimensions ("128x128x64" -> (128, 128, 64)): 2 or 3 whole numbers 1-65535 in ASCII digits,
    read by meaning (not int() of anything: no signs, underscores or other scripts' digits); None otherwise."""
    if not isinstance(tile, str) or not _TILE.fullmatch(tile):
        return None
    dims = tuple(int(d) for d in tile.split("x"))
    return dims if all(0 < d < 65536 for d in dims) else None


def _waves(spec: Spec, tile: Any, sms: int) -> dict[str, Any]:
    """Output tiles of the best plan's kernel tile over the GEMM view of ``spec``, and the waves they make on
    ``sms`` SMs at one tile per SM at a time (an assumption: occupancy is not recorded); NaN where unknown."""
    mn = spec.gemm_mn()
    dims = list(_tile_dims(tile) or ())[:2]
    if mn is None or len(dims) < 2:
        return {"tiles": math.nan, "waves": math.nan}
    tiles = math.ceil(mn[0] / dims[0]) * math.ceil(mn[1] / dims[1])
    return {"tiles": tiles, "waves": waves(tiles, sms)["waves"]}


def _tile(kernels: Any) -> str | None:
    tile = main_tile(kernels)
    return "x".join(str(t) for t in tile) if tile else None


def _rows_of(result: Any, sm_count: int | None, sms: int) -> list[dict[str, Any]]:
    """The frame's rows of one run: every plan it listed (explored configurations aside), the best one marked."""
    plans = result.plans
    best = metrics.best(plans)
    best_name = None if best is None else best["plan"]
    rows = []
    for _, p in plans.iterrows():
        row = {c: (None if _na(p.get(c)) else p.get(c)) for c in FRAME_COLUMNS if c in plans.columns}
        row.update(sm_count=sm_count, sms=sms, tile=_tile(p.get("kernels")), is_best=p["plan"] == best_name)
        rows.append(row)
    return rows


def _refusals(sm_count: int, sms: int, result: Any, whole: Any, max_plans: int | None) -> list[dict[str, Any]]:
    """A carve-out's refusals from its run: plans that failed there with cuDNN's error, and plans the whole GPU's
    heuristics listed that this carve-out's did not (only when every proposal was listed: no max_plans)."""
    out = []
    plans = result.plans
    for _, p in plans[plans["status"].isin(("build_failed", "run_failed"))].iterrows():
        reason = "" if _na(p.get("error")) else str(p["error"])
        out.append({"sm_count": sm_count, "sms": sms, "plan": p["plan"], "engine_id": p.get("engine_id"),
                    "how": p["status"], "category": category_of("", reason), "reason": reason})
    if max_plans is None and whole is not None:
        here = set(plans["plan"])
        for _, p in whole.plans.iterrows():
            if p["plan"] not in here:
                out.append({"sm_count": sm_count, "sms": sms, "plan": p["plan"], "engine_id": p.get("engine_id"),
                            "how": "not_proposed", "category": "not proposed", "reason": NOT_PROPOSED})
    return out


def _no_plan(sm_count: int, sms: int, error: UnsupportedGraphError) -> list[dict[str, Any]]:
    """The refusals of a carve-out under which nothing ran: each engine configuration cuDNN's message names, or
    each plan's error the run recorded, or the message itself."""
    detail = error.detail or ""
    reasons = read_reasons(detail)
    if reasons:
        return [{"sm_count": sm_count, "sms": sms, "plan": None, "engine_id": r.engine_id, "how": "no_plan",
                 "category": r.category, "reason": r.reason} for r in reasons]
    out = []
    for line in [x for x in detail.splitlines() if x.strip()] or [error.summary]:
        m = re.match(r"^(eng-?\d+\S*): (.*)$", line)
        plan, reason = (m.group(1), m.group(2)) if m else (None, line)
        engine = re.match(r"eng(-?\d+)", plan) if plan else None
        out.append({"sm_count": sm_count, "sms": sms, "plan": plan,
                    "engine_id": int(engine.group(1)) if engine else None, "how": "no_plan",
                    "category": category_of("", reason), "reason": reason})
    return out


def sm_scaling(spec: Spec, sm_counts: Any = DEFAULT_SM_COUNTS, options: RunOptions | dict[str, Any] | None = None,
               *, progress: Callable[[int, int, str], None] | None = None) -> ScalingResult:
    """Run ``spec`` on the whole GPU (None) and on each SM count in ``sm_counts``; one ScalingResult.

    Each count is a normal run (``cl.run(spec, options, sm_count=n)``) with the same ``options`` (RunOptions, a dict
    or None), so every plan is checked and timed as usual. A carve-out under which no plan runs (engines that
    refuse carve-outs: matmul, SDPA, FP8) is kept in ``errors`` and ``refused`` with cuDNN's reasons; the whole GPU
    must run. ``progress(done, total, message)`` hears of each count.

    Raises OptionError for bad ``sm_counts`` (0, negative, a bool, a duplicate, above the GPU's SMs, no None) or
    options (``sm_count`` is set per count; ``explore`` takes no carve-out), and for a family that runs through a
    classic cuDNN call (on the whole GPU); NoGPUError without a GPU, checked before torch is imported.
    """
    spec = check_spec(spec, where="sm_scaling")
    counts = check_sm_counts(sm_counts)
    opts = check_runnable(RunOptions.coerce(options))
    if opts.sm_count is not None:
        raise OptionError("options", {"sm_count": opts.sm_count}, "must leave sm_count out: sm_scaling sets it per "
                          "count from sm_counts", where="sm_scaling")
    if opts.explore:
        raise OptionError("options", {"explore": opts.explore}, "must leave explore at 0: explored configurations "
                          "are built for the whole GPU, so they take no carve-out", where="sm_scaling")
    progress = check_progress(progress, where="sm_scaling")
    carved = next((n for n in counts if n is not None), None)
    if carved is not None:
        try:
            check_carve_out(spec, opts.replace(sm_count=carved))
        except OptionError as e:
            raise OptionError("sm_counts", sm_counts, e.allowed, where="sm_scaling") from None

    if not gpu_visible():  # before torch is imported
        raise NoGPUError("no NVIDIA GPU is visible to the driver (or PyTorch is not installed), so there is no SM "
                         "count to scale")
    from ..gpu.device import device_info  # heavy: imports graphviz
    from ..gpu.session import require_gpu  # heavy: imports graphviz

    require_gpu(opts.device)
    info = device_info(opts.device)
    full = int(info["sm_count"])
    above = [n for n in counts if n is not None and n > full]
    if above:
        raise OptionError("sm_counts", sm_counts, f"must be at most the GPU's SM count: {info.get('gpu', 'this GPU')} "
                          f"has {full} SMs ({', '.join(map(str, above))} is more)", where="sm_scaling")

    order = [None] + [n for n in counts if n is not None]  # the whole GPU first: its plan list is the reference
    results: dict[int | None, Any] = {}
    errors: dict[int, str] = {}
    refused: list[dict[str, Any]] = []
    for i, n in enumerate(order):
        if progress:
            progress(i, len(order), f"running on {_count_text(n, full)}")
        try:
            results[n] = run(spec, opts.replace(sm_count=n))
        except UnsupportedGraphError as e:
            if n is None:
                raise
            errors[n] = e.summary
            refused += _no_plan(n, n, e)
    if progress:
        progress(len(order), len(order), "done")
    rows: list[dict[str, Any]] = []
    for n in counts:
        if n in results:
            rows += _rows_of(results[n], n, n if n is not None else full)
            if n is not None:
                refused += _refusals(n, n, results[n], results.get(None), opts.max_plans)
    import pandas as pd

    frame = _typed(pd.DataFrame(rows, columns=list(FRAME_COLUMNS)))
    refused_frame = _typed(pd.DataFrame(refused, columns=list(REFUSED_COLUMNS)))
    settings = {k: v for k, v in results[None].settings.items() if k in RunOptions.names() and k != "sm_count"}
    device = {k: v for k, v in results[None].device.items() if isinstance(v, (str, int, float, bool)) or v is None}
    return ScalingResult(spec=spec, sm_counts=counts, full_sm_count=full, rows=frame, refused=refused_frame,
                         device=device, settings=settings,
                         errors=tuple((n, errors[n]) for n in counts if n is not None and n in errors),
                         created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


#: SM-scaling what-ifs recorded on the kit's GPUs (scripts/record_whatif.py --sm-scaling).
RECORDED_DIR = Path(__file__).resolve().parents[1] / "data" / "whatif" / "sm_scaling"
MAX_FILE_BYTES = 16 * 2**20


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = sm_scaling


def load_scaling(path: Any) -> ScalingResult:
    """A ScalingResult saved as JSON (``to_dict``), read with the kit's reading discipline."""
    path, text = read_text(path, "SM-scaling JSON", limit=MAX_FILE_BYTES)
    return ScalingResult.from_dict(parse_json(text, path, "SM-scaling JSON"), source=path)


#: The SM-scaling results recorded on the kit's GPUs, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="sm_scaling", folder=RECORDED_DIR, suffix=".json", max_bytes=MAX_FILE_BYTES, load=load_scaling,
    title="SM-scaling JSON"))


def recorded_scalings(spec: Spec | None = None) -> list[ScalingResult]:
    """The SM-scaling what-ifs recorded on the kit's GPUs (of ``spec`` only, when given), newest first."""
    found: list[ScalingResult] = recordings.read(RECORDING.name, RECORDED_DIR)
    return [r for r in found if spec is None or r.spec == spec][::-1]
