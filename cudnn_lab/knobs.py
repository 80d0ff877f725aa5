"""The cuDNN backend knob table: what the numbers in a plan name such as ``eng62_k2=0_k13=1`` mean.

A plan name carries cuDNN *backend* knob numbers (``cudnnBackendKnobType_t``); the frontend's ``cudnn.knob_type``
enum numbers its members differently (backend 13 is TILEK, frontend 13 is WORKSPACE) and lacks some names. So a
knob is decoded by number through this table (only numbers that exist in the cuDNN in use; an unknown number is shown
as such, never guessed) and replayed through the frontend by NAME. Pure: no cudnn or torch import here; the frontend
enum is passed in by the GPU layer.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import PlanError

Version = tuple[int, int, int]

#: Version given to knob types that the cuDNN 9.0.0 header already had (they date from cuDNN 8).
V9_0: Version = (9, 0, 0)


@dataclasses.dataclass(frozen=True)
class KnobType:
    """One ``cudnnBackendKnobType_t`` value: number, name, the cuDNN that added it, and what it sets."""

    number: int
    name: str
    since: Version
    deprecated: bool
    meaning: str

    @property
    def since_text(self) -> str:
        return "9.0.0 or earlier" if self.since == V9_0 else version_text(self.since)


def _k(number: int, name: str, meaning: str, since: Version = V9_0, deprecated: bool = False) -> KnobType:
    return KnobType(number, name, since, deprecated, meaning)


#: ``cudnnBackendKnobType_t`` of cuDNN 9.x (values are append-only; COUNTS is 46 in 9.22).
KNOB_TYPES: tuple[KnobType, ...] = (
    _k(0, "SPLIT_K", "split the reduction (K) dimension across thread blocks", deprecated=True),
    _k(1, "SWIZZLE", "order in which thread blocks walk the output tiles (for cache reuse)"),
    _k(2, "TILE_SIZE", "thread-block tile shape, an index into the engine's list of tile shapes"),
    _k(3, "USE_TEX", "read inputs through the texture path", deprecated=True),
    _k(4, "EDGE", "how tiles at the tensor edges are handled"),
    _k(5, "KBLOCK", "block size along K", deprecated=True),
    _k(6, "LDGA", "global-load width for operand A", deprecated=True),
    _k(7, "LDGB", "global-load width for operand B", deprecated=True),
    _k(8, "CHUNK_K", "chunk size along K", deprecated=True),
    _k(9, "SPLIT_H", "split along the output height", deprecated=True),
    _k(10, "WINO_TILE", "Winograd tile size", deprecated=True),
    _k(11, "MULTIPLY", "multiplication variant of the engine (e.g. the FFT/Winograd transform size)"),
    _k(12, "SPLIT_K_BUF", "split-K partial results kept in separate buffers (workspace) before a reduction"),
    _k(13, "TILEK", "tile depth along the reduction (K) dimension, an index into the engine's list"),
    _k(14, "STAGES", "number of software-pipeline stages (shared-memory buffers in flight)"),
    _k(15, "REDUCTION_MODE", "how partial sums of a split reduction are combined"),
    _k(16, "CTA_SPLIT_K_MODE", "split-K mode inside a thread block", deprecated=True),
    _k(17, "SPLIT_K_SLC", "number of split-K slices"),
    # One 9.7 header dump dates IDX_MODE to 9.7.0, but knob numbers are append-only and 19..36 predate 9.7,
    # so 18 existed before them: it is treated as present in every cuDNN 9.
    _k(18, "IDX_MODE", "index arithmetic mode (e.g. 32- or 64-bit, precomputed offsets)"),
    _k(19, "SLICED", "sliced mode", deprecated=True),
    _k(20, "SPLIT_RS", "split over the filter's R and S dimensions", deprecated=True),
    _k(21, "SINGLEBUFFER", "single-buffered shared memory", deprecated=True),
    _k(22, "LDGC", "global-load width for operand C", deprecated=True),
    _k(23, "SPECFILT", "specialised kernel for a particular filter size"),
    _k(24, "KERNEL_CFG", "kernel configuration number, an index into the engine's own kernel list"),
    _k(25, "WORKSPACE", "whether (or how much) workspace the plan may use"),
    _k(26, "TILE_CGA", "thread-block cluster (CGA) shape", deprecated=True),
    _k(27, "TILE_CGA_M", "thread-block cluster (CGA) size along M"),
    _k(28, "TILE_CGA_N", "thread-block cluster (CGA) size along N"),
    _k(29, "BLOCK_SIZE", "threads per block"),
    _k(30, "OCCUPANCY", "target number of resident blocks per SM"),
    _k(31, "ARRAY_SIZE_PER_THREAD", "elements each thread holds in registers"),
    _k(32, "NUM_C_PER_BLOCK", "channels per block", deprecated=True),
    _k(33, "SPLIT_COLS", "split of the columns across blocks"),
    _k(34, "TILE_ROWS", "tile size along rows"),
    _k(35, "TILE_COLS", "tile size along columns"),
    _k(36, "LOAD_SIZE", "width of each memory load"),
    _k(37, "CTA_COUNT", "number of thread blocks launched (persistent kernels)", (9, 7, 0)),
    _k(38, "STREAM_K", "stream-K work decomposition", (9, 7, 0)),
    _k(39, "SPLIT_P_SLC", "number of slices along the output's spatial (P) dimension", (9, 7, 0)),
    _k(40, "TILE_M", "tile size along M", (9, 7, 0)),
    _k(41, "TILE_N", "tile size along N", (9, 7, 0)),
    _k(42, "WARP_SPEC_CFG", "warp-specialisation configuration (producer/consumer warps)", (9, 7, 0)),
    _k(43, "SWAP_AB", "swap the A and B operands of the GEMM", (9, 18, 0)),
    _k(44, "INPUT_TMA_ENABLE", "load inputs with the Tensor Memory Accelerator (TMA)", (9, 22, 0)),
    _k(45, "OUTPUT_TMA_ENABLE", "store outputs with the Tensor Memory Accelerator (TMA)", (9, 22, 0)),
)

BY_NUMBER: dict[int, KnobType] = {k.number: k for k in KNOB_TYPES}
BY_NAME: dict[str, KnobType] = {k.name: k for k in KNOB_TYPES}

#: Names that ``cudnn.knob_type`` of frontend 1.32 has for backend knobs (besides NOT_SET and frontend-only ones).
FRONTEND_1_32_NAMES: frozenset[str] = frozenset(
    "ARRAY_SIZE_PER_THREAD BLOCK_SIZE CTA_COUNT EDGE IDX_MODE INPUT_TMA_ENABLE KERNEL_CFG LOAD_SIZE MULTIPLY "
    "OCCUPANCY OUTPUT_TMA_ENABLE REDUCTION_MODE SPECFILT SPLIT_COLS SPLIT_K_BUF SPLIT_K_SLC SPLIT_P_SLC STAGES "
    "STREAM_K SWAP_AB SWIZZLE TILEK TILE_CGA TILE_CGA_M TILE_CGA_N TILE_COLS TILE_M TILE_N TILE_ROWS TILE_SIZE "
    "WARP_SPEC_CFG WORKSPACE".split())


# ---------------------------------------------------------------------------------------------------- versions
def parse_version(value: Any) -> Version | None:
    """cuDNN version as (major, minor, patch) from 91900, "91900", "9.19.0", "9.19" or a tuple; None if unknown."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, int) for v in value):
        parts = (list(value) + [0, 0])[:3]
        return parts[0], parts[1], parts[2]
    text = str(value).strip()
    if re.fullmatch(r"\d{5,6}", text):  # cuDNN 9 encodes major*10000 + minor*100 + patch
        n = int(text)
        return n // 10000, (n // 100) % 100, n % 100
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if m:
        return int(m[1]), int(m[2]), int(m[3] or 0)
    return None


