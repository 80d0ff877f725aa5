"""cuDNN's classic (non-graph) API through ctypes: finding the library, checking statuses, the raw handle.

Families that the frontend graph API does not offer (pooling today; RNN, softmax, tensor transforms later) call the
classic entry points of the very ``libcudnn.so.9`` the frontend loaded, on the frontend handle's own
``cudnnHandle_t`` and stream. Each family's module types the entry points it uses; this module holds what they share.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from pathlib import Path
from typing import Any

from ...errors import PlanError, UnsupportedGraphError

LIBRARY_NAME = "libcudnn.so.9"
SUCCESS = 0  # CUDNN_STATUS_SUCCESS

c_int, c_void_p = ctypes.c_int, ctypes.c_void_p


def mapped_libcudnn(maps: str | Path = "/proc/self/maps") -> str | None:
    """Path of the ``libcudnn.so*`` already mapped into this process (the frontend's), or None."""
    try:
        with open(maps) as f:
            paths = {line.split()[-1] for line in f if "/libcudnn.so" in line}
    except OSError:
        return None
    main = sorted(p for p in paths if os.path.basename(p).startswith("libcudnn.so"))
    return main[0] if main else None


def wheel_libcudnn() -> list[str]:
    """Where the nvidia-cudnn wheel that PyTorch depends on puts the library, for every entry of ``sys.path``."""
    return [str(Path(p) / "nvidia" / "cudnn" / "lib" / LIBRARY_NAME) for p in sys.path if p and Path(p).is_dir()]


def candidates() -> list[tuple[str, str]]:
    """``(what, path or name)`` in the order the search tries them: mapped, the wheel's copies, the loader."""
    out: list[tuple[str, str]] = []
    mapped = mapped_libcudnn()
    if mapped:
        out.append(("already loaded by the frontend", mapped))
    out += [("the nvidia-cudnn wheel", p) for p in wheel_libcudnn() if os.path.isfile(p)]
    out.append(("the dynamic loader (LD_LIBRARY_PATH, ldconfig)", LIBRARY_NAME))
    return out


def _frontend_version() -> int | None:
    import cudnn

    try:
        return int(cudnn.backend_version())
    except Exception:  # noqa: BLE001 - the frontend without a loadable backend cannot say
        return None


@functools.cache
def library() -> ctypes.CDLL:
    """The cuDNN library the frontend uses, with the shared entry points typed (version, error strings).

    Raises :class:`UnsupportedGraphError` naming every place it looked when no ``libcudnn.so.9`` is loadable (a
    machine without cuDNN), or when the one found is not the one the frontend runs (a handle from one copy of cuDNN
    cannot be used by another).
    """
    tried: list[str] = []
    lib = path = None
    for what, where in candidates():
        try:
            lib, path = ctypes.CDLL(where), where
            break
        except OSError as e:
            tried.append(f"{where} ({what}): {' '.join(str(e).split())}")
    if lib is None:
        raise UnsupportedGraphError(
            f"cuDNN's library ({LIBRARY_NAME}) is not loadable, so cuDNN's classic API (which runs pooling) is not "
            "available here. On a GPU machine the nvidia-cudnn-cu12/cu13 wheel that PyTorch uses provides it.",
            detail="looked for:\n" + "\n".join(tried), hint="")
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    lib.cudnnGetErrorString.restype = ctypes.c_char_p
    lib.cudnnGetErrorString.argtypes = [c_int]
    if hasattr(lib, "cudnnGetLastErrorString"):
        lib.cudnnGetLastErrorString.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.cudnnGetLastErrorString.restype = None
    frontend = _frontend_version()
    if frontend is not None and int(lib.cudnnGetVersion()) != frontend:
        raise UnsupportedGraphError(
            f"The cuDNN library found for the classic API ({path}, version {lib.cudnnGetVersion()}) is not the one "
            f"the cuDNN frontend runs (version {frontend}); a handle from one cannot be used by the other.", hint="")
    return lib


def check(lib: Any, status: int, call: str) -> None:
    """Raise :class:`PlanError` with cuDNN's own words when ``status`` is not CUDNN_STATUS_SUCCESS."""
    if status == SUCCESS:
        return
    name = lib.cudnnGetErrorString(status).decode()
    detail = ""
    if hasattr(lib, "cudnnGetLastErrorString"):
        buf = ctypes.create_string_buffer(1024)
        lib.cudnnGetLastErrorString(buf, len(buf))
        detail = " ".join(buf.value.decode(errors="replace").split())
    raise PlanError(f"{call} failed with {name} ({status})" + (f": {detail}" if detail else ""))


def backend_handle(handle: Any, call: str) -> int:
    """The raw ``cudnnHandle_t`` of a frontend ``cudnn.Handle`` (or a raw pointer given as an int)."""
    raw = getattr(handle, "backend_handle", handle)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw == 0:
        raise PlanError(f"{call} needs a cuDNN handle (cudnn.create_handle()), got {handle!r}")
    return raw
