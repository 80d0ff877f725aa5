"""Target GPUs for what-if questions: a device description (the JSON cuDNN serializes for a GPU,
``cudnn.create_device_properties(i).serialize()``) with where it came from.

Origins: ``recorded`` (shipped with the kit, serialized by cuDNN on an H100 or H200, one per cuDNN version),
``file`` (a user's, written by ``cudnn-lab profile -o mygpu.json`` on their GPU) and ``synthetic`` (a recorded
description with only the compute capability changed: always labelled so, never mixed with measured rows). The card
in use is no Target: ``target=None`` everywhere means "the GPU of this process".
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, shorten
from ..provenance import cudnn_version_text
from ..results import recordings
from ..results.loading import parse_json, read_text
from ..results.paths import check_output_path, write_text

__all__ = ["ask", "Target", "targets", "target", "synthetic", "load_target", "as_target", "COMPUTE_CAPABILITIES",
           "DESCRIPTION_KEYS", "TARGETS_DIR", "FORMAT"]

TARGETS_DIR = Path(__file__).resolve().parents[1] / "data" / "targets"
FORMAT = "cudnn-lab target"
#: Largest target file the kit reads (a description is under 1 KB).
MAX_TARGET_BYTES = 64 * 2**10

#: Compute capabilities a synthetic target may take (deviceVer = 100 * major + 10 * minor), with the family named.
COMPUTE_CAPABILITIES: dict[str, str] = {
    "8.0": "Ampere data center (A100)", "8.6": "Ampere (RTX 30, A10, A40)", "8.9": "Ada (RTX 40, L4, L40)",
    "9.0": "Hopper (H100, H200)", "10.0": "Blackwell data center (B200, GB200)",
    "12.0": "Blackwell consumer (RTX 50, RTX PRO 6000)",
}
#: Other compute capabilities cuDNN knows and a user's file may carry.
_KNOWN_CC = {"7.0", "7.2", "7.5", "8.7", "8.8", "10.1", "10.3", "11.0", "12.1", *COMPUTE_CAPABILITIES}

_INT = (int,)
#: Fields of a description as cuDNN 9.14-9.19 serialize it: name -> JSON type.
DESCRIPTION_KEYS: dict[str, Any] = {
    "maxGridSize": list, "maxBlockSize": list, "regsPerBlock": _INT, "multiProcessorCount": _INT, "warpSize": _INT,
    "maxSharedMemoryPerBlock": _INT, "maxSharedMemoryPerBlockOptin": _INT, "reservedSharedMemoryPerBlock": _INT,
    "maxRegistersPerSM": _INT, "maxCtasPerSM": _INT, "maxThreadsPerBlock": _INT, "maxThreadsPerSM": _INT,
    "pciDeviceId": _INT, "isTccDriver": _INT, "supportCoopLaunch": _INT, "totalGlobalMem": _INT,
    "smClockRateKHz": _INT, "memClockRateKHz": _INT, "l2CacheSize": _INT, "cudaDeviceId": _INT, "deviceVer": _INT,
    "driverVer": _INT, "deviceName": str,
}
#: Fields newer cuDNN versions serialize too (seen in 9.28; docs/FINDINGS.md): a 9.19 cannot read such a file.
NEWER_KEYS = ("smCountOrigin", "oversizedSharedMemoryPerBlock", "memoryBusWidth")


#: What each numeric field of a description can hold on an NVIDIA GPU (CUDA's device properties), by meaning: a
#: warp is 32 threads, a block at most 1024, flags are 0 or 1 ... (a lower bound of 0 where 0 is a real answer).
DESCRIPTION_RANGES: dict[str, tuple[int, int]] = {
    "maxGridSize": (1, 2**31 - 1), "maxBlockSize": (1, 1024), "regsPerBlock": (1, 2**20),
    "multiProcessorCount": (1, 1024), "warpSize": (32, 32), "maxSharedMemoryPerBlock": (1, 2**24),
    "maxSharedMemoryPerBlockOptin": (1, 2**24), "reservedSharedMemoryPerBlock": (0, 2**24),
    "maxRegistersPerSM": (1, 2**20), "maxCtasPerSM": (1, 1024), "maxThreadsPerBlock": (32, 1024),
    "maxThreadsPerSM": (32, 2**16), "pciDeviceId": (0, 2**16), "isTccDriver": (0, 1), "supportCoopLaunch": (0, 1),
    "totalGlobalMem": (2**20, 2**50), "smClockRateKHz": (1, 10**7), "memClockRateKHz": (0, 10**8),
    "l2CacheSize": (0, 2**34), "cudaDeviceId": (0, 1023), "deviceVer": (100, 9990), "driverVer": (1000, 99990),
}


def _range_text(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}-{high}"


def _cc_text(device_ver: int) -> str:
    major, minor = divmod(device_ver // 10, 10)
    return f"{major}.{minor}"


def _device_ver(cc: Any) -> int:
    text = str(cc).strip().lower().removeprefix("sm").removeprefix("_")
    if text.isdigit() and len(text) >= 2 and "." not in text:  # "90", "100", "120"
        text = f"{text[:-1]}.{text[-1]}"
    if text not in _KNOWN_CC:
        raise OptionError("compute capability", cc, "one of " + ", ".join(sorted(_KNOWN_CC, key=float))
                          + " (written 9.0, 90 or sm90)")
    major, minor = text.split(".")
    return int(major) * 100 + int(minor) * 10


def check_description(data: Any, source: Any, *, cudnn_version: int | None = None) -> dict[str, Any]:
    """A device description checked field by field (DataError naming ``source`` and the field); fields of a newer
    cuDNN are refused when ``cudnn_version`` (the cuDNN that will read it) is 9.19 or older."""
    if not isinstance(data, dict):
        raise DataError(source, f"the device description must be a JSON object, not {shorten(data, 40)}")
    missing = [k for k in DESCRIPTION_KEYS if k not in data]
    if missing:
        raise DataError(source, f"the device description lacks field{'s' * (len(missing) > 1)} "
                                f"{', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}",
                        hint="write it with `cudnn-lab profile -o FILE` on the GPU it describes")
    unknown = [k for k in data if k not in DESCRIPTION_KEYS and k not in NEWER_KEYS]
    if unknown:
        raise DataError(source, f"the device description has field{'s' * (len(unknown) > 1)} cuDNN does not "
                                f"serialize: {shorten(unknown, 100)}")
    newer = [k for k in NEWER_KEYS if k in data]
    if newer and cudnn_version is not None and cudnn_version <= 91900:
        raise DataError(source, f"the device description was written by a newer cuDNN (fields {', '.join(newer)}); "
                                f"this cuDNN ({cudnn_version}) cannot read it",
                        hint="profile the GPU again under the cuDNN you will ask, or ask under the newer one "
                             "(cudnn_lib=...)")
    for key, kind in DESCRIPTION_KEYS.items():
        value = data[key]
        if kind is list:
            ok = isinstance(value, list) and len(value) == 3 and all(
                isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
            allowed = "a list of three positive integers"
        elif kind is str:
            ok, allowed = isinstance(value, str) and 0 < len(value) <= 256, "a name of 1-256 characters"
        else:
            ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63
            allowed = "a non-negative integer"
        if not ok:
            raise DataError(source, f"field {key}: must be {allowed}, not {shorten(value, 40)}")
    for key, (low, high) in DESCRIPTION_RANGES.items():
        value = data[key]
        values = value if isinstance(value, list) else [value]
        if any(not low <= v <= high for v in values):
            raise DataError(source, f"field {key}: must be {_range_text(low, high)}"
                                    f"{' each' if isinstance(value, list) else ''}, not {shorten(value, 40)}",
                            hint="write it with `cudnn-lab profile -o FILE` on the GPU it describes")
    for key, at_least in (("maxSharedMemoryPerBlockOptin", "maxSharedMemoryPerBlock"),
                          ("maxThreadsPerSM", "maxThreadsPerBlock"), ("maxRegistersPerSM", "regsPerBlock")):
        if data[key] < data[at_least]:
            raise DataError(source, f"field {key}: must be at least {at_least} ({data[at_least]}), not {data[key]}")
    if _cc_text(data["deviceVer"]) not in _KNOWN_CC or data["deviceVer"] % 10:
        raise DataError(source, f"field deviceVer: {data['deviceVer']} is no compute capability cuDNN knows "
                                f"(e.g. 800 for 8.0, 900 for 9.0, 1000 for 10.0)")
    return dict(data)


@dataclasses.dataclass(frozen=True)
class Target:
    """A GPU to ask cuDNN about. ``name`` is how a user picks it (``h200``, ``sm100``, a file's stem);
    ``cudnn_version`` the cuDNN that serialized the description (it reads it back)."""

    name: str
    description: dict[str, Any]
    origin: str
    cudnn_version: int
    base: str = ""
    created: str = ""

    def __post_init__(self) -> None:
        if self.origin not in ("recorded", "file", "synthetic"):
            raise OptionError("origin", self.origin, "recorded, file or synthetic")
        check_description(self.description, f"target {self.name}")

    @property
    def compute_capability(self) -> str:
        return _cc_text(int(self.description["deviceVer"]))

    @property
    def sm_count(self) -> int:
        return int(self.description["multiProcessorCount"])

    @property
    def label(self) -> str:
        """What the target is, in the words every view shows: synthetic targets say so."""
        if self.origin == "synthetic":
            return f"synthetic: {self.base} with compute capability {self.compute_capability}"
        where = "recorded" if self.origin == "recorded" else "from a file"
        return (f"{self.description['deviceName']} ({where}, cuDNN {cudnn_version_text(self.cudnn_version)}, "
                f"compute capability {self.compute_capability}, {self.sm_count} SMs)")

    def summary(self) -> str:
        """One sentence: the target's name and what it is (its :attr:`label`)."""
        return f"Target {self.name}: {self.label}."

    def frame(self) -> Any:
        """One row: name, GPU, compute capability, SMs, origin, cuDNN, base and date (the targets table's row)."""
        import pandas as pd

        return pd.DataFrame([{"name": self.name, "gpu": str(self.description.get("deviceName", "")),
                              "compute_capability": self.compute_capability, "sm_count": self.sm_count,
                              "origin": self.origin, "cudnn": cudnn_version_text(self.cudnn_version),
                              "base": self.base, "created": self.created}])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the target file's fields (read back by :meth:`from_dict` and :func:`load_target`)."""
        return {"format": FORMAT, "version": 1, "name": self.name, "origin": self.origin,
                "cudnn": self.cudnn_version, "base": self.base, "created": self.created,
                "description": dict(self.description)}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "target") -> Target:
        """Inverse of :meth:`to_dict`, every field checked (DataError naming ``source`` and the field)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(source, f"not a cudnn-lab target file (no \"format\": \"{FORMAT}\")",
                            hint="write it with `cudnn-lab profile -o FILE` on the GPU it describes")
        version = data.get("version")
        if type(version) is not int or version != 1:
            raise DataError(source, f"field version: must be 1 (the target file format this kit writes), not "
                                    f"{shorten(version, 40)}",
                            hint="write it with `cudnn-lab profile -o FILE` on the GPU it describes")
        for key, limit in (("base", 200), ("created", 40)):
            if not isinstance(data.get(key, ""), str) or len(data.get(key, "")) > limit:
                raise DataError(source, f"field {key}: must be text of at most {limit} characters, not "
                                        f"{shorten(data.get(key), 40)}")
        unknown = [k for k in data if k not in TARGET_FIELDS]
        if unknown:
            raise DataError(source, f"field {str(unknown[0])[:40]}: is no field of a target file (known: "
                                    f"{', '.join(TARGET_FIELDS)})")
        cudnn = data.get("cudnn")
        if not isinstance(cudnn, int) or isinstance(cudnn, bool) or not 90000 <= cudnn < 100000:
            raise DataError(source, f"field cudnn: must be a cuDNN 9 version number such as 91900, not "
                                    f"{shorten(cudnn, 40)}")
        origin = data.get("origin", "file")
        if origin not in ("recorded", "file", "synthetic"):
            raise DataError(source, f"field origin: must be recorded, file or synthetic, not {shorten(origin, 40)}")
        name = data.get("name")
        if not isinstance(name, str) or not 0 < len(name) <= 64:
            raise DataError(source, f"field name: must be a name of 1-64 characters, not {shorten(name, 40)}")
        description = check_description(data.get("description"), source, cudnn_version=None)
        return cls(name=name, description=description, origin=origin, cudnn_version=cudnn,
                   base=data.get("base", ""), created=data.get("created", ""))

    def save(self, path: Any) -> Path:
        """Write the target as JSON (a colleague loads it with ``load_target`` or ``target=PATH``)."""
        import json

        path = check_output_path(path, what="target JSON", suffixes=(".json",))
        return write_text(path, json.dumps(self.to_dict(), indent=1), what="target JSON")


#: The fields of a target file (:meth:`Target.to_dict`).
TARGET_FIELDS = ("format", "version", "name", "origin", "cudnn", "base", "created", "description")


def load_target(path: Any) -> Target:
    """A target file (``cudnn-lab profile -o``), read with the kit's reading discipline and checked field by field."""
    path, text = read_text(path, "target JSON", limit=MAX_TARGET_BYTES)
    target = Target.from_dict(parse_json(text, path, "target JSON"), path)
    return dataclasses.replace(target, origin="file") if target.origin != "file" else target


