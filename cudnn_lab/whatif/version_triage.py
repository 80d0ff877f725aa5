"""Version triage for one problem (issue 38 step 3): run a spec under each cuDNN the machine has (this process's, then
each other library folder: :func:`~cudnn_lab.whatif.versions.run_under`), ask each devicelessly where it loads, and
say in one paragraph which versions plan it, whether their results agree within the band (each run's check against
float64), which plan is fastest under each (median, workspace, build time) and what the named alternatives cost (the
other layout; PyTorch's own kernel, the run's baseline). A missing folder, a refusal or a crash of another cuDNN is
said in the paragraph; the triage goes on.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Callable

from ..errors import CudnnLabError, DataError, NoGPUError, OptionError, PathError, shorten
from ..gpu.asker import check_cudnn_folder
from ..options import RunOptions
from ..provenance import cudnn_version_text
from ..results import RunResult, recordings
from ..results.loading import MAX_JSON_BYTES, read_json
from ..results.metrics import baseline_lines, best, is_finite
from ..specs import Spec, spec_from_dict
from ..gpu.session import require_gpu
from ..runs import run
from .heuristics import WHATIF_DIR, plans_for
from .versions import RunDrift, run_under

__all__ = ["ask", "triage", "Triage", "VersionRun", "recorded_triages", "triage_command", "SYSTEM_CUDNN",
           "LEAN_OPTIONS", "TRIAGE_DIR", "add_cli_parser", "cli_triage"]

_P = TypeVar("_P")

#: Where the GPU hosts keep a second cuDNN (9.14 beside torch's 9.19: /work/shared/GPU_FACTS.md).
SYSTEM_CUDNN = Path("/usr/lib/x86_64-linux-gnu")

#: Lean run options for a triage (under 2 minutes for a 3-D conv): heuristic modes A and FALLBACK, a time cap per plan.
LEAN_OPTIONS: dict[str, Any] = {"heuristics": ("A", "FALLBACK"), "time_cap_s": 0.25, "max_samples": 50}

#: What happened under one cuDNN: ``ran`` (a result), ``refused`` (the run failed: cuDNN or the kit refused the
#: problem), ``crashed`` (its worker ended without a result), ``missing`` (no usable cuDNN in the folder).
STATUSES: tuple[str, ...] = ("ran", "refused", "crashed", "missing")


@dataclasses.dataclass(frozen=True)
class VersionRun:
    """One cuDNN's part of a triage: its library (``this process`` or a folder), version (0 where unknown), status
    (:data:`STATUSES`), the run (status ``ran``), the reason (any other status) and the deviceless answer's plan
    count (None: not asked or not answered; ``asked_note`` says why)."""

    library: str
    version: int = 0
    status: str = "ran"
    result: RunResult | None = None
    reason: str = ""
    asked_plans: int | None = None
    asked_note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.library, str) or not self.library:
            raise OptionError("library", self.library, "'this process' or a folder's path", where="VersionRun")
        if self.status not in STATUSES:
            raise OptionError("status", self.status, f"one of {', '.join(STATUSES)}", where="VersionRun")
        if (self.result is None) == (self.status == "ran"):
            raise OptionError("result", type(self.result).__name__, "a RunResult exactly when status is 'ran'",
                              where="VersionRun")
        if self.result is not None and not isinstance(self.result, RunResult):
            raise OptionError("result", self.result, "a RunResult", where="VersionRun")
        if isinstance(self.version, bool) or not isinstance(self.version, int) or self.version < 0:
            raise OptionError("version", self.version, "a cuDNN version number such as 91400 (0: unknown)",
                              where="VersionRun")

    @property
    def name(self) -> str:
        """``cuDNN 9.14.0`` (or the library where the version is unknown)."""
        return f"cuDNN {cudnn_version_text(self.version)}" if self.version else f"the cuDNN in {self.library}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the run as :meth:`RunResult.to_dict`)."""
        return {"library": self.library, "version": self.version, "status": self.status,
                "result": None if self.result is None else self.result.to_dict(), "reason": self.reason,
                "asked_plans": self.asked_plans, "asked_note": self.asked_note}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "version run") -> VersionRun:
        """Inverse of :meth:`to_dict`; DataError naming ``source`` and the field."""
        fields = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or set(data) != fields:
            raise DataError(source, f"a triage's version entry is an object with the fields {', '.join(sorted(fields))}"
                                    f", not {shorten(data, 80)}")
        result = (None if data["result"] is None
                  else RunResult.from_dict(data["result"], source=f"{source}: field result"))
        try:
            return cls(**{**data, "result": result})
        except OptionError as e:
            raise DataError(source, str(e)) from None


