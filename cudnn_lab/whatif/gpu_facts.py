"""Datasheet facts of the GPUs the forecast speaks of (SMs, clocks, tensor peaks, bandwidth, L2), each with its source.

Read from ``cudnn_lab/data/forecast/gpus/gpus.json`` through :func:`load_gpu_facts`, which checks every field and
names the file and field of the first problem (the kit's DataError). The file is one kind of the kit's recordings
(``gpu_facts`` in ``results/recordings.py``): read through the registry's guards (a regular file, at most
:data:`MAX_FACTS_BYTES`) and its one cache.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudnn_lab.errors import DataError, OptionError, PathError
from cudnn_lab.results import recordings
from cudnn_lab.specs.records import AsDict

FACTS_DIR = Path(__file__).resolve().parent.parent / "data" / "forecast" / "gpus"
FACTS_PATH = FACTS_DIR / "gpus.json"
#: A facts file larger than this is refused before it is read (the shipped one is a few KiB).
MAX_FACTS_BYTES = 1 << 20
FORMAT = "cudnn-lab gpu facts"
_NUMBERS = ("sm_count", "boost_mhz", "bf16_tflops", "fp16_tflops", "fp8_tflops", "hbm_gbps", "l2_mib")
_DTYPES = {"bf16": "bf16_tflops", "bfloat16": "bf16_tflops", "fp16": "fp16_tflops", "half": "fp16_tflops",
           "fp8": "fp8_tflops", "fp8_e4m3": "fp8_tflops", "fp8_e5m2": "fp8_tflops"}


@dataclass(frozen=True)
class GpuFacts(AsDict):
    """One GPU's datasheet facts (None where its source does not state one) and the source they come from."""

    key: str
    name: str
    arch: str
    source: str
    sm_count: int | None = None
    boost_mhz: float | None = None
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    hbm_gbps: float | None = None
    l2_mib: float | None = None
    published_peak_mma_tflops: dict[str, float] = field(default_factory=dict)

    def peak_tflops(self, dtype: str) -> float | None:
        """The dense tensor peak for ``dtype``: the datasheet figure, else NVIDIA's published CSV peak, else None."""
        attr = _DTYPES.get(dtype.lower(), "bf16_tflops")
        value = getattr(self, attr)
        if value is None:
            value = self.published_peak(dtype)
        return float(value) if value is not None else None

    def published_peak(self, dtype: str) -> float | None:
        """NVIDIA's ``peak_mma_tflops`` for ``dtype`` as its published CSVs state it (boost clocks), or None."""
        key = "fp8" if "fp8" in dtype.lower() else "bfloat16"
        value = self.published_peak_mma_tflops.get(key)
        return float(value) if value is not None else None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuFacts:
        return cls(**data)


def _check(key: str, entry: Any, path: Path) -> GpuFacts:
    """One checked entry of the facts file."""
    where = f"gpus.{key}"
    if not isinstance(entry, dict):
        raise DataError(path, f"{where} is {type(entry).__name__}, not an object")
    for text in ("name", "arch", "source"):
        if not isinstance(entry.get(text), str) or not entry[text].strip():
            raise DataError(path, f"{where}.{text} is missing or empty", hint="every GPU names its source")
    values: dict[str, Any] = {}
    for name in _NUMBERS:
        value = entry.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise DataError(path, f"{where}.{name}={value!r}: must be a positive number or null")
        values[name] = value
    if values["sm_count"] is not None and not float(values["sm_count"]).is_integer():
        raise DataError(path, f"{where}.sm_count={values['sm_count']!r}: must be a whole number")
    peaks = entry.get("published_peak_mma_tflops") or {}
    if not isinstance(peaks, dict) or any(k not in ("bfloat16", "fp8") or isinstance(v, bool)
                                          or not isinstance(v, (int, float)) or v <= 0 for k, v in peaks.items()):
        raise DataError(path, f"{where}.published_peak_mma_tflops={peaks!r}: must map bfloat16/fp8 to a positive "
                        "number")
    unknown = set(entry) - {"name", "arch", "source", "published_peak_mma_tflops", *_NUMBERS}
    if unknown:
        raise DataError(path, f"{where} has unknown field(s) {sorted(unknown)}")
    return GpuFacts(key=key, name=entry["name"], arch=entry["arch"], source=entry["source"],
                    sm_count=int(values["sm_count"]) if values["sm_count"] is not None else None,
                    boost_mhz=values["boost_mhz"], bf16_tflops=values["bf16_tflops"],
                    fp16_tflops=values["fp16_tflops"], fp8_tflops=values["fp8_tflops"],
                    hbm_gbps=values["hbm_gbps"], l2_mib=values["l2_mib"],
                    published_peak_mma_tflops={k: float(v) for k, v in peaks.items()})


