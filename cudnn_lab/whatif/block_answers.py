"""cuDNN's own answer to which engines would run a block-scaled (MXFP8, NVFP4) graph on a compute capability 10.x
target: asked devicelessly in a worker process (cuDNN 9.19 has crashed answering CC 10.x convolutions), or read from
the answers recorded on the kit's GPU rounds (``data/whatif/block_scale/``), labelled with device, date and cuDNN
version. The emulated error of the formats is :mod:`cudnn_lab.whatif.block_formats`; both are one what-if question.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..errors import NoGPUError, OptionError, WorkerError, shorten
from ..reference.block_formats import BLOCK_FORMATS, BlockFormat, block_format
from ..specs import ConvSpec, MatmulSpec, Spec, spec_from_dict
from ..results.loading import spec_from_data
from .devices import as_target, check_description, today
from ..results.datasets import dataset_prefix
from ..results.paths import check_output_path, write_text
from ..gpu.workers import call_once
from ..graph.block_scale import block_scaled_graph as graph_block_scaled
from ..provenance import cudnn_version_text
from ..results import recordings
from ..results.labels import ANSWER_LABEL
from . import checks


def _check_spec(spec: Any, where: str) -> Spec:
    """``spec`` if it is a spec with a block-scaled product (a matmul or an fprop conv); OptionError naming ``spec``
    otherwise (None included: no AttributeError)."""
    if not isinstance(spec, Spec) or getattr(spec, "block_scale_axis", None) is None:
        raise OptionError("spec", spec, "a cl.MatmulSpec or a cl.ConvSpec (fprop): block formats scale the "
                          "reduction axis of a GEMM-like product", where=where)
    spec.check_block_scale()
    return spec



BLOCK_SCALE_DIR = Path(__file__).resolve().parents[1] / "data" / "whatif" / "block_scale"
FORMAT = "cudnn-lab block-scale what-if"
#: Largest recorded file the kit reads (a few answers: well under 1 MB).
MAX_BYTES = 4 * 2**20
#: Seconds one question may take before its process is ended (a refusal "timeout").
ASK_TIMEOUT_S = 60.0


def block_scaled_graph(spec: Spec, fmt: Any = "mxfp8_e4m3", *, description: dict[str, Any] | None = None,
                       handle: Any = None) -> Any:
    """The real cudnn.pygraph of ``spec``'s product in block format ``fmt`` (a name or a BlockFormat), built by the
    graph layer (:func:`cudnn_lab.graph.block_scale.block_scaled_graph`, each family's own product); ``description``:
    a target's device description (deviceless). Builds without a GPU up to ``inspect()``; NoGPUError where the
    cuDNN library cannot be loaded (a description is read by the library itself)."""
    _check_spec(spec, "block_scaled_graph")
    f = block_format(fmt)
    if description is not None:
        check_description(description, "description")
        _cudnn_loaded("block_scaled_graph(description=...)")
    return graph_block_scaled(spec, f, description=description, handle=handle)


def _cudnn_loaded(what: str) -> None:
    """NoGPUError unless the cuDNN library loads here (the frontend raises a raw RuntimeError without it)."""
    import cudnn

    try:
        cudnn.backend_version()
    except Exception as e:  # noqa: BLE001 - the frontend's own error for a missing library, in one line
        first = (str(e).splitlines() or [type(e).__name__])[0][:200]
        raise NoGPUError(f"{what} needs the cuDNN library, which cannot be loaded on this machine ({first}); "
                         "cl.block_scale_plans reads the answers recorded on the kit's GPU rounds") from None


@dataclasses.dataclass(frozen=True)
class BlockScaleAnswer(checks.Answer):
    """cuDNN's heuristics' answer for the block-scaled graph of ``spec`` in ``fmt`` on ``target``: how many plans
    (``plan_count``) of which engines (``engine_ids``) with which behaviour notes (``notes``, of the plans kept), or
    ``refused`` ("declined", "crashed", "timeout") with cuDNN's message and reasons (``detail``). ``proposals`` holds
    the plan dicts (as :class:`~cudnn_lab.whatif.WhatIf`'s) where they were kept; a recording made from a round's
    log keeps counts, engines and notes only. ``source`` says where and when it was asked (or recorded)."""

    spec: Spec
    fmt: str
    target: str
    target_label: str
    cudnn_version: int
    source: str
    plan_count: int = 0
    engine_ids: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    proposals: tuple[dict[str, Any], ...] = ()
    refused: str = ""
    message: str = ""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def engines(self) -> list[int]:
        return list(self.engine_ids)

    def summary(self) -> str:
        """One sentence: what cuDNN answered, for which target and cuDNN, and that it is not a measurement."""
        where = f"{self.target_label}, cuDNN {cudnn_version_text(self.cudnn_version)}"
        if self.ok:
            return (f"{self.fmt} {self.spec.op}: {self.plan_count} plans of engine"
                    f"{'s' * (len(self.engine_ids) > 1)} {', '.join(map(str, self.engine_ids))} on {where} "
                    f"({ANSWER_LABEL}; {self.source}).")
        first = (self.message.splitlines() or [""])[0][:200]
        return f"{self.fmt} {self.spec.op}: no plan on {where}, {self.refused}: {first} ({self.source})."

    def frame(self) -> Any:
        """One row per plan kept: engine, knobs, behaviour notes, runtime-compiled or not (empty where only counts
        were recorded, or cuDNN refused)."""
        import pandas as pd

        rows = [{"plan": p["plan"], "engine_id": int(p["engine_id"]),
                 "knobs": ", ".join(f"{k}={v}" for k, v in p.get("knobs", {}).items()),
                 "behavior_notes": ", ".join(p.get("behavior_notes", [])),
                 "runtime_compiled": "RUNTIME_COMPILATION" in p.get("behavior_notes", [])} for p in self.proposals]
        return pd.DataFrame(rows, columns=["plan", "engine_id", "knobs", "behavior_notes", "runtime_compiled"])

    def row(self) -> dict[str, Any]:
        """One table row: problem, format, target, cuDNN, plans, engines, notes or refusal, source."""
        return {"problem": self.spec.label(), "format": self.fmt, "target": self.target_label,
                "cuDNN": cudnn_version_text(self.cudnn_version), "plans": self.plan_count,
                "engines": ", ".join(map(str, self.engine_ids)),
                "answer": (", ".join(self.notes) or "proposed") if self.ok else
                f"{self.refused}: {(self.message.splitlines() or [''])[0][:160]}",
                "source": self.source}

    @classmethod
    def from_dict(cls, data: Any, source: Any = "block-scale answer") -> BlockScaleAnswer:
        """Inverse of :meth:`to_dict`: every field checked by meaning (DataError naming ``source`` and the field;
        no raw error for a damaged answer)."""
        data = checks.record(source, data, "block-scale answer", BLOCK_ANSWER_FIELDS,
                             ("spec", "fmt", "target", "target_label", "cudnn_version", "source"))
        fmt = data["fmt"]
        if not isinstance(fmt, str) or fmt not in BLOCK_FORMATS:
            raise checks.fail(source, "fmt", f"must be one of {', '.join(BLOCK_FORMATS)}, not {shorten(fmt, 40)}")
        refused = checks.refusal(source, data)
        engines, notes, proposals = (data.get(k, []) for k in ("engine_ids", "notes", "proposals"))
        for key, value, most in (("engine_ids", engines, 1000), ("notes", notes, 32), ("proposals", proposals, 10_000)):
            if not isinstance(value, list) or len(value) > most:
                raise checks.fail(source, key, f"must be a list of at most {most} entries, not {shorten(value, 40)}")
        count = checks.whole(source, "plan_count", data.get("plan_count", 0), 0, 99_999)
        if refused and (count or engines or proposals):
            raise checks.fail(source, "plan_count", f"an answer refused ({refused}) holds no plans")
        plans = tuple(checks.proposal(p, source, f"proposals[{i}]") for i, p in enumerate(proposals))
        if plans and count != len(plans):
            raise checks.fail(source, "plan_count", f"must count the {len(plans)} proposals kept, not {count}")
        return cls(spec=spec_from_data(data["spec"], source, "spec"), fmt=fmt,
                   target=checks.text(source, "target", data["target"], limit=64, empty=False),
                   target_label=checks.text(source, "target_label", data["target_label"], limit=300, empty=False),
                   cudnn_version=checks.cudnn_version(source, "cudnn_version", data["cudnn_version"],
                                                      unknown=refused in ("crashed", "timeout")),
                   source=checks.text(source, "source", data["source"], limit=300), plan_count=count,
                   engine_ids=tuple(checks.whole(source, f"engine_ids[{i}]", e, 0, checks.MAX_ENGINE_ID)
                                    for i, e in enumerate(engines)),
                   notes=tuple(checks.text(source, f"notes[{i}]", n, limit=80, empty=False)
                               for i, n in enumerate(notes)),
                   proposals=plans, refused=str(refused),
                   message=checks.text(source, "message", data.get("message", ""), limit=4000),
                   detail=checks.text(source, "detail", data.get("detail", ""), limit=200_000))


#: The fields of a block-scale answer (its to_dict keys).
BLOCK_ANSWER_FIELDS = tuple(f.name for f in dataclasses.fields(BlockScaleAnswer))


def load_block_scale_answers(path: Path) -> tuple[BlockScaleAnswer, ...]:
    """The answers of one recorded block-scale file, every field checked (DataError naming the file and field)."""
    return checks.answers_file(path, BlockScaleAnswer.from_dict, what="recorded block-scale what-if", fmt=FORMAT,
                               limit=MAX_BYTES)  # the card named, not 'this GPU'


#: cuDNN's recorded answers for block-scaled graphs, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="block_scale", folder=BLOCK_SCALE_DIR, suffix=".json", max_bytes=MAX_BYTES, load=load_block_scale_answers,
    title="recorded block-scale what-if JSON"))


def recorded_block_scale_answers() -> list[BlockScaleAnswer]:
    """Every block-scale answer recorded on the kit's GPU rounds (``data/whatif/block_scale/*.json``), checked."""
    return [a for answers in recordings.read(RECORDING.name, BLOCK_SCALE_DIR) for a in answers]


def _ask_here(spec_json: str, fmt: str, description: dict[str, Any] | None) -> dict[str, Any]:
    """In the worker process: the heuristics' proposals per mode for the block-scaled graph, or cuDNN's refusal."""
    import cudnn

    from ..gpu.deviceless import HEURISTIC_MODES, Proposal, propose_mode  # heavy: imports graphviz
    spec = spec_from_dict(json.loads(spec_json))
    handle = None
    if description is None:
        from ..gpu.session import cudnn_handle  # heavy: imports graphviz

        handle = cudnn_handle(0)
    found: dict[str, Proposal] = {}
    declined: dict[str, str] = {}
    for mode in HEURISTIC_MODES:
        try:
            g = block_scaled_graph(spec, fmt, description=description, handle=handle)
        except Exception as e:  # noqa: BLE001 - a graph cuDNN will not describe is an answer, in its words
            declined[mode] = str(e)
            continue
        propose_mode(g, mode, found, declined)
    out: dict[str, Any] = {"cudnn_version": int(cudnn.backend_version()),
                           "proposals": [p.to_dict() for p in found.values()]}
    if not found:
        detail = "\n".join(f"heur_mode {m}: {msg}" for m, msg in declined.items())
        first = next(iter(declined.values()), "no plans").strip().splitlines()
        out.update(refused="declined", message=(first or ["no plans"])[0][:1000], detail=detail[:20000])
    if description is None:
        from ..gpu.deviceless import device_description  # heavy: imports graphviz

        out["card"] = str(device_description(0).get("deviceName", "this GPU"))
    return out


def ask_block_scaled(spec: Spec, fmt: Any = "mxfp8_e4m3", target: Any = "sm100", *,
                     timeout_s: float = ASK_TIMEOUT_S) -> BlockScaleAnswer:
    """Ask cuDNN (in a process of its own: a crash or hang becomes a refusal) which plans it proposes for the
    block-scaled graph of ``spec`` on ``target`` (a target name such as ``sm100``, a Target, or None: this GPU).
    NoGPUError where cuDNN cannot be loaded with the NVIDIA driver."""
    from ..gpu.asker import worker_env  # heavy: imports graphviz
    _check_spec(spec, "ask_block_scaled")
    f = block_format(fmt)
    tgt = as_target(target)
    query = {"spec": spec.to_json(), "fmt": f.name, "description": tgt.description if tgt else None}
    try:
        reply = call_once(f"{__name__}:answer", query, env=worker_env(None), timeout_s=timeout_s)
    except WorkerError as e:
        if e.kind == "deadline":
            return _answer(spec, f, tgt, {"refused": "timeout", "cudnn_version": 0,
                                          "message": f"cuDNN gave no answer within {timeout_s:.0f} s"})
        return _answer(spec, f, tgt, {"refused": "crashed", "cudnn_version": 0,
                                      "message": f"cuDNN crashed answering this query ({e.how or e.kind}; "
                                                 f"{shorten(e.detail or 'no message', 200)}); the kit's process "
                                                 "was not affected"})
    if "error" in reply:
        raise NoGPUError(f"cuDNN cannot be asked on this machine: {reply['error']}")
    return _answer(spec, f, tgt, reply)


def _answer(spec: Spec, f: BlockFormat, tgt: Any, reply: dict[str, Any]) -> BlockScaleAnswer:
    card = reply.get("card")
    proposals = tuple(reply.get("proposals", []))
    return BlockScaleAnswer(spec=spec, fmt=f.name, target=tgt.name if tgt else "this GPU",
                            target_label=tgt.label if tgt else f"{card or 'this GPU'} (this GPU)",
                            cudnn_version=int(reply.get("cudnn_version") or 0),
                            source=f"asked here{f', on a host with {card}' if card else ''}",
                            plan_count=len(proposals),
                            engine_ids=tuple(dict.fromkeys(int(p["engine_id"]) for p in proposals)),
                            notes=tuple(dict.fromkeys(n for p in proposals for n in p.get("behavior_notes", []))),
                            proposals=proposals, refused=str(reply.get("refused", "")),
                            message=str(reply.get("message", "")), detail=str(reply.get("detail", "")))


def block_scale_plans(spec: Spec, fmt: Any = "mxfp8_e4m3", target: Any = "sm100", *,
                      recorded: bool | None = None) -> BlockScaleAnswer:
    """cuDNN's answer for the block-scaled graph of ``spec`` on ``target``: asked where cuDNN can be loaded
    (``recorded=None`` or False), else the recorded answer for the same problem, format and target name."""
    _check_spec(spec, "block_scale_plans")
    f = block_format(fmt)
    if recorded not in (None, True, False):
        raise OptionError("recorded", recorded, "None (ask where cuDNN loads, else read recordings), True "
                          "(recordings only) or False (ask only)", where="block_scale_plans")
    if recorded is not True:
        try:
            return ask_block_scaled(spec, f, target)
        except NoGPUError:
            if recorded is False:
                raise
    tgt = as_target(target)
    name = tgt.name if tgt else "this GPU"
    fits = [a for a in recorded_block_scale_answers() if a.spec == spec and a.fmt == f.name and a.target == name]
    if not fits:
        have = sorted({f"{a.fmt} {a.spec.label()} on {a.target}" for a in recorded_block_scale_answers()})
        raise NoGPUError(f"cuDNN cannot be asked on this machine (its library needs the NVIDIA driver), and no "
                         f"block-scale answer for {name} was recorded for this problem; recorded: "
                         f"{shorten(have, 300)}")
    return max(fits, key=lambda a: a.cudnn_version)


#: The module's question under the what-if package's uniform name (:data:`cudnn_lab.whatif.QUESTIONS`).
ask = block_scale_plans


#: The problems and targets a GPU round records (scripts/record_whatif.py --block-scale): a square GEMM and a
#: ResNet-50 3x3 conv, on this GPU and on synthetic Blackwell targets.
RECORD_PROBLEMS: tuple[tuple[Spec, tuple[str, ...]], ...] = (
    (MatmulSpec(batch=1, m=4096, n=4096, k=4096, dtype="bf16", transpose_b=True), tuple(BLOCK_FORMATS)),
    (ConvSpec(n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="bf16", out_dtype="bf16"),
     ("mxfp8_e4m3", "nvfp4")),
)
RECORD_TARGETS: tuple[str | None, ...] = ("sm100", "sm120", None)


def record_block_scale(folder: Any, *, budget_s: float = 100.0) -> Path:
    """Ask every RECORD_PROBLEMS question on every RECORD_TARGETS target (this GPU included) and write the answers
    to ``folder/<gpu>_<date>.json`` in the recorded format; questions past ``budget_s`` seconds are left out."""
    import time

    t0 = time.perf_counter()
    answers: list[BlockScaleAnswer] = []
    for spec, fmts in RECORD_PROBLEMS:
        for fmt in fmts:
            for target in RECORD_TARGETS:
                left = budget_s - (time.perf_counter() - t0)
                if left < 5:
                    break
                answers.append(ask_block_scaled(spec, fmt, target, timeout_s=min(ASK_TIMEOUT_S, left)))
                print(answers[-1].summary(), flush=True)
    card = next((a.target_label.removesuffix(" (this GPU)") for a in answers if a.target == "this GPU"), "gpu")
    date = today()
    stamped = [dataclasses.replace(a, source=f"recorded on {card}, {date}") for a in answers]
    path = check_output_path(Path(folder) / f"{dataset_prefix(card)}_{date}.json", what="block-scale what-if JSON",
                             suffixes=(".json",))
    data = {"format": FORMAT, "version": 1, "gpu": card, "created": date,
            "seconds": round(time.perf_counter() - t0, 1), "answers": [a.to_dict() for a in stamped]}
    Path(folder).mkdir(parents=True, exist_ok=True)
    return write_text(path, json.dumps(data, indent=0), what="block-scale what-if JSON")


def answer(query: dict[str, Any]) -> dict[str, Any]:
    """Worker role (gpu/workers, in a process of its own): one query's reply, or {"error": ...} where cuDNN cannot
    be loaded."""
    try:
        import cudnn

        cudnn.backend_version()
    except Exception as e:  # noqa: BLE001 - no cuDNN library here: one line, not a traceback
        return {"error": str(e).splitlines()[0][:300] if str(e) else type(e).__name__}
    try:
        return _ask_here(query["spec"], query["fmt"], query.get("description"))
    except Exception as e:  # noqa: BLE001 - every refusal goes back as data
        return {"refused": "declined", "cudnn_version": int(cudnn.backend_version()),
                "message": f"{type(e).__name__}: {str(e).splitlines()[0][:1000] if str(e) else ''}",
                "detail": str(e)[:20000]}
