"""The `cudnn-lab` command: lab, doctor, run, sweep, report and cache.

Every kit error becomes one line on stderr and an exit code from :data:`EXIT_CODES` (never a traceback). Run options
are the fields of :class:`~cudnn_lab.options.RunOptions`: a flag left out takes RunOptions' default (one default
each). Output paths (``-o``, ``--report``, a sweep's store) are checked before any GPU work; a missing output folder
is made. If a write still fails after the work, the result goes to a temporary file instead and the command says
where, with exit code 5.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .options import (HEURISTIC_MODES, PLAN_POLICIES, PLAN_POLICY_HELP, TIMING_HELP, TIMING_MODES, RunOptions)

__all__ = ["main", "EXIT_CODES", "EXIT_UNSAVED", "EXIT_INTERRUPTED"]

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
_EPILOG = ("exit codes: 0 success; " + "; ".join(f"{code} {meaning}" for _, code, meaning in EXIT_CODES)
           + f"; {EXIT_UNSAVED} the work ran but its output could not be written (saved to a temporary file, named)"
           + f"; {EXIT_INTERRUPTED} interrupted")
_DEFAULTS = RunOptions()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cudnn_lab")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """Flags for RunOptions' fields; each defaults to None (not given), so RunOptions' own default applies."""
    d = _DEFAULTS
    p.add_argument("--plans", choices=PLAN_POLICIES, help="; ".join(f"{k}: {v}" for k, v in PLAN_POLICY_HELP.items())
                   + f" (default: {d.plans})")
    p.add_argument("--heuristics", help=f"heuristic modes, comma separated, from {', '.join(HEURISTIC_MODES)} "
                   f"(default: {','.join(d.heuristics)})")
    p.add_argument("--timing", choices=TIMING_MODES, help="; ".join(f"{k}: {v}" for k, v in TIMING_HELP.items())
                   + f" (default: {d.timing})")
    p.add_argument("--cold-l2", action="store_const", const=True, dest="cold_l2",
                   help="flush L2 before every timed call (events timing)")
    p.add_argument("--time-cap-s", type=float, help=f"seconds of sampling per plan (default: {d.time_cap_s})")
    p.add_argument("--max-plans", type=int, help="time at most this many proposed plans (default: all)")
    p.add_argument("--seed", type=int, help=f"seed of the random inputs (default: {d.seed})")
    p.add_argument("--device", type=int, help=f"CUDA device index (default: {d.device})")
    for name, what in (("check", "the check against the float64 reference"),
                       ("baselines", "PyTorch's own op as a baseline"),
                       ("roofline", "the measured roofline ceilings"),
                       ("plan_cache", "the plan cache on disk (build every plan)"),
                       ("kernels", "recording each plan's kernels (CUPTI)"),
                       ("notes", "each plan's numerical notes and the determinism check")):
        p.add_argument(f"--no-{name.replace('_', '-')}", action="store_const", const=False, dest=name,
                       help=f"skip {what}")
    p.add_argument("--explore", type=int, help="engine configurations to sample beyond the heuristics' proposals, "
                   f"each built, checked and timed (default: {d.explore})")
    p.add_argument("--explore-time-s", type=float, dest="explore_time_s",
                   help=f"seconds the exploration may take (default: {d.explore_time_s:g})")
    p.add_argument("--remeasure-ceilings", action="store_const", const=True, dest="remeasure_ceilings",
                   help="measure the roofline ceilings again instead of loading the ones kept for this GPU")


def _run_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The run options given on the command line (the rest keep RunOptions' defaults)."""
    out = {name: getattr(args, name) for name in ("plans", "timing", "cold_l2", "time_cap_s", "max_plans", "seed",
                                                  "device", "check", "baselines", "roofline", "plan_cache",
                                                  "remeasure_ceilings", "kernels", "notes", "explore",
                                                  "explore_time_s")
           if getattr(args, name, None) is not None}
    if getattr(args, "heuristics", None) is not None:
        out["heuristics"] = tuple(m.strip() for m in args.heuristics.split(","))
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cudnn-lab",
        description="Explore NVIDIA cuDNN graphs: build, draw, run, time and check them.",
        epilog=_EPILOG,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"cudnn-lab {_version()}")
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
    run.add_argument("spec", help="spec JSON, as written by Spec.to_json() (e.g. {\"op\": \"conv\", ...})")
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
    cache.add_argument("--clear", action="store_true", help="remove the cached plans, ceilings and heuristics' answers")
    cache.add_argument("--info", action="store_true", help="say where the caches are and how big (the default)")
    report = commands.add_parser("report", help="write a self-contained HTML report of a result (opens offline)",
                                 allow_abbrev=False, epilog=_EPILOG)
    report.add_argument("results", help="a result JSON written by `cudnn-lab run`, a sweep (Parquet file or store "
                        "folder written by `cudnn-lab sweep`), or a recorded dataset's name (run or sweep)")
    report.add_argument("-o", "--output", required=True, help="the HTML file to write")
    return parser


