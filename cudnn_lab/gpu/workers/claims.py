"""Work taken as workers become free: each item once, through claim files in a folder that the one handing out
the work makes and removes (the plan-build helpers' plans, gpu/build_role.py and gpu/parallel_build.py). A file
made only if absent (``O_EXCL``) is the claim, so no lock or message is needed between the workers."""

from __future__ import annotations

import os
from collections.abc import Iterator

__all__ = ["claimed", "claim_owner", "TAKING"]

#: :func:`claim_owner` of a claim made but not yet written (its worker is taking it now).
TAKING = -1


def claimed(folder: str, count: int, slot: int) -> Iterator[int]:
    """The items (indexes ``0..count-1``) that worker ``slot`` takes, one at a time as it becomes free: first item
    ``slot`` (its round-robin first), then the lowest one no worker has taken. An item is taken by making its claim
    file (holding the slot) only if absent, so each is taken once. Ends when none is left or the folder is gone (the
    work was called off)."""
    order = ([slot] if 0 <= slot < count else []) + [i for i in range(count) if i != slot]
    for i in order:
        try:
            fd = os.open(os.path.join(folder, str(i)), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            continue
        except OSError:  # the folder is gone: nothing more to take
            return
        with os.fdopen(fd, "w") as f:
            f.write(str(slot))
        yield i


def claim_owner(folder: str, index: int) -> int | None:
    """The slot of the worker that took item ``index`` (:func:`claimed`), :data:`TAKING` while its file is being
    written, None while no worker has taken it (or once the folder is gone)."""
    try:
        with open(os.path.join(folder, str(index))) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else TAKING
