"""Roofline ceilings measured on the GPU in use: a large matmul for compute, a large device copy for bandwidth.

Measured once per GPU (its name and UUID), dtype and size, then kept on disk as JSON
(``<cache root>/ceilings/*.json``, see :mod:`cudnn_lab.cache_dir`) with the date and the spread of the samples, so
later processes load them instead of measuring for seconds. ``measure_ceilings(..., refresh=True)`` (or the run
option ``remeasure_ceilings``) measures again and replaces the file. Every ``Ceilings`` says where it came from
(``source``: "measured now" or "cached from DATE"). Datasheet numbers are never used. A bad or foreign file is
ignored and replaced: a file is read through ``cache_dir.read_entry`` (regular files of at most :data:`MAX_FILE_BYTES`,
never blocking), parsed with the loading layer's guards, and its record checked by meaning (:meth:`Ceilings.check`:
roofs finite and > 0, spreads finite and >= 0, sizes and samples whole numbers, an ISO date) before it is used.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import re
import statistics
from pathlib import Path
from collections.abc import Callable
from typing import Any

from .. import cache_dir
from ..errors import CudnnLabError, DataError, shorten
from .timing import Timer, TimingOptions
from ..files import finite_number, parse_json, read_regular
from ..specs.records import AsDict

__all__ = ["Ceilings", "measure_ceilings", "gpu_identity", "load_or_measure", "FORMAT", "MAX_FILE_BYTES", "foreign"]

FORMAT = 1
#: A ceilings file larger than this is never read (one is about 600 bytes).
MAX_FILE_BYTES = 64 << 10
#: Names of a ceilings file (``_path``) and of a write's temporary file (``cache_dir.atomic_write``).
_FILE_NAME = re.compile(r"[A-Za-z0-9-]{0,40}-[0-9a-f]{16}\.json")
_TEMP_NAME = re.compile(r"\.([A-Za-z0-9-]{0,40}-[0-9a-f]{16}\.json)\.[A-Za-z0-9_]+\.tmp")
MEASURED_NOW = "measured now"


@dataclasses.dataclass(frozen=True)
class Ceilings(AsDict):
    """Peak TFLOP/s of a large matmul in ``dtype`` (TF32 for fp32) and GB/s of a device copy (read + write).

    ``tflops``/``gbps`` are medians over ``samples`` timed calls; ``*_iqr`` their interquartile range; ``measured``
    the ISO time of the measurement; ``source`` "measured now" or "cached from <date>".
    """

    dtype: str
    tflops: float
    gbps: float
    matmul_size: int
    copy_bytes: int
    tflops_iqr: float | None = None
    gbps_iqr: float | None = None
    samples: int | None = None
    measured: str = ""
    source: str = MEASURED_NOW

    @property
    def ridge_flop_per_byte(self) -> float:
        """Arithmetic intensity where the memory roof meets the compute roof."""
        return self.tflops * 1e12 / (self.gbps * 1e9)

    @classmethod
    def from_dict(cls, data: Any) -> Ceilings | None:
        """A record written by :meth:`to_dict`, or None when ``data`` is not one (see :meth:`check`)."""
        try:
            return cls.check(data, "ceilings record")
        except DataError:
            return None

    @classmethod
    def check(cls, data: Any, source: Any) -> Ceilings:
        """A record written by :meth:`to_dict`, checked by meaning: roofs finite and > 0, spreads (IQR) finite and
        >= 0 or null, sizes whole numbers > 0, samples a whole number >= 0 or null, ``measured`` an ISO time or
        empty. DataError naming ``source`` and the first field that is not; keys it does not know are ignored."""
        if not isinstance(data, dict):
            raise DataError(source, f"a ceilings record must be an object, not {shorten(data, 40)}")
        for f in dataclasses.fields(cls):
            if f.default is dataclasses.MISSING and f.name not in data:
                raise DataError(source, f"field {f.name}: is missing")
        c = cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})
        if not isinstance(c.dtype, str) or not 0 < len(c.dtype) <= 32:
            raise DataError(source, f"field dtype: must be a dtype's name, not {shorten(c.dtype, 40)}")
        for name in ("tflops", "gbps"):
            value = finite_number(source, name, getattr(c, name), null=False)
            if value <= 0:
                raise DataError(source, f"field {name}: must be more than 0, not {shorten(value, 40)}")
        for name in ("tflops_iqr", "gbps_iqr"):
            finite_number(source, name, getattr(c, name))
        for name, low in (("matmul_size", 1), ("copy_bytes", 1), ("samples", 0)):
            value = getattr(c, name)
            if not (value is None and name == "samples") and (type(value) is not int or value < low):
                raise DataError(source, f"field {name}: must be a whole number of at least {low}, "
                                f"not {shorten(value, 40)}")
        if not isinstance(c.measured, str) or len(c.measured) > 64 or (c.measured and not _iso(c.measured)):
            raise DataError(source, f"field measured: must be an ISO date and time, not {shorten(c.measured, 40)}")
        if not isinstance(c.source, str) or len(c.source) > 200:
            raise DataError(source, f"field source: must be text, not {shorten(c.source, 40)}")
        return c


def _iso(text: str) -> bool:
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def gpu_identity(device: int) -> dict[str, str]:
    """The GPU a measurement belongs to: name, compute capability and UUID (one physical GPU)."""
    import torch

    props = torch.cuda.get_device_properties(device)
    return {"gpu": props.name, "cc": f"{props.major}.{props.minor}", "uuid": str(getattr(props, "uuid", ""))}


def _path(ident: dict[str, Any]) -> Any:
    digest = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]
    slug = "".join(ch if ch.isalnum() else "-" for ch in str(ident.get("gpu", "gpu")))[:40]
    return cache_dir.cache_root() / "ceilings" / f"{slug}-{digest}.json"


def _read_file(path: Path) -> dict[str, Any]:
    """A ceilings file's ``{"format", "identity", "record"}``, read and parsed with the loading layer's guards;
    FileNotFoundError when there is none, the kit's own error for anything else wrong with it."""
    data = cache_dir.read_entry(path, "ceilings file", limit=MAX_FILE_BYTES)
    if data is None:
        raise FileNotFoundError(path)
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise DataError(path, "the ceilings file is not UTF-8 text") from None
    doc = parse_json(text, path, "ceilings file")
    if not isinstance(doc, dict) or type(doc.get("format")) is not int or not isinstance(doc.get("identity"), dict) \
            or not isinstance(doc.get("record"), dict):
        raise DataError(path, "not a ceilings file (an object with format, identity and record)")
    return doc


