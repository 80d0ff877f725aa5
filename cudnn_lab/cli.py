"""The `cudnn-lab` command: lab, doctor, run, sweep, report and cache.

Every kit error becomes one line on stderr and an exit code from :data:`EXIT_CODES` (never a traceback). Run options
are the fields of :class:`~cudnn_lab.options.RunOptions`: a flag left out takes RunOptions' default (one default
each). Output paths (``-o``, ``--report``, a sweep's store) are checked before any GPU work; a missing output folder
is made. If a write still fails after the work, the result goes to a temporary file instead and the command says
where, with exit code 5. Results are saved before anything is printed, and a closed stdout (``| head``, a closed
terminal or SSH session) only cuts the printing: no traceback, the files kept, the command's own exit code.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from .options import RunOptions, option_info, parse_parallel_builds
from .results import RunResult, load_results
from .runs import run
from .sweeps import sweep
from . import cache_dir, errors, whatif
from .gpu.device import end_program
from .gpu import cache as _plan_cache, ceilings as _ceilings  # noqa: F401 - each registers what `cache --clear` clears
from ._version import __version__
from .capabilities import probe
from .errors import (CudnnLabError, OptionError)
from .plots.registry import RUN_FIGURES, SWEEP_VIEWS, entries
from .report import REPORT_SOURCES, save_report
from .results.anatomy import is_proposed, with_knob_names
from .results.loading import read_spec_file, read_sweep_file
from .results.paths import as_path, check_output_path
from .specs import Spec
from .whatif.version_triage import add_cli_parser, cli_triage
from .report_inputs import graph_svg, report_answers

__all__ = ["main", "graph_svg", "report_answers", "EXIT_CODES", "EXIT_UNSAVED", "EXIT_INTERRUPTED", "exit_code",
           "say_error"]

QUICKSTART = Path("notebooks") / "00_quickstart.ipynb"

#: The work was done but its output could not be written where asked (it went to a temporary file, named).
EXIT_UNSAVED = 5
EXIT_INTERRUPTED = 130
#: Kit error class name -> (exit code, meaning); most specific first (UnsupportedGraphError is also a
#: CudnnLabError). Argparse's usage errors exit 2 too.
EXIT_CODES: tuple[tuple[str, int, str], ...] = (
    ("SpecError", 2, "bad input: a spec field"),
    ("OptionError", 2, "bad input: an option or argument"),
    ("DataError", 2, "bad input: a file's content (not JSON, not the schema)"),
    ("PathError", 2, "bad input: a path that cannot be read or written (checked before the work)"),
    ("NoGPUError", 3, "no GPU where one is needed"),
    ("UnsupportedGraphError", 4, "cuDNN cannot run the graph here"),
    ("CudnnLabError", 1, "any other failure of the kit"),
)
#: What `cudnn-lab report` writes: the views named from the one registry the Lab and the report read.
REPORT_TEXT = ("Write a self-contained HTML report (it opens offline). A run's report holds its graph, its plan table "
               "and its figures where the result has them: "
               + "; ".join(f.title for f in RUN_FIGURES if f.in_report) + "; and the recorded what-if answers for "
               "its problem where the kit has them: "
               + "; ".join(e.title for s in REPORT_SOURCES for e in entries(s) if e.in_report)
               + ". A sweep's holds " + "; ".join(e.title for e in SWEEP_VIEWS if e.in_report)
               + " and one row per point.")
_EPILOG = ("exit codes: 0 success; " + "; ".join(f"{code} {meaning}" for _, code, meaning in EXIT_CODES)
           + f"; {EXIT_UNSAVED} the work ran but its output could not be written (saved to a temporary file, named)"
           + f"; {EXIT_INTERRUPTED} interrupted. Results are saved before anything is printed: a closed stdout (e.g. "
           "`| head`, a closed terminal) only cuts the printing, with the same exit code (0 when the work succeeded)")


#: A RunOptions field's type (as annotated) -> how its flag's value is read (None: a flag without a value).
_FLAG_TYPES: dict[str, Any] = {"bool": None, "int": int, "float": float, "str": str, "tuple[str, ...]": str}


def _field_type(name: str) -> str:
    """The annotated type of a RunOptions field without ``| None`` ('int', 'tuple[str, ...]', ...)."""
    return RunOptions.__dataclass_fields__[name].type.split("|")[0].strip()


def _default_text(info: dict[str, Any]) -> str:
    default = info["default"]
    if info["default_text"]:
        return info["default_text"]
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, tuple):
        return ",".join(default)
    return f"{default:g}" if isinstance(default, float) else str(default)


def run_option_flag(name: str) -> tuple[str, dict[str, Any]]:
    """The CLI flag of a RunOptions field and argparse's arguments for it, from the field's metadata
    (:func:`~cudnn_lab.options.option_info`). Each defaults to None (not given), so RunOptions' own default applies."""
    info = option_info(name)
    flag, kind = info["flag"], _FLAG_TYPES[_field_type(name)]
    kind = parse_parallel_builds if name == "parallel_builds" else kind  # 'auto', 'on', 'off' or a number
    if kind is None:  # --no-X turns a True default off; --X turns an option on
        off = flag.startswith("--no-")
        text = f"do not {info['help']}" if off else f"{info['help']} (default: {_default_text(info)})"
        return flag, {"action": "store_const", "const": not off, "dest": name, "help": text}
    unit = f"unit: {info['unit']}; " if info["unit"] else ""
    kwargs: dict[str, Any] = {"type": kind, "dest": name,
                              "help": f"{info['help']} ({unit}default: {_default_text(info)})"}
    if info["choices"] and _field_type(name) == "str":
        kwargs["choices"] = info["choices"]
    return flag, kwargs


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """A flag for every RunOptions field (:func:`run_option_flag`)."""
    for name in RunOptions.names():
        flag, kwargs = run_option_flag(name)
        p.add_argument(flag, **kwargs)


