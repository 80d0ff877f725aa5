"""A spec's plans, inputs and buffers on one GPU, kept so that a repeated run rebuilds nothing."""

from __future__ import annotations

import functools
import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import cache_dir
from ..errors import NoGPUError, OptionError, ResourceError
from ..graph import build_graph
from ..reference import make_inputs, make_outputs, reference_outputs
from ..specs import DTYPE_BYTES, Spec
from . import heuristics_cache as hc
from .cache import plan_graph_key
from .device import device_info, release_at_exit
from .frontend import check_carve_out, from_frontend_graph, graph_plans, warm_engine_family_async
from .plans import PLAN_SOURCES, PlanEntry, propose

#: Sessions kept at once (each holds the spec's inputs, outputs and reference on the GPU).
MAX_SESSIONS = 8
#: One run at a time per process: runs share the cached sessions (handles, streams, inputs, captured graphs), so
#: threads that call ``run`` at once (e.g. a sweep on a ThreadPoolExecutor) take turns instead of racing on them.
#: Several GPUs in parallel take one process each (``sweeps.executors.GPUExecutor``).
RUN_LOCK = threading.RLock()


@functools.cache
def cudnn_handle(device: int = 0) -> Any:
    """This process's cuDNN handle on ``device``, made once: in PyTorch's CUDA context where torch is loaded, else
    in the driver's primary context of the device (the same context; a worker under another cuDNN never imports
    torch, which would load its own)."""
    import cudnn

    if "torch" in sys.modules:
        import torch

        with torch.cuda.device(device):
            return cudnn.create_handle()
    from cuda.bindings import driver

    driver.cuInit(0)
    _, dev = driver.cuDeviceGet(int(device))
    _, ctx = driver.cuDevicePrimaryCtxRetain(dev)
    driver.cuCtxSetCurrent(ctx)
    return cudnn.create_handle()


def require_gpu(device: int) -> None:
    """NoGPUError without a usable CUDA GPU; OptionError for a device index past the visible GPUs."""
    import torch

    if not torch.cuda.is_available():
        raise NoGPUError("no CUDA GPU is visible to PyTorch (torch.cuda.is_available() is False"
                         + ("; this torch is a CPU build" if not torch.version.cuda else "") + ")")
    if device >= torch.cuda.device_count():
        raise OptionError("device", device, f"must be below the number of visible GPUs ({torch.cuda.device_count()})")


def estimate_bytes(spec: Spec) -> int:
    """GPU memory a run needs before workspaces: native tensors, their float64 copies and the reference."""
    numel = sum(math.prod(d) for d in spec.tensor_shapes().values())
    return numel * (DTYPE_BYTES[spec.dtype] + 2 * 8)


def check_memory(need: int, device: int, what: str) -> None:
    """ResourceError when ``need`` bytes would take more than 90% of the device's free memory."""
    import torch

    free, _ = torch.cuda.mem_get_info(device)
    if need > 0.9 * free:
        raise ResourceError(need, free, what)


