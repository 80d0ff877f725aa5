"""What the benchmark scripts share: their command line (--json; --quick and --dry-run over a problem table), the
'n/a' a missing figure prints as, the device line under a table, and writing --json.

A script run as ``python benchmarks/<name>.py`` has this folder on its path and imports this as ``_shared``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping
from typing import Any


def fmt(value: Any, spec: str) -> str:
    """``value`` in the ``spec`` format, or 'n/a' where it is missing (None)."""
    return "n/a" if value is None else format(value, spec)


def parser(doc: str, json_help: str = "also write the rows to this JSON file") -> argparse.ArgumentParser:
    """The script's command line, described by its docstring's first line, with --json."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--json", help=json_help)
    return p


def table_parser(doc: str, quick: tuple[str, ...], *, dry_run: bool = True) -> argparse.ArgumentParser:
    """:func:`parser` with --quick (only the ``quick`` problems) and, where the graphs build without a GPU,
    --dry-run."""
    p = parser(doc)
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(quick)}")
    if dry_run:
        p.add_argument("--dry-run", action="store_true", help="build the graphs only (works without a GPU)")
    return p


def table_args(doc: str, quick: tuple[str, ...], problems: Iterable[str]) -> tuple[argparse.Namespace, tuple[str, ...]]:
    """:func:`table_parser`'s arguments and the problems they ask for: ``quick`` with --quick, else all."""
    args = table_parser(doc, quick).parse_args()
    return args, (quick if args.quick else tuple(problems))


def device_line(row: Mapping[str, Any]) -> str:
    """The GPU and cuDNN a table ran on, from a row that recorded them."""
    return f"device: {row.get('device')}, cuDNN {row.get('cudnn')}"


def write_json(path: str | None, payload: Any, **dump: Any) -> None:
    """``payload`` as JSON (indent 1) at ``path``, when --json named one."""
    if path:
        with open(path, "w") as f:
            json.dump(payload, f, indent=1, **dump)


def finish(rows: list[dict[str, Any]], path: str | None) -> None:
    """Under a table: the device line of its first row (none when no row ran), then --json."""
    if rows:
        print(device_line(rows[0]))
    write_json(path, rows)
