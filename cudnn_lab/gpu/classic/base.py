"""What the newer classic-API families share (softmax, activations, tensor transforms, RNNs): entry points looked up
across cuDNN's libraries, tensor descriptors, and the stand-in for a LabGraph that a classic "plan" lives in.

cuDNN 9 exports its public API from ``libcudnn.so.9`` (a shim that loads the sub-libraries); on the GPU machines
some classic symbols were found in the sub-libraries as well (``libcudnn_ops.so.9``, ``libcudnn_cnn.so.9``,
``libcudnn_adv.so.9``, docs/FINDINGS.md). :func:`entry` takes a symbol from the shim the frontend loaded and, only
where the shim lacks it, from the sub-library next to it, so a handle made by the frontend is used by the same copy
of cuDNN throughout.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Mapping, Sequence
from ctypes import c_int, c_void_p
from typing import Any

from ...errors import OptionError, PlanError, UnsupportedGraphError
from ...graph import drawing
from ...graph.classic_call import CLASSIC_DATA_TYPES
from ...graph.families import DRAWINGS
from ..frontend import CLASSIC_WHOLE_GPU
from ..plans import PlanEntry
from . import loader as classic

#: The engine id of a classic call's plan row (it has no engine).
ENGINE_ID = -1
#: Sub-libraries tried, in order, for a symbol the shim does not export.
SUB_LIBRARIES = ("libcudnn_ops.so.9", "libcudnn_adv.so.9", "libcudnn_cnn.so.9")


@functools.cache
def libraries() -> tuple[ctypes.CDLL, ...]:
    """The shim (``classic.library()``, version-checked against the frontend) and the sub-libraries beside it."""
    main = classic.library()
    out = [main]
    path = getattr(main, "_name", "") or ""
    folder = os.path.dirname(path) if os.path.isabs(path) else ""
    for sub in SUB_LIBRARIES:
        try:
            out.append(ctypes.CDLL(os.path.join(folder, sub) if folder else sub))
        except OSError:
            continue
    return tuple(out)


@functools.cache
def entry(name: str, argtypes: tuple[Any, ...], restype: Any = c_int) -> Any:
    """The typed function ``name`` from the first of :func:`libraries` that exports it.

    Raises :class:`UnsupportedGraphError` naming the symbol when none does (an older or partial cuDNN).
    """
    libs = libraries()
    for lib in libs:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            continue
        fn.argtypes, fn.restype = list(argtypes), restype
        return fn
    where = ", ".join(getattr(lib, "_name", "?") for lib in libs)
    raise UnsupportedGraphError(f"cuDNN's classic {name} is not in the cuDNN libraries found here ({where}); it is "
                                "in cuDNN 9's libcudnn.so.9.", hint="")


def whole_gpu_only(graph_options: Mapping[str, Any] | None, what: str) -> None:
    """OptionError naming sm_count when graph options (an SM carve-out) reach a plan source of a classic call:
    classic calls run on the whole GPU (``what`` names the spec, e.g. ``PoolSpec``)."""
    if graph_options:
        raise OptionError("sm_count", dict(graph_options).get("sm_count"), f"{what} {CLASSIC_WHOLE_GPU}")


def check(status: int, call: str) -> None:
    """PlanError with cuDNN's own words when ``status`` is not CUDNN_STATUS_SUCCESS."""
    classic.check(classic.library(), status, call)


_P = ctypes.POINTER


def create(kind: str) -> c_void_p:
    """A new descriptor of ``kind`` (``Tensor``, ``Activation``, ``RNN``, ``RNNData``, ``Dropout``)."""
    desc = c_void_p()
    check(entry(f"cudnnCreate{kind}Descriptor", (_P(c_void_p),))(ctypes.byref(desc)), f"cudnnCreate{kind}Descriptor")
    return desc


def destroy(kind: str, desc: c_void_p | None) -> None:
    """Destroy a descriptor made by :func:`create` (None: nothing to do); never raises."""
    if desc is not None and desc.value:
        try:
            entry(f"cudnnDestroy{kind}Descriptor", (c_void_p,))(desc)
        except Exception:  # noqa: BLE001 - teardown (perhaps at interpreter exit) must not raise
            pass


def tensor_descriptor(data_type: int, dims: Sequence[int], strides: Sequence[int], what: str) -> c_void_p:
    """A tensor descriptor with explicit dims and strides: 4-D through ``cudnnSetTensor4dDescriptorEx``, others
    (3-D RNN states) through ``cudnnSetTensorNdDescriptor``."""
    desc = create("Tensor")
    try:
        if len(dims) == 4:
            fn = entry("cudnnSetTensor4dDescriptorEx", (c_void_p, c_int, *([c_int] * 8)))
            check(fn(desc, data_type, *dims, *strides), f"cudnnSetTensor4dDescriptorEx({what})")
        else:
            arr = c_int * len(dims)
            fn = entry("cudnnSetTensorNdDescriptor", (c_void_p, c_int, c_int, _P(c_int), _P(c_int)))
            check(fn(desc, data_type, len(dims), arr(*dims), arr(*strides)), f"cudnnSetTensorNdDescriptor({what})")
    except Exception:
        destroy("Tensor", desc)
        raise
    return desc


