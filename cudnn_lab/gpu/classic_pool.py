"""Pooling's plan source: cuDNN's classic ``cudnnPoolingForward``, called with ctypes (``gpu/classic.py``).

The frontend graph API has no pooling node (``graph/pool.py``; docs/FINDINGS.md), so a :class:`PoolSpec` shows up
in ``cl.run`` as one plan row named :data:`PLAN_NAME` (engine id -1, no knobs, no workspace), built, checked against
the float64 reference and timed like every frontend plan. Its ``graph`` is a :class:`ClassicPoolLab`, which offers
what the runner uses of a frontend graph (``tensors``, ``pygraph.build_plan_at_index``,
``get_workspace_size_plan_at_index``, ``execute_plan_at_index``), so the runner needs no second code path.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

from ..errors import PlanError
from ..graph.pool import (CLASSIC_CALL, CLASSIC_DATA_TYPES, CLASSIC_POOLING_MODES, CUDNN_PROPAGATE_NAN, describe,
                          roles, to_dot)
from ..specs.base import pair
from ..specs.pool import PoolSpec
from .classic import backend_handle, c_int, c_void_p, check
from .classic import library as classic_library
from .plans import PLAN_SOURCES, PlanEntry

PLAN_NAME = f"classic {CLASSIC_CALL}"
ENGINE_ID = -1

_int, _vp = c_int, c_void_p


@functools.cache
def library() -> ctypes.CDLL:
    """cuDNN's library with the classic pooling entry points typed."""
    lib = classic_library()
    for name in ("cudnnCreateTensorDescriptor", "cudnnCreatePoolingDescriptor"):
        getattr(lib, name).argtypes = [ctypes.POINTER(_vp)]
    for name in ("cudnnDestroyTensorDescriptor", "cudnnDestroyPoolingDescriptor"):
        getattr(lib, name).argtypes = [_vp]
    lib.cudnnSetTensor4dDescriptorEx.argtypes = [_vp, _int] + [_int] * 8
    lib.cudnnSetPooling2dDescriptor.argtypes = [_vp, _int, _int] + [_int] * 6
    lib.cudnnGetPooling2dForwardOutputDim.argtypes = [_vp, _vp] + [ctypes.POINTER(_int)] * 4
    lib.cudnnPoolingForward.argtypes = [_vp] * 8
    return lib


class ClassicPooling:
    """One ``cudnnPoolingForward`` "plan": its tensor and pooling descriptors, made by :meth:`build_plan_at_index`.

    The method names mirror a frontend graph's; ``index`` is always 0 (the classic API has one way to run).
    """

    def __init__(self, spec: PoolSpec) -> None:
        self.spec = spec
        self._x: Any = None
        self._y: Any = None
        self._pool: Any = None
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
        lib = self._lib = library()
        spec = self.spec
        dt = CLASSIC_DATA_TYPES[spec.dtype][1]
        strides = spec.tensor_strides()
        x, y, pool = _vp(), _vp(), _vp()
        try:
            check(lib, lib.cudnnCreateTensorDescriptor(ctypes.byref(x)), "cudnnCreateTensorDescriptor")
            self._x = x
            check(lib, lib.cudnnCreateTensorDescriptor(ctypes.byref(y)), "cudnnCreateTensorDescriptor")
            self._y = y
            check(lib, lib.cudnnCreatePoolingDescriptor(ctypes.byref(pool)), "cudnnCreatePoolingDescriptor")
            self._pool = pool
            check(lib, lib.cudnnSetTensor4dDescriptorEx(x, dt, *spec.x_dims, *strides["X"]),
                  "cudnnSetTensor4dDescriptorEx(X)")
            check(lib, lib.cudnnSetTensor4dDescriptorEx(y, dt, *spec.y_dims, *strides["Y"]),
                  "cudnnSetTensor4dDescriptorEx(Y)")
            (kh, kw), (sh, sw), (ph, pw) = pair(spec.window), pair(spec.stride), pair(spec.padding)
            check(lib, lib.cudnnSetPooling2dDescriptor(pool, CLASSIC_POOLING_MODES[spec.mode][1],
                                                       CUDNN_PROPAGATE_NAN[1], kh, kw, ph, pw, sh, sw),
                  "cudnnSetPooling2dDescriptor")
            dims = [_int() for _ in range(4)]
            check(lib, lib.cudnnGetPooling2dForwardOutputDim(pool, x, *(ctypes.byref(d) for d in dims)),
                  "cudnnGetPooling2dForwardOutputDim")
        except Exception:
            self.release()
            raise
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
        raw = backend_handle(handle, CLASSIC_CALL)
        if not self.is_built:
            self.build_plan_at_index(index)
        x, y = tensor_dict["X"], tensor_dict["Y"]
        lib = self._lib
        assert lib is not None
        check(lib, lib.cudnnPoolingForward(raw, self._pool, ctypes.byref(self._alpha), self._x, x.data_ptr(),
                                           ctypes.byref(self._beta), self._y, y.data_ptr()), CLASSIC_CALL)

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


@PLAN_SOURCES.register(PoolSpec)
def classic_plans(spec: PoolSpec, handle: Any = None, modes: tuple[str, ...] = (), where: str = "",
                  cudnn_version: str = "") -> list[PlanEntry]:
    """A PoolSpec's plan list: one row for the classic ``cudnnPoolingForward`` (heuristic modes do not apply)."""
    library()  # fail here, before inputs are made, when the classic API is not reachable
    return [PlanEntry(name=PLAN_NAME, engine_id=ENGINE_ID, knobs={}, graph=ClassicPoolLab(spec), index=0)]