def read_cached(ident: dict[str, Any]) -> dict[str, Any] | None:
    """The record kept for ``ident``, or None (missing; or unreadable, special, too big, not the kit's JSON, another
    format or another identity: such a file is set aside, to be measured again)."""
    if not cache_dir.cache_enabled():
        return None
    path = _path(ident)
    try:
        doc = _read_file(path)
        if doc["format"] != FORMAT or doc["identity"] != ident:
            raise DataError(path, "another format's or another GPU's ceilings")
    except FileNotFoundError:
        return None
    except CudnnLabError as e:
        cache_dir.set_aside(path, "ceilings", getattr(e, "problem", str(e)))
        return None
    return doc["record"]


def write_cached(ident: dict[str, Any], record: dict[str, Any]) -> bool:
    """Keep ``record`` for ``ident`` (atomic write; False when the cache is off or unwritable)."""
    if not cache_dir.cache_enabled():
        return False
    text = json.dumps({"format": FORMAT, "identity": ident, "record": record}, indent=1, sort_keys=True)
    path = _path(ident)
    cache_dir.make_way(path, path.parent.parent, "ceilings")
    return cache_dir.atomic_write(path, text.encode())


def foreign(path: Path, rel: tuple[str, ...], is_dir: bool) -> str | None:
    """Why ``path`` (``rel``: its parts below the ceilings folder) is not a ceilings file the kit wrote (its name,
    and an object with format, identity and record) nor a write's temporary file; None when it is one."""
    if is_dir or len(rel) != 1:
        return "the ceilings cache makes no folders"
    if _TEMP_NAME.fullmatch(rel[0]):
        head = read_regular(path, "ceilings file", head=1)
        return None if head in (b"", b"{") else "not JSON"
    if not _FILE_NAME.fullmatch(rel[0]):
        return "not named like a ceilings file"
    _read_file(path)
    return None


cache_dir.register("ceilings", foreign)  # what `cudnn-lab cache --clear` may remove there


def load_or_measure(ident: dict[str, Any], measure: Callable[[], dict[str, Any]], *, refresh: bool = False,
                    check: Callable[[dict[str, Any]], bool] = lambda r: True) -> tuple[dict[str, Any], bool]:
    """(record, from_disk): the record kept for ``ident`` unless ``refresh`` or it fails ``check``; else
    ``measure()``'s, which is then kept. Other ceilings (FP8, ...) use this too."""
    if not refresh:
        record = read_cached(ident)
        if record is not None and check(record):
            return record, True
    record = measure()
    write_cached(ident, record)
    return record, False