def _run_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The run options given on the command line (the rest keep RunOptions' defaults); a list option (heuristics)
    is given comma separated."""
    out: dict[str, Any] = {}
    for name in RunOptions.names():
        value = getattr(args, name, None)
        if value is not None:
            out[name] = tuple(v.strip() for v in value.split(",")) if _field_type(name).startswith("tuple") else value
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cudnn-lab",
        description="Explore NVIDIA cuDNN graphs: build, draw, run, time and check them.",
        epilog=_EPILOG,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"cudnn-lab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser(
        "doctor",
        help="say what this machine offers (GPU, driver, PyTorch, cuDNN, graphviz, widgets) and what is missing",
        allow_abbrev=False,
    )
    commands.add_parser(
        "lab",
        help="start JupyterLab on the quick-start notebook; other options go to `jupyter lab`",
        allow_abbrev=False,
    )
    run = commands.add_parser("run", help="run one problem (a spec JSON file) on the GPU: every plan, timed and "
                              "checked; prints the plan table and saves the result", allow_abbrev=False,
                              epilog=_EPILOG)
    run.add_argument("spec", nargs="?", help="spec JSON, as written by Spec.to_json() (e.g. {\"op\": \"conv\", "
                     "...}); or --preset")
    run.add_argument("--preset", help=_PRESET_HELP)
    _add_run_options(run)
    run.add_argument("-o", "--output", help="result JSON (default: SPEC.result.json beside the spec); a missing "
                     "folder is made")
    run.add_argument("--report", help="also write a self-contained HTML report here")
    sweep = commands.add_parser("sweep", help="run a sweep described by a JSON file into a resumable store",
                                allow_abbrev=False, epilog=_EPILOG)
    sweep.add_argument("sweep", help='sweep JSON: {"spec": {...} or "specs": [...], "over": {"n": [1, 8]}, and run '
                       'options such as "plans": "heuristic"}; flags below override its options')
    sweep.add_argument("--store", help="store folder (default: SWEEP.parquet beside the file)")
    _add_run_options(sweep)
    cache = commands.add_parser("cache", help="the kit's caches on disk (plans, ceilings, heuristics): where, how "
                                "big; clear them", allow_abbrev=False, epilog=_EPILOG)
    cache.add_argument("--clear", action="store_true", help="remove the cached plans, ceilings and heuristics' answers "
                       "the kit wrote (nothing else; links not followed) and say what was left")
    cache.add_argument("--info", action="store_true", help="say where the caches are and how big (the default)")
    report = commands.add_parser("report", help="write a self-contained HTML report of a result (opens offline)",
                                 description=REPORT_TEXT, allow_abbrev=False, epilog=_EPILOG)
    report.add_argument("results", help="a result JSON written by `cudnn-lab run`, a sweep (Parquet file or store "
                        "folder written by `cudnn-lab sweep`), or a recorded dataset's name (run or sweep)")
    report.add_argument("-o", "--output", required=True, help="the HTML file to write")
    plans = commands.add_parser("plans", help="ask cuDNN's heuristics which plans it would run for a spec on a "
                                "target GPU (this one, a recorded one, a compute capability or a file), on fewer "
                                "SMs or under another cuDNN; nothing is run", allow_abbrev=False, epilog=_EPILOG)
    plans.add_argument("spec", nargs="?", help="spec JSON, as written by Spec.to_json(); or --preset")
    plans.add_argument("--preset", help=_PRESET_HELP)
    plans.add_argument("--target", action="append", default=None,
                       help="a target: h100, h200, sm80 ... sm120, a compute capability (10.0) or a target JSON "
                       "(`cudnn-lab profile -o`); repeat it to compare targets side by side (default: this GPU)")
    plans.add_argument("--sm-count", type=int, default=None, help="ask for a carve-out of this many SMs")
    plans.add_argument("--cudnn-lib", default=None, help="a folder holding another cuDNN 9 (libcudnn*.so.9) to ask")
    plans.add_argument("--recorded", action="store_true", help="read the answers recorded on the kit's GPU rounds "
                       "only (what a machine without a GPU does anyway)")
    profile = commands.add_parser("profile", help="write this GPU's description as cuDNN serializes it, for "
                                  "what-if questions on machines without it", allow_abbrev=False, epilog=_EPILOG)
    profile.add_argument("-o", "--output", required=True, help="the target JSON to write (e.g. mygpu.json)")
    fc = commands.add_parser("forecast", help="forecast a spec's time on another GPU or SM count from a measured "
                             "run, or print the forecast's validation table (--validate)", allow_abbrev=False)
    fc.add_argument("spec", nargs="?", help="the spec JSON file (not with --validate)")
    fc.add_argument("--target", action="append", help="a GPU (h100, h200, a100_80gb_pcie, gb200, sm100...) or an "
                    "SM count; repeat for several")
    fc.add_argument("--source", help="a run recording to transfer from (default: the shipped one of this spec)")
    fc.add_argument("--validate", action="store_true", help="print the validation table and the issue's targets")
    bmap = commands.add_parser("backend-map", help="which attention backend wins each shape of a sweep run with "
                               "--backends: a paragraph, and the map as a JSON table (--json)", allow_abbrev=False)
    bmap.add_argument("results", help="a sweep (Parquet file or store folder) or a recorded sweep's name, e.g. "
                      "h200_attention_backends")
    bmap.add_argument("--json", default=None, help="also write the map as a JSON table here")
    return add_cli_parser(commands, _PRESET_HELP, parser)  # cudnn-lab triage (whatif/version_triage.py)


_PRESET_HELP = ("a real-model preset instead of a spec file, e.g. 'DeepSeek-V3 MLA prefill' (cl.presets() lists "
                "them)")


def _spec_of(args: argparse.Namespace) -> tuple[Spec, Path | None]:
    """The problem a command names: a spec JSON file (and its path), or ``--preset NAME`` (no path)."""
    if getattr(args, "preset", None) is not None:
        if args.spec:
            raise errors.OptionError("preset", args.preset, "give a spec file or --preset, not both")
        from .specs.presets import preset
        return preset(args.preset), None
    if not args.spec:
        raise errors.OptionError("spec", None, "a spec JSON file, or --preset NAME (cl.presets() lists the names)")
    path = as_path(args.spec, what="spec")
    return read_spec_file(path), path


def _default_beside(path: Path, suffix: str) -> Path:
    name = path.name[: -len(path.suffix)] if path.suffix else path.name
    return path.with_name(name + suffix)


def _run(args: argparse.Namespace) -> int:
    spec, spec_path = _spec_of(args)
    options = RunOptions.coerce(None, **_run_overrides(args))
    beside = spec_path if spec_path is not None else Path("".join(c if c.isalnum() else "_" for c in args.preset))
    out = check_output_path(args.output if args.output is not None else _default_beside(beside, ".result.json"),
                            what="result JSON")
    report = check_output_path(args.report, what="report") if args.report is not None else None
    # The first measured plan goes to stderr at once while the rest build; Ctrl-C after it keeps what was measured.
    result = run(spec, options, progress=FirstPlan())
    # Save first, print last: a stdout closed under the table (`| head`) must not lose a finished run.
    codes = {out: _save(lambda p: result.save(p), out, "result JSON", ".result.json")}
    if report is not None:
        codes[report] = _save(lambda p: save_report(result, p, report_answers(result)), report, "report", ".html")
    with _pandas_wide():
        table = plan_table(result).to_string(index=False)
    _say(table, result.summary(), *(f"saved {path}" for path, code in codes.items() if code == 0))
    return max(*codes.values(), EXIT_INTERRUPTED if result.partial else 0)


class FirstPlan:
    """The `run` command's progress: says the first plan measured (on stderr) while the others build."""

    def __init__(self) -> None:
        self.said = False

    def row(self, row: dict[str, Any]) -> None:
        """Say the first plan that ran (its time and check) once; later rows come with the table."""
        if self.said or row.get("status") != "ok":
            return
        self.said = True
        bands: dict[bool | None, str] = {True: ", passes cuDNN's band", False: ", FAILS cuDNN's band"}
        check = bands.get(row.get("pass_cudnn"), "")
        _say(f"first measured plan: {row['plan']} (heuristic rank {row.get('heuristic_rank')}): "
             f"{row['median_ms'] * 1e3:.1f} us{check}; the others follow (Ctrl-C keeps what was measured)",
             err=True)


#: Columns of the plan table `cudnn-lab run` prints (those the result has), knobs by name.
PLAN_TABLE = ("heuristic_rank", "plan", "knob_names", "status", "median_ms", "iqr_ms", "kernel_ms", "tflops", "rel_l2",
              "pass_cudnn", "numeric_notes", "proposed")


def plan_table(result: Any) -> Any:
    """The plan table the `run` command prints: fastest first, knobs named by the backend knob table."""
    plans = with_knob_names(result.plans, result.device.get("cudnn_backend"))
    if "proposed" in plans.columns and plans["proposed"].astype(object).map(is_proposed).all():
        plans = plans.drop(columns="proposed")  # a run without exploration: every plan was proposed
    keep = ("plan", "knob_names", "status", "median_ms")
    cols = [c for c in PLAN_TABLE if c in plans.columns and (c in keep or not plans[c].isna().all())]
    return plans[cols].sort_values("median_ms", na_position="last")


def _save(write: Any, path: Path, what: str, suffix: str) -> int:
    """Write after the work and before any printing (the caller says "saved PATH" on 0); if that fails, write to a
    temporary file instead and say both on stderr (EXIT_UNSAVED)."""
    import tempfile

    try:
        write(path)
        return 0
    except (CudnnLabError, OSError) as e:
        _say(f"cudnn-lab: could not write the {what} to {path}: {e}", err=True)
    fd, tmp = tempfile.mkstemp(prefix="cudnn-lab-", suffix=suffix)
    os.close(fd)
    try:
        saved = write(Path(tmp))
    except (CudnnLabError, OSError) as e:
        _say(f"cudnn-lab: the {what} could not be saved anywhere ({e})", err=True)
    else:
        _say(f"cudnn-lab: the {what} was saved to {saved} instead", err=True)
    return EXIT_UNSAVED


#: errno values of a stream that nobody reads any more: a closed pipe (`| head`), a hung-up terminal.
_CLOSED_STREAM = (errno.EPIPE, errno.ESHUTDOWN, errno.EIO)


def _say(*lines: str, err: bool = False) -> None:
    """Print ``lines`` to stdout (stderr with ``err``) and flush; a closed stream drops the output, not the command."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # started with the descriptor closed (`cudnn-lab doctor >&-`): nowhere to print
        return
    try:
        for line in lines:
            print(line, file=stream)
        stream.flush()  # a closed pipe shows here, not in a later print or the interpreter's final flush
    except OSError as e:
        if e.errno not in _CLOSED_STREAM:
            raise
        _discard(stream)


def _discard(stream: Any) -> None:
    """Point a closed stream's file descriptor at the null device, so later prints and the final flush succeed."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture): nothing to redirect
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)


