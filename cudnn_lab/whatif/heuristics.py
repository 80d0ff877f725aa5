"""What-if on GPUs and cuDNN versions you do not have: ask cuDNN itself, not a model.

``plans_for(spec, target=...)`` returns the plans cuDNN's heuristics propose for a target GPU (cuDNN's deviceless
API), under an SM carve-out, or under another cuDNN library folder; ``compare`` lays several targets side by side
by engine; ``drift`` diffs two cuDNN versions. On a GPU host the questions go to a worker process
(:mod:`cudnn_lab.gpu.asker`); elsewhere the answers recorded on the kit's H100/H200 rounds are read
(``cudnn_lab/data/whatif``). Every answer is labelled "cuDNN's heuristics' answer, not a measurement".
"""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import NoGPUError, OptionError, shorten
from ..options import check_sm_count
from ..provenance import cudnn_version_text
from ..specs import Spec
from .devices import Target, as_target
from ..gpu.reasons import reasons_frame, summarize
from ..results.datasets import dataset_prefix
from ..results.loading import spec_from_data
from . import checks
from .devices import check_description, today
from ..results import recordings
from ..results.labels import ANSWER_LABEL, DEVICELESS_LIMIT
from ..results.run import RunResult
from ..results.paths import check_output_path

__all__ = ["ask", "WhatIf", "plans_for", "profile", "compare", "drift", "Drift",
           "recorded_whatifs", "ANSWER_LABEL", "WHATIF_DIR"]

WHATIF_DIR = Path(__file__).resolve().parents[1] / "data" / "whatif"
FORMAT = "cudnn-lab what-if"
MODES = ("A", "B", "FALLBACK")
#: Largest recorded what-if file the kit reads.
MAX_WHATIF_BYTES = 64 * 2**20


@dataclasses.dataclass(frozen=True)
class WhatIf(checks.Answer):
    """cuDNN's answer for one spec on one target: ``proposals`` (plan dicts: plan, engine_id, knobs,
    behavior_notes, ranks) or, when it gave none, ``refused`` ("declined", "crashed", "timeout") with its message and
    cuDNN's per-engine reasons in ``detail``. ``source`` says where the answer was asked (or recorded)."""

    spec: Spec
    target: str
    target_label: str
    synthetic: bool
    cudnn_version: int
    source: str
    proposals: tuple[dict[str, Any], ...] = ()
    refused: str = ""
    message: str = ""
    detail: str = ""
    sm_count: int | None = None

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def engines(self) -> list[int]:
        return list(dict.fromkeys(int(p["engine_id"]) for p in self.proposals))

    def frame(self) -> Any:
        """One row per plan: rank per heuristic mode, engine, knobs, behaviour notes, runtime-compiled or not."""
        import pandas as pd

        rows = []
        for p in self.proposals:
            notes = list(p.get("behavior_notes", []))
            rows.append({"plan": p["plan"], "engine_id": int(p["engine_id"]),
                         **{f"rank_{m}": p.get("ranks", {}).get(m) for m in MODES},
                         "knobs": ", ".join(f"{k}={v}" for k, v in p.get("knobs", {}).items()),
                         "behavior_notes": ", ".join(notes),
                         "runtime_compiled": "RUNTIME_COMPILATION" in notes})
        frame = pd.DataFrame(rows, columns=["plan", "engine_id", *(f"rank_{m}" for m in MODES), "knobs",
                                            "behavior_notes", "runtime_compiled"])
        for m in MODES:
            frame[f"rank_{m}"] = frame[f"rank_{m}"].astype("Int64")
        return frame

    def reasons(self) -> Any:
        """cuDNN's per-engine reasons for what it refused (empty when it proposed plans)."""
        return reasons_frame(self.detail)

    def summary(self) -> str:
        """One or two sentences: what cuDNN answered, where, and that it is not a measurement."""
        where = f"{self.target_label}, cuDNN {cudnn_version_text(self.cudnn_version)}"
        if self.sm_count:
            where += f", {self.sm_count} SMs"
        if self.ok:
            limit = f" {DEVICELESS_LIMIT}" if self.target != "this GPU" else ""
            return (f"{len(self.proposals)} plans of {len(self.engines)} engines on {where} "
                    f"({ANSWER_LABEL}; {self.source}).{limit}")
        why = summarize(self.detail) if self.refused == "declined" else ""
        first = next((line for line in self.message.splitlines() if line.strip()), "")[:300]
        said = first or f"cuDNN gave no plan ({self.refused or 'no message'})"
        return f"No plan on {where}: {said} {why}".strip() + f" ({self.source})."

    @classmethod
    def from_dict(cls, data: Any, source: Any = "what-if") -> WhatIf:
        """Inverse of :meth:`to_dict`: every field checked by meaning (DataError naming ``source`` and the field;
        no raw error for a damaged answer)."""
        data = checks.record(source, data, "what-if answer", ANSWER_FIELDS,
                             ("spec", "target", "target_label", "synthetic", "cudnn_version", "source"))
        refused = checks.refusal(source, data)
        proposals = data.get("proposals", [])
        if not isinstance(proposals, list) or len(proposals) > 10_000:
            raise checks.fail(source, "proposals", f"must be a list of plans, not {shorten(proposals, 40)}")
        if refused and proposals:
            raise checks.fail(source, "proposals", f"an answer refused ({refused}) holds no plans")
        return cls(spec=spec_from_data(data["spec"], source, "spec"),
                   target=checks.text(source, "target", data["target"], limit=64, empty=False),
                   target_label=checks.text(source, "target_label", data["target_label"], limit=300, empty=False),
                   synthetic=checks.flag(source, "synthetic", data["synthetic"]),
                   cudnn_version=checks.cudnn_version(source, "cudnn_version", data["cudnn_version"]),
                   source=checks.text(source, "source", data["source"], limit=300),
                   proposals=tuple(checks.proposal(p, source, f"proposals[{i}]") for i, p in enumerate(proposals)),
                   refused=str(refused), message=checks.text(source, "message", data.get("message", ""), limit=4000),
                   detail=checks.text(source, "detail", data.get("detail", ""), limit=200_000),
                   sm_count=checks.whole(source, "sm_count", data.get("sm_count"), 1, 1024, null=True))


