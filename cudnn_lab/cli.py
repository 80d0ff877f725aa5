"""The `cudnn-lab` command: lab, doctor, run, sweep and report.

Exit codes: 0 success; 2 usage error or bad input (a file that is not a valid spec, an unknown option);
3 no GPU where one is needed; 4 cuDNN cannot run the graph here; 1 any other failure of the kit.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

QUICKSTART = Path("notebooks") / "00_quickstart.ipynb"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cudnn_lab")
    except PackageNotFoundError:
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cudnn-lab",
        description="Explore NVIDIA cuDNN graphs: build, draw, run, time and check them.",
        epilog="exit codes: 0 success, 1 other failure, 2 usage error or bad input, 3 no GPU, "
               "4 cuDNN cannot run the graph here",
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
                              "checked; prints the plan table and saves the result", allow_abbrev=False)
    run.add_argument("spec", type=Path, help="spec JSON, as written by Spec.to_json() (e.g. {\"op\": \"conv\", ...})")
    run.add_argument("--plans", choices=("all", "heuristic"), default="all", help="time every plan or only the "
                     "heuristic's pick (default: all)")
    run.add_argument("--heuristics", default="A,FALLBACK", help="heuristic modes, comma separated (default A,FALLBACK)")
    run.add_argument("--timing", choices=("auto", "cuda_graph", "events"), default="auto")
    run.add_argument("--cold-l2", action="store_true", help="flush L2 before every timed call")
    run.add_argument("-o", "--output", type=Path, help="result JSON (default: SPEC.result.json beside the spec)")
    run.add_argument("--report", type=Path, help="also write a self-contained HTML report here")
    sweep = commands.add_parser("sweep", help="run a sweep described by a JSON file into a resumable store",
                                allow_abbrev=False)
    sweep.add_argument("sweep", type=Path, help='sweep JSON: {"spec": {...} or "specs": [...], "over": {"n": [1, 8]},'
                       ' "plans": "heuristic", "heuristics": ["A", "FALLBACK"]}')
    sweep.add_argument("--store", type=Path, help="store folder (default: SWEEP.parquet beside the file)")
    report = commands.add_parser("report", help="write a self-contained HTML report of a result (opens offline)",
                                 allow_abbrev=False)
    report.add_argument("results", help="a result JSON written by `cudnn-lab run`, or a recorded dataset's name")
    report.add_argument("-o", "--output", type=Path, required=True, help="the HTML file to write")
    return parser


def _read_json(path: Path) -> Any:
    import json

    from cudnn_lab.errors import SpecError

    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise SpecError("file", str(path), "does not exist") from None
    except json.JSONDecodeError as e:
        raise SpecError("file", str(path), f"is not valid JSON ({e.msg} at line {e.lineno})") from None


def _run(args: argparse.Namespace) -> int:
    import cudnn_lab as cl

    spec = cl.spec_from_dict(_read_json(args.spec))
    result = cl.run(spec, plans=args.plans, heuristics=tuple(args.heuristics.split(",")), timing=args.timing,
                    cold_l2=args.cold_l2)
    cols = ["heuristic_rank", "plan", "status", "median_ms", "iqr_ms", "tflops", "rel_l2", "pass_cudnn"]
    with _pandas_wide():
        print(result.plans[cols].sort_values("median_ms").to_string(index=False))
    print(result.summary())
    out = args.output or args.spec.with_suffix(".result.json")
    result.save(out)
    print(f"saved {out}")
    if args.report:
        from cudnn_lab.report import save_report

        print(f"report {save_report(result, args.report)}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    import cudnn_lab as cl
    from cudnn_lab.errors import SpecError

    data = _read_json(args.sweep)
    if not isinstance(data, dict) or ("spec" in data) == ("specs" in data):
        raise SpecError("sweep", str(args.sweep), 'must hold an object with "spec" or "specs" (one of them)')
    specs = cl.spec_from_dict(data["spec"]) if "spec" in data else [cl.spec_from_dict(d) for d in data["specs"]]
    options = {k: data[k] for k in ("plans", "heuristics", "timing", "cold_l2", "time_cap_s") if k in data}
    unknown = set(data) - {"spec", "specs", "over", *options}
    if unknown:
        raise SpecError("sweep", sorted(unknown)[0], "is not a sweep key; keys are spec/specs, over, plans, "
                        "heuristics, timing, cold_l2, time_cap_s")
    store = args.store or args.sweep.with_suffix(".parquet")
    frame = cl.sweep(specs, data.get("over"), store=store, **options)
    picks = frame[frame.get("is_pick", False) == True] if "is_pick" in frame else frame  # noqa: E712
    with _pandas_wide():
        cols = [c for c in ("label", "plan", "median_ms", "tflops", "point_status") if c in picks]
        print(picks[cols].to_string(index=False))
    print(f"{frame['point_id'].nunique()} points in {store}")
    return 0


def _report(args: argparse.Namespace) -> int:
    import cudnn_lab as cl
    from cudnn_lab.errors import SpecError
    from cudnn_lab.report import save_report

    result = cl.load_results(args.results)
    if not isinstance(result, cl.RunResult):
        raise SpecError("results", args.results, "must be a single run's result (JSON); sweep reports are not "
                        "supported by this command yet")
    print(f"wrote {save_report(result, args.output)}")
    return 0


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

    where, command = _lab_command(extra)
    os.chdir(where)
    sys.stdout.flush()
    os.execv(command[0], command)
    return 0  # not reached: execv replaces this process


def _kit_command(args: argparse.Namespace) -> int:
    """Run a kit command; the kit's errors become one readable message and an exit code."""
    from cudnn_lab.errors import CudnnLabError, NoGPUError, SpecError, UnsupportedGraphError

    handlers = {"run": _run, "sweep": _sweep, "report": _report}
    # Most specific first: an UnsupportedGraphError is also a CudnnLabError.
    codes = ((SpecError, 2), (NoGPUError, 3), (UnsupportedGraphError, 4), (CudnnLabError, 1))
    try:
        return handlers[args.command](args)
    except CudnnLabError as e:
        print(f"cudnn-lab {args.command}: {e}", file=sys.stderr)
        return next(code for kind, code in codes if isinstance(e, kind))
    except KeyboardInterrupt:
        print(f"cudnn-lab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
