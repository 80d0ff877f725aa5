"""How a run is done: one frozen, validated ``RunOptions`` shared by ``cl.run``, ``cl.sweep``, the CLI, the Lab and
the saved result (``RunResult.settings``), with one default per option.

``RunOptions.coerce`` accepts None (the defaults), a dict (as ``to_dict`` writes it) or a ``RunOptions``; keyword
overrides on top are validated the same way, so ``cl.run(spec, plans="all")`` and
``cl.run(spec, options={"plans": "all"})`` mean the same thing.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any, ClassVar

from .errors import OptionError, shorten

HEURISTIC_MODES: tuple[str, ...] = ("A", "B", "FALLBACK")
PLAN_POLICIES: tuple[str, ...] = ("all", "heuristic")
TIMING_MODES: tuple[str, ...] = ("auto", "cuda_graph", "events", "cupti")

#: What each choice means, for tooltips, the CLI's --help and the docs (one place).
PLAN_POLICY_HELP = {"all": "build, check and time every plan the heuristic modes propose",
                    "heuristic": "build and time only the heuristics' pick (what cuDNN itself would run)"}
TIMING_HELP = {"auto": "CUDA-graph replay where capture works, else events; below 10 us CUPTI kernel time, with the "
                       "replayed time kept beside it",
               "cuda_graph": "CUDA-graph replay of many captured calls (launch overhead taken out)",
               "events": "CUDA events around each call (needed for cold L2)",
               "cupti": "CUPTI kernel time: the sum of the GPU time of the kernels a plan launches"}
HEURISTIC_HELP = {"A": "the fast heuristic (a decision tree)",
                  "B": "the instance-based heuristic; may fall back to A where it has no model for the graph",
                  "FALLBACK": "engines that always support the graph, rarely the fastest"}


def _int(name: str, value: Any, lo: int, hi: int, allowed: str = "") -> int:
    """A whole number (not a bool, not a float) in [lo, hi]; OptionError naming ``name`` and ``allowed`` (default:
    the range) otherwise."""
    kind = allowed or f"an integer from {lo} to {hi}"
    if isinstance(value, bool):
        raise OptionError(name, value, f"must be {kind}, not a bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise OptionError(name, value, f"must be {kind}") from None
    if not lo <= v <= hi:
        raise OptionError(name, value, f"must be {allowed or f'from {lo} to {hi}'}")
    return v


def _float(name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise OptionError(name, value, f"must be a number from {lo} to {hi}")
    try:
        v = float(value)
    except (OverflowError, ValueError, TypeError):
        raise OptionError(name, value, f"must be a number from {lo} to {hi}") from None
    if not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo):
        op = ">" if lo_open else ">="
        raise OptionError(name, value, f"must be a finite number {op} {lo} and <= {hi}")
    return v


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise OptionError(name, value, "must be True or False")
    return value


def _same(a: Any, b: Any) -> bool:
    """Whether two spellings of one option hold the same value (same type and equal; never raises)."""
    try:
        return a is b or (type(a) is type(b) and bool(a == b))
    except Exception:  # noqa: BLE001 - a value whose == fails (an array) is not the same value
        return False


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise OptionError(name, value, f"must be one of {', '.join(allowed)}")
    return value


def check_heuristics(value: Any) -> tuple[str, ...]:
    """Heuristic modes as a tuple of unique upper-case names: 'A', ('A', 'FALLBACK'), ['b']..."""
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise OptionError("heuristics", value, f"must be one or more of {', '.join(HEURISTIC_MODES)}")
    out = []
    for m in items:
        if not isinstance(m, str) or m.upper() not in HEURISTIC_MODES:
            raise OptionError("heuristics", value, f"must be one or more of {', '.join(HEURISTIC_MODES)} "
                              f"({shorten(m, 30)} is not)")
        out.append(m.upper())
    return tuple(dict.fromkeys(out))


#: Largest SM count an option accepts before a GPU is asked (today's largest GPUs have under 200); the run refuses a
#: count above its GPU's own.
MAX_SM_COUNT = 4096
SM_COUNT_ALLOWED = "a whole number of SMs from 1 up to the GPU's SM count, or None (the whole GPU)"


def check_sm_count(value: Any, name: str = "sm_count") -> int:
    """An SM carve-out: a whole number >= 1 (not a bool, not a float); OptionError naming ``name`` otherwise."""
    return _int(name, value, 1, MAX_SM_COUNT, SM_COUNT_ALLOWED)


#: Most helper processes ``parallel_builds`` may ask for (the pool also stays within the plans and the CPU cores).
MAX_PARALLEL_BUILDS = 64
PARALLEL_BUILDS_ALLOWED = (f"'auto' (the kit decides), True (on, the kit counts the helpers), a whole number of "
                           f"helper processes from 0 (off) to {MAX_PARALLEL_BUILDS}, or False / None (off)")
#: The value of ``parallel_builds`` (and ``kernel_cache``) that lets the kit decide per run (gpu/defaults.py).
AUTO = "auto"


def check_parallel_builds(value: Any) -> int | bool | str | None:
    """``parallel_builds`` as kept: 'auto', True, a whole number from 0 to MAX_PARALLEL_BUILDS, or None; False is
    kept as 0 (off). OptionError naming the field otherwise."""
    if value is None or value is True or (isinstance(value, str) and value == AUTO):
        return value
    if value is False:
        return 0
    return _int("parallel_builds", value, 0, MAX_PARALLEL_BUILDS, PARALLEL_BUILDS_ALLOWED)


def parse_parallel_builds(text: str) -> int | bool | str:
    """A command line's ``--parallel-builds`` value: 'auto', 'on' (True), 'off' (0) or a whole number; ValueError
    (argparse's 'invalid value') otherwise."""
    word = str(text).strip().lower()
    if word in (AUTO, "on", "off"):
        return {"on": True, "off": 0}.get(word, AUTO)
    return int(word)


def check_kernel_cache(value: Any) -> bool | None:
    """``kernel_cache`` as kept: True, False or None (the kit decides; 'auto' is read as None)."""
    if value is None or isinstance(value, str) and value == AUTO:
        return None
    if not isinstance(value, bool):
        raise OptionError("kernel_cache", value, "must be True or False, or None / 'auto' (the kit decides)")
    return value


#: How an option enters a sweep point's id: always; only when not at its default (options added after sweeps were
#: first stored, so a store written before them still resumes); never (it does not change a point's numbers).
POINT_ID_RULES: tuple[str, ...] = ("always", "not_default", "never")


def _option(default: Any, flag: str, help: str, *, unit: str = "", timing: bool = False, point_id: str = "always",
            choices: tuple[str, ...] = (), default_text: str = "") -> Any:
    """A RunOptions field and what the CLI (flag, help, unit, choices), the timer (``timing``: a sampling setting
    passed to the GPU layer's timer as it is) and a sweep's point id (``point_id``: a :data:`POINT_ID_RULES`) read
    of it: one place per option. A flag ``--no-X`` turns a True default off; ``--X`` of a bool turns it on."""
    assert point_id in POINT_ID_RULES and flag.startswith("--"), (flag, point_id)
    return dataclasses.field(default=default, metadata={
        "flag": flag, "help": help, "unit": unit, "timing": timing, "point_id": point_id, "choices": choices,
        "default_text": default_text})


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Everything about *how* a spec is run; the spec says *what*. Frozen and validated on creation."""

    heuristics: tuple[str, ...] = _option(
        ("A", "FALLBACK"), "--heuristics", "heuristic modes whose proposals are listed, comma separated: "
        + "; ".join(f"{k}: {v}" for k, v in HEURISTIC_HELP.items()), choices=HEURISTIC_MODES)
    plans: str = _option("all", "--plans", "; ".join(f"{k}: {v}" for k, v in PLAN_POLICY_HELP.items()),
                         choices=PLAN_POLICIES)
    max_plans: int | None = _option(None, "--max-plans", "time at most this many proposed plans", unit="plans",
                                    default_text="all")
    timing: str = _option("auto", "--timing", "; ".join(f"{k}: {v}" for k, v in TIMING_HELP.items()),
                          choices=TIMING_MODES)
    cold_l2: bool = _option(False, "--cold-l2", "flush L2 before every timed call (events timing)", timing=True)
    time_cap_s: float = _option(0.5, "--time-cap-s", "seconds of sampling per plan before giving up on the spread "
                                "target", unit="s", timing=True)
    warmup: int = _option(3, "--warmup", "untimed calls of each plan before its samples", unit="calls", timing=True)
    min_samples: int = _option(10, "--min-samples", "samples of each plan at least", unit="samples", timing=True)
    max_samples: int = _option(200, "--max-samples", "samples of each plan at most", unit="samples", timing=True)
    rel_iqr_target: float = _option(0.10, "--rel-iqr-target", "stop sampling once IQR/median falls below this",
                                    unit="IQR/median", timing=True)
    screen_ratio: float = _option(4.0, "--screen-ratio", "a plan whose warm-up is this many times slower than the "
                                  "best plan timed before it gets a few samples only (column 'screened'); 0 samples "
                                  "every plan to the spread target", unit="x the best so far", timing=True,
                                  point_id="not_default")
    seed: int = _option(0, "--seed", "seed of the random inputs")
    device: int = _option(0, "--device", "CUDA device index", point_id="never")
    check: bool = _option(True, "--no-check", "check every plan against the float64 reference")
    baselines: bool = _option(True, "--no-baselines", "time PyTorch's own op for the same problem as a baseline")
    backends: bool = _option(False, "--backends", "also time each backend PyTorch has for the op, each forced "
                             "alone (attention: flash, memory-efficient, cuDNN through PyTorch, math; "
                             "gpu/baseline.py BACKEND_BASELINES); a backend that refuses the shape is recorded with "
                             "its reason", point_id="not_default")
    roofline: bool = _option(True, "--no-roofline", "measure (or load) the roofline ceilings and give each plan its "
                             "share")
    plan_cache: bool = _option(True, "--no-plan-cache", "keep slow-to-build plans on disk and load them in later "
                               "processes (gpu/cache.py; CUDNN_LAB_NO_CACHE=1: off)")
    remeasure_ceilings: bool = _option(False, "--remeasure-ceilings", "measure the roofline ceilings again instead "
                                       "of loading the ones kept on disk for this GPU")
    resample: bool = _option(False, "--resample", "time every plan again on a repeated run in this process (else "
                             "its earlier measurements are reused, marked)")
    kernels: bool = _option(True, "--no-kernels", "record the kernels each plan launches (CUPTI: name, count, GPU "
                            "time) and their summed time")
    notes: bool = _option(True, "--no-notes", "find each plan's numerical notes (tensor cores, TF32, FFT, ...) and "
                          "check it runs deterministically")
    explore: int = _option(0, "--explore", "engine configurations to sample beyond the heuristics' proposals, each "
                           "built, checked and timed (0: none)", unit="configurations")
    explore_time_s: float = _option(60.0, "--explore-time-s", "seconds the exploration may take; configurations not "
                                    "reached by then are listed as not tried", unit="s")
    sm_count: int | None = _option(
        None, "--sm-count", "run the graph on this many SMs (``cudnn.pygraph(sm_count=N)``, an SM carve-out). Only "
        "the compute share shrinks (memory bandwidth and L2 stay the whole GPU's); refused above the GPU's SM count "
        "and for families that run through a classic cuDNN call (those run on the whole GPU)", unit="SMs",
        point_id="not_default", default_text="the whole GPU")
    kernel_cache: bool | None = _option(
        None, "--kernel-cache", "give the graphs cuDNN's kernel cache (``cudnn.create_kernel_cache()``), kept in the "
        "process and on disk beside the plan cache: shapes sharing a runtime-compiled kernel build in milliseconds, "
        "but the heuristics' pick may change (the run records the pick without it); None ('auto'): the kit decides "
        "(settings['decisions'] says what and why)", point_id="not_default",
        default_text="auto: on for sweeps over one dimension, off for a single run")
    parallel_builds: int | bool | str | None = _option(
        AUTO, "--parallel-builds", "build the proposed plans in warm helper processes on the same GPU while the run "
        "goes on (gpu/parallel_build.py), handed over through the plan cache and checked like any cached plan: "
        "'auto' where it pays (several plans to build, cores to spare), True on, a number of helpers, 0 off",
        unit="helper processes", point_id="never",
        default_text="auto: on where a run has plans to build and the host has cores to spare")

    #: Option names accepted by older keyword spellings.
    ALIASES: ClassVar[dict[str, str]] = {"torch_baseline": "baselines", "device_index": "device"}

    def __post_init__(self) -> None:
        s = object.__setattr__
        s(self, "heuristics", check_heuristics(self.heuristics))
        s(self, "plans", _choice("plans", self.plans, PLAN_POLICIES))
        if self.max_plans is not None:
            s(self, "max_plans", _int("max_plans", self.max_plans, 1, 100_000))
        s(self, "timing", _choice("timing", self.timing, TIMING_MODES))
        s(self, "cold_l2", _bool("cold_l2", self.cold_l2))
        if self.cold_l2 and self.timing == "cuda_graph":
            raise OptionError("cold_l2", True, "needs timing 'events' or 'auto' (a captured graph cannot flush L2 "
                              "between calls)")
        s(self, "time_cap_s", _float("time_cap_s", self.time_cap_s, 0.0, 600.0, lo_open=True))
        s(self, "warmup", _int("warmup", self.warmup, 0, 1000))
        s(self, "min_samples", _int("min_samples", self.min_samples, 3, 100_000))
        s(self, "max_samples", _int("max_samples", self.max_samples, 3, 100_000))
        if self.max_samples < self.min_samples:
            raise OptionError("max_samples", self.max_samples, f"must be >= min_samples ({self.min_samples})")
        s(self, "rel_iqr_target", _float("rel_iqr_target", self.rel_iqr_target, 0.0, 1.0, lo_open=True))
        s(self, "screen_ratio", _float("screen_ratio", self.screen_ratio, 0.0, 1e6))
        if 0 < self.screen_ratio < 1:
            raise OptionError("screen_ratio", self.screen_ratio, "must be 0 (off) or 1 or more (a plan is screened "
                              "when it is that many times slower than the best so far)")
        s(self, "seed", _int("seed", self.seed, 0, 2**63 - 1))
        s(self, "device", _int("device", self.device, 0, 1023))
        for name in ("check", "baselines", "backends", "roofline", "plan_cache", "remeasure_ceilings", "resample"):
            s(self, name, _bool(name, getattr(self, name)))
        for name in ("kernels", "notes"):
            s(self, name, _bool(name, getattr(self, name)))
        if self.backends and not self.baselines:
            raise OptionError("backends", True, "needs baselines=True (the backends are timed with PyTorch's "
                              "baseline); pass baselines=True or backends=False")
        s(self, "explore", _int("explore", self.explore, 0, 100_000))
        s(self, "explore_time_s", _float("explore_time_s", self.explore_time_s, 0.0, 86_400.0, lo_open=True))
        s(self, "kernel_cache", check_kernel_cache(self.kernel_cache))
        s(self, "parallel_builds", check_parallel_builds(self.parallel_builds))
        if self.sm_count is not None:
            s(self, "sm_count", check_sm_count(self.sm_count))
            if self.explore:
                raise OptionError("sm_count", self.sm_count, "cannot be combined with explore: the explored "
                                  "configurations are built for the whole GPU; pass explore=0 with a carve-out")

    # ------------------------------------------------------------------ construction
    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, data: Any) -> RunOptions:
        """Inverse of :meth:`to_dict`; unknown keys are an error naming them, missing ones take defaults."""
        if not isinstance(data, dict):
            raise OptionError("options", data, "must be a dict of run options, a RunOptions or None")
        clean: dict[str, Any] = {}
        for name, value in cls._unaliased(data).items():
            if name not in cls.names():
                raise OptionError(str(name)[:40], value,
                                  f"is not a run option; options are {', '.join(cls.names())}")
            clean[name] = tuple(value) if name == "heuristics" and isinstance(value, list) else value
        return cls(**clean)

    @classmethod
    def _unaliased(cls, given: dict[Any, Any]) -> dict[Any, Any]:
        """``given`` with older spellings (torch_baseline, device_index) under their option's name; two spellings
        of one option with different values are refused naming both (which one wins would be a guess)."""
        out: dict[Any, Any] = {}
        spelled: dict[Any, Any] = {}
        for key, value in given.items():
            name = cls.ALIASES.get(key, key) if isinstance(key, str) else key
            if name in out and not _same(out[name], value):
                raise OptionError(name, value, f"is given twice, as {spelled[name]}={shorten(out[name], 30)} and "
                                  f"{key}={shorten(value, 30)}, which disagree; give only {name}")
            out[name], spelled[name] = value, key
        return out

    @classmethod
    def coerce(cls, options: Any = None, **overrides: Any) -> RunOptions:
        """None, a dict or a RunOptions -> RunOptions, with keyword overrides applied and validated."""
        if options is None:
            base = cls()
        elif isinstance(options, cls):
            base = options
        elif isinstance(options, dict):
            base = cls.from_dict(options)
        else:
            raise OptionError("options", options, "must be a RunOptions, a dict of run options or None")
        return base.replace(**overrides) if overrides else base

    def replace(self, **changes: Any) -> RunOptions:
        """A validated copy with some options changed (older spellings such as torch_baseline accepted)."""
        if not changes:
            return self
        merged = self.to_dict()
        for name, value in self._unaliased(changes).items():
            if name not in self.names():
                raise OptionError(name, value, f"is not a run option; options are {', '.join(self.names())}")
            merged[name] = value
        return type(self).from_dict(merged)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (lists for tuples)."""
        out = dataclasses.asdict(self)
        out["heuristics"] = list(self.heuristics)
        return out

    # ------------------------------------------------------------------ views for the layers below
    @property
    def timing_mode(self) -> str:
        """What the timer does: cold L2 needs events, whatever 'auto' would pick."""
        return "events" if self.cold_l2 and self.timing == "auto" else self.timing


def option_info(name: str) -> dict[str, Any]:
    """What the CLI, the timer and a sweep's point id read of one RunOptions field (see :func:`_option`), with its
    name and default: the one table of the options' vocabulary."""
    for f in dataclasses.fields(RunOptions):
        if f.name == name:
            return {"name": f.name, "default": f.default, **f.metadata}
    raise OptionError(name, name, f"is not a run option; options are {', '.join(RunOptions.names())}")


def options_where(key: str, value: Any) -> tuple[str, ...]:
    """The RunOptions fields whose metadata ``key`` is ``value``, in field order (e.g. the timing settings)."""
    return tuple(f.name for f in dataclasses.fields(RunOptions) if f.metadata[key] == value)


#: The sampling settings a run passes to the GPU layer's timer as they are (its mode is :attr:`RunOptions.timing_mode`).
TIMING_SETTINGS: tuple[str, ...] = options_where("timing", True)