def synthetic(cc: Any, base: Target | None = None) -> Target:
    """``base`` (default: the newest recorded target) with only the compute capability changed to ``cc``."""
    base = base or _recorded()[0]
    ver = _device_ver(cc)
    desc = {**base.description, "deviceVer": ver}
    return Target(name=f"sm{ver // 10}", description=desc, origin="synthetic", cudnn_version=base.cudnn_version,
                  base=str(base.description["deviceName"]), created=base.created)


#: The device descriptions recorded on the kit's GPUs, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="target", folder=TARGETS_DIR, suffix=".json", max_bytes=MAX_TARGET_BYTES, load=load_target,
    title="target JSON"))


def _recorded() -> list[Target]:
    """The recorded targets, newest cuDNN first."""
    found: list[Target] = recordings.read(RECORDING.name, TARGETS_DIR)
    return sorted((dataclasses.replace(t, origin="recorded") for t in found), key=lambda t: (-t.cudnn_version, t.name))


def targets(cudnn_version: int | None = None) -> list[Target]:
    """Every target the kit knows: the recorded GPUs (each cuDNN version's description), then one synthetic target
    per compute capability in :data:`COMPUTE_CAPABILITIES` made from the newest recorded one. ``cudnn_version``
    keeps only descriptions that cuDNN version serialized."""
    recorded = [t for t in _recorded() if cudnn_version is None or t.cudnn_version == cudnn_version]
    bases = recorded or _recorded()
    made = [synthetic(cc, bases[0]) for cc in COMPUTE_CAPABILITIES] if bases else []
    return recorded + made


