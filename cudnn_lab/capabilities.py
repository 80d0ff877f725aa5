"""What this machine can do for the kit: GPU, driver, PyTorch, cuDNN, graphviz, widgets.

:func:`probe` never raises: whatever is missing or broken becomes ``None``/``False`` in :class:`Capabilities`
and a plain-words entry in ``Capabilities.reasons`` saying what to install. The result is cached; torch, cudnn
and the widget packages are imported only when :func:`probe` first runs, so importing this module stays light.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Capabilities", "probe", "gpu_visible"]

_TORCH_INSTALL = "https://pytorch.org/get-started/locally/"


@dataclass(frozen=True)
class Capabilities:
    """One reading of the machine; build it with :func:`probe`."""

    gpu: bool = False
    gpu_name: str | None = None
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    driver_version: str | None = None
    cuda_runtime: str | None = None
    torch_version: str | None = None
    torch_cuda_build: bool = False
    cudnn_frontend_version: str | None = None
    cudnn_backend_version: int | None = None
    dot_path: str | None = None
    widgets: bool = False
    anywidget: bool = False
    python_version: str = field(default_factory=lambda: sys.version.split()[0])
    #: What is missing, keyed by field name, each in plain words with what to install.
    reasons: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready values (``compute_capability`` as a list)."""
        d = dataclasses.asdict(self)
        if self.compute_capability is not None:
            d["compute_capability"] = list(self.compute_capability)
        return d

    def summary(self) -> str:
        """Several lines of plain text: each capability, then what is missing and how to get it."""

        def show(value: object, missing: str = "not found") -> str:
            return missing if value is None else str(value)

        cc = None if self.compute_capability is None else "{}.{}".format(*self.compute_capability)
        if self.torch_version is None:
            torch_line = "not installed"
        else:
            build = f"CUDA {self.cuda_runtime} build" if self.torch_cuda_build else "CPU-only build"
            torch_line = f"{self.torch_version} ({build})"
        rows = [
            ("GPU", self.gpu_name if self.gpu else "none"),
            ("compute capability", show(cc, "-")),
            ("SMs", show(self.sm_count, "-")),
            ("NVIDIA driver", show(self.driver_version)),
            ("PyTorch", torch_line),
            ("cuDNN frontend", show(self.cudnn_frontend_version)),
            ("cuDNN library", show(self.cudnn_backend_version, "unknown")),
            ("graphviz dot", show(self.dot_path)),
            ("ipywidgets", "yes" if self.widgets else "no"),
            ("anywidget", "yes" if self.anywidget else "no"),
            ("Python", self.python_version),
        ]
        width = max(len(label) for label, _ in rows)
        lines = ["cudnn_lab: what this machine offers"]
        lines += [f"  {label.ljust(width)}  {value}" for label, value in rows]
        if self.reasons:
            lines.append("What is missing, and how to get it:")
            lines += [f"  - {name}: {text}" for name, text in self.reasons.items()]
        else:
            lines.append("Everything the kit can use is here.")
        return "\n".join(lines)


_cached: Capabilities | None = None


def probe(refresh: bool = False) -> Capabilities:
    """Read the machine once (again with ``refresh=True``); never raises."""
    global _cached
    if _cached is None or refresh:
        _cached = _probe()
    return _cached


def gpu_visible() -> bool:
    """Whether runs can use a GPU, answered without importing torch (for a fast ``cl.Lab()``): the NVIDIA driver
    reports at least one visible device and PyTorch is installed. :func:`probe` says more (and imports torch)."""
    global _visible
    if _cached is not None:
        return _cached.gpu
    if _visible is None:
        _visible = _driver_devices() > 0 and importlib.util.find_spec("torch") is not None
    return _visible


def _driver_devices() -> int:
    """Devices the CUDA driver sees (CUDA_VISIBLE_DEVICES applies); 0 without a driver."""
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    except (OSError, AttributeError):
        return 0


_visible: bool | None = None


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _probe() -> Capabilities:
    found: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    _probe_torch(found, reasons)
    _probe_driver(found, reasons)
    _probe_cudnn(found, reasons)
    found["dot_path"] = shutil.which("dot")
    if found["dot_path"] is None:
        reasons["dot"] = (
            "Graphviz's `dot` program is not on PATH, so drawings fall back to in-browser rendering "
            "(graphviz-anywidget). Install it with `sudo apt-get install graphviz` (Debian/Ubuntu), "
            "`brew install graphviz` (macOS) or `conda install graphviz`."
        )
    for name, module, hint in (
        ("widgets", "ipywidgets", "the Lab's panels need it: pip install 'ipywidgets>=8'"),
        ("anywidget", "anywidget", "plotly's FigureWidget and the in-browser drawings need it: pip install anywidget"),
    ):
        found[name], error = _importable(module)
        if not found[name]:
            reasons[name] = f"{module} is not importable ({error}); {hint}."
    return Capabilities(**found, reasons=reasons)


