"""What every op family's PyTorch reference shares: dtypes, seeded inputs in the graph's strides, NaN-poisoned
outputs, input checks, and the guards that keep a CPU reference from running for hours or exhausting memory.

torch is imported inside the functions that need it, so importing this module stays cheap.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ResourceError, SpecError
from ..specs import Spec
from ..specs.base import DTYPE_BYTES
from .families import Reference

_S = TypeVar("_S")
_SpecT = TypeVar("_SpecT", bound=Spec)

if TYPE_CHECKING:  # pragma: no cover
    import torch

#: Above this many FLOPs a float64 reference on the CPU would take too long for an interactive session.
CPU_FLOP_LIMIT = 2e10
#: The share of the host's available memory a CPU reference may take; a larger problem is refused up front.
HOST_MEMORY_SHARE = 0.25
#: Bytes per element a float64 reference on the CPU holds about: a float64 copy of every input and output, plus
#: as much again for temporaries (3 x 8 bytes); the inputs and outputs in their own dtype come on top.
REFERENCE_BYTES_PER_ELEMENT = 24

TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2", "int32": "int32", "int64": "int64"}


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a kit dtype name."""
    import torch

    return getattr(torch, TORCH_DTYPES[name])


def uniform(name: str, dims: Sequence[int], strides: Sequence[int], dtype: str, seed: int,
            lo: float = -1.0, hi: float = 1.0, *, device: Any = None) -> torch.Tensor:
    """A tensor of uniform values in [lo, hi), with ``strides``, from a generator seeded by ``seed`` and the
    tensor's name, so values are reproducible and do not depend on what else the graph holds.

    Drawn on the host (the same values on every device; above :data:`DRAW_CHUNK` elements in seeded chunks on
    several threads), except a tensor of more than :data:`DEVICE_DRAW_MIN` elements for a GPU (``device``), which
    that GPU draws (the same values on the same kind of GPU): the host took 1 s for an FP8 GEMM's operands even on
    16 threads. The tensor is on ``device`` where it was drawn there, else on the host."""
    import torch

    base = (seed * 1_000_003 + zlib.crc32(name.encode())) % 2**63
    numel = math.prod(dims)
    where = torch.device(device) if device is not None else None
    if where is not None and where.type == "cuda" and numel > DEVICE_DRAW_MIN:
        gen = torch.Generator(device=where).manual_seed(base)
        flat = torch.rand(numel, generator=gen, dtype=torch.float32, device=where).mul_(hi - lo).add_(lo)
    elif numel <= DRAW_CHUNK:  # one generator: the values every earlier version of the kit drew
        gen = torch.Generator(device="cpu").manual_seed(base)
        flat = torch.rand(numel, generator=gen, dtype=torch.float32) * (hi - lo) + lo
    else:
        flat = _drawn_in_chunks(numel, base, lo, hi)
    # A strided layout (NHWC, BSHD, a transposed matrix) is a contiguous buffer seen through its strides.
    return flat.to(torch_dtype(dtype)).as_strided(tuple(dims), tuple(strides))


#: Above this many elements (4 Mi, one host chunk) a tensor for a GPU is drawn on it: the tests compare host and GPU
#: draws only below it, and a large run's reference is computed on the GPU from the GPU's draws.
DEVICE_DRAW_MIN = 1 << 22
#: Elements one generator draws for :func:`uniform` (4 Mi): chunk ``i`` of a larger tensor has a generator seeded
#: by the tensor's seed and ``i``, so its values depend on neither the thread count nor the device.
DRAW_CHUNK = 1 << 22
#: Threads that draw a large tensor's chunks (torch releases the GIL while it draws).
DRAW_THREADS = max(1, min(16, os.cpu_count() or 1))


