"""How a sweep reports progress: a callback ``(done, total, eta_s, message)``; a text bar for terminals."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "text_progress"]

Progress = Callable[[int, int, "float | None", str], None]


def text_progress(stream: Any = None) -> Progress:
    """A one-line text bar with an ETA, for terminals and logs."""
    out = stream or sys.stderr

    def show(done: int, total: int, eta_s: float | None, message: str) -> None:
        width = 30
        filled = int(width * done / max(total, 1))
        eta = f" ETA {eta_s:5.0f} s" if eta_s is not None else ""
        end = "\n" if done >= total else ""
        out.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}{eta} {message[:60]:<60}{end}")
        out.flush()

    return show