def target(name: str, *, cudnn_version: int | None = None) -> Target:
    """The target called ``name`` (``h100``, ``h200``, ``sm80`` ... ``sm120``, or a compute capability such as
    ``10.0``); for a recorded GPU, the description of ``cudnn_version`` (default: the newest recorded)."""
    if not isinstance(name, str) or not name.strip():
        raise OptionError("target", name, "a target name (see cl.targets()), a Target or a target file path")
    key = name.strip().lower()
    recorded = [t for t in _recorded() if t.name == key]
    if recorded:
        exact = [t for t in recorded if cudnn_version is None or t.cudnn_version == cudnn_version]
        return (exact or recorded)[0]
    try:
        ver = _device_ver(key)
    except OptionError:
        names = sorted({t.name for t in targets()})
        raise OptionError("target", name, "one of " + ", ".join(names) + ", a compute capability such as 10.0, "
                          "or a target file (cudnn-lab profile -o FILE)") from None
    bases = [t for t in _recorded() if cudnn_version is None or t.cudnn_version == cudnn_version] or _recorded()
    return synthetic(_cc_text(ver), bases[0])


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = target


def as_target(value: Any, *, cudnn_version: int | None = None) -> Target | None:
    """One coercion: None (the card in use), a Target, a name, a compute capability, a dict or a file path."""
    if value is None or isinstance(value, Target):
        return value
    if isinstance(value, dict):
        return Target.from_dict(value, "target dict")
    if isinstance(value, Path) or (isinstance(value, str) and value.lower().endswith(".json")):
        return load_target(value)
    if isinstance(value, str):
        return target(value, cudnn_version=cudnn_version)
    raise OptionError("target", value, "None (this GPU), a Target, a target name, a compute capability or a "
                      "target file path")


def today() -> str:
    return _dt.date.today().isoformat()