#: The fields of a what-if answer (its to_dict keys).
ANSWER_FIELDS = tuple(f.name for f in dataclasses.fields(WhatIf))




# ------------------------------------------------------------------------------------------------ recordings

def load_whatifs(path: Path) -> tuple[WhatIf, ...]:
    """The answers of one recorded what-if file, every field checked (DataError naming the file and field); the card
    in use when they were recorded is named, not called "this GPU" (:func:`..results.labels.recorded_label`)."""
    return checks.answers_file(path, WhatIf.from_dict, what="recorded what-if", fmt=FORMAT, limit=MAX_WHATIF_BYTES)


#: The recorded answers of cuDNN's heuristics, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="whatif", folder=WHATIF_DIR, suffix=".json", max_bytes=MAX_WHATIF_BYTES, load=load_whatifs,
    title="recorded what-if JSON"))


def recorded_whatifs() -> list[WhatIf]:
    """Every answer recorded on the kit's GPU rounds (``cudnn_lab/data/whatif/*.json``), files checked on read."""
    return [w for answers in recordings.read(RECORDING.name, WHATIF_DIR) for w in answers]


def _recorded_for(spec: Spec, name: str, sm_count: int | None) -> list[WhatIf]:
    """The recorded answers for ``spec`` on the target called ``name`` at ``sm_count`` SMs (None: the whole GPU)."""
    return [w for w in recorded_whatifs() if w.spec == spec and w.target == name and w.sm_count == sm_count]


def _recorded_answer(spec: Spec, tgt: Target | None, sm_count: int | None) -> WhatIf | None:
    """The recorded answer for this spec and target: the same description (label) first, else the same name; for
    a recorded GPU only its cuDNN version's."""
    fits = [w for w in _recorded_for(spec, tgt.name if tgt else "this GPU", sm_count)
            if tgt is None or tgt.origin != "recorded" or w.cudnn_version == tgt.cudnn_version]
    exact = [w for w in fits if tgt is not None and w.target_label == tgt.label]
    return max(exact or fits, key=lambda w: w.cudnn_version) if fits else None