def _default_beside(path: Path, suffix: str) -> Path:
    name = path.name[: -len(path.suffix)] if path.suffix else path.name
    return path.with_name(name + suffix)


def _run(args: argparse.Namespace) -> int:
    import cudnn_lab as cl
    from cudnn_lab.results.loading import read_spec_file
    from cudnn_lab.results.paths import as_path, check_output_path

    spec_path = as_path(args.spec, what="spec")
    spec = read_spec_file(spec_path)
    options = RunOptions.coerce(None, **_run_overrides(args))
    out = check_output_path(args.output if args.output is not None else _default_beside(spec_path, ".result.json"),
                            what="result JSON")
    report = check_output_path(args.report, what="report") if args.report is not None else None
    result = cl.run(spec, options)
    with _pandas_wide():
        print(plan_table(result).to_string(index=False))
    print(result.summary())
    code = _save(lambda p: result.save(p), out, "result JSON", ".result.json")
    if report is not None:
        from cudnn_lab.report import save_report

        code = max(code, _save(lambda p: save_report(result, p), report, "report", ".html"))
    return code


#: Columns of the plan table `cudnn-lab run` prints (those the result has), knobs by name.
PLAN_TABLE = ("heuristic_rank", "plan", "knob_names", "status", "median_ms", "iqr_ms", "kernel_ms", "tflops", "rel_l2",
              "pass_cudnn", "numeric_notes", "proposed")


def plan_table(result: Any) -> Any:
    """The plan table the `run` command prints: fastest first, knobs named by the backend knob table."""
    from cudnn_lab.results.anatomy import is_proposed, with_knob_names

    plans = with_knob_names(result.plans, result.device.get("cudnn_backend"))
    if "proposed" in plans.columns and plans["proposed"].astype(object).map(is_proposed).all():
        plans = plans.drop(columns="proposed")  # a run without exploration: every plan was proposed
    keep = ("plan", "knob_names", "status", "median_ms")
    cols = [c for c in PLAN_TABLE if c in plans.columns and (c in keep or not plans[c].isna().all())]
    return plans[cols].sort_values("median_ms", na_position="last")


def _save(write: Any, path: Path, what: str, suffix: str) -> int:
    """Write after the work; if that fails, write to a temporary file instead and say both (exit EXIT_UNSAVED)."""
    import tempfile

    from cudnn_lab.errors import CudnnLabError

    try:
        print(f"saved {write(path)}")
        return 0
    except (CudnnLabError, OSError) as e:
        print(f"cudnn-lab: could not write the {what} to {path}: {e}", file=sys.stderr)
    fd, tmp = tempfile.mkstemp(prefix="cudnn-lab-", suffix=suffix)
    os.close(fd)
    try:
        print(f"cudnn-lab: the {what} was saved to {write(Path(tmp))} instead", file=sys.stderr)
    except (CudnnLabError, OSError) as e:
        print(f"cudnn-lab: the {what} could not be saved anywhere ({e})", file=sys.stderr)
    return EXIT_UNSAVED


