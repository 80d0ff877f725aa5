"""The `cudnn-lab` command: `cudnn-lab doctor`, `cudnn-lab lab [JUPYTER LAB OPTIONS]`, `cudnn-lab --version`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

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
    return parser


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

    where, command = _lab_command(extra)
    os.chdir(where)
    sys.stdout.flush()
    os.execv(command[0], command)
    return 0  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main())