def version_text(version: Version | None) -> str:
    return "an unrecorded version" if version is None else ".".join(str(v) for v in version)


def knob_type(number: int, version: Any = None) -> KnobType | None:
    """The knob type with this backend number in the cuDNN ``version`` (None: unknown there, or not in the table).

    Without a version, every number of the table is known.
    """
    kt = BY_NUMBER.get(number)
    v = parse_version(version)
    if kt is None or (v is not None and v < kt.since):
        return None
    return kt


def known_count(version: Any) -> int:
    """``CUDNN_KNOB_TYPE_COUNTS`` as this table has it for ``version`` (46 for 9.22)."""
    v = parse_version(version)
    return sum(1 for k in KNOB_TYPES if v is None or k.since <= v)


# ---------------------------------------------------------------------------------------------------- decoding
@dataclasses.dataclass(frozen=True)
class Knob:
    """One knob setting of a plan, decoded: backend number, name (None when unknown), value."""

    number: int | None
    name: str | None
    value: int
    version: Version | None = None

    @property
    def known(self) -> bool:
        return self.name is not None

    @property
    def key(self) -> str:
        """Column-style key: the name when known, else ``k<number>``."""
        return self.name if self.name is not None else f"k{self.number}"

    @property
    def label(self) -> str:
        """``TILE_SIZE=3``, or ``k47=3 (unknown knob type in cuDNN 9.19.0)``."""
        if self.name is not None:
            return f"{self.name}={self.value}"
        return f"k{self.number}={self.value} (unknown knob type in cuDNN {version_text(self.version)})"

    @property
    def meaning(self) -> str:
        kt = BY_NAME.get(self.name or "")
        return kt.meaning if kt else "not in the knob table for this cuDNN"