def _run_time(result: RunResult) -> tuple[str, float, float, float] | None:
    """A run's best plan: name, median ms, workspace bytes, build ms (NaN where not recorded); None where none ran."""
    row = best(result.plans)
    if row is None:
        return None
    def num(col: str) -> float:
        v = row.get(col) if hasattr(row, "get") else None
        return float(v) if is_finite(v) else float("nan")
    return str(row["plan"]), num("median_ms"), num("workspace_bytes"), num("build_ms")


def _passes(result: RunResult) -> tuple[int, int]:
    """(proposed plans inside cuDNN's band, proposed plans checked) of a run: its check against float64."""
    p = RunDrift.plans(result)
    if "pass_cudnn" not in p:
        return 0, 0
    checked = p["pass_cudnn"].dropna()
    return int(checked.astype(bool).sum()), len(checked)


@dataclasses.dataclass(frozen=True)
class Triage:
    """A spec under each cuDNN the machine has, with the named alternatives' runs (``alternatives``: name -> this
    process's run of the alternative spec, e.g. the other layout) and where it was measured (``gpu``)."""

    spec: Spec
    versions: tuple[VersionRun, ...]
    alternatives: tuple[tuple[str, RunResult], ...] = ()
    gpu: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.spec, Spec):
            raise OptionError("spec", self.spec, "a cudnn_lab spec", where="Triage")
        if not self.versions or not all(isinstance(v, VersionRun) for v in self.versions):
            raise OptionError("versions", self.versions, "one or more VersionRun", where="Triage")
        for v in self.versions:
            if v.result is not None and v.result.spec != self.spec:
                raise OptionError("versions", v.result.spec.label(), f"runs of {self.spec.label()}", where="Triage")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the spec, each version's entry, the alternatives' runs, the GPU and the note."""
        return {"spec": self.spec.to_dict(), "versions": [v.to_dict() for v in self.versions],
                "alternatives": [{"name": n, "result": r.to_dict()} for n, r in self.alternatives],
                "gpu": self.gpu, "note": self.note}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "triage") -> Triage:
        """Inverse of :meth:`to_dict`; DataError naming ``source`` and the field."""
        keys = {"spec", "versions", "alternatives", "gpu", "note"}
        if not isinstance(data, dict) or set(data) != keys:
            raise DataError(source, f"a triage is an object with the fields {', '.join(sorted(keys))}, not "
                                    f"{shorten(data, 80)}")
        if not isinstance(data["versions"], list) or not isinstance(data["alternatives"], list):
            raise DataError(source, "fields versions and alternatives must be lists")
        try:
            spec = spec_from_dict(data["spec"])
            alts = []
            for i, a in enumerate(data["alternatives"]):
                if not isinstance(a, dict) or set(a) != {"name", "result"} or not isinstance(a["name"], str):
                    raise DataError(source, f"field alternatives[{i}] must be an object with name and result")
                alts.append((a["name"], RunResult.from_dict(a["result"], source=f"{source}: alternatives[{i}]")))
            return cls(spec, tuple(VersionRun.from_dict(v, f"{source}: versions[{i}]")
                                   for i, v in enumerate(data["versions"])), tuple(alts), str(data["gpu"]),
                       str(data["note"]))
        except DataError:
            raise
        except (CudnnLabError, TypeError, ValueError) as e:
            raise DataError(source, str(e)) from None

    def ran(self) -> list[VersionRun]:
        """The versions whose run gave a result."""
        return [v for v in self.versions if v.result is not None]

    def frame(self) -> Any:
        """One row per cuDNN and per alternative: status, plans, plans in the band, best plan, its median (ms),
        workspace (bytes) and build time (ms), and the PyTorch baseline (ms)."""
        import pandas as pd

        rows = []
        for v in self.versions:
            row: dict[str, Any] = {"cudnn": v.name, "library": v.library, "status": v.status,
                                   "asked_plans": v.asked_plans}
            if v.result is not None:
                rows.append({**row, **self._row(v.result)})
            else:
                rows.append({**row, "reason": v.reason})
        for name, r in self.alternatives:
            rows.append({"cudnn": name, "library": "this process", "status": "ran", **self._row(r)})
        return pd.DataFrame(rows)

    @staticmethod
    def _row(r: RunResult) -> dict[str, Any]:
        ok, checked = _passes(r)
        b = _run_time(r)
        base = baseline_lines(r.torch)
        return {"plans": len(r.plans), "in_band": ok, "checked": checked, "best_plan": b[0] if b else None,
                "median_ms": b[1] if b else None, "workspace_bytes": b[2] if b else None,
                "build_ms": b[3] if b else None, "pytorch_ms": base[0][2] if base else None}

    def summary(self) -> str:
        """The triage's paragraph: which versions plan it, whether they agree within the band, the fastest plan under
        each, the alternatives' cost, and what was missing, refused or crashed (measured on ``gpu``)."""
        spec = self.spec.label()
        parts = [f"Triage of {spec} on {self.gpu or 'this GPU'} under {len(self.versions)} cuDNN "
                 f"librar{'y' if len(self.versions) == 1 else 'ies'}."]
        planned = [v for v in self.ran() if v.result is not None and len(v.result.plans)]
        parts.append(f"Planned by {', '.join(v.name for v in planned)}." if planned
                     else "No cuDNN planned it.")
        for v in self.versions:
            if v.status != "ran":
                how = {"missing": "is missing", "refused": "refused it", "crashed": "crashed"}[v.status]
                where = f" ({v.library})" if v.version else ""
                sentence = f"{v.name}{where} {how}: {_clip(v.reason, 200)}."
                parts.append(sentence[0].upper() + sentence[1:])
            elif v.asked_plans is not None:
                parts.append(f"Asked devicelessly, {v.name} proposes {v.asked_plans} plan(s).")
            elif v.asked_note:
                parts.append(f"{v.name} was not asked devicelessly ({_clip(v.asked_note, 120)}).")
        bands = []
        for v in self.ran():
            assert v.result is not None
            ok, checked = _passes(v.result)
            bands.append((v, ok, checked))
        checked_all = [b for b in bands if b[2]]
        if len(checked_all) >= 2:
            agree = all(ok == checked for _, ok, checked in checked_all)
            parts.append("Their results agree: every checked plan is inside the band against float64." if agree else
                         "Their results disagree: " + "; ".join(f"{v.name} {ok} of {checked} plans in the band"
                                                               for v, ok, checked in checked_all) + ".")
        elif checked_all:
            v, ok, checked = checked_all[0]
            parts.append(f"Only {v.name}'s results were checked: {ok} of {checked} plans inside the band against "
                         f"float64.")
        for v in self.ran():
            assert v.result is not None
            b = _run_time(v.result)
            if b is None:
                parts.append(f"Under {v.name} no plan ran.")
            else:
                parts.append(f"Fastest under {v.name}: {b[0]} at {b[1] * 1e3:.1f} us{_extras(b)}.")
        here = next((v.result for v in self.ran() if v.library == "this process"), None)
        here_best = _run_time(here) if here is not None else None
        costs = []
        for name, r in self.alternatives:
            b = _run_time(r)
            if b is not None:
                costs.append(f"{name} {b[1] * 1e3:.1f} us" + (f" ({b[1] / here_best[1]:.2f}x)" if here_best else ""))
        for _, title, ms in baseline_lines(here.torch if here is not None else {}):
            costs.append(f"{title} {ms * 1e3:.1f} us" + (f" ({ms / here_best[1]:.2f}x)" if here_best else ""))
        if costs:
            parts.append("Alternatives: " + "; ".join(costs) + ".")
        if self.note:
            parts.append(self.note)
        return " ".join(parts)


