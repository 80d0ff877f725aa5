"""What-if on another cuDNN version, measured: run a spec under the cuDNN in another library folder and lay the
two runs side by side (:class:`RunDrift`). The run goes to a process of its own
(``python -m cudnn_lab.whatif.versions SPEC OPTIONS OUT``): the parent (:func:`run_under`) puts that cuDNN's folder
first on ``LD_LIBRARY_PATH``; the child loads the frontend (and so that cuDNN) before torch, turns torch's own cuDNN
use off (torch refuses a cuDNN it was not built with: docs/FINDINGS.md) and runs the spec with the kit's run, without
PyTorch baselines (those come from the parent's process). The kit modules imported at this module's top load neither
torch nor cudnn, so the frontend's cuDNN is still the first one loaded in the child.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import DataError, NoGPUError, OptionError, shorten
from ..options import RunOptions
from ..provenance import cudnn_version_text
from ..results import RunResult, load_results, recorded_datasets, recordings
from ..results.loading import MAX_JSON_BYTES
from ..results.loading import read_json
from ..results.metrics import best, tied_with_best
from ..runs import run
from ..specs import Spec, spec_from_json
from .heuristics import WHATIF_DIR

__all__ = ["run_under", "run_drift", "RunDrift", "recorded_run_drifts", "RUNS_DIR"]


def run_under(spec: Spec, cudnn_lib: Any, options: Any = None, *, timeout_s: float = 900.0) -> Any:
    """Run ``spec`` with the kit's run under the cuDNN in ``cudnn_lib`` (a folder holding libcudnn*.so.9), in a
    process of its own (this module run as a script); returns its RunResult, without PyTorch baselines."""
    import subprocess
    import tempfile

    from ..gpu.asker import check_cudnn_folder, worker_env  # heavy: imports graphviz

    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.ConvSpec(...))")
    folder = check_cudnn_folder(cudnn_lib)
    opts = RunOptions.coerce(options)
    from ..gpu.session import require_gpu  # heavy: imports graphviz

    require_gpu(opts.device)
    with tempfile.TemporaryDirectory(prefix="cudnn-lab-version-") as tmp:
        out = Path(tmp) / "result.json"
        try:
            proc = subprocess.run([sys.executable, "-m", "cudnn_lab.whatif.versions", spec.to_json(),
                                   json.dumps(opts.to_dict()), str(out)], env=worker_env(folder),
                                  capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise NoGPUError(f"the run under the cuDNN in {folder} gave no result within {timeout_s:.0f} s") from None
        if not out.exists():
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no message"]
            raise NoGPUError(f"the run under the cuDNN in {folder} ended without a result (exit code "
                             f"{proc.returncode}: {shorten(tail[0], 200)})")
        data = read_json(out, "result JSON")  # read once: the worker's error, or its result
        if isinstance(data, dict) and "error" in data:
            raise DataError(folder, f"the run under this cuDNN failed: {data['error']}: "
                                    f"{shorten(data['message'], 300)}")
        return RunResult.from_dict(data, source=out)


@dataclasses.dataclass(frozen=True)
class RunDrift:
    """The same spec run under two cuDNN versions on this GPU: plan lists, times, errors and the best plan (with
    the kit's ties rule: a best within the tie band of the other's is no change)."""

    old: Any
    new: Any

    @staticmethod
    def plans(result: Any) -> Any:
        """The plans the heuristics proposed (a run's engine-space sample left out: the other run has none)."""
        p = result.plans
        return p[p["proposed"].fillna(True).astype(bool)] if "proposed" in p else p

    @staticmethod
    def version(result: Any) -> int:
        return int(result.settings.get("cudnn_lib_version") or result.device.get("cudnn_backend") or 0)

    def frame(self) -> Any:
        va, vb = cudnn_version_text(self.version(self.old)), cudnn_version_text(self.version(self.new))
        cols = ["plan", "engine_id", "median_ms", "rel_l2", "pass_cudnn"]
        pa, pb = self.plans(self.old), self.plans(self.new)
        a = pa[[c for c in cols if c in pa]].set_index("plan")
        b = pb[[c for c in cols if c in pb]].set_index("plan")
        joined = a.add_suffix(f" ({va})").join(b.add_suffix(f" ({vb})"), how="outer")
        joined["in"] = ["both" if p in a.index and p in b.index else f"only {va}" if p in a.index else f"only {vb}"
                        for p in joined.index]
        return joined.reset_index()

    def best(self, result: Any) -> tuple[str | None, float | None, list[str]]:
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
        return not (a == b or a in tied_b or b in tied_a)

    def summary(self) -> str:
        va, vb = cudnn_version_text(self.version(self.old)), cudnn_version_text(self.version(self.new))
        a, ta, _ = self.best(self.old)
        b, tb, _ = self.best(self.new)
        f = self.frame()
        both = int((f["in"] == "both").sum())
        def fmt(plan: str | None, ms: float | None) -> str:
            return "no plan ran" if plan is None else f"{plan} at {ms * 1e3:.1f} us"
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


def main(argv: list[str]) -> int:
    """Run the spec and write its result (or the error) to OUT; 0 on success, 1 on a failure written to OUT."""
    spec_json, options_json, out = argv
    out_path = Path(out)
    try:
        import cudnn  # first: the folder on LD_LIBRARY_PATH provides libcudnn, not torch's wheel

        version = int(cudnn.backend_version())
        import torch

        torch.backends.cudnn.enabled = False  # torch's conv/SDPA paths would refuse this cuDNN
        spec = spec_from_json(spec_json)
        options = {**json.loads(options_json), "baselines": False}
        result = run(spec, options)
        result.settings["cudnn_lib_version"] = version
        result.save(out_path)
        return 0
    except Exception as e:  # noqa: BLE001 - every failure goes back to the parent as data, in one line
        out_path.write_text(json.dumps({"error": type(e).__name__, "message": str(e)[:4000]}))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