def _sweep(args: argparse.Namespace) -> int:
    path = as_path(args.sweep, what="sweep")
    data = read_sweep_file(path)
    options = RunOptions.coerce(data["options"], **_run_overrides(args))
    store = args.store if args.store is not None else _default_beside(path, ".parquet")
    frame = sweep(data["spec"], data["over"], store=store, options=options)
    picks = frame[frame["is_pick"].fillna(False).astype(bool)] if "is_pick" in frame else frame
    with _pandas_wide():
        cols = [c for c in ("label", "plan", "median_ms", "tflops", "point_status") if c in picks]
        table = picks[cols].to_string(index=False)
    _say(table, f"{frame['point_id'].nunique() if 'point_id' in frame else 0} points in {store}")  # the store is saved
    return 0


def _report(args: argparse.Namespace) -> int:
    out = check_output_path(args.output, what="report")
    result = load_results(args.results)  # a RunResult, or a sweep frame: save_report makes either report
    if not isinstance(result, RunResult) and not hasattr(result, "columns"):
        raise OptionError("results", args.results, "must be a run's result (JSON) or a sweep (Parquet or store)")
    answers = report_answers(result) if isinstance(result, RunResult) else None
    code = _save(lambda p: save_report(result, p, answers), out, "report", ".html")
    _say(*([f"saved {out}"] if code == 0 else []))
    return code