def _importable(module: str) -> tuple[bool, str]:
    try:
        __import__(module)
    except Exception as exc:
        return False, _why(exc)
    return True, ""


def _probe_torch(found: dict[str, Any], reasons: dict[str, str]) -> None:
    try:
        import torch
    except Exception as exc:
        reasons["torch"] = (
            f"PyTorch is not importable ({_why(exc)}): run `make setup` for a CPU build, "
            f"or install a CUDA build ({_TORCH_INSTALL}) to run on a GPU."
        )
        reasons["gpu"] = "no GPU can be used without PyTorch."
        return
    try:
        found["torch_version"] = str(torch.__version__)
        found["cuda_runtime"] = torch.version.cuda
        found["torch_cuda_build"] = bool(torch.version.cuda)
    except Exception as exc:
        reasons["torch"] = f"PyTorch is installed but broken ({_why(exc)}): reinstall it ({_TORCH_INSTALL})."
    if not found.get("torch_cuda_build"):
        reasons["gpu"] = (
            f"PyTorch {found.get('torch_version', '?')} is a CPU-only build, so nothing runs on a GPU here. "
            f"On a machine with an NVIDIA GPU, install a CUDA build of PyTorch ({_TORCH_INSTALL})."
        )
        return
    said = ""
    with warnings.catch_warnings(record=True) as caught:  # e.g. "CUDA initialization: driver too old"
        warnings.simplefilter("always")
        try:
            available = bool(torch.cuda.is_available())
        except Exception as exc:
            available, said = False, _why(exc)
    if not available:
        said = "; ".join([str(w.message).strip() for w in caught] + ([said] if said else []))
        reasons["gpu"] = (
            "torch.cuda.is_available() is False: no NVIDIA GPU or driver is visible "
            "(check `nvidia-smi` and CUDA_VISIBLE_DEVICES)" + (f". PyTorch said: {said}" if said else ".")
        )
        return
    try:
        props = torch.cuda.get_device_properties(0)
        found["gpu"] = True
        found["gpu_name"] = str(props.name)
        found["compute_capability"] = (int(props.major), int(props.minor))
        found["sm_count"] = int(props.multi_processor_count)
    except Exception as exc:
        reasons["gpu"] = f"a GPU is listed but could not be opened ({_why(exc)})."


def _probe_driver(found: dict[str, Any], reasons: dict[str, str]) -> None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        reasons["driver"] = "nvidia-smi is not on PATH: the NVIDIA driver is not installed (or not visible) here."
        return
    try:
        out = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=15,
            check=True,
        ).stdout
        version = next((line.strip() for line in out.splitlines() if line.strip()), None)
    except Exception as exc:
        version = None
        reasons["driver"] = f"nvidia-smi failed ({_why(exc)}): the NVIDIA driver may be broken or no GPU attached."
    else:
        if version is None:
            reasons["driver"] = "nvidia-smi printed no driver version: no GPU is attached."
    found["driver_version"] = version


def _probe_cudnn(found: dict[str, Any], reasons: dict[str, str]) -> None:
    try:
        import cudnn

        found["cudnn_frontend_version"] = str(cudnn.__version__)
    except Exception as exc:
        reasons["cudnn_frontend"] = (
            f"the cuDNN frontend (`import cudnn`) is not importable ({_why(exc)}): "
            "pip install 'nvidia-cudnn-frontend>=1.32'."
        )
    version, errors = None, []
    readers = []
    if found.get("gpu") and "cudnn_frontend_version" in found:  # backend_version() needs the NVIDIA driver
        readers.append(("cudnn.backend_version()", cudnn.backend_version))
    readers.append(("torch.backends.cudnn.version()", _torch_cudnn_version))
    for what, read in readers:
        try:
            v = read()
        except Exception as exc:
            errors.append(f"{what}: {_why(exc)}")
            continue
        if v is not None:
            version = int(v)
            break
    found["cudnn_backend_version"] = version
    if version is None:
        said = f" ({'; '.join(errors)})" if errors else ""
        reasons["cudnn_backend"] = (
            f"the cuDNN library's version is unknown{said}: it is read with a GPU and its driver "
            "(cudnn.backend_version()) or from a CUDA build of PyTorch (torch.backends.cudnn.version())."
        )


def _torch_cudnn_version() -> int | None:
    import torch

    return torch.backends.cudnn.version()