def _drawn_in_chunks(numel: int, base: int, lo: float, hi: float) -> torch.Tensor:
    """``numel`` float32 values uniform in [lo, hi), chunk by chunk (see :data:`DRAW_CHUNK`)."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    flat = torch.empty(numel, dtype=torch.float32)

    def draw(i: int) -> None:
        piece = flat[i * DRAW_CHUNK:(i + 1) * DRAW_CHUNK]
        gen = torch.Generator(device="cpu").manual_seed((base + i * 0x9E3779B97F4A7C15) % 2**63)
        torch.rand(piece.shape, generator=gen, dtype=torch.float32, out=piece)
        piece.mul_(hi - lo).add_(lo)

    chunks = -(-numel // DRAW_CHUNK)
    with ThreadPoolExecutor(min(DRAW_THREADS, chunks), thread_name_prefix="cudnn_lab-draw") as pool:
        list(pool.map(draw, range(chunks)))
    return flat


def empty(dims: Sequence[int], strides: Sequence[int], dtype: str, device: Any) -> torch.Tensor:
    """An uninitialized tensor with the graph's dims, strides and dtype on ``device``."""
    import torch

    return torch.empty_strided(tuple(dims), tuple(strides), dtype=torch_dtype(dtype), device=torch.device(device))


def poisoned(spec: Spec, names: Iterable[str], device: Any) -> dict[str, torch.Tensor]:
    """The named tensors with the spec's dims, strides and dtypes, NaN-filled so an element never written shows."""
    shapes, strides, dtypes = spec.tensor_shapes(), spec.tensor_strides(), spec.tensor_dtypes()
    return {n: empty(shapes[n], strides[n], dtypes[n], device).fill_(math.nan) for n in names}


def check_inputs(spec: Spec, inputs: Mapping[str, torch.Tensor], names: Sequence[str],
                 host: frozenset[str] | set[str] = frozenset()) -> torch.device:
    """Every input in ``names`` is there with its logical shape, all (but ``host`` scalars) on one device: that
    device is returned."""
    if not isinstance(inputs, Mapping):
        raise SpecError("inputs", type(inputs).__name__, "must be a dict of tensors: pass make_inputs(spec)")
    missing = [n for n in names if n not in inputs]
    if missing:
        raise SpecError("inputs", sorted(map(str, inputs)), f"lacks {', '.join(missing)}: pass make_inputs(spec)")
    shapes = spec.tensor_shapes()
    for n in names:
        if tuple(getattr(inputs[n], "shape", ())) != tuple(shapes[n]):
            raise SpecError(f"inputs[{n!r}]", list(getattr(inputs[n], "shape", ())),
                            f"must have shape {list(shapes[n])}")
    devices = {inputs[n].device for n in names if n not in host}
    if len(devices) > 1:
        raise SpecError("inputs", sorted(map(str, devices)), "must all be on one device"
                        + (" (host scalars such as epsilon excepted)" if host else ""))
    return devices.pop()


