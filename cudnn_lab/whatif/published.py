"""NVIDIA's published cuDNN attention timings (cudnn-frontend's benchmark CSVs), read read-only with their provenance.

Each shipped CSV under ``cudnn_lab/data/forecast/published/`` has a provenance record (repository, path, commit,
date, GPU, cuDNN and frontend versions, licence). On reading, every row is checked: its GPU name must be the one its
provenance names, and its ``peak_mma_tflops`` must agree (within 5%) with that GPU's published peak in the kit's GPU
facts. A row that does not is refused with the kit's DataError naming file, row and field: never averaged in.

NVIDIA's inference CSVs (``published_inference/``: DeepSeek-V4 MLA attention, H200 and B200, cuDNN 9.27.0) have
another schema and no peak column: their rows take the peak from the kit's GPU facts (datasheet) and are checked by
NVIDIA's own ``tflops`` column instead (it must agree with ``time_ms`` and the shape's FLOPs within 2%); every
target file names the H200 file it is paired with (``h200_counterpart``, kept on each row as ``counterpart``).

A published folder is one kind of the kit's recordings (``published`` in ``results/recordings.py``), keyed by its
``provenance.json``: the registry's guards (a regular file, at most :data:`MAX_PROVENANCE_BYTES`) and its one cache
cover the provenance, and each CSV it names is guarded the same way (at most :data:`MAX_CSV_BYTES`) before it is
read. The cache is keyed by the provenance file's size and time: a CSV edited alone is read again after
``recordings.clear()``.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudnn_lab.errors import DataError, PathError
from cudnn_lab.files import regular_size
from cudnn_lab.results import recordings
from cudnn_lab.specs.records import AsDict
from cudnn_lab.whatif.gpu_facts import json_value, load_gpu_facts

PUBLISHED_DIR = Path(__file__).resolve().parent.parent / "data" / "forecast" / "published"
PROVENANCE = "provenance.json"
PROVENANCE_FORMAT = "cudnn-lab published provenance"
INFERENCE_FORMAT = "cudnn-lab published inference provenance"
PUBLISHED_INFERENCE_DIR = PUBLISHED_DIR.parent / "published_inference"
#: NVIDIA's tflops column must agree with time_ms and the shape's FLOPs within this share (a transcription check).
TFLOPS_TOLERANCE = 0.02
_INFERENCE_COLUMNS = ("model_name", "phase", "backend", "data_type", "kv_cache_dtype", "batch_size", "q_tokens",
                      "kv_len", "num_q_heads", "num_kv_heads", "head_dim_qk", "head_dim_vo", "kind", "time_ms",
                      "tflops", "success", "gpu_name", "backend_detail")
#: Size limits: a provenance record or a published CSV larger than these is refused before it is read.
MAX_PROVENANCE_BYTES = 1 << 20
MAX_CSV_BYTES = 8 << 20
PEAK_TOLERANCE = 0.05
_COLUMNS = ("backend", "data_type", "attn_mask", "batch_size", "q_seqlen", "kv_seqlen", "num_q_heads",
            "num_kv_heads", "head_dim_qk", "head_dim_vo", "profile_pass", "deterministic_bwd", "time_ms",
            "success", "gpu_name", "cudnn_backend_version", "peak_mma_tflops")


@dataclass(frozen=True)
class PublishedRow(AsDict):
    """One published timing: the GPU (facts key), the problem, NVIDIA's median time and the file it came from."""

    gpu: str
    gpu_name: str
    data_type: str
    attn_mask: str
    batch: int
    seq_q: int
    seq_kv: int
    heads_q: int
    heads_kv: int
    head_dim: int
    pass_: str
    deterministic: bool
    time_ms: float
    peak_mma_tflops: float
    cudnn_version: int
    file: str
    row: int
    #: "training" (attention_training CSVs), or an inference CSV's phase: "context" (prefill) or "generation"
    phase: str = "training"
    #: an inference target row's H200 file (its provenance's ``h200_counterpart``): its source rows; "" otherwise
    counterpart: str = ""

    @property
    def problem(self) -> tuple[Any, ...]:
        """What identifies the problem across GPUs (dtype, mask, shape, pass, determinism)."""
        return (self.data_type, self.attn_mask, self.batch, self.seq_q, self.seq_kv, self.heads_q, self.heads_kv,
                self.head_dim, self.pass_, self.deterministic)

    @property
    def flops(self) -> float:
        """The attention's FLOPs as NVIDIA counts them (4 b h s_q s_kv d forward, 2.5x that backward; causal half)."""
        f = 4.0 * self.batch * self.heads_q * self.seq_q * self.seq_kv * self.head_dim
        if self.attn_mask == "top_left":
            f /= 2.0
        elif self.attn_mask == "bottom_right":  # the pairs a bottom-right causal mask keeps (seq_q <= seq_kv)
            q, kv = self.seq_q, self.seq_kv
            f *= (q * kv - q * (q - 1) / 2.0) / (q * kv) if q <= kv else 0.5
        return f * (2.5 if self.pass_ == "bwd" else 1.0)