def _plans(args: argparse.Namespace) -> int:
    spec, _ = _spec_of(args)
    recorded = True if args.recorded else None
    targets = args.target or [None]
    if len(targets) == 1:
        answer = whatif.plans_for(spec, targets[0], sm_count=args.sm_count, cudnn_lib=args.cudnn_lib,
                                  recorded=recorded)
        lines = [answer.summary()]
        with _pandas_wide():
            if answer.ok:
                lines.append(answer.frame().drop(columns=["knobs"]).to_string(index=False))
            elif answer.detail:
                lines.append(answer.reasons().to_string(index=False))
        _say(*lines)
        return 0 if answer.ok else 4
    frame = whatif.compare(spec, targets, sm_count=args.sm_count, cudnn_lib=args.cudnn_lib, recorded=recorded)
    with _pandas_wide():
        _say(*(f"{name}: {label}" for name, label in frame.attrs["labels"].items()),
             frame.to_string(index=False), *frame.attrs["refused"].values(), f"({whatif.ANSWER_LABEL})")
    return 0


def _profile(args: argparse.Namespace) -> int:
    target = whatif.profile(args.output)
    _say(f"saved {args.output}: {target.label}")
    return 0


class _pandas_wide:
    def __enter__(self) -> None:
        import pandas as pd

        self._ctx = pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200)
        self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