_NAME_RE = re.compile(r"(?:^|_)eng(-?\d+)((?:_k\d+=-?\d+)*)$")
_KNOB_RE = re.compile(r"_k(\d+)=(-?\d+)")


def parse_plan_name(name: str) -> tuple[int, dict[int, int]] | None:
    """``"eng62_k2=0_k13=1"`` (optionally prefixed by an operation tag) -> ``(62, {2: 0, 13: 1})``; None otherwise."""
    if not isinstance(name, str):
        return None
    m = _NAME_RE.search(name.strip())
    if not m:
        return None
    return int(m[1]), {int(t): int(v) for t, v in _KNOB_RE.findall(m[2])}


def backend_numbers(knobs: Any) -> dict[int, int]:
    """Knob settings by backend number from any form the kit meets.

    Accepts a plan name, JSON text or a mapping whose keys are backend numbers (``2``, ``"2"``, ``"k2"``) or names
    of the table (``"TILE_SIZE"``). A key that is none of these raises a ``PlanError`` naming it.
    """
    if knobs is None:
        return {}
    if isinstance(knobs, str):
        text = knobs.strip()
        parsed = parse_plan_name(text)
        if parsed is not None:
            return parsed[1]
        try:
            knobs = json.loads(text) if text else {}
        except ValueError:
            raise PlanError(f"knobs {text[:80]!r}: neither a plan name (eng<id>_k<n>=<v>...) nor JSON") from None
    if not isinstance(knobs, Mapping):
        raise PlanError(f"knobs must be a mapping, a plan name or JSON text, not {type(knobs).__name__}")
    out: dict[int, int] = {}
    for key, value in knobs.items():
        number = _key_number(key)
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                as_int = int(value)
            except (TypeError, ValueError):
                raise PlanError(f"knob {key}={value!r}: the value must be an integer") from None
            if as_int != value:
                raise PlanError(f"knob {key}={value!r}: the value must be an integer")
            value = as_int
        out[number] = int(value)
    return out


