"""Pooling on the GPU through cuDNN's classic ``cudnnPoolingForward``, called with ctypes.

cuDNN frontend 1.32's graph API has no pooling node (see ``cudnn_lab/graph/pool.py``), so a :class:`PoolSpec` runs
through the classic API of the very ``libcudnn.so.9`` the frontend loaded, on the frontend handle's own
``cudnnHandle_t`` and stream. It shows up in ``cl.run`` as one plan row named :data:`PLAN_NAME` (engine id -1, no
knobs, no workspace), built, checked against the float64 reference and timed like every frontend plan.

:func:`entries` gives that row as a :class:`~cudnn_lab.gpu.plans.PlanEntry` whose ``graph`` is a
:class:`ClassicPoolLab`: it offers what ``PlanEntry.build`` and ``Session.call`` use of a frontend graph
(``tensors``, ``pygraph.build_plan_at_index``, ``get_workspace_size_plan_at_index``, ``execute_plan_at_index``),
so the runner needs no second code path.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any

from ..errors import PlanError, UnsupportedGraphError
from ..graph.pool import (CLASSIC_CALL, CLASSIC_DATA_TYPES, CLASSIC_POOLING_MODES, CUDNN_PROPAGATE_NAN, describe,
                          roles, to_dot)
from ..specs.base import pair
from ..specs.pool import PoolSpec

PLAN_NAME = f"classic {CLASSIC_CALL}"
ENGINE_ID = -1

_c_int, _vp = ctypes.c_int, ctypes.c_void_p


def _loaded_libcudnn() -> str | None:
    """Path of the ``libcudnn.so.9`` already mapped into this process (the frontend's), or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/libcudnn.so" in line}
    except OSError:
        return None
    main = sorted(p for p in paths if os.path.basename(p).startswith("libcudnn.so"))
    return main[0] if main else None


@functools.cache
def library() -> ctypes.CDLL:
    """The cuDNN library the frontend uses, with the classic pooling entry points typed.

    Raises :class:`UnsupportedGraphError` when no ``libcudnn.so.9`` is loadable (a machine without cuDNN) or when it
    is not the one the frontend runs (a handle from one copy of cuDNN cannot be used by another).
    """
    import cudnn

    path = _loaded_libcudnn()
    try:
        lib = ctypes.CDLL(path or "libcudnn.so.9")
    except OSError as e:
        raise UnsupportedGraphError(
            f"cuDNN's library (libcudnn.so.9) is not loadable, so the classic {CLASSIC_CALL} that runs pooling is "
            "not available here. On a GPU machine the nvidia-cudnn-cu12/cu13 wheel that PyTorch uses provides it.",
            detail=str(e)) from None
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    lib.cudnnGetErrorString.restype = ctypes.c_char_p
    lib.cudnnGetErrorString.argtypes = [_c_int]
    for name in ("cudnnCreateTensorDescriptor", "cudnnCreatePoolingDescriptor"):
        getattr(lib, name).argtypes = [ctypes.POINTER(_vp)]
    for name in ("cudnnDestroyTensorDescriptor", "cudnnDestroyPoolingDescriptor"):
        getattr(lib, name).argtypes = [_vp]
    lib.cudnnSetTensor4dDescriptorEx.argtypes = [_vp, _c_int] + [_c_int] * 8
    lib.cudnnSetPooling2dDescriptor.argtypes = [_vp, _c_int, _c_int] + [_c_int] * 6
    lib.cudnnGetPooling2dForwardOutputDim.argtypes = [_vp, _vp] + [ctypes.POINTER(_c_int)] * 4
    lib.cudnnPoolingForward.argtypes = [_vp] * 8
    if hasattr(lib, "cudnnGetLastErrorString"):
        lib.cudnnGetLastErrorString.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.cudnnGetLastErrorString.restype = None
    frontend = int(cudnn.backend_version())
    if int(lib.cudnnGetVersion()) != frontend:
        raise UnsupportedGraphError(
            f"The cuDNN library found for the classic {CLASSIC_CALL} ({path or 'libcudnn.so.9'}, version "
            f"{lib.cudnnGetVersion()}) is not the one the cuDNN frontend runs (version {frontend}); a handle from "
            "one cannot be used by the other.")
    return lib


def _status(lib: ctypes.CDLL, status: int, call: str) -> None:
    """Raise :class:`PlanError` with cuDNN's own words when ``status`` is not CUDNN_STATUS_SUCCESS."""
    if status == 0:
        return
    name = lib.cudnnGetErrorString(status).decode()
    detail = ""
    if hasattr(lib, "cudnnGetLastErrorString"):
        buf = ctypes.create_string_buffer(1024)
        lib.cudnnGetLastErrorString(buf, len(buf))
        detail = " ".join(buf.value.decode(errors="replace").split())
    raise PlanError(f"{call} failed with {name} ({status})" + (f": {detail}" if detail else ""))


def _backend_handle(handle: Any) -> int:
    """The raw ``cudnnHandle_t`` of a frontend ``cudnn.Handle`` (or a raw pointer as an int)."""
    raw = getattr(handle, "backend_handle", handle)
    if not isinstance(raw, int) or raw == 0:
        raise PlanError(f"{CLASSIC_CALL} needs a cuDNN handle (cudnn.create_handle()), got {handle!r}")
    return raw


class ClassicPooling:
    """One ``cudnnPoolingForward`` "plan": its tensor and pooling descriptors, made by :meth:`build_plan_at_index`.

    The method names mirror a frontend graph's, so :class:`~cudnn_lab.gpu.plans.PlanEntry` and
    ``Session.call`` drive it unchanged; ``index`` is always 0 (the classic API has one way to run).
    """

    def __init__(self, spec: PoolSpec) -> None:
        self.spec = spec
        self._x: _vp | None = None
        self._y: _vp | None = None
        self._pool: _vp | None = None
        self._lib: ctypes.CDLL | None = None
        # alpha and beta are host floats for half, bfloat16 and float data (doubles only for double data).
        self._alpha, self._beta = ctypes.c_float(1.0), ctypes.c_float(0.0)

    @property
    def is_built(self) -> bool:
        return self._pool is not None

    def build_plan_at_index(self, index: int = 0) -> ClassicPooling:
        """Create and set the descriptors; check cuDNN's output dims against the spec's."""
        if index != 0:
            raise PlanError(f"{PLAN_NAME} has one plan (index 0), not {index}")
        if self.is_built:
            return self
        lib = library()
        spec = self.spec
        dt = CLASSIC_DATA_TYPES[spec.dtype][1]
        strides = spec.tensor_strides()
        x, y, pool = _vp(), _vp(), _vp()
        try:
            _status(lib, lib.cudnnCreateTensorDescriptor(ctypes.byref(x)), "cudnnCreateTensorDescriptor")
            self._x = x
            _status(lib, lib.cudnnCreateTensorDescriptor(ctypes.byref(y)), "cudnnCreateTensorDescriptor")
            self._y = y
            _status(lib, lib.cudnnCreatePoolingDescriptor(ctypes.byref(pool)), "cudnnCreatePoolingDescriptor")
            self._pool = pool
            _status(lib, lib.cudnnSetTensor4dDescriptorEx(x, dt, *spec.x_dims, *strides["X"]),
                    "cudnnSetTensor4dDescriptorEx(X)")
            _status(lib, lib.cudnnSetTensor4dDescriptorEx(y, dt, *spec.y_dims, *strides["Y"]),
                    "cudnnSetTensor4dDescriptorEx(Y)")
            (kh, kw), (sh, sw), (ph, pw) = pair(spec.window), pair(spec.stride), pair(spec.padding)
            _status(lib, lib.cudnnSetPooling2dDescriptor(pool, CLASSIC_POOLING_MODES[spec.mode][1],
                                                         CUDNN_PROPAGATE_NAN[1], kh, kw, ph, pw, sh, sw),
                    "cudnnSetPooling2dDescriptor")
            dims = [_c_int() for _ in range(4)]
            _status(lib, lib.cudnnGetPooling2dForwardOutputDim(pool, x, *(ctypes.byref(d) for d in dims)),
                    "cudnnGetPooling2dForwardOutputDim")
        except Exception:
            self._lib = lib
            self.release()
            raise
        self._lib = lib
        got = tuple(d.value for d in dims)
        if got != spec.y_dims:
            self.release()
            raise PlanError(f"cuDNN computes pooling output dims {list(got)}, the spec {list(spec.y_dims)}")
        return self

    def get_workspace_size_plan_at_index(self, index: int = 0) -> int:
        return 0  # cudnnPoolingForward takes no workspace

    def execute_plan_at_index(self, tensor_dict: dict[Any, Any], workspace: Any = None, index: int = 0,
                              handle: Any = None) -> None:
        """``cudnnPoolingForward(handle, pool, &1.0f, xDesc, X, &0.0f, yDesc, Y)`` on the handle's stream.

        ``tensor_dict`` maps "X" and "Y" to CUDA tensors with the spec's dims and strides.
        """
        if not self.is_built:
            self.build_plan_at_index(index)
        x, y = tensor_dict["X"], tensor_dict["Y"]
        lib = self._lib
        assert lib is not None
        _status(lib, lib.cudnnPoolingForward(_backend_handle(handle), self._pool, ctypes.byref(self._alpha),
                                             self._x, x.data_ptr(), ctypes.byref(self._beta), self._y,
                                             y.data_ptr()), CLASSIC_CALL)

    def release(self) -> None:
        """Destroy the descriptors (safe to call twice)."""
        lib = self._lib
        if lib is not None:
            if self._pool is not None:
                lib.cudnnDestroyPoolingDescriptor(self._pool)
            for d in (self._x, self._y):
                if d is not None:
                    lib.cudnnDestroyTensorDescriptor(d)
        self._x = self._y = self._pool = None

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class ClassicPoolLab:
    """What a :class:`~cudnn_lab.graph.LabGraph` offers, for pooling's classic call: tensors by name, the
    executable (``pygraph``), ``inspect()`` and the drawing."""

    def __init__(self, spec: PoolSpec) -> None:
        self.spec = spec
        self.tensors = {"X": "X", "Y": "Y"}
        self.pygraph = ClassicPooling(spec)

    @property
    def roles(self) -> dict[str, str]:
        return roles(self.spec)

    def inspect(self) -> dict[str, Any]:
        return describe(self.spec)

    def to_dot(self) -> Any:
        return to_dot(self.spec)

    def __repr__(self) -> str:
        return f"ClassicPoolLab({self.spec!r})"


def entries(spec: PoolSpec, handle: Any = None) -> list[Any]:
    """The plan list of a PoolSpec: one row for the classic ``cudnnPoolingForward`` (heuristic modes do not apply)."""
    from .plans import PlanEntry

    library()  # fail here, before inputs are made, when the classic API is not reachable
    lab: Any = ClassicPoolLab(spec)  # stands where a LabGraph stands
    return [PlanEntry(name=PLAN_NAME, engine_id=ENGINE_ID, knobs={}, graph=lab, index=0, ranks={}, behavior_notes=())]