def tensor_dims(desc: c_void_p, what: str, max_dims: int = 8) -> tuple[int, ...]:
    """The dims cuDNN reports for a tensor descriptor (``cudnnGetTensorNdDescriptor``)."""
    fn = entry("cudnnGetTensorNdDescriptor", (c_void_p, c_int, _P(c_int), _P(c_int), _P(c_int), _P(c_int)))
    dt, nb = c_int(), c_int()
    dims, strides = (c_int * max_dims)(), (c_int * max_dims)()
    check(fn(desc, max_dims, ctypes.byref(dt), ctypes.byref(nb), dims, strides), f"cudnnGetTensorNdDescriptor({what})")
    return tuple(dims[i] for i in range(nb.value))


def pointer(tensor: Any) -> int:
    """A tensor's device address (0 for None)."""
    return 0 if tensor is None else int(tensor.data_ptr())


def one_plan(index: int, name: str) -> None:
    """A classic call has one way to run: plan index 0."""
    if index != 0:
        raise PlanError(f"{name} has one plan (index 0), not {index}")


class ClassicLab:
    """What the runner uses of a :class:`~cudnn_lab.graph.LabGraph`, for a classic call: tensors by name (each its
    own key), the executable (``pygraph``), ``inspect()`` and the drawing (from the graph layer)."""

    def __init__(self, spec: Any, executable: Any, describe: Any = None, draw: Any = None) -> None:
        self.spec = spec
        self.tensors = {name: name for name in spec.tensor_shapes()}
        self.pygraph = executable
        self._describe, self._draw = describe, draw

    def inspect(self) -> dict[str, Any]:
        return self._describe(self.spec) if self._describe else {}

    def to_dot(self) -> Any:
        return self._draw(self.spec) if self._draw else drawing(self.spec)

    def __repr__(self) -> str:
        return f"ClassicLab({self.spec!r}, {type(self.pygraph).__name__})"

    @property
    def roles(self) -> dict[str, str]:
        """Tensor name -> 'input' or 'output', as the call's description names them (empty without one)."""
        nodes = self.inspect().get("nodes", [])
        return {**{n: "input" for node in nodes for n in node["inputs"].values()},
                **{n: "output" for node in nodes for n in node["outputs"].values()}}


class ClassicCall:
    """One classic call as a one-plan "graph": x and y descriptors made by :meth:`build_plan_at_index`, released
    by :meth:`release`. Subclasses name the call and add what else it needs (:meth:`_build_extra`, :meth:`_run`)."""

    call = ""
    #: The kind of the one op descriptor the call takes beside x and y (``cudnnCreate<kind>Descriptor``:
    #: 'Activation', 'Pooling'), made before :meth:`_build_extra` sets it up and destroyed by :meth:`release`;
    #: '' for none.
    op_descriptor = ""

    def __init__(self, spec: Any) -> None:
        self.spec = spec
        self._x: c_void_p | None = None
        self._y: c_void_p | None = None
        self._op: c_void_p | None = None
        # alpha and beta are host floats for half, bfloat16 and float data (doubles only for double data).
        self._alpha, self._beta = ctypes.c_float(1.0), ctypes.c_float(0.0)

    @property
    def is_built(self) -> bool:
        return self._y is not None

    def build_plan_at_index(self, index: int = 0) -> ClassicCall:
        one_plan(index, f"classic {self.call}")
        if self.is_built:
            return self
        spec, strides, shapes = self.spec, self.spec.tensor_strides(), self.spec.tensor_shapes()
        dtypes = spec.tensor_dtypes()
        try:
            self._x = tensor_descriptor(CLASSIC_DATA_TYPES[dtypes["X"]][1], shapes["X"], strides["X"], "X")
            if self.op_descriptor:
                self._op = create(self.op_descriptor)
            self._build_extra()
            self._y = tensor_descriptor(CLASSIC_DATA_TYPES[dtypes["Y"]][1], shapes["Y"], strides["Y"], "Y")
        except Exception:
            self.release()
            raise
        return self

    def _build_extra(self) -> None:
        """Set up what the call needs beyond x and y (the op descriptor's mode and sizes)."""

    def get_workspace_size_plan_at_index(self, index: int = 0) -> int:
        return 0  # none of these calls takes a workspace

    def execute_plan_at_index(self, tensor_dict: dict[Any, Any], workspace: Any = None, index: int = 0,
                              handle: Any = None) -> None:
        """Run the call on ``handle``'s stream with ``tensor_dict['X']`` and ``['Y']`` (the spec's dims and strides)."""
        raw = classic.backend_handle(handle, self.call)
        if not self.is_built:
            self.build_plan_at_index(index)
        check(self._run(raw, pointer(tensor_dict["X"]), pointer(tensor_dict["Y"])), self.call)

    def _run(self, handle: int, x: int, y: int) -> int:
        raise NotImplementedError

    def release(self) -> None:
        """Destroy the descriptors (safe to call twice)."""
        if self.op_descriptor:
            destroy(self.op_descriptor, getattr(self, "_op", None))
            self._op = None
        destroy("Tensor", self._x)
        destroy("Tensor", self._y)
        self._x = self._y = None

    def __del__(self) -> None:
        self.release()


def one_row(spec: Any, executable: ClassicCall, describe: Any) -> list[PlanEntry]:
    """The plan list of a single-call family: one row (engine id -1, no knobs) whose graph is a :class:`ClassicLab`
    around ``executable``, described by ``describe(spec)`` and drawn as the family registered its drawing."""
    lab = ClassicLab(spec, executable, describe=describe, draw=DRAWINGS[spec])
    return [PlanEntry(name=f"classic {executable.call}", engine_id=ENGINE_ID, knobs={}, graph=lab, index=0)]