#: What an answer of another spec must share to stand in for a spec with no recorded answer (issue 39).
NEAREST_SAME = ("op", "direction", "dtype", "b_dtype", "out_dtype", "layout", "transpose_a", "transpose_b", "kind",
                "phase")
NEAREST_RULE = ("nearest: the same family, direction, dtype and layout (and for GEMMs transposes, for norms kind "
                "and phase), on the same target and SM count; then the same epilogue first; then the closest FLOPs "
                "by |log ratio|, then the closest sizes by the summed |log ratio| of the shape fields; never across "
                "families")


def nearest_recorded(spec: Spec, tgt: Target | None, sm_count: int | None) -> WhatIf | None:
    """The recorded answer of the spec nearest ``spec`` by :data:`NEAREST_RULE` (None when none of its kind was
    recorded for that target), its ``source`` saying "nearest recorded answer: <spec label> (...)": without a GPU a
    spec not recorded still gets cuDNN's answer for its closest recorded relative, never a made-up one."""
    def kind(s: Spec) -> tuple[Any, ...]:
        return tuple(str(getattr(s, f, None)) for f in NEAREST_SAME)

    def sizes(s: Spec) -> dict[str, float]:
        return {k: float(v) for k, v in s.to_dict().items()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0}

    def gap(a: float, b: float) -> float:
        return abs(math.log(max(a, 1.0) / max(b, 1.0)))

    name = tgt.name if tgt else "this GPU"
    mine, shape = kind(spec), sizes(spec)
    relatives = {w.spec for w in recorded_whatifs()
                 if w.target == name and w.sm_count == sm_count and kind(w.spec) == mine and w.spec != spec
                 and (tgt is None or tgt.origin != "recorded" or w.cudnn_version == tgt.cudnn_version)}
    if not relatives:
        return None

    def distance(s: Spec) -> tuple[bool, float, float, str]:
        other = sizes(s)
        return (getattr(s, "epilogue", None) != getattr(spec, "epilogue", None), gap(s.flops(), spec.flops()),
                sum(gap(other[k], v) for k, v in shape.items() if k in other), s.label())

    near = min(relatives, key=distance)
    found = _recorded_answer(near, tgt, sm_count)
    if found is None:
        return None
    ratio = near.flops() / max(spec.flops(), 1)
    why = (f"nearest recorded answer: {near.label()} (same family, direction, dtype and layout; "
           f"{ratio:.3g}x the FLOPs of {spec.label()})")
    return dataclasses.replace(found, source=f"{why}; {found.source}"[:300])


# ------------------------------------------------------------------------------------------------ asking

def _within_gpu(sm_count: int | None, target: Target | None, card: dict[str, Any] | None) -> int | None:
    """``sm_count`` (checked by :func:`~cudnn_lab.options.check_sm_count`) if the GPU asked about has that many."""
    total = target.sm_count if target else (card or {}).get("multiProcessorCount")
    if sm_count is not None and total and sm_count > total:
        raise OptionError("sm_count", sm_count, f"1-{total} (the GPU's SM count)")
    return sm_count


def _started(cudnn_lib: Any) -> Any:
    """The warm worker for ``cudnn_lib``, started; NoGPUError where that cuDNN cannot be loaded."""
    from ..gpu.asker import asker  # heavy: imports graphviz

    worker = asker(cudnn_lib)
    try:
        worker.ensure_started()
    except OptionError as e:
        raise NoGPUError(f"cuDNN cannot be loaded on this machine ({e})") from None
    return worker


def start_asking() -> threading.Thread:
    """Start the worker :func:`plans_for` asks (this process's cuDNN) in a thread and return at once, so its start (a
    process loading cuDNN: 0.3 s on the 2-core machine, where it fails for want of a driver) overlaps the caller's
    other work; the first question waits for it. A start that fails is remembered and said by that question."""
    def start() -> None:
        try:
            _started(None)
        except Exception:  # noqa: BLE001 - said by the question that needs the worker (it starts it again or
            pass           # raises the failure the asker remembered)

    thread = threading.Thread(target=start, name="cudnn_lab asker start", daemon=True)
    thread.start()
    return thread


