"""What-if on another cuDNN version, measured: run a spec under the cuDNN in another library folder and lay the
two runs side by side (:class:`RunDrift`). The run goes to a kit worker (:mod:`cudnn_lab.gpu.workers`, role
:func:`run_here`) whose environment puts that cuDNN's folder first on ``LD_LIBRARY_PATH``; the role loads the
frontend (and so that cuDNN) before torch, turns torch's own cuDNN use off (torch refuses a cuDNN it was not built
with: docs/FINDINGS.md) and runs the spec with the kit's run, without PyTorch baselines (those come from the parent's
process). The kit modules imported at this module's top load neither torch nor cudnn, so the frontend's cuDNN is
still the first one loaded in the worker.
"""

from __future__ import annotations

import copy
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from ..errors import DataError, NoGPUError, OptionError, WorkerError, shorten
from ..gpu.asker import check_cudnn_folder
from ..gpu.session import require_gpu
from ..gpu.workers import call_once, worker_env
from ..options import RunOptions
from ..provenance import cudnn_version_text
from ..results import RunResult, load_results, recorded_datasets, recordings
from ..results.loading import MAX_JSON_BYTES
from ..results.loading import read_json
from ..results.metrics import best, tied_with_best
from ..runs import run
from ..specs import Spec, spec_from_json
from . import checks
from .heuristics import WHATIF_DIR

__all__ = ["ask", "run_under", "run_drift", "RunDrift", "recorded_run_drifts", "RUNS_DIR", "ROLE"]

#: The worker role that runs a spec under the cuDNN first on its loader path (see :func:`run_here`).
ROLE = f"{__name__}:run_here"


def run_under(spec: Spec, cudnn_lib: Any, options: Any = None, *, timeout_s: float = 900.0) -> RunResult:
    """Run ``spec`` with the kit's run under the cuDNN in ``cudnn_lib`` (a folder holding libcudnn*.so.9), in a kit
    worker of its own; returns its RunResult, without PyTorch baselines. NoGPUError where the worker gives no result
    within ``timeout_s`` or ends without one; DataError where the run under that cuDNN failed."""
    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.ConvSpec(...))")
    folder = check_cudnn_folder(cudnn_lib)
    opts = RunOptions.coerce(options)
    require_gpu(opts.device)
    return _run_in_worker(spec, opts, folder, timeout_s=timeout_s)


def _run_in_worker(spec: Spec, opts: RunOptions, folder: Path, *, timeout_s: float, target: str = ROLE) -> RunResult:
    """The run of ``spec`` by the worker ``target`` (the kit's :data:`ROLE`; tests name a selftest role) with the
    cuDNN in ``folder`` first on its loader path: its RunResult, or the error kinds of :func:`run_under`."""
    with tempfile.TemporaryDirectory(prefix="cudnn-lab-version-") as tmp:
        out = Path(tmp) / "result.json"
        message = {"spec": spec.to_json(), "options": opts.to_dict(), "out": str(out)}
        try:
            reply = call_once(target, message, env=worker_env(folder), timeout_s=timeout_s)
        except WorkerError as e:
            if e.kind == "deadline":
                raise NoGPUError(f"the run under the cuDNN in {folder} gave no result within {timeout_s:.0f} s") \
                    from None
            raise NoGPUError(f"the run under the cuDNN in {folder} ended without a result ({e.how or e.kind}: "
                             f"{shorten(e.detail or 'no message', 200)})") from None
        if "error" in reply:
            raise DataError(folder, f"the run under this cuDNN failed: {reply['error']}: "
                                    f"{shorten(reply.get('message', ''), 300)}")
        if not out.exists():
            raise NoGPUError(f"the run under the cuDNN in {folder} ended without a result (the worker answered "
                             f"{shorten(reply, 200)})")
        return RunResult.from_dict(read_json(out, "result JSON"), source=out)


def run_here(message: dict[str, Any]) -> dict[str, Any]:
    """Worker role (gpu/workers, with another cuDNN first on the loader path): run ``message["spec"]`` with
    ``message["options"]`` and save its result to ``message["out"]``; ``{"saved": path}``, or ``{"error": type,
    "message": text}`` for any failure (as data, in one reply)."""
    try:
        import cudnn  # first: the folder on LD_LIBRARY_PATH provides libcudnn, not torch's wheel

        version = int(cudnn.backend_version())
        import torch

        torch.backends.cudnn.enabled = False  # torch's conv/SDPA paths would refuse this cuDNN
        spec = spec_from_json(message["spec"])
        result = run(spec, {**dict(message.get("options") or {}), "baselines": False})
        result.settings["cudnn_lib_version"] = version
        out = result.save(Path(message["out"]))
        return {"saved": str(out)}
    except Exception as e:  # noqa: BLE001 - every failure goes back to the parent as data, in one reply
        return {"error": type(e).__name__, "message": str(e)[:4000]}


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = run_under