def _key_number(key: Any) -> int:
    member = getattr(key, "name", None)  # a frontend enum member: its NAME maps it (its value is frontend-numbered)
    if isinstance(member, str) and not isinstance(key, str):
        key = member
    elif isinstance(key, int) and not isinstance(key, bool):
        return key
    text = str(key).rsplit(".", 1)[-1].strip()  # also "knob_type.TILEK" as str() of an enum member prints
    if re.fullmatch(r"k?\d+", text):
        return int(text.lstrip("k"))
    upper = text.upper()
    if upper in BY_NAME:
        return BY_NAME[upper].number
    raise PlanError(f"knob {shorten_key(key)}: not a backend knob number (k2, 2) nor a knob name of cuDNN 9 "
                    f"({', '.join(sorted(BY_NAME))})")


def shorten_key(key: Any) -> str:
    text = str(key)
    return text if len(text) <= 40 else text[:37] + "..."


def decode(knobs: Any, version: Any = None) -> tuple[Knob, ...]:
    """Every knob setting, by backend number order, with its name in the cuDNN ``version`` (unknown ones kept)."""
    v = parse_version(version)
    out = []
    for number, value in sorted(backend_numbers(knobs).items()):
        kt = knob_type(number, v)
        out.append(Knob(number, kt.name if kt else None, value, v))
    return tuple(out)


def named(knobs: Any, version: Any = None) -> dict[str, int]:
    """``{"TILE_SIZE": 0, "TILEK": 1, ...}``; an unknown number keeps its ``k<number>`` key."""
    return {k.key: k.value for k in decode(knobs, version)}


def label(knobs: Any, version: Any = None) -> str:
    """``"TILE_SIZE=0, TILEK=1, ..."`` for tables; ``""`` for a plan without knobs."""
    return ", ".join(k.label for k in decode(knobs, version))


def safe_label(knobs: Any, version: Any = None) -> str:
    """:func:`label` that never raises (for tables over recorded data): an undecodable value is shown as it is."""
    try:
        return label(knobs, version)
    except PlanError:
        return str(knobs)


def plan_label(plan: Any, version: Any = None) -> str:
    """The knobs of a plan by its name, for tables: ``TILE_SIZE=0, TILEK=1`` for a backend plan, the bracketed
    knobs of a frontend python-engine plan (``sdpa_fwd_prefill_sm90[TILE_M=128]`` -> ``TILE_M=128``), else ''."""
    text = str(plan or "")
    parsed = parse_plan_name(text)
    if parsed is not None:
        return ", ".join(k.label for k in decode(parsed[1], version))
    m = re.search(r"\[(.*)\]$", text)
    return m[1] if m else ""


# ---------------------------------------------------------------------------------------------------- replaying
def replay_problem(knob: Knob, frontend_names: Iterable[str] | None = None) -> str:
    """Why ``knob`` cannot be passed to ``create_execution_plan`` ('' when it can)."""
    names = FRONTEND_1_32_NAMES if frontend_names is None else set(frontend_names)
    if knob.name is None:
        return (f"backend knob k{knob.number} is not a knob type of cuDNN {version_text(knob.version)}, so it "
                "has no frontend name")
    if knob.name not in names:
        return (f"backend knob k{knob.number} ({knob.name}) has no member in this frontend's cudnn.knob_type, so "
                "create_execution_plan cannot set it")
    return ""


def replayable(knobs: Any, version: Any = None, frontend_names: Iterable[str] | None = None) -> bool:
    """Whether every knob of ``knobs`` can be set through ``create_execution_plan`` of the frontend."""
    names = None if frontend_names is None else set(frontend_names)
    return not any(replay_problem(k, names) for k in decode(knobs, version))


def enum_names(knob_enum: Any) -> set[str]:
    """Member names of a frontend ``cudnn.knob_type`` enum (pybind/nanobind enums expose ``__members__``)."""
    members = getattr(knob_enum, "__members__", None)
    if isinstance(members, Mapping):
        return {str(n) for n in members}
    return {n for n in dir(knob_enum) if n.isupper()}