class Session:
    """Plans (built once), inputs, outputs, the float64 reference and a workspace of one spec on one GPU."""

    def __init__(self, spec: Spec, modes: tuple[str, ...], device: int, seed: int, check: bool,
                 sm_count: int | None = None, kernel_cache: Any = None) -> None:
        import cudnn
        import torch

        self.spec, self.device = spec, device
        #: the SM carve-out every graph of this session is made for (``cudnn.pygraph(sm_count=N)``); None: the whole
        #: GPU. Part of the session's key and of its plans' cache keys, so no plan crosses between the two.
        self.sm_count = sm_count
        self.graph_options: dict[str, Any] = {} if sm_count is None else {"sm_count": int(sm_count)}
        #: cuDNN's kernel cache every frontend graph of this session is made with (``cudnn.pygraph(kernel_cache=)``;
        #: gpu/cache.KernelCache); None: none. A family run through a classic call takes none.
        self.kernel_cache = kernel_cache if kernel_cache is not None and from_frontend_graph(spec) else None
        if self.kernel_cache is not None:
            self.graph_options["kernel_cache"] = self.kernel_cache
        #: plan names in the heuristics' order for the same graph made without the kernel cache (kernel cache on)
        self.order_without_kernel_cache: list[str] | None = None
        #: seconds each part of making this session took (reported once, by the run that made it)
        self.phase_s: dict[str, float] = {}
        t0 = time.perf_counter()
        info = device_info(device)
        check_memory(estimate_bytes(spec), device, spec.label())
        with torch.cuda.device(device):
            self.handle = cudnn_handle(device)
            self.stream = torch.cuda.Stream(device)
            cudnn.set_stream(handle=self.handle, stream=self.stream.cuda_stream)
            t1 = time.perf_counter()
            self.modes, self.info = tuple(modes), info
            #: the heuristics cache's identity of this graph's numerical notes (set when its answers are kept)
            self.notes_ident: dict[str, str] | None = None
            #: the plans were recalled from the heuristics cache, not asked (gpu/heuristics_cache.py)
            self.recalled = False
            recalled, keep = self._recall()
            if recalled is None:  # to be asked: the frontend's engine modules import while the GPU makes the inputs
                warm_engine_family_async(spec)
            t2 = time.perf_counter()
            with torch.cuda.stream(self.stream):
                self.inputs = make_inputs(spec, device=f"cuda:{device}", seed=seed)
                self.outputs = make_outputs(spec, device=f"cuda:{device}")
                self.stream.synchronize()
                t3 = time.perf_counter()
                self.expected = reference_outputs(spec, self.inputs) if check else None
            self.stream.synchronize()
            t4 = time.perf_counter()
            self.entries = recalled if recalled is not None else self._asked(keep)
            if self.kernel_cache is not None:  # the pick the kernel cache may have changed: asked without it
                self.order_without_kernel_cache = self._order_without_kernel_cache()
        self.phase_s = {"session": t1 - t0, "inputs": t3 - t2, "reference": t4 - t3,
                        "propose": (t2 - t1) + (time.perf_counter() - t4)}
        self.workspace = torch.empty(1, dtype=torch.uint8, device=f"cuda:{device}")
        self.graphs: dict[Any, Any] = {}  # captured CUDA graphs per plan, replayed by later runs
        #: plan name -> (deserialized pygraph, {tensor name: uid}) for plans loaded from the plan cache (gpu/cache.py)
        self.loaded: dict[str, tuple[Any, dict[str, int]]] = {}
        #: (what was measured, how) -> its record, reused by a repeated run unless it asks to resample
        self.memo: dict[Any, Any] = {}
        #: plan name -> its anatomy columns (kernels, notes, determinism), measured once per plan (gpu/anatomy)
        self.anatomy: dict[str, dict[str, Any]] = {}
        #: heuristic modes -> the graph's numerical notes (gpu/notes.NoteResult), asked once per session; a run asks
        #: them while it waits for a helper's plan (gpu/anatomy/columns.session_notes)
        self.notes_by_modes: dict[tuple[str, ...], Any] = {}
        #: the engine space's explorer (gpu/engine_space.Explorer), made by the first run that explores; its plans
        #: back captured CUDA graphs, so it lasts as long as the session
        self.explorer: Any = None

    def _recall(self) -> tuple[list[PlanEntry] | None, tuple[dict[str, str], dict[str, str]] | None]:
        """The plans in heuristic order recalled from the heuristics cache where it holds them and every plan (see
        ``gpu/heuristics_cache.py``; unplanned: the recalled plans load from the plan cache), else None; and, for
        an answer worth keeping, the identities to keep it under (:meth:`_asked`)."""
        spec, info = self.spec, self.info
        if not from_frontend_graph(spec) or not cache_dir.cache_enabled() or self.kernel_cache is not None:
            return None, None  # (the heuristics cache holds answers for graphs made without a kernel cache)
        try:
            lab = build_graph(spec, handle=self.handle, graph_options=self.graph_options or None)
            described = lab.inspect()
        except Exception:  # noqa: BLE001 - a graph that cannot describe itself is asked every time
            return None, None
        ident = hc.proposals_ident(spec, described, "proposals", self.modes, info, self.sm_count)
        notes_ident = hc.proposals_ident(spec, described, "notes", self.modes, info, self.sm_count)
        kept = hc.recall(ident, info)
        if kept is None:
            return None, (ident, notes_ident)
        self.notes_ident, self.recalled = notes_ident, True
        return [PlanEntry(name=e["name"], engine_id=e["engine_id"], knobs=e["knobs"], graph=lab, index=-1,
                          ranks=e["ranks"], behavior_notes=tuple(e["behavior_notes"]), cache_key=e["graph_key"],
                          keep=True, recalled=True) for e in kept], None

    def _asked(self, keep: tuple[dict[str, str], dict[str, str]] | None) -> list[PlanEntry]:
        """The heuristics' plans, asked now; a slow answer is kept under ``keep``'s identities for later
        processes."""
        t0 = time.perf_counter()
        entries = self._ask()
        if keep is None or time.perf_counter() - t0 < hc.MIN_PROPOSE_S:
            return entries
        ident, notes_ident = keep
        try:  # one key per graph (a graph per heuristic mode), kept on the entries for the plan cache
            keys = {id(g): plan_graph_key(self.spec, g, self.sm_count)
                    for g in {id(e.graph): e.graph for e in entries}.values()}
        except Exception:  # noqa: BLE001 - not kept, then
            return entries
        for e in entries:
            e.keep, e.cache_key = True, keys[id(e.graph)]
        hc.remember(ident, entries, [keys[id(e.graph)] for e in entries])
        self.notes_ident = notes_ident
        return entries

    def _ask(self) -> list[PlanEntry]:
        where, version = self.info["gpu"], str(self.info["cudnn_backend"])
        if self.sm_count is None and self.kernel_cache is None:
            return propose(self.spec, self.handle, self.modes, where, version)

        check_carve_out(self.spec, self.sm_count)  # a classic call runs on the whole GPU: refused, never run so
        return PLAN_SOURCES[self.spec](self.spec, self.handle, self.modes, where, version,
                                       graph_options=self.graph_options)

    def _order_without_kernel_cache(self) -> list[str] | None:
        """The heuristics' plan order for this graph made without the kernel cache (None if they cannot say)."""
        options = {k: v for k, v in self.graph_options.items() if k != "kernel_cache"}
        try:
            entries = graph_plans(self.spec, self.handle, self.modes, self.info["gpu"],
                                  str(self.info["cudnn_backend"]), graph_options=options or None)
        except Exception:  # noqa: BLE001 - the run goes on; the result says the order is unknown
            return None
        return [e.name for e in entries]

    def ask_heuristics(self) -> None:
        """Give recalled plans the heuristics' own graph (asking them now): for a run with the plan cache off, or a
        plan the cache could not load after all. Plans already loaded stay loaded."""
        if not any(e.recalled for e in self.entries):
            return
        import torch

        with torch.cuda.device(self.device):
            asked = {e.name: e for e in self._ask()}
        for e in self.entries:
            if not e.recalled:
                continue
            if e.name in asked:
                e.graph, e.index = asked[e.name].graph, asked[e.name].index
            elif e.built is None:
                e.built = False
                e.build_error = "the heuristics no longer propose this plan (its kept proposal is stale)"
            e.recalled = False

    def ensure_workspace(self, size: int) -> None:
        import torch

        if size > self.workspace.numel():
            check_memory(size, self.device, "the largest plan's workspace")
            self.stream.synchronize()  # the old workspace's block is reused at once: no execution may still use it
            self.workspace = torch.empty(size, dtype=torch.uint8, device=f"cuda:{self.device}")
            self.graphs.clear()  # captured graphs point at the old workspace

    def call(self, entry: PlanEntry) -> Callable[[], None]:
        """A zero-argument callable that executes ``entry``'s plan once on the session's stream."""
        import cudnn

        lab = entry.graph
        g, ws, handle, index = lab.pygraph, self.workspace, self.handle, entry.index
        cudnn.set_stream(handle=handle, stream=self.stream.cuda_stream)
        if entry.name in self.loaded:  # a deserialized plan executes as its graph's one plan, fed by uid
            loaded, uids = self.loaded[entry.name]
            by_uid = {uids[name]: t for name, t in {**self.inputs, **self.outputs}.items() if name in uids}

            def run_loaded() -> None:
                loaded.execute(by_uid, ws, handle=handle)

            return run_loaded
        feed = {lab.tensors[name]: t for name, t in {**self.inputs, **self.outputs}.items()}

        def call() -> None:
            g.execute_plan_at_index(feed, ws, index=index, handle=handle)

        return call


