"""What GPU, driver and libraries a run happened on: recorded with every result."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any, NoReturn
import weakref

#: The kit's background threads that may be inside CUDA, cuDNN or CUPTI calls (joined at exit, see kit_thread).
_THREADS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
#: Seconds the exit waits for them, in all.
EXIT_JOIN_S = 30.0


def kit_thread(target: Callable[..., Any], name: str, *args: Any) -> threading.Thread:
    """Start ``target(*args)`` on a daemon thread that the process waits for at exit (at most EXIT_JOIN_S in all):
    a daemon thread still inside CUDA or cuDNN while the interpreter finalizes can abort the process at exit
    (docs/FINDINGS.md, 2026-11-29: 'free(): invalid pointer' after benchmarks/whatif.py's table)."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    _THREADS.add(thread)
    thread.start()
    return thread


#: Callbacks that drop the kit's GPU state (sessions: captured CUDA graphs, frontend graphs, tensors) at exit,
#: newest first, while CUDA, cuDNN and CUPTI are still up (:func:`release_at_exit`).
_RELEASES: list[Callable[[], Any]] = []
#: Whether the exit releases the GPU state (scripts/probe_exit.py turns it off to compare).
RELEASE_AT_EXIT = True


def release_at_exit(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Have ``fn`` (no arguments) called at exit, after the kit's threads are joined and the GPUs are idle, rather
    than leaving its objects to the interpreter's teardown, whose order is not defined (a frontend graph or a CUDA
    graph destroyed after the libraries' own teardown began). Returns ``fn``."""
    _RELEASES.append(fn)
    return fn


def _join_kit_threads() -> bool:
    """Wait for the kit's threads (EXIT_JOIN_S in all); True when none is left running."""
    import time

    end = time.monotonic() + EXIT_JOIN_S
    for thread in list(_THREADS):
        if thread is not threading.current_thread():
            thread.join(max(0.0, end - time.monotonic()))
    return not any(t.is_alive() for t in list(_THREADS) if t is not threading.current_thread())


def release_gpu_state() -> list[str]:
    """Wait for every GPU this process started, then run the :func:`release_at_exit` callbacks (newest first) and
    collect garbage, so that the kit's CUDA graphs, frontend graphs and tensors go while CUDA is up. Never raises:
    returns what failed, one line each."""
    import gc

    failed: list[str] = []
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_initialized():
            has_context = getattr(torch._C, "_cuda_hasPrimaryContext", None)  # never make a context at exit
            for index in range(torch.cuda.device_count()):
                if has_context is not None and has_context(index):
                    with torch.cuda.device(index):
                        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - a broken device must not turn the exit into a traceback
        failed.append(f"synchronize: {' '.join(str(e).split())[:200]}")
    for fn in reversed(_RELEASES):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            failed.append(f"{getattr(fn, '__qualname__', fn)}: {' '.join(str(e).split())[:200]}")
    gc.collect()
    return failed


@atexit.register
def _at_exit() -> None:
    """The kit's exit: join its threads; then, when none is left inside CUDA, release its GPU state."""
    if _join_kit_threads() and RELEASE_AT_EXIT:
        release_gpu_state()


def _exit_status(code: Any) -> int:
    """A ``SystemExit`` code as the process's status, as Python makes it (None 0, an int itself, else printed, 1)."""
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def end_program(main: Callable[[], Any]) -> NoReturn:
    """Run a kit program's ``main`` and end the process with its exit code. Python's exit steps run as usual (its
    threads' hooks and joins, then the atexit hooks: the kit's threads joined, its helpers ended, its GPU state
    released), the output is flushed, and then, where cuDNN was loaded, the process ends without the native
    libraries' own teardown, where aborts came after the work was done (docs/FINDINGS.md: 'double free or
    corruption' after Python had finished, with faulthandler on and silent)."""
    try:
        status = _exit_status(main())
    except SystemExit as e:
        status = _exit_status(e.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        status = 130
    except BaseException:  # noqa: BLE001 - printed as Python prints it; the exit below still runs
        traceback.print_exc()
        status = 1
    if "cudnn" not in sys.modules:  # no native GPU library here: the interpreter's own exit
        sys.exit(status)
    try:
        shutdown = getattr(threading, "_shutdown", None)  # what the interpreter runs first at exit
        if shutdown is not None and threading.current_thread() is threading.main_thread():
            shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):  # closed or gone: nothing more to say
                pass
        os._exit(status)


def _torch_cudnn(torch: Any) -> Any:
    """The cuDNN torch was built with, or None in a process that loaded another cuDNN (torch refuses it then)."""
    try:
        return torch.backends.cudnn.version() if torch.backends.cudnn.enabled else None
    except RuntimeError:
        return None


def _nvidia_smi(fields: str, index: int) -> list[str] | None:
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", f"--id={index}", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [x.strip() for x in out.strip().split(",")]


@functools.cache
def device_info(index: int = 0) -> dict[str, Any]:
    """GPU name, compute capability, SMs, memory, L2, driver, CUDA, cuDNN backend/frontend, torch and clocks."""
    import cudnn
    import torch

    props = torch.cuda.get_device_properties(index)
    info: dict[str, Any] = {
        "gpu": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_gib": round(props.total_memory / 2**30, 1),
        "l2_mib": round(getattr(props, "L2_cache_size", 0) / 2**20, 1),
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "cudnn_backend": cudnn.backend_version(),
        "cudnn_frontend": cudnn.__version__,
        "torch_cudnn": _torch_cudnn(torch),
        "driver": None, "sm_clock_mhz": None, "max_sm_clock_mhz": None, "mem_clock_mhz": None,
    }
    smi = _nvidia_smi("driver_version,clocks.sm,clocks.max.sm,clocks.mem", index)
    if smi and len(smi) == 4:
        info["driver"] = smi[0]
        for key, val in zip(("sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz"), smi[1:]):
            info[key] = int(val) if val.isdigit() else None
    return info


def describe(info: dict[str, Any]) -> str:
    """One line naming the device and versions, for titles and error messages."""
    return (f"{info.get('gpu')} (sm {info.get('compute_capability')}, driver {info.get('driver')}, "
            f"CUDA {info.get('cuda')}, cuDNN {info.get('cudnn_backend')}, frontend {info.get('cudnn_frontend')})")


#: Whether this process has started loading cuBLAS and torch's random kernels (:func:`start_device`).
_LIBRARIES_STARTED = False


def start_device(index: int) -> threading.Event | None:
    """Start CUDA on GPU ``index`` (driver, context) and gather its :func:`device_info` (nvidia-smi included) on a
    thread, so that a run does this while it imports cuDNN and the kit's GPU modules; then, on the same thread, load
    cuBLAS and torch's random-number kernels (a small float64 product on a stream of its own), which a run's first
    inputs and reference would otherwise wait for. Returns an event set once CUDA and the record are ready (wait for
    it before using either); None when all of it was started before in this process."""
    global _LIBRARIES_STARTED
    import torch

    if torch.cuda.is_initialized() and _LIBRARIES_STARTED:
        return None
    _LIBRARIES_STARTED = True
    ready = threading.Event()

    def start() -> None:
        try:
            if torch.cuda.is_available() and index < torch.cuda.device_count():
                with torch.cuda.device(index):
                    torch.empty(1, device=f"cuda:{index}")  # makes the device's primary context
                    device_info(index)
                    ready.set()
                    stream = torch.cuda.Stream(index)
                    with torch.cuda.stream(stream):
                        a = torch.randn(16, 16, dtype=torch.float64, device=f"cuda:{index}")
                        (a @ a).sum().item()
        except Exception:  # noqa: BLE001 - the run's own calls raise the real error, in its thread
            pass
        finally:
            ready.set()

    kit_thread(start, "cudnn_lab-start-device")
    return ready