def _provenance(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The format and the checked ``files`` records of a provenance file; DataError names the file and field."""
    data = json_value(path, "no provenance record beside the published CSVs")
    if not isinstance(data, dict) or data.get("format") not in (PROVENANCE_FORMAT, INFERENCE_FORMAT):
        raise DataError(path, f"format is not {PROVENANCE_FORMAT!r} or {INFERENCE_FORMAT!r}",
                        hint="is this a published provenance record?")
    files = data.get("files")
    if not isinstance(files, list) or not files:
        raise DataError(path, "files is missing or empty (must list each CSV with its provenance)")
    need = ("file", "gpu", "gpu_name", "repository", "path", "commit", "date", "cudnn_version",
            "frontend_version", "licence")
    for i, rec in enumerate(files):
        missing = [k for k in need if not isinstance(rec, dict) or not str(rec.get(k, "")).strip()]
        if missing:
            raise DataError(path, f"files[{i}] lacks {', '.join(missing)}", hint="every file states its provenance")
    if data["format"] == INFERENCE_FORMAT:
        h200 = {rec["file"] for rec in files if rec.get("gpu") == "h200"}
        for i, rec in enumerate(files):
            if rec["gpu"] != "h200" and rec.get("h200_counterpart") not in h200:
                raise DataError(path, f"files[{i}].h200_counterpart={rec.get('h200_counterpart')!r}: must name an "
                                "H200 file of this record (the source its rows are paired with)")
    return str(data["format"]), files


def _row(rec: dict[str, Any], raw: dict[str, str], path: Path, n: int, peaks: dict[str, float]) -> PublishedRow:
    """One checked row; DataError names the file, row and field of the first problem."""
    def bad(fld: str, why: str) -> DataError:
        return DataError(path, f"row {n} field {fld}={shorten(raw.get(fld))}: {why}",
                         hint="the row is refused, not averaged in")

    for col in _COLUMNS:
        if col not in raw or raw[col] is None:
            raise bad(col, "missing")
    if raw["gpu_name"].strip() != rec["gpu_name"]:
        raise bad("gpu_name", f"is not {rec['gpu_name']!r}, the GPU this file's provenance names")
    try:
        ints = {k: int(raw[k]) for k in ("batch_size", "q_seqlen", "kv_seqlen", "num_q_heads", "num_kv_heads",
                                         "head_dim_qk")}
        time_ms = float(raw["time_ms"])
        peak = float(raw["peak_mma_tflops"])
        version = int(float(raw["cudnn_backend_version"]))
    except ValueError as exc:
        raise bad("time_ms/peak_mma_tflops/shape", f"not a number ({exc})") from None
    if any(v <= 0 for v in ints.values()):
        raise bad("shape", "sizes must be positive")
    if not math.isfinite(time_ms) or time_ms <= 0:
        raise bad("time_ms", "must be a positive, finite time")
    dtype = raw["data_type"].strip()
    if dtype not in ("bfloat16", "fp8"):
        raise bad("data_type", "must be bfloat16 or fp8")
    expected = peaks.get(dtype)
    if expected is None:
        raise bad("peak_mma_tflops", f"the GPU facts state no published {dtype} peak for {rec['gpu']}")
    if abs(peak / expected - 1.0) > PEAK_TOLERANCE:
        raise bad("peak_mma_tflops", f"is not within {PEAK_TOLERANCE:.0%} of {expected:g}, the published {dtype} "
                  f"peak of {rec['gpu_name']}")
    if raw["backend"].strip() != "cudnn" or raw["success"].strip() != "True":
        raise bad("backend/success", "only successful cudnn rows are kept")
    if raw["profile_pass"] not in ("fwd", "bwd") or raw["deterministic_bwd"] not in ("True", "False"):
        raise bad("profile_pass", "must be fwd or bwd with deterministic_bwd True or False")
    if raw["attn_mask"] not in ("no_mask", "top_left"):
        raise bad("attn_mask", "must be no_mask or top_left")
    return PublishedRow(gpu=rec["gpu"], gpu_name=rec["gpu_name"], data_type=dtype, attn_mask=raw["attn_mask"],
                        batch=ints["batch_size"], seq_q=ints["q_seqlen"], seq_kv=ints["kv_seqlen"],
                        heads_q=ints["num_q_heads"], heads_kv=ints["num_kv_heads"], head_dim=ints["head_dim_qk"],
                        pass_=raw["profile_pass"], deterministic=raw["deterministic_bwd"] == "True",
                        time_ms=time_ms, peak_mma_tflops=peak, cudnn_version=version, file=path.name, row=n)


def _inference_row(rec: dict[str, Any], raw: dict[str, str], path: Path, n: int, peak: float | None
                   ) -> PublishedRow:
    """One checked row of an attention_inference CSV; DataError names the file, row and field of the first problem.
    This schema has no peak column: ``peak`` is the kit's GPU facts' bf16 peak (refused where they state none)."""
    def bad(fld: str, why: str) -> DataError:
        return DataError(path, f"row {n} field {fld}={shorten(raw.get(fld))}: {why}",
                         hint="the row is refused, not averaged in")

    for col in _INFERENCE_COLUMNS:
        if raw.get(col) is None:
            raise bad(col, "missing")
    if raw["gpu_name"].strip() != rec["gpu_name"]:
        raise bad("gpu_name", f"is not {rec['gpu_name']!r}, the GPU this file's provenance names")
    if raw["backend"].strip() != "cudnn" or raw["success"].strip() != "True":
        raise bad("backend/success", "only successful cudnn rows are kept")
    if raw["data_type"].strip() != "bfloat16" or raw["kv_cache_dtype"].strip() != "bfloat16":
        raise bad("data_type/kv_cache_dtype", "only bfloat16 rows with a bfloat16 KV cache are kept")
    if raw["phase"] not in ("context", "generation"):
        raise bad("phase", "must be context or generation")
    try:
        ints = {k: int(raw[k]) for k in ("batch_size", "q_tokens", "kv_len", "num_q_heads", "num_kv_heads",
                                         "head_dim_qk", "head_dim_vo")}
        time_ms, tflops = float(raw["time_ms"]), float(raw["tflops"])
    except ValueError as exc:
        raise bad("time_ms/tflops/shape", f"not a number ({exc})") from None
    if any(v <= 0 for v in ints.values()):
        raise bad("shape", "sizes must be positive")
    if ints["head_dim_qk"] != ints["head_dim_vo"]:
        raise bad("head_dim_vo", f"must equal head_dim_qk ({ints['head_dim_qk']})")
    if ints["q_tokens"] > ints["kv_len"]:
        raise bad("q_tokens", f"must be at most kv_len ({ints['kv_len']}) for a bottom-right causal mask")
    if not math.isfinite(time_ms) or time_ms <= 0:
        raise bad("time_ms", "must be a positive, finite time")
    if peak is None:
        raise bad("peak", f"the GPU facts state no bf16 peak for {rec['gpu']} (this schema has no peak column)")
    version = raw["backend_detail"].strip().removeprefix("cudnn ").split(".")
    if len(version) != 3 or not all(v.isdigit() for v in version):
        raise bad("backend_detail", "must read 'cudnn MAJOR.MINOR.PATCH'")
    out = PublishedRow(gpu=rec["gpu"], gpu_name=rec["gpu_name"], data_type="bfloat16", attn_mask="bottom_right",
                       batch=ints["batch_size"], seq_q=ints["q_tokens"], seq_kv=ints["kv_len"],
                       heads_q=ints["num_q_heads"], heads_kv=ints["num_kv_heads"], head_dim=ints["head_dim_qk"],
                       pass_="fwd", deterministic=False, time_ms=time_ms, peak_mma_tflops=float(peak),
                       cudnn_version=int(version[0]) * 10000 + int(version[1]) * 100 + int(version[2]), file=path.name,
                       row=n, phase=raw["phase"], counterpart=str(rec.get("h200_counterpart") or ""))
    if abs(out.flops / (time_ms * 1e9) / tflops - 1.0) > TFLOPS_TOLERANCE:
        raise bad("tflops", f"disagrees with time_ms and the shape ({out.flops / (time_ms * 1e9):.3f} TFLOP/s from "
                  f"them) by more than {TFLOPS_TOLERANCE:.0%}")
    return out


def shorten(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_published(provenance: Path, facts_path: Any = None) -> list[PublishedRow]:
    """Every row of the CSVs a provenance file names (beside it), each checked against its provenance and peak."""
    provenance = Path(provenance)
    base = provenance.parent
    facts = load_gpu_facts(facts_path)
    rows: list[PublishedRow] = []
    fmt, records = _provenance(provenance)
    for rec in records:
        path = base / rec["file"]
        if rec["gpu"] not in facts:
            raise DataError(provenance, f"gpu={rec['gpu']!r} of {rec['file']} is not in the GPU facts")
        try:
            regular_size(path, "published CSV", limit=MAX_CSV_BYTES)
        except PathError:
            if not path.exists():
                raise PathError(path, f"named in {provenance.name} but missing") from None
            raise
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(path, f"not readable text ({exc})") from None
        reader = csv.DictReader(text.splitlines())
        columns, kind = ((_COLUMNS, "attention_training") if fmt == PROVENANCE_FORMAT
                         else (_INFERENCE_COLUMNS, "attention_inference"))
        if not reader.fieldnames or any(c not in reader.fieldnames for c in columns):
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            raise DataError(path, f"header lacks {', '.join(missing)}",
                            hint=f"is this a cudnn-frontend {kind} CSV?")
        if fmt == PROVENANCE_FORMAT:
            peaks = facts[rec["gpu"]].published_peak_mma_tflops
            found = [_row(rec, raw, path, n, peaks) for n, raw in enumerate(reader, start=2)]
        else:
            peak = facts[rec["gpu"]].peak_tflops("bfloat16")
            found = [_inference_row(rec, raw, path, n, peak) for n, raw in enumerate(reader, start=2)]
        if not found:
            raise DataError(path, "has no rows")
        rows.extend(found)
    return rows


#: NVIDIA's published tables, one kind of the kit's recordings (results/recordings.py), keyed by provenance.json.
RECORDING = recordings.register(recordings.RecordingKind(
    name="published", folder=PUBLISHED_DIR, suffix=".json", max_bytes=MAX_PROVENANCE_BYTES, load=read_published,
    title="published provenance JSON"))


#: NVIDIA's published inference tables (another schema, no peak column), keyed by their provenance.json.
INFERENCE_RECORDING = recordings.register(recordings.RecordingKind(
    name="published_inference", folder=PUBLISHED_INFERENCE_DIR, suffix=".json", max_bytes=MAX_PROVENANCE_BYTES,
    load=read_published, title="published inference provenance JSON"))


def load_published(folder: Any = None, facts_path: Any = None) -> list[PublishedRow]:
    """Every published row, each checked against its provenance and peak: the shipped training and inference
    folders by default, else ``folder`` (either schema, by its provenance's format); through the recordings
    registry (its guards and cache) unless ``facts_path`` names other GPU facts."""
    if folder is None:
        return _load_one(PUBLISHED_DIR, facts_path) + _load_one(PUBLISHED_INFERENCE_DIR, facts_path)
    return _load_one(Path(folder), facts_path)


def _load_one(folder: Path, facts_path: Any) -> list[PublishedRow]:
    provenance = folder / PROVENANCE
    if facts_path is not None:
        regular_size(provenance, RECORDING.title, limit=MAX_PROVENANCE_BYTES)
        return read_published(provenance, facts_path)
    if not provenance.exists():
        raise PathError(provenance, "no provenance record beside the published CSVs")
    kind = INFERENCE_RECORDING if folder.resolve() == PUBLISHED_INFERENCE_DIR.resolve() else RECORDING
    found: list[PublishedRow] = recordings.read_one(kind.name, provenance)
    return list(found)