def _sweep(args: argparse.Namespace) -> int:
    import cudnn_lab as cl
    from cudnn_lab.results.loading import read_sweep_file
    from cudnn_lab.results.paths import as_path

    path = as_path(args.sweep, what="sweep")
    data = read_sweep_file(path)
    options = RunOptions.coerce(data["options"], **_run_overrides(args))
    store = args.store if args.store is not None else _default_beside(path, ".parquet")
    frame = cl.sweep(data["spec"], data["over"], store=store, options=options)
    picks = frame[frame["is_pick"].fillna(False).astype(bool)] if "is_pick" in frame else frame
    with _pandas_wide():
        cols = [c for c in ("label", "plan", "median_ms", "tflops", "point_status") if c in picks]
        print(picks[cols].to_string(index=False))
    print(f"{frame['point_id'].nunique() if 'point_id' in frame else 0} points in {store}")
    return 0


def _report(args: argparse.Namespace) -> int:
    import cudnn_lab as cl
    from cudnn_lab.errors import OptionError
    from cudnn_lab.report import save_report
    from cudnn_lab.results.paths import check_output_path

    out = check_output_path(args.output, what="report")
    result = cl.load_results(args.results)  # a RunResult, or a sweep frame: save_report makes either report
    if not isinstance(result, cl.RunResult) and not hasattr(result, "columns"):
        raise OptionError("results", args.results, "must be a run's result (JSON) or a sweep (Parquet or store)")
    return _save(lambda p: save_report(result, p), out, "report", ".html")


class _pandas_wide:
    def __enter__(self) -> None:
        import pandas as pd

        self._ctx = pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_rows", 200)
        self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


def _lab_command(extra: Sequence[str]) -> tuple[Path, list[str]]:
    """The folder to start in and the argv that starts JupyterLab there."""
    repo = Path(__file__).resolve().parent.parent
    argv = [sys.executable, "-m", "jupyter", "lab"]
    if (repo / QUICKSTART).is_file():
        return repo, [*argv, str(QUICKSTART), *extra]
    return Path.cwd(), [*argv, *extra]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and args.command != "lab":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)

    if args.command == "doctor":
        from cudnn_lab.capabilities import probe

        print(probe().summary())
        return 0
    if args.command in ("run", "sweep", "report"):
        return _kit_command(args)
    if args.command == "cache":
        return _cache(args)

    where, command = _lab_command(extra)
    os.chdir(where)
    sys.stdout.flush()
    os.execv(command[0], command)
    return 0  # not reached: execv replaces this process


def _kit_command(args: argparse.Namespace) -> int:
    """Run a kit command; the kit's errors become one readable message and an exit code from EXIT_CODES."""
    from cudnn_lab import errors

    handlers = {"run": _run, "sweep": _sweep, "report": _report}
    try:
        return handlers[args.command](args)
    except errors.CudnnLabError as e:
        print(f"cudnn-lab {args.command}: {e}", file=sys.stderr)
        return exit_code(e)
    except KeyboardInterrupt:
        print(f"cudnn-lab {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _cache(args: argparse.Namespace) -> int:
    """``cudnn-lab cache [--info] [--clear]``: where the caches are, their size; --clear removes them."""
    from cudnn_lab import cache_dir

    if args.clear:
        removed = cache_dir.clear()
        print("cleared " + ", ".join(f"{name}: {n} file(s)" for name, n in removed.items())
              + f" in {cache_dir.cache_root()}")
    info = cache_dir.info()
    state = "on" if info["enabled"] else f"off ({info['why_off']})"
    print(f"cache: {info['root']} ({state}; {cache_dir.ENV_DIR} moves it, {cache_dir.ENV_OFF}=1 turns it off)")
    for name in cache_dir.FOLDERS:
        print(f"  {name}: {info[name]['files']} file(s), {info[name]['bytes'] / 2**20:.1f} MiB")
    return 0


def exit_code(error: BaseException) -> int:
    """The exit code of a kit error, from :data:`EXIT_CODES` (the first class in the table it is an instance of)."""
    from cudnn_lab import errors

    return next((code for name, code, _ in EXIT_CODES if isinstance(error, getattr(errors, name))), 1)


if __name__ == "__main__":
    sys.exit(main())
