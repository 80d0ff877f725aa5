"""Pooling's plan source: cuDNN's classic ``cudnnPoolingForward`` (the frontend graph API has no pooling node:
``graph/pool.py``; docs/FINDINGS.md), one plan row :data:`PLAN_NAME` (engine id -1, no knobs, no workspace), built,
checked against the float64 reference and timed like every other classic call (:class:`~.base.ClassicCall`)."""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from typing import Any

from ...errors import PlanError
from ...graph import pool as pool_graph
from ...graph.pool import CLASSIC_CALL, CLASSIC_POOLING_MODES, CUDNN_PROPAGATE_NAN
from ...specs.base import pair
from ...specs.pool import PoolSpec
from ..plans import PLAN_SOURCES, PlanEntry
from .base import ClassicCall, ClassicLab, c_int, c_void_p, check, entry, one_row, whole_gpu_only

PLAN_NAME = f"classic {CLASSIC_CALL}"
_V, _P = c_void_p, ctypes.POINTER


class PoolingCall(ClassicCall):
    """``cudnnPoolingForward(handle, poolDesc, &1, xDesc, x, &0, yDesc, y)``; the pooling descriptor says mode, NaN
    propagation, window, padding and stride, and cuDNN's own output dims are checked against the spec's."""

    call = CLASSIC_CALL
    op_descriptor = "Pooling"

    def _build_extra(self) -> None:
        spec = self.spec
        (kh, kw), (sh, sw), (ph, pw) = pair(spec.window), pair(spec.stride), pair(spec.padding)
        fn = entry("cudnnSetPooling2dDescriptor", (_V, c_int, c_int, *([c_int] * 6)))
        check(fn(self._op, CLASSIC_POOLING_MODES[spec.mode][1], CUDNN_PROPAGATE_NAN[1], kh, kw, ph, pw, sh, sw),
              "cudnnSetPooling2dDescriptor")
        dims = [c_int() for _ in range(4)]
        out_dim = entry("cudnnGetPooling2dForwardOutputDim", (_V, _V, *([_P(c_int)] * 4)))
        check(out_dim(self._op, self._x, *(ctypes.byref(d) for d in dims)), "cudnnGetPooling2dForwardOutputDim")
        got = tuple(d.value for d in dims)
        if got != spec.y_dims:
            raise PlanError(f"cuDNN computes pooling output dims {list(got)}, the spec {list(spec.y_dims)}")

    def _run(self, handle: int, x: int, y: int) -> int:
        fn = entry("cudnnPoolingForward", (_V,) * 8)
        return fn(handle, self._op, ctypes.byref(self._alpha), self._x, x, ctypes.byref(self._beta), self._y, y)


def pool_lab(spec: PoolSpec) -> ClassicLab:
    """The stand-in for a LabGraph that pooling's plan lives in: the call, its description and its drawing."""
    return one_row(spec, PoolingCall(spec), pool_graph.describe)[0].graph


@PLAN_SOURCES.register(PoolSpec)
def classic_plans(spec: PoolSpec, handle: object = None, modes: tuple[str, ...] = (), where: str = "",
                  cudnn_version: str = "", *, graph_options: Mapping[str, Any] | None = None) -> list[PlanEntry]:
    """A PoolSpec's plan list: one row for the classic ``cudnnPoolingForward`` (heuristic modes do not apply; graph
    options are refused: it runs on the whole GPU)."""
    whole_gpu_only(graph_options, "PoolSpec")
    entry("cudnnPoolingForward", (_V,) * 8)  # fail here, before inputs are made, when it is not reachable
    return one_row(spec, PoolingCall(spec), pool_graph.describe)