def _clip(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters (an ellipsis where cut), its trailing full stop dropped."""
    text = text.rstrip(". ")
    return text if len(text) <= n else text[: n - 3] + "..."


def _extras(b: tuple[str, float, float, float]) -> str:
    bits = []
    if is_finite(b[2]):
        bits.append(f"workspace {b[2] / 2**20:.1f} MiB")
    if is_finite(b[3]):
        bits.append(f"build {b[3]:.3g} ms")
    return f" ({', '.join(bits)})" if bits else ""


def _folders(cudnn_libs: Any) -> list[Any]:
    """The other cuDNN folders to try: the given ones (a path or a list; each checked here, PathError naming it),
    or the system folder (kept unchecked: a missing system cuDNN is said in the paragraph)."""
    if cudnn_libs is None:
        return [SYSTEM_CUDNN]
    if isinstance(cudnn_libs, (str, Path)):
        cudnn_libs = [cudnn_libs]
    if isinstance(cudnn_libs, (list, tuple)):
        return [check_cudnn_folder(f) for f in cudnn_libs]
    raise OptionError("cudnn_libs", cudnn_libs, "None (find the system cuDNN), a folder or a list of folders",
                      where="triage")


def _other_layout(spec: Spec) -> tuple[str, Spec] | None:
    """The spec in its other layout (the first other value of its ``layout`` field that validates), or None."""
    choices = spec.field_choices().get("layout", ()) if hasattr(spec, "field_choices") else ()
    for layout in choices:
        if layout != getattr(spec, "layout", layout):
            try:
                return f"the {layout} layout", spec.replace(layout=layout)
            except (CudnnLabError, TypeError, ValueError):
                continue
    return None


def _asked(spec: Spec, folder: Any) -> tuple[int | None, str]:
    """The deviceless answer's plan count under ``folder``'s cuDNN (None: this process's), or why none came."""
    try:
        w = plans_for(spec, cudnn_lib=folder, recorded=False, modes=("A", "FALLBACK"))
    except CudnnLabError as e:
        return None, str(e)
    if w.refused:
        return None, f"refused: {w.message}"
    return len(w.proposals), ""


def triage(spec: Spec, cudnn_libs: Any = None, *, options: Any = None, timeout_s: float = 300.0,
           alternatives: bool = True) -> Triage:
    """Run ``spec`` under this process's cuDNN and each other folder (``cudnn_libs``: a folder, a list, or None for
    the system cuDNN where there is one), ask each devicelessly, and run the other layout; the :class:`Triage`.
    NoGPUError without a GPU (the recorded triage of ``spec`` where one ships)."""
    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.preset('Wan2.1 video VAE conv3d'))",
                          where="triage")
    folders = _folders(cudnn_libs)
    opts = RunOptions.coerce(options if options is not None else LEAN_OPTIONS)
    try:
        require_gpu(opts.device)
    except NoGPUError:
        found = recorded_triages(spec)
        if found:
            return found[0]
        shipped = shorten([t.spec.label() for t in recorded_triages()], 200)
        raise NoGPUError(f"a triage runs the problem on this machine's GPU, and no recorded triage of "
                         f"{spec.label()} ships (recorded: {shipped})") from None
    here = run(spec, opts)
    gpu = str(here.device.get("gpu", ""))
    asked, note = _asked(spec, None)
    entries = [VersionRun("this process", _version(here), "ran", here, asked_plans=asked, asked_note=note)]
    for folder in folders:
        try:
            path = check_cudnn_folder(folder)
        except (PathError, OptionError) as e:
            entries.append(VersionRun(str(folder), 0, "missing", reason=str(e)))
            continue
        try:
            other = run_under(spec, path, opts, timeout_s=timeout_s)
        except NoGPUError as e:
            entries.append(VersionRun(str(path), 0, "crashed", reason=str(e)))
            continue
        except DataError as e:
            entries.append(VersionRun(str(path), 0, "refused", reason=str(e)))
            continue
        asked, note = _asked(spec, path)
        entries.append(VersionRun(str(path), _version(other), "ran", other, asked_plans=asked, asked_note=note))
    alts: list[tuple[str, RunResult]] = []
    other_layout = _other_layout(spec) if alternatives else None
    if other_layout is not None:
        try:
            alts.append((other_layout[0], run(other_layout[1], {**opts.to_dict(), "baselines": False})))
        except CudnnLabError as e:
            return Triage(spec, tuple(entries), (), gpu, f"{other_layout[0]} did not run: {_clip(str(e), 200)}.")
    return Triage(spec, tuple(entries), tuple(alts), gpu)