@dataclasses.dataclass(frozen=True)
class RunDrift:
    """The same spec run under two cuDNN versions on this GPU: plan lists, times, errors and the best plan (with
    the kit's ties rule: a best within the tie band of the other's is no change)."""

    old: RunResult
    new: RunResult

    def __post_init__(self) -> None:
        checks.old_and_new(self, RunResult, "a RunResult (cl.run's or run_under's)")
        if self.old.spec != self.new.spec:
            raise OptionError("new", self.new.spec.label(), f"a run of the same spec as old ({self.old.spec.label()})",
                              where="RunDrift")
        for result in (self.old, self.new):
            self.version(result)  # a version the summary cannot read is refused here, naming the field

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the two runs' own dicts (:meth:`RunResult.to_dict`)."""
        return {"old": self.old.to_dict(), "new": self.new.to_dict()}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "run drift") -> RunDrift:
        """Inverse of :meth:`to_dict`: an object holding exactly ``old`` and ``new``, each a run's dict checked by
        :meth:`RunResult.from_dict` (DataError naming ``source`` and the field)."""
        if not isinstance(data, dict):
            raise DataError(source, f"a run drift must be an object, not {shorten(data, 40)}")
        if set(data) != {"old", "new"}:
            raise DataError(source, "a run drift holds exactly the fields old and new, not "
                                    f"{shorten([str(k) for k in data], 80)}")
        return cls(RunResult.from_dict(data["old"], source=f"{source}: field old"),
                   RunResult.from_dict(data["new"], source=f"{source}: field new"))

    @staticmethod
    def plans(result: Any) -> Any:
        """The plans the heuristics proposed (a run's engine-space sample left out: the other run has none)."""
        p = result.plans
        return p[p["proposed"].fillna(True).astype(bool)] if "proposed" in p else p

    @staticmethod
    def version(result: Any) -> int:
        """The cuDNN version a run used (the other library's, where it ran under one): a number (91400), its digits
        or its dotted text ("9.14.0") read as the number; DataError naming the field for anything else; 0 where
        neither field is there."""
        source = result.loaded_from or f"the run of {result.spec.label()}"
        for where, field in ((result.settings, "settings.cudnn_lib_version"), (result.device, "device.cudnn_backend")):
            value = where.get(field.split(".")[1]) if isinstance(where, dict) else None
            if value is not None and value != "":
                return checks.version_number(source, field, value)
        return 0

    def _keys(self, result: Any) -> dict[str, Any]:
        """Plan name -> the plan's identity (engine and knobs), for one run's proposed plans."""
        p = self.plans(result)
        engines = p["engine_id"] if "engine_id" in p else [None] * len(p)
        knobs = p["knobs"] if "knobs" in p else [None] * len(p)
        return {str(n): checks.plan_identity(n, e, k) for n, e, k in zip(p["plan"], engines, knobs)}

    def frame(self) -> Any:
        """One row per plan proposed in either run: engine, time, error and pass in each version, and in which."""
        va, vb = cudnn_version_text(self.version(self.old)), cudnn_version_text(self.version(self.new))
        if va == vb:  # two runs of one version: told apart as old and new
            va, vb = f"{va}, old", f"{vb}, new"
        cols = ["engine_id", "median_ms", "rel_l2", "pass_cudnn"]
        pa, pb = self.plans(self.old), self.plans(self.new)
        ka, kb = self._keys(self.old), self._keys(self.new)
        # one row per plan by its identity (engine and knobs), however each version spells its name
        a = pa[[c for c in cols if c in pa]].set_index(pa["plan"].astype(str).map(ka).rename("key"))
        b = pb[[c for c in cols if c in pb]].set_index(pb["plan"].astype(str).map(kb).rename("key"))
        a, b = a[~a.index.duplicated()], b[~b.index.duplicated()]
        joined = a.add_suffix(f" ({va})").join(b.add_suffix(f" ({vb})"), how="outer", sort=False)
        names = {**{k: n for n, k in ka.items()}, **{k: n for n, k in kb.items()}}
        joined.insert(0, "plan", [names[k] for k in joined.index])
        joined["in"] = ["both" if k in a.index and k in b.index else f"only {va}" if k in a.index else f"only {vb}"
                        for k in joined.index]
        return joined.reset_index(drop=True)

    def best(self, result: Any) -> tuple[str | None, float | None, list[str]]:
        """A run's best plan, its median time and the plans tied with it (None, None, [] where none ran)."""
        plans = self.plans(result)
        row = best(plans)
        if row is None:
            return None, None, []
        return str(row["plan"]), float(row["median_ms"]), tied_with_best(plans)

    @property
    def best_changed(self) -> bool:
        """True when neither version's best plan is tied with the other's best."""
        a, _, tied_a = self.best(self.old)
        b, _, tied_b = self.best(self.new)
        if a is None or b is None:
            return (a is None) != (b is None)
        ka, kb = self._keys(self.old), self._keys(self.new)
        same_a, same_b = ka.get(a, ("plan", a)), kb.get(b, ("plan", b))  # identities: engine and knobs
        return not (same_a == same_b or same_a in {kb.get(t, ("plan", t)) for t in tied_b}
                    or same_b in {ka.get(t, ("plan", t)) for t in tied_a})

    def summary(self) -> str:
        """Plans and best plan in each version, how many in both, and whether the best changed (measured)."""
        va, vb = cudnn_version_text(self.version(self.old)), cudnn_version_text(self.version(self.new))
        a, ta, _ = self.best(self.old)
        b, tb, _ = self.best(self.new)
        f = self.frame()
        both = int((f["in"] == "both").sum())
        def fmt(plan: str | None, ms: float | None) -> str:
            return "no plan ran" if plan is None or ms is None else f"{plan} at {ms * 1e3:.1f} us"
        return (f"cuDNN {va}: {len(self.plans(self.old))} plans, best {fmt(a, ta)}; cuDNN {vb}: "
                f"{len(self.plans(self.new))} "
                f"plans, best {fmt(b, tb)}; {both} plans in both; the best plan "
                f"{'changed' if self.best_changed else 'is the same or tied'} (measured on "
                f"{self.new.device.get('gpu', 'this GPU')}: {va} on {str(self.old.created)[:10] or '?'}, {vb} on "
                f"{str(self.new.created)[:10] or '?'}).")