def refresh_saved_notebook(os_path: str, **_: Any) -> None:
    """JupyterLab's post-save hook (`cudnn-lab lab` sets it): a tracked notebook whose save changed only what git's
    strip-notebooks filter removes (outputs, kernel metadata) gets its index entry refreshed, so `git status` stays
    clean; git would otherwise call it modified from its size alone. A real edit, or no filter set up: left alone."""
    import subprocess

    path = Path(os_path)
    if path.suffix != ".ipynb":
        return
    git = ["git", "-C", str(path.parent)]
    try:
        for check in (["ls-files", "--error-unmatch", "--", path.name], ["diff", "--quiet", "--", path.name]):
            if subprocess.run([*git, *check], capture_output=True, timeout=30).returncode != 0:
                return  # untracked, not a git checkout, or its content (as git stores it) changed
        subprocess.run([*git, "add", "--", path.name], capture_output=True, timeout=30)  # the same blob: stat only
    except (OSError, subprocess.TimeoutExpired):
        return


def _lab_command(extra: Sequence[str]) -> tuple[Path, list[str]]:
    """The folder to start in and the argv that starts JupyterLab there (with ``--allow-root`` when run as root, as
    in Docker or on a rented GPU machine: Jupyter refuses to start as root without it)."""
    repo = Path(__file__).resolve().parent.parent
    argv = [sys.executable, "-m", "jupyter", "lab"]
    geteuid = getattr(os, "geteuid", None)  # none on Windows
    if geteuid is not None and geteuid() == 0 and "--allow-root" not in extra:
        argv.append("--allow-root")
    if (repo / QUICKSTART).is_file():
        # the printed URL (copied from a remote machine) opens the quickstart too, not the Launcher: Jupyter serves
        # the notebook's folder (root_dir defaults to it), so the tree path is the file's name
        if not any(arg.startswith("--ServerApp.default_url") for arg in extra):
            argv.append(f"--ServerApp.default_url=/lab/tree/{QUICKSTART.name}")
        if not any(arg.startswith("--FileContentsManager.post_save_hook") for arg in extra):
            argv.append(f"--FileContentsManager.post_save_hook={__name__}.{refresh_saved_notebook.__name__}")
        return repo, [*argv, str(QUICKSTART), *extra]
    return Path.cwd(), [*argv, *extra]