def available_host_memory() -> int | None:
    """Bytes of host memory available now (``MemAvailable`` in /proc/meminfo, else the free pages), None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def check_host_memory(needed: int, what: str, *, share: float = HOST_MEMORY_SHARE) -> None:
    """Refuse (ResourceError, before anything is allocated) work needing more than ``share`` of available host
    memory; the message names the estimate."""
    free = available_host_memory()
    if free is not None and needed > share * free:
        raise ResourceError(needed, int(share * free), f"{what} (estimated)",
                            memory=f"host memory (the CPU reference may use {share:.0%} of what is available)")


def host_bytes(spec: Spec, names: Iterable[str], extra_per_element: int = 0) -> int:
    """Bytes of the named tensors in their own dtypes, plus ``extra_per_element`` bytes per element."""
    shapes, dtypes = spec.tensor_shapes(), spec.tensor_dtypes()
    return sum(math.prod(shapes[n]) * (DTYPE_BYTES[dtypes[n]] + extra_per_element) for n in names)


def check_cpu_work(spec: Spec, device: torch.device, field: str, *, flop_limit: float = CPU_FLOP_LIMIT,
                   what: str = "FLOPs") -> None:
    """On the CPU: refuse a reference of more than ``flop_limit`` FLOPs (SpecError naming ``field``, the size to
    shrink first) or one that would not fit in host memory (ResourceError)."""
    if device.type != "cpu":
        return
    if spec.flops() > flop_limit:
        raise SpecError(field, getattr(spec, field), f"makes {spec.flops():.3g} {what}, more than the CPU limit of "
                        f"{flop_limit:.3g}: the PyTorch reference on the CPU would take too long; shrink the sizes "
                        f"({field} first) or use a GPU", spec=type(spec).__name__)
    needed = host_bytes(spec, spec.tensor_shapes(), REFERENCE_BYTES_PER_ELEMENT)
    check_host_memory(needed, f"the float64 reference of {spec.label()}")


def expect(spec: Any, cls: type, what: str) -> Any:
    """``spec`` if it is a ``cls``; a SpecError naming the family otherwise (a family's functions called directly)."""
    if not isinstance(spec, cls):
        raise SpecError("spec", type(spec).__name__, f"must be a {cls.__name__} for the {what} reference")
    return spec


def expecting(cls: type[_S], what: str) -> Callable[[object], _S]:
    """A family's ``_check_spec``: :func:`expect` bound to its spec class and the family's name."""
    def check(spec: object) -> _S:
        checked: _S = expect(spec, cls, what)
        return checked
    return check


def x_only(spec: object) -> tuple[str, ...]:
    """``input_names`` of a family whose graph reads one tensor, X."""
    return ("X",)


def checked_device(spec: Spec, inputs: Mapping[str, torch.Tensor], flop_limit: float, *, field: str = "n",
                   what: str = "FLOPs") -> torch.device:
    """The one device of every input the graph reads (each there with its shape), after refusing a CPU reference
    too large to run (``field`` named as the size to shrink, the work counted in ``what``)."""
    device = check_inputs(spec, inputs, spec.input_names())
    check_cpu_work(spec, device, field, flop_limit=flop_limit, what=what)
    return device


def x_to_y_reference(cls: type[_SpecT], what: str, op: Callable[[_SpecT, torch.Tensor], torch.Tensor], *,
                     x_range: tuple[float, float] = (-1.0, 1.0), work: str = "FLOPs") -> Reference:
    """The PyTorch side of a family whose graph reads one tensor X and writes one Y = ``op(spec, X)`` (activation,
    softmax, pooling): X uniform in ``x_range`` in the graph's strides, a NaN-poisoned Y, ``op`` on X in float64
    as the reference and on X itself as PyTorch's baseline."""
    check_spec = expecting(cls, what)
    lo, hi = x_range

    def make_inputs(spec: _SpecT, *, device: Any = "cpu", seed: int = 0) -> dict[str, torch.Tensor]:
        import torch

        s = check_spec(spec)
        dims, strides = s.tensor_shapes()["X"], s.tensor_strides()["X"]
        x = uniform("X", dims, strides, s.dtype, seed, lo, hi, device=device)
        return {"X": x.to(torch.device(device))}  # preserve_format: a dense tensor keeps its strides

    def make_outputs(spec: _SpecT, *, device: Any = "cpu") -> dict[str, torch.Tensor]:
        return poisoned(check_spec(spec), ("Y",), device)

    def checked_x(spec: _SpecT, inputs: Mapping[str, torch.Tensor], flop_limit: float) -> torch.Tensor:
        checked_device(spec, inputs, flop_limit, what=work)
        return inputs["X"]

    def reference_outputs(spec: _SpecT, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                          ) -> dict[str, torch.Tensor]:
        s = check_spec(spec)
        return {"Y": op(s, checked_x(s, inputs, cpu_flop_limit).double())}

    def torch_op(spec: _SpecT, inputs: Mapping[str, torch.Tensor], *, cpu_flop_limit: float = CPU_FLOP_LIMIT
                 ) -> Callable[[], torch.Tensor]:
        s = check_spec(spec)
        x = checked_x(s, inputs, cpu_flop_limit)
        return lambda: op(s, x)

    return Reference(x_only, make_inputs, make_outputs, reference_outputs, torch_op)