def run_drift(spec: Spec, cudnn_lib: Any, options: Any = None) -> RunDrift:
    """Run ``spec`` here (the cuDNN in use) and under the cuDNN in ``cudnn_lib``; the two results side by side."""
    other = run_under(spec, cudnn_lib, options)
    here = run(spec, options)
    return (RunDrift(other, here) if RunDrift.version(other) <= RunDrift.version(here) else RunDrift(here, other))


RUNS_DIR = WHATIF_DIR / "runs"


def _own(result: RunResult) -> RunResult:
    """A caller's own copy of a cached recording (its plan table may be changed; the registry's is not)."""
    out = copy.copy(result)
    out.plans = result.plans.copy()
    return out


def _load_run(path: Path) -> RunResult:
    return RunResult.load(path)


#: Runs recorded under another cuDNN, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="version_run", folder=RUNS_DIR, suffix=".json", max_bytes=MAX_JSON_BYTES, load=_load_run,
    title="result JSON"))


def recorded_run_drifts(spec: Spec | None = None) -> list[RunDrift]:
    """Runs recorded under another cuDNN (``data/whatif/runs``), each beside the shipped recording of the same spec
    on the same GPU under the cuDNN in use then: what changed between versions, measured."""
    runs = [_own(r) for r in recordings.read(RECORDING.name, RUNS_DIR)]
    pairs = []
    table = recorded_datasets("run")
    for other in runs:
        if spec is not None and other.spec != spec:
            continue
        same = table[(table["gpu"] == other.device.get("gpu")) & (table["op"] == other.spec.op)]
        for path in same["path"]:
            mine = load_results(path)
            if mine.spec == other.spec and mine.device.get("gpu") == other.device.get("gpu"):
                pairs.append(RunDrift(other, mine) if RunDrift.version(other) <= RunDrift.version(mine)
                             else RunDrift(mine, other))
                break
    return pairs