def frontend_knobs(knobs: Any, knob_enum: Any, version: Any = None, *, engine_id: int | None = None
                   ) -> dict[Any, int]:
    """``{cudnn.knob_type.X: value}`` for ``create_execution_plan``, mapping backend numbers to members BY NAME.

    ``knob_enum`` is ``cudnn.knob_type``. A knob the frontend cannot name raises a ``PlanError`` naming it.
    """
    names = enum_names(knob_enum)
    out: dict[Any, int] = {}
    where = f"engine {engine_id}: " if engine_id is not None else ""
    for k in decode(knobs, version):
        problem = replay_problem(k, names)
        if problem:
            raise PlanError(f"{where}{k.label} cannot be replayed: {problem}. Pick the plan from the heuristics' "
                            "list by its full name instead.")
        out[getattr(knob_enum, k.name)] = k.value  # type: ignore[arg-type]
    return out


def from_frontend(knobs: Mapping[Any, int]) -> dict[int, int]:
    """Backend numbers from a ``{cudnn.knob_type.X: value}`` dict (as ``get_engine_and_knobs_at_index`` gives).

    Lossy where the frontend reports NOT_SET (several backend knobs collapse onto it): those are left out; the plan
    name is the lossless record.
    """
    out: dict[int, int] = {}
    for key, value in knobs.items():
        name = str(getattr(key, "name", key)).rsplit(".", 1)[-1]
        if name in BY_NAME:
            out[BY_NAME[name].number] = int(value)
    return out


# ---------------------------------------------------------------------------------------------------- checking
_ENUM_RE = re.compile(r"typedef\s+enum\s*\{(?P<body>[^}]*)\}\s*cudnnBackendKnobType_t\s*;", re.S)
_MEMBER_RE = re.compile(r"CUDNN_KNOB_TYPE_(\w+)\s*(?:=\s*(\d+))?")


def parse_header(text: str) -> dict[str, int]:
    """``{"SPLIT_K": 0, ..., "COUNTS": 46}`` from a cuDNN header's ``cudnnBackendKnobType_t`` (values implicit or
    explicit; comments and deprecation macros ignored). Empty when the header has no such enum."""
    m = _ENUM_RE.search(text)
    if not m:
        return {}
    body = re.sub(r"/\*.*?\*/|//[^\n]*", "", m["body"], flags=re.S)
    out: dict[str, int] = {}
    nxt = 0
    for entry in body.split(","):
        mm = _MEMBER_RE.search(entry)
        if not mm:
            continue
        value = int(mm[2]) if mm[2] is not None else nxt
        out[mm[1]] = value
        nxt = value + 1
    return out


def check_against_header(enum: Mapping[str, int], version: Any) -> list[str]:
    """Differences between this table (for ``version``) and a header's enum; [] when they agree."""
    problems = []
    v = parse_version(version)
    members = {n: val for n, val in enum.items() if n != "COUNTS"}
    for name, value in members.items():
        kt = BY_NAME.get(name)
        if kt is None:
            problems.append(f"header has CUDNN_KNOB_TYPE_{name}={value}, the table does not")
        elif kt.number != value:
            problems.append(f"CUDNN_KNOB_TYPE_{name} is {value} in the header, {kt.number} in the table")
        elif v is not None and kt.since > v:
            problems.append(f"CUDNN_KNOB_TYPE_{name} is in the {version_text(v)} header but the table dates it "
                            f"{kt.since_text}")
    for kt in KNOB_TYPES:
        if (v is None or kt.since <= v) and kt.name not in members:
            problems.append(f"the table has {kt.name}={kt.number} for cuDNN {version_text(v)}, the header does not")
    if "COUNTS" in enum and enum["COUNTS"] != known_count(v):
        problems.append(f"COUNTS is {enum['COUNTS']} in the header, {known_count(v)} in the table")
    return problems