_SESSIONS: dict[tuple[Any, ...], Session] = {}


def session(spec: Spec, modes: tuple[str, ...] = ("A", "FALLBACK"), *, device: int = 0, seed: int = 0,
            check: bool = True, sm_count: int | None = None, kernel_cache: Any = None) -> Session:
    """The cached :class:`Session` for these arguments (made on first use; needs a GPU). A session made for an SM
    carve-out (``sm_count``) is another session: its plans, captured graphs and measurements are never those of
    the whole GPU's."""
    require_gpu(device)
    key: tuple[Any, ...] = (spec, tuple(modes), device, seed, check)
    if sm_count is not None:
        key += (("sm_count", int(sm_count)),)
    if kernel_cache is not None:  # graphs made with cuDNN's kernel cache are another session's
        key += (("kernel_cache", id(kernel_cache)),)
    if key not in _SESSIONS:
        made = Session(spec, tuple(modes), device, seed, check, sm_count, kernel_cache)
        if len(_SESSIONS) >= MAX_SESSIONS:  # keep GPU memory bounded: drop the oldest session
            _SESSIONS.pop(next(iter(_SESSIONS)))
        _SESSIONS[key] = made
    return _SESSIONS[key]


@release_at_exit
def _release_sessions() -> None:
    """At exit: drop the sessions (captured CUDA graphs, frontend graphs, tensors) while CUDA is up; skipped when a
    run still holds the lock."""
    if RUN_LOCK.acquire(timeout=1.0):
        try:
            _SESSIONS.clear()
        finally:
            RUN_LOCK.release()