def _measure_fp8(device: int, size: int, copy_mib: int) -> dict[str, Any]:
    """A Ceilings record for FP8: torch._scaled_mm of size^3 e4m3 operands (random data, B column-major, bf16 out),
    timed with and without fast accumulation (the faster kept: the highest rate the GPU reaches through a library),
    and a device copy of ``copy_mib`` MiB for the bandwidth roof."""
    import torch

    dev = f"cuda:{device}"
    with torch.cuda.device(device):
        stream = torch.cuda.Stream(device)
        timer = Timer(stream, TimingOptions(mode="events", min_samples=10, max_samples=30, time_cap_s=2.0))
        gen = torch.Generator(device=dev).manual_seed(0)
        a = (torch.rand(size, size, device=dev, generator=gen) * 2 - 1).to(torch.float8_e4m3fn)
        b = (torch.rand(size, size, device=dev, generator=gen) * 2 - 1).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        def scaled_mm(fast: bool) -> Callable[[], Any]:
            return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                            use_fast_accum=fast)

        results = {fast: timer.time(scaled_mm(fast)) for fast in (False, True)}
        a = b = None  # frees the operands before the copy is timed
        n = copy_mib << 20
        src = torch.empty(n, dtype=torch.uint8, device=dev).random_(0, 255)
        dst = torch.empty_like(src)
        cp = timer.time(lambda: dst.copy_(src))
        src = dst = None  # frees the copy's buffers
    fast = min(results, key=lambda f: results[f].median_ms)
    mm = results[fast]
    flop = 2 * size**3 / 1e9  # FLOP per ms / 1e9 = TFLOP/s
    return Ceilings(dtype="fp8_e4m3", tflops=flop / mm.median_ms, gbps=2 * n / 1e6 / cp.median_ms,
                    matmul_size=size, copy_bytes=n, tflops_iqr=flop / mm.q1_ms - flop / mm.q3_ms,
                    gbps_iqr=2 * n / 1e6 / cp.q1_ms - 2 * n / 1e6 / cp.q3_ms,
                    samples=int(statistics.median([mm.samples, cp.samples])),
                    measured=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    ).to_dict() | {"kernel": f"torch._scaled_mm (use_fast_accum={fast})"}


def _rate_spread(amount: float, result: Any) -> tuple[float, float]:
    """(median, IQR) of amount / time over a timing result's quartiles."""
    med = amount / result.median_ms
    return med, amount / result.q1_ms - amount / result.q3_ms


def _measure(dtype: str, device: int, size: int, copy_mib: int) -> dict[str, Any]:
    import torch

    if dtype.startswith("fp8"):  # FP8's roof: torch._scaled_mm
        return _measure_fp8(device, size, copy_mib)

    tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    with torch.cuda.device(device):
        stream = torch.cuda.Stream(device)
        timer = Timer(stream, TimingOptions(mode="events", min_samples=10, max_samples=30, time_cap_s=2.0))
        gen = torch.Generator(device=f"cuda:{device}").manual_seed(0)
        a = torch.rand(size, size, device=f"cuda:{device}", generator=gen).to(tdt)
        b = torch.rand(size, size, device=f"cuda:{device}", generator=gen).to(tdt)
        c = torch.empty(size, size, device=f"cuda:{device}", dtype=tdt)
        # cuDNN's "fp32" engines may use TF32 tensor cores, so the fp32 compute roof is TF32's.
        saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            mm = timer.time(lambda: torch.matmul(a, b, out=c))
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        a = b = c = None  # frees the operands before the copy is timed
        n = copy_mib << 20
        src = torch.empty(n, dtype=torch.uint8, device=f"cuda:{device}").random_(0, 255)
        dst = torch.empty_like(src)
        cp = timer.time(lambda: dst.copy_(src))
        src = dst = None  # frees the copy's buffers
    tflops, tflops_iqr = _rate_spread(2 * size**3 / 1e9, mm)  # FLOP per ms / 1e9 = TFLOP/s
    gbps, gbps_iqr = _rate_spread(2 * n / 1e6, cp)  # bytes per ms / 1e6 = GB/s
    return Ceilings(dtype=dtype, tflops=tflops, gbps=gbps, matmul_size=size, copy_bytes=n, tflops_iqr=tflops_iqr,
                    gbps_iqr=gbps_iqr, samples=int(statistics.median([mm.samples, cp.samples])),
                    measured=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")).to_dict()


_MEMO: dict[tuple[Any, ...], Ceilings] = {}


def _fits(c: Ceilings | None, dtype: str, size: int, copy_mib: int) -> bool:
    """A valid record measured as asked (its dtype and sizes are the identity's)."""
    return c is not None and c.dtype == dtype and c.matmul_size == size and c.copy_bytes == copy_mib << 20


def measure_ceilings(dtype: str = "fp16", device: int = 0, size: int = 8192, copy_mib: int = 1024, *,
                     refresh: bool = False) -> Ceilings:
    """The ceilings of ``device`` for ``dtype``: from this process's memory, else from disk, else measured (torch
    matmul of size^3 and a copy of ``copy_mib`` MiB) and kept. ``refresh=True`` measures again and replaces both."""
    key = (dtype, device, size, copy_mib)
    if key in _MEMO and not refresh:
        kept = _MEMO[key]
        if kept.source == MEASURED_NOW:
            return dataclasses.replace(kept, source=f"measured earlier in this process ({kept.measured})")
        return kept
    ident = {**gpu_identity(device), "dtype": dtype, "size": size, "copy_mib": copy_mib}
    record, from_disk = load_or_measure(ident, lambda: _measure(dtype, device, size, copy_mib), refresh=refresh,
                                        check=lambda r: _fits(Ceilings.from_dict(r), dtype, size, copy_mib))
    ceil = Ceilings.from_dict(record)
    assert ceil is not None  # a fresh measurement always makes a valid record
    source = f"cached from {ceil.measured or 'an unknown date'}" if from_disk else MEASURED_NOW
    ceil = dataclasses.replace(ceil, source=source)
    _MEMO[key] = ceil
    return ceil