def main(argv: Sequence[str] | None = None) -> int:
    """The command's exit code; a closed stdout or stderr cuts only the printing (see :func:`_say`)."""
    try:
        code = _command(argv)
    except BrokenPipeError:  # a print outside _say into a closed pipe: the work before it is kept
        code = 0
    for err in (False, True):
        _say(err=err)  # flush what is still buffered now, so that the interpreter's final flush cannot fail
    return code


def _command(argv: Sequence[str] | None) -> int:
    parser = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and args.command != "lab":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)

    if args.command == "doctor":
        _say(probe().summary())
        return 0
    if args.command in ("run", "sweep", "report", "plans", "profile", "forecast", "triage", "backend-map"):
        return _kit_command(args)
    if args.command == "cache":
        return _cache(args)

    where, command = _lab_command(extra)
    os.chdir(where)
    _say()  # flush before the process is replaced
    os.execv(command[0], command)
    return 0  # not reached: execv replaces this process


def _forecast(args: argparse.Namespace) -> int:
    """``cudnn-lab forecast``: the validation table, or a spec's forecast per target (helper F, issue 35)."""
    from cudnn_lab.whatif import speed as fc
    if args.validate:
        _say(fc.format_validation())
        return 0
    if not args.spec or not args.target:
        raise errors.OptionError("forecast", args.spec, "a spec JSON file and at least one --target (or --validate)")
    spec = read_spec_file(args.spec)
    for t in args.target:
        _say(fc.forecast(spec, int(t) if t.isdigit() else t, source=args.source).summary())
    return 0