def plans_for(spec: Spec, target: Any = None, *, cudnn_lib: Any = None, sm_count: int | None = None,
              modes: Iterable[str] = MODES, recorded: bool | None = None) -> WhatIf:
    """The plans cuDNN's heuristics propose for ``spec`` on ``target`` (None: this GPU; a name such as ``h100`` or
    ``sm100``, a Target, or a target file), optionally on ``sm_count`` SMs or under the cuDNN in ``cudnn_lib``.

    Nothing is built or run. ``recorded=None`` asks cuDNN where it can be loaded and otherwise reads the answers
    recorded on the kit's GPU rounds; True reads recordings only, False asks only.
    """
    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.ConvSpec(...))")
    modes = tuple(modes)
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise OptionError("modes", modes, "one or more of " + ", ".join(MODES))
    if not isinstance(recorded, (bool, type(None))):
        raise OptionError("recorded", recorded, "None (ask cuDNN where it loads, else read the recordings), True "
                          "(recordings only) or False (ask only)", where="plans_for")
    if sm_count is not None:
        sm_count = check_sm_count(sm_count)
    tgt = as_target(target)
    name = tgt.name if tgt else "this GPU"
    if tgt is not None and sm_count is not None and sm_count > tgt.sm_count:
        raise OptionError("sm_count", sm_count, f"1-{tgt.sm_count} ({tgt.name} has {tgt.sm_count} SMs)",
                          where="plans_for")
    if recorded is not True:
        try:
            return _ask(cudnn_lib, spec, tgt, sm_count, modes)
        except NoGPUError:
            if recorded is False:
                raise
    if cudnn_lib is not None:
        raise NoGPUError("another cuDNN can be asked only on a machine whose NVIDIA driver loads it; no recorded "
                         "answer is kept per library folder")
    found = (_recorded_answer(spec, tgt, sm_count) or nearest_recorded(spec, tgt, sm_count)
             if tgt is None or tgt.origin != "file" else None)
    if found is None:
        names = sorted({w.spec.label() for w in recorded_whatifs()})
        raise NoGPUError(f"cuDNN cannot be asked on this machine (its library needs the NVIDIA driver), and no "
                         f"answer for {name} was recorded for this spec nor for one of its kind ({NEAREST_RULE}); "
                         f"recorded specs: {shorten(names, 300)}")
    return found


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = plans_for


def _ask(cudnn_lib: Any, spec: Spec, tgt: Target | None, sm_count: int | None, modes: tuple[str, ...]) -> WhatIf:
    from ..gpu.asker import Refusal  # heavy: imports graphviz

    asker = _started(cudnn_lib)
    if tgt is None and asker.card is None:
        raise NoGPUError("no GPU is visible to ask about; name a target (cl.targets())")
    if tgt is not None:
        check_description(tgt.description, f"target {tgt.name}", cudnn_version=asker.cudnn_version)
    sm = _within_gpu(sm_count, tgt, asker.card)
    reply = asker.ask(spec, description=None if tgt is None else tgt.description, sm_count=sm, modes=modes)
    card_name = (asker.card or {}).get("deviceName", "this GPU")
    common = WhatIf(spec=spec, target=tgt.name if tgt else "this GPU",
                    target_label=tgt.label if tgt else f"{card_name} (this GPU)",
                    synthetic=bool(tgt and tgt.origin == "synthetic"), cudnn_version=int(asker.cudnn_version or 0),
                    source=f"asked here, on a host with {card_name}" if asker.card else "asked here", sm_count=sm)
    if isinstance(reply, Refusal):
        return dataclasses.replace(common, refused=reply.kind, message=reply.message, detail=reply.detail)
    return dataclasses.replace(common, proposals=tuple(p.to_dict() for p in reply.proposals))