@dataclass(frozen=True)
class GpuFactsFile:
    """A checked facts file: every GPU by key and the ``synthetic_arch`` map (compute capability -> GPU key)."""

    facts: dict[str, GpuFacts]
    synthetic_arch: dict[str, str]


def json_value(path: Path, missing: str) -> Any:
    """The JSON value in the file ``path`` (the forecast's files: GPU facts, published provenance, recordings):
    PathError saying ``missing`` where there is no such file, DataError naming the file where it is not readable
    JSON."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise PathError(path, missing) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(path, f"not readable JSON ({exc})") from None


def read_facts_file(path: Path) -> GpuFactsFile:
    """One facts file read and checked (the registry's reader); DataError names the file and field."""
    path = Path(path)
    data = json_value(path, "no such GPU facts file")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DataError(path, f"format is not {FORMAT!r}", hint="is this a GPU facts file?")
    gpus = data.get("gpus")
    if not isinstance(gpus, dict) or not gpus:
        raise DataError(path, "gpus is missing or empty (must map a GPU key to its facts)")
    facts = {key: _check(key, entry, path) for key, entry in gpus.items()}
    arch = data.get("synthetic_arch", {})
    if not isinstance(arch, dict) or any(not isinstance(v, str) or v not in facts for v in arch.values()):
        raise DataError(path, f"synthetic_arch={arch!r}: every value must name a GPU of this file")
    return GpuFactsFile(facts=facts, synthetic_arch={str(k).lower(): v for k, v in arch.items()})


#: The GPU facts, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="gpu_facts", folder=FACTS_DIR, suffix=".json", max_bytes=MAX_FACTS_BYTES, load=read_facts_file,
    title="GPU facts JSON"))


def _file(path: Any = None) -> GpuFactsFile:
    found: GpuFactsFile = recordings.read_one(RECORDING.name, Path(path) if path is not None else FACTS_PATH)
    return found


def load_gpu_facts(path: Any = None) -> dict[str, GpuFacts]:
    """Every GPU of the facts file (the shipped one by default), checked; DataError names the file and field."""
    return _file(path).facts


def synthetic_arch(path: Any = None) -> dict[str, str]:
    """Compute capability name (``sm100``) -> the GPU whose facts stand for it, for the kit's synthetic targets."""
    return dict(_file(path).synthetic_arch)


def gpu(key: str, path: Any = None) -> GpuFacts:
    """One GPU's facts by key (``h200``), by its full name, or by a synthetic target's architecture (``sm100``)."""
    facts = load_gpu_facts(path)
    text = str(key).strip()
    if text.lower() in facts:
        return facts[text.lower()]
    for item in facts.values():
        if item.name.lower() == text.lower():
            return item
    arch = synthetic_arch(path)
    if text.lower() in arch:
        return facts[arch[text.lower()]]
    raise OptionError("target", key, "one of " + ", ".join(sorted(facts)) + " (or " + ", ".join(sorted(arch)) + ")")


#: Words of a datasheet name that follow the GPU's model (memory, form factor, edition), not part of its class.
_NOT_MODEL = re.compile(r"^(\d+GB|PCIe|SXM\d*|HBM\d*e?|NVL|Blackwell|Server|Edition|Max-Q)$", re.IGNORECASE)


def target_class(name: str, path: Any = None) -> str | None:
    """The GPU class a synthetic target stands for, by the facts file's ``synthetic_arch`` map ('sm80' -> 'A100',
    'sm120' -> 'RTX PRO 6000'), so views can say "sm80 (A100-class)"; None for a name the map does not hold."""
    key = synthetic_arch(path).get(str(name).strip().lower())
    if key is None:
        return None
    words = load_gpu_facts(path)[key].name.removeprefix("NVIDIA ").split()
    model = [w for w in itertools.takewhile(lambda w: not _NOT_MODEL.match(w), words)]
    return " ".join(model) or None