def _backend_map(args: argparse.Namespace) -> int:
    """``cudnn-lab backend-map``: which backend wins each attention shape of a sweep (results/backend_map.py)."""
    from cudnn_lab.results.backend_map import backend_map
    out = check_output_path(args.json, what="backend map") if args.json else None
    bmap = backend_map(load_results(args.results))

    def write(path: Path) -> Path:
        bmap.to_json(path)
        return path

    code = _save(write, out, "backend map", ".json") if out is not None else 0
    _say(bmap.summary(), *([f"saved {out}"] if out is not None and code == 0 else []))
    return code


def _kit_command(args: argparse.Namespace) -> int:
    """Run a kit command; the kit's errors become one readable message and an exit code from EXIT_CODES."""
    handlers = {"run": _run, "sweep": _sweep, "report": _report, "plans": _plans, "profile": _profile,
                "forecast": _forecast, "triage": lambda a: cli_triage(a, _spec_of, _say), "backend-map": _backend_map}
    try:
        return handlers[args.command](args)
    except errors.CudnnLabError as e:
        return say_error(f"cudnn-lab {args.command}", e)
    except KeyboardInterrupt:
        _say(f"cudnn-lab {args.command}: interrupted", err=True)
        return EXIT_INTERRUPTED


def _cache(args: argparse.Namespace) -> int:
    """``cudnn-lab cache [--info] [--clear]``: where the caches are, whether they can be used, their size; --clear
    removes the entries the kit wrote (nothing else) and says what it removed and what it left, and why. Exit code 1
    when an entry of the kit's could not be removed."""
    code = 0
    if args.clear:
        cleared = cache_dir.clear()
        lines = ["cleared " + ", ".join(f"{name}: {n} file(s)" for name, n in cleared.removed.items())
                 + f" ({cleared.bytes / 2**20:.1f} MiB) in {cleared.root}"
                 + (f": nothing to clear ({cleared.problem})" if cleared.problem else "")]
        for title, items in (("left (not the kit's)", cleared.left), ("could not remove", cleared.failed)):
            if items:
                lines.append(f"{title}: {len(items)} path(s)")
                lines += [f"  {path}: {why}" for path, why in items[:_CACHE_LISTED]]
                if len(items) > _CACHE_LISTED:
                    lines.append(f"  ... and {len(items) - _CACHE_LISTED} more")
        _say(*lines)
        code = 1 if cleared.failed else 0
    info = cache_dir.info()
    state = (f"unusable: {info['problem']}" if info["problem"] else "on" if info["enabled"]
             else f"off ({info['why_off']})")
    lines = [f"cache: {info['root']} ({state}; {cache_dir.ENV_DIR} moves it, {cache_dir.ENV_OFF}=1 turns it off)"]
    for name in cache_dir.FOLDERS:
        note = f" ({info[name]['note']})" if info[name]["note"] else ""
        lines.append(f"  {name}: {info[name]['files']} file(s), {info[name]['bytes'] / 2**20:.1f} MiB{note}")
    _say(*lines)
    return code


#: Paths ``cudnn-lab cache --clear`` names one by one (then a count).
_CACHE_LISTED = 20


def say_error(prog: str, error: BaseException) -> int:
    """Say a kit error once, as one ``PROG: message`` on stderr (kept short of a traceback); its exit code."""
    _say(f"{prog}: {error}", err=True)
    return exit_code(error)


def exit_code(error: BaseException) -> int:
    """The exit code of a kit error, from :data:`EXIT_CODES` (the first class in the table it is an instance of)."""
    return next((code for name, code, _ in EXIT_CODES if isinstance(error, getattr(errors, name))), 1)


def console() -> NoReturn:
    """The ``cudnn-lab`` command: :func:`main`, then the process ends with its code after the exit hooks, before the
    native libraries' own teardown (gpu/device.end_program)."""
    end_program(main)


if __name__ == "__main__":
    console()