def profile(path: Any = None) -> Target:
    """This GPU as a target: its description as cuDNN serializes it, saved to ``path`` when given (send the file to
    a colleague: ``cl.plans_for(spec, target="mygpu.json")``). NoGPUError without a GPU."""
    if path is not None:
        check_output_path(path, what="target JSON", suffixes=(".json",))
    asker = _started(None)
    if asker.card is None:
        raise NoGPUError("no GPU is visible to describe")
    name = str(asker.card.get("deviceName", "gpu"))

    tgt = Target(name=dataset_prefix(name), description=dict(asker.card), origin="file",
                 cudnn_version=int(asker.cudnn_version), created=today())
    if path is not None:
        tgt.save(path)
    return tgt


# ------------------------------------------------------------------------------------------------ side by side

def _check_options(kwargs: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """OptionError naming the first keyword ``where`` does not take (not Python's raw TypeError)."""
    for name, value in kwargs.items():
        if name not in allowed:
            raise OptionError(name, value, f"is no option of {where}; its options: {', '.join(allowed)}",
                              where=where)


def _target_key(tgt: Target | None) -> tuple[Any, ...]:
    """What makes two targets the same: this GPU, or the same name, origin, cuDNN and description."""
    if tgt is None:
        return ("this GPU",)
    return (tgt.name, tgt.origin, tgt.cudnn_version, tuple(sorted((k, str(v)) for k, v in tgt.description.items())))


def distinct_targets(targets: Any) -> list[Target | None]:
    """``targets`` (one target or an iterable of them: names, compute capabilities, Targets, files, None for this
    GPU) resolved as the kit names them, each once in first-named order; OptionError naming ``targets`` otherwise
    (two different targets of one name included: their columns would merge)."""
    allowed = ("one target or a list of them: target names (cl.targets()), compute capabilities such as 10.0, "
               "Targets, target files, or None for this GPU")
    if targets is None:
        raise OptionError("targets", targets, allowed)
    if isinstance(targets, (str, Path, Target, dict)):
        targets = [targets]
    try:
        items = list(targets)
    except TypeError:
        raise OptionError("targets", targets, allowed) from None
    if not items or len(items) > 64:
        raise OptionError("targets", targets, f"{allowed}; 1-64 of them")
    found: dict[str, tuple[tuple[Any, ...], Target | None]] = {}
    for item in items:
        try:
            tgt = as_target(item)
        except OptionError as e:
            raise OptionError("targets", item, e.allowed) from None
        name = tgt.name if tgt else "this GPU"
        key = _target_key(tgt)
        if name in found and found[name][0] != key:
            raise OptionError("targets", item, f"two different targets are called {name}: name each once")
        found.setdefault(name, (key, tgt))
    return [tgt for _, tgt in found.values()]


def _check_measured(measured: Any, spec: Spec) -> None:
    """``measured`` must be a run of ``spec`` (its times are set beside the answers for it)."""
    if not isinstance(measured, RunResult):
        raise OptionError("measured", measured, "a RunResult of this spec (cl.run(spec) or cl.load_results(...))",
                          where="compare")
    if measured.spec != spec:
        raise OptionError("measured", measured.spec.label(), f"a run of the spec compared ({spec.label()}), not of "
                          "another problem", where="compare")
    if "engine_id" not in measured.plans or "median_ms" not in measured.plans:
        raise OptionError("measured", measured.spec.label(), "a run whose plan table has engine_id and median_ms",
                          where="compare")


class SharedAnswers(tuple[Any, ...]):
    """The answers a :func:`compare` frame holds in ``attrs["answers"]``: frozen records, shared by every frame pandas
    derives from it instead of copied (pandas deep-copies ``attrs`` at each step: 230,000 copies of their plan
    dicts for one report's tables, issue 39); the recorded ones are the registry's cached records anyway."""

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedAnswers:
        return self


def compare(spec: Spec, targets: Iterable[Any] = ("h100", "h200", "sm80", "sm89", "sm100", "sm120"), *,
            measured: Any = None, **kwargs: Any) -> Any:
    """Several targets side by side, one row per engine: per target how many of the engine's plans were proposed
    (``<target> plans``) and their best rank in any mode (``<target> rank``); blank where the engine does not appear.
    ``attrs`` hold each target's label, the refusals' summaries and the answers. ``measured`` (a RunResult of this
    spec) adds the best measured time of each engine on that GPU. Each target is asked once, however often or
    however spelt it is named (``h100``/``H100``, ``sm90``/``9.0``); ``kwargs`` are :func:`plans_for`'s options."""
    import pandas as pd

    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.ConvSpec(...))", where="compare")
    _check_options(kwargs, ("cudnn_lib", "sm_count", "modes", "recorded"), "compare")
    asked = distinct_targets(targets)
    if measured is not None:
        _check_measured(measured, spec)
    answers = [plans_for(spec, t, **kwargs) for t in asked]
    engines: dict[int, dict[str, Any]] = {}
    for w in answers:
        for p in w.proposals:
            row = engines.setdefault(int(p["engine_id"]), {"engine_id": int(p["engine_id"])})
            rank = min(p.get("ranks", {}).values(), default=None)
            key = w.target
            row[f"{key} plans"] = row.get(f"{key} plans", 0) + 1
            best = row.get(f"{key} rank")
            row[f"{key} rank"] = rank if best is None or (rank is not None and rank < best) else best
    frame = pd.DataFrame(list(engines.values()))
    if frame.empty:
        frame = pd.DataFrame(columns=["engine_id"])
    for w in answers:  # a target with no plan keeps its columns (empty), its reason is in attrs["refused"]
        for col in (f"{w.target} plans", f"{w.target} rank"):
            if col not in frame:
                frame[col] = None
    order = ["engine_id"] + [f"{w.target} {k}" for w in answers for k in ("plans", "rank")]
    frame = frame[list(dict.fromkeys(order))]
    for col in order[1:]:
        frame[col] = frame[col].astype("Int64")
    if measured is not None and not frame.empty:
        plans = measured.plans
        ok = plans[plans["median_ms"].notna()] if "median_ms" in plans else plans.iloc[0:0]
        best = ok.groupby("engine_id")["median_ms"].min()
        frame[f"measured on {measured.device.get('gpu', 'this GPU')}: best ms"] = frame["engine_id"].map(best)
    frame.attrs["answers"] = SharedAnswers(answers)
    frame.attrs["labels"] = {w.target: w.target_label for w in answers}
    frame.attrs["refused"] = {w.target: w.summary() for w in answers if not w.ok}
    frame.attrs["label"] = ANSWER_LABEL
    return frame.sort_values("engine_id").reset_index(drop=True) if not frame.empty else frame