def _version(result: RunResult) -> int:
    return RunDrift.version(result)


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = triage

TRIAGE_DIR = WHATIF_DIR / "triage"


def _load(path: Path) -> Triage:
    return Triage.from_dict(read_json(path, "triage JSON"), source=path)


#: Recorded triages, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="triage", folder=TRIAGE_DIR, suffix=".json", max_bytes=MAX_JSON_BYTES, load=_load, title="triage JSON"))


def recorded_triages(spec: Spec | None = None) -> list[Triage]:
    """The triages shipped in ``data/whatif/triage`` (of ``spec`` only, where given)."""
    found = [t for t in recordings.read(RECORDING.name, TRIAGE_DIR) if isinstance(t, Triage)]
    return [t for t in found if spec is None or t.spec == spec]


def add_cli_parser(commands: Any, preset_help: str, parser: _P) -> _P:
    """The ``cudnn-lab triage`` subcommand's parser, added to the CLI's ``commands``; ``parser`` back (cli.py keeps
    one call)."""
    tri = commands.add_parser("triage", help="run one problem under each cuDNN this machine has: which versions plan "
                              "it, whether they agree, the fastest plan and the alternatives' cost", allow_abbrev=False)
    tri.add_argument("spec", nargs="?", help="spec JSON, as written by Spec.to_json(); or --preset")
    tri.add_argument("--preset", help=preset_help)
    tri.add_argument("--cudnn-lib", action="append", default=None, help="another cuDNN 9 folder (repeatable; "
                     f"default: {SYSTEM_CUDNN} where it holds one)")
    tri.add_argument("--json", default=None, help="also save the triage as JSON here")
    return parser


def cli_triage(args: Any, spec_of: Callable[[Any], tuple[Spec, Any]], say: Callable[..., None]) -> int:
    """``cudnn-lab triage``'s handler: the problem ``spec_of(args)`` names, triaged and said with ``say``."""
    say(triage_command(spec_of(args)[0], args.cudnn_lib, args.json))
    return 0


def triage_command(spec: Spec, cudnn_libs: Any = None, json_out: Any = None) -> str:
    """``cudnn-lab triage``'s output: the paragraph and the table; the triage saved to ``json_out`` where given."""
    import json

    t = triage(spec, cudnn_libs)
    if json_out is not None:
        out = Path(json_out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(t.to_dict(), default=str))
    table = t.frame().to_string(index=False)
    return f"{t.summary()}\n\n{table}"