@dataclasses.dataclass(frozen=True)
class Drift:
    """Two cuDNN versions' answers for one spec and target: plans each alone proposes, ranks that moved and
    whether the heuristics' first choice changed."""

    old: WhatIf
    new: WhatIf

    def __post_init__(self) -> None:
        checks.old_and_new(self, WhatIf, "a WhatIf (cl.plans_for's answer)")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the two answers' own dicts (:meth:`WhatIf.to_dict`)."""
        return {"old": self.old.to_dict(), "new": self.new.to_dict()}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "drift") -> Drift:
        """Inverse of :meth:`to_dict`: an object holding exactly ``old`` and ``new``, each a what-if answer checked by
        :meth:`WhatIf.from_dict` (DataError naming ``source`` and the field)."""
        data = checks.record(source, data, "drift", ("old", "new"), ("old", "new"))
        return cls(WhatIf.from_dict(data["old"], f"{source}: field old"),
                   WhatIf.from_dict(data["new"], f"{source}: field new"))

    def frame(self) -> Any:
        """One row per plan (a plan is its engine and knobs, however its name is spelt): in which version, its
        rank in mode A in each."""
        import pandas as pd

        a = {_identity(p): p for p in self.old.proposals}
        b = {_identity(p): p for p in self.new.proposals}
        va, vb = cudnn_version_text(self.old.cudnn_version), cudnn_version_text(self.new.cudnn_version)
        rows = []
        for key in list(dict.fromkeys([*a, *b])):
            ra, rb = (a.get(key, {}).get("ranks", {}).get("A"), b.get(key, {}).get("ranks", {}).get("A"))
            state = "both" if key in a and key in b else f"only {va}" if key in a else f"only {vb}"
            p = b.get(key) or a[key]
            rows.append({"plan": p["plan"], "engine_id": p["engine_id"], "in": state,
                         f"rank A ({va})": ra, f"rank A ({vb})": rb})
        return pd.DataFrame(rows, columns=["plan", "engine_id", "in", f"rank A ({va})", f"rank A ({vb})"])

    @staticmethod
    def first_choice(w: WhatIf) -> Any:
        """The plan cuDNN's heuristics rank first in mode A (its identity: engine and knobs), or None."""
        ranked = [p for p in w.proposals if "A" in p.get("ranks", {})]
        return _identity(min(ranked, key=lambda p: p["ranks"]["A"])) if ranked else None

    @property
    def first_choice_changed(self) -> bool:
        """True when the two versions' first choices (mode A) are different plans (by engine and knobs)."""
        return bool(self.first_choice(self.old) != self.first_choice(self.new))

    def summary(self) -> str:
        """One sentence: plans in each version, how many in both, and whether the first choice changed."""
        f = self.frame()
        if f.empty:
            return "Neither version proposed a plan."
        both = int((f["in"] == "both").sum())
        va, vb = cudnn_version_text(self.old.cudnn_version), cudnn_version_text(self.new.cudnn_version)
        return (f"cuDNN {va}: {len(self.old.proposals)} plans, cuDNN {vb}: {len(self.new.proposals)} plans, "
                f"{both} in both; the heuristics' "
                f"first choice {'changed' if self.first_choice_changed else 'is the same'} ({ANSWER_LABEL}).")


def _identity(p: dict[str, Any]) -> Any:
    """A proposed plan's identity: its engine and knobs (checks.plan_identity)."""
    return checks.plan_identity(p.get("plan"), p.get("engine_id"), p.get("knobs"))


def drift(spec: Spec, other: Any, target: Any = None, **kwargs: Any) -> Drift:
    """The answers of the cuDNN in ``other`` (a library folder; or a recorded cuDNN version number such as 91400)
    and the cuDNN in use, side by side, for one ``target`` (None: this GPU); ``kwargs``: sm_count, modes."""
    if not isinstance(spec, Spec):
        raise OptionError("spec", spec, "a cudnn_lab spec (e.g. cl.ConvSpec(...))", where="drift")
    if other is None or isinstance(other, bool):
        raise OptionError("other", other, "a cuDNN library folder, or a recorded cuDNN version number such as 91400",
                          where="drift")
    _check_options(kwargs, ("sm_count", "modes"), "drift")
    if not isinstance(target, (str, Path, Target, dict)) and target is not None:
        raise OptionError("target", target, "one target (a name, a compute capability, a Target or a target file) "
                          "or None (this GPU)", where="drift")
    if isinstance(other, int):
        sm = kwargs.get("sm_count")
        sm = None if sm is None else check_sm_count(sm)
        old = _recorded_drift(spec, target, other, sm_count=sm)
        new = _recorded_drift(spec, target, None, exclude=other, sm_count=sm)
        return Drift(old, new) if old.cudnn_version <= new.cudnn_version else Drift(new, old)
    a = plans_for(spec, target, cudnn_lib=other, recorded=False, **kwargs)
    b = plans_for(spec, target, recorded=False, **kwargs)
    return Drift(a, b) if a.cudnn_version <= b.cudnn_version else Drift(b, a)


def _recorded_drift(spec: Spec, target: Any, version: int | None, exclude: int | None = None,
                    sm_count: int | None = None) -> WhatIf:
    tgt = as_target(target)
    name = tgt.name if tgt else "this GPU"
    fits = [w for w in _recorded_for(spec, name, sm_count)
            if (version is None or w.cudnn_version == version) and w.cudnn_version != exclude]
    if not fits:
        which = cudnn_version_text(version) if version else "in use"
        raise NoGPUError(f"no recorded answer of cuDNN {which} for {name} and this "
                         "spec; on a GPU host pass a cuDNN library folder instead")
    return max(fits, key=lambda w: w.cudnn_version)
