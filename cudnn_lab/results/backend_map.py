"""Which backend wins where: along a sweep of attention shapes, the kit's best cuDNN plan against each PyTorch SDPA
backend that ran the shape (flash, memory-efficient, cuDNN through PyTorch, math), decided with the kit's tie rule
(:data:`~cudnn_lab.results.metrics.TIE_REL`), and the answer as a small JSON table a framework could read.

A sweep run with ``RunOptions(backends=True)`` holds each point's backends in its ``baselines`` cell
(``sweeps.points.other_baselines``); :func:`backend_map` reads them beside the point's best plan. A backend that
refused a shape keeps PyTorch's reason; a point whose cuDNN run failed keeps the kit's.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import DataError, OptionError, shorten
from . import metrics, recordings
from .json_files import MAX_JSON_BYTES, read_json
from .sweep_checks import plain_cell
from .datasets import SWEEPS_DIR

__all__ = ["CONTENDERS", "BACKENDS", "SHAPE_FIELDS", "MapRow", "BackendMap", "backend_map", "has_backends",
           "recorded_maps", "BACKEND_MAPS_DIR", "FORMAT"]

#: The contenders of a shape, by name, with their titles: the kit's best cuDNN plan, then PyTorch's SDPA backends
#: each forced alone (reference/sdpa.py SDPA_BACKENDS).
CONTENDERS: dict[str, str] = {"cudnn": "cuDNN, best plan (the kit)", "sdpa_flash": "PyTorch flash",
                              "sdpa_efficient": "PyTorch memory-efficient", "sdpa_cudnn": "PyTorch cuDNN",
                              "sdpa_math": "PyTorch math"}
#: Each contender's backend: the kit's plan and PyTorch's cuDNN path are both cuDNN, so a tie between them is a win
#: for cuDNN (:attr:`MapRow.backend`); the exported table names backends by these words.
BACKENDS: dict[str, str] = {"cudnn": "cudnn", "sdpa_cudnn": "cudnn", "sdpa_flash": "flash",
                            "sdpa_efficient": "efficient", "sdpa_math": "math"}
#: The spec fields that name a shape in the map (the sweep's ``spec_<field>`` columns).
SHAPE_FIELDS: tuple[str, ...] = ("direction", "dtype", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim",
                                 "head_dim_v", "causal")
#: The exported table's ``kind`` and format version.
FORMAT = {"kind": "cudnn_lab.attention_backend_map", "version": 1}
#: Where exported maps ship (one kind of the kit's recordings).
BACKEND_MAPS_DIR = SWEEPS_DIR.parent / "backend_maps"


def _fail(source: Any, field: str, problem: str) -> DataError:
    return DataError(source if source is not None else "backend map", f"field {field}: {problem}")


def _ms(source: Any, field: str, value: Any) -> float:
    if isinstance(value, bool) or not metrics.is_finite(value) or float(value) <= 0:
        raise _fail(source, field, f"must be a positive, finite time in ms, not {shorten(repr(value), 40)}")
    return float(value)


@dataclasses.dataclass(frozen=True)
class MapRow:
    """One shape: its fields, each contender's median (ms) or reason it did not run, the winner and whoever tied it
    (within TIE_REL of the fastest), and the winner's margin over the first contender outside the tie (0.05: the
    next is 5% slower; None where nothing else ran)."""

    shape: Mapping[str, Any]
    times_ms: Mapping[str, float]
    refused: Mapping[str, str]
    winner: str | None
    tied: tuple[str, ...]
    margin: float | None
    pytorch_default_ms: float | None = None

    @classmethod
    def decide(cls, shape: Mapping[str, Any], times_ms: Mapping[str, float], refused: Mapping[str, str],
               tie_rel: float, pytorch_default_ms: float | None = None) -> MapRow:
        """The row with its winner, ties and margin decided from the times (the kit's rule, one place)."""
        order = sorted(times_ms, key=lambda n: (times_ms[n], list(CONTENDERS).index(n)))
        if not order:
            return cls(dict(shape), dict(times_ms), dict(refused), None, (), None, pytorch_default_ms)
        fastest = times_ms[order[0]]
        tied = tuple(n for n in order if times_ms[n] <= fastest * (1 + tie_rel))
        rest = [n for n in order if n not in tied]
        margin = times_ms[rest[0]] / fastest - 1 if rest else None
        return cls(dict(shape), dict(times_ms), dict(refused), order[0], tied, margin, pytorch_default_ms)

    @property
    def verdict(self) -> str:
        """The winner in words: one name, "tie: a, b", or "none ran"."""
        if self.winner is None:
            return "none ran"
        return self.winner if len(self.tied) == 1 else "tie: " + ", ".join(self.tied)

    @property
    def backend(self) -> str:
        """The winning backend (:data:`BACKENDS`): the winner's, also when it ties only with contenders of the same
        backend; "tie" when backends tie; "none ran"."""
        if self.winner is None:
            return "none ran"
        found = {BACKENDS[n] for n in self.tied}
        return found.pop() if len(found) == 1 else "tie"

    @property
    def backend_margin(self) -> float | None:
        """The winning backend's margin over the fastest other backend (0.5: the next backend takes 1.5x the time);
        None on a tie between backends or where no other backend ran."""
        if self.backend in ("tie", "none ran"):
            return None
        others = [t for n, t in self.times_ms.items() if BACKENDS[n] != self.backend]
        return min(others) / min(self.times_ms.values()) - 1 if others else None

    @property
    def kit_vs_pytorch_cudnn(self) -> float | None:
        """PyTorch's cuDNN path's time over the kit's best plan (1.10: the kit's plan is 10% faster), where both ran."""
        if "cudnn" in self.times_ms and "sdpa_cudnn" in self.times_ms:
            return self.times_ms["sdpa_cudnn"] / self.times_ms["cudnn"]
        return None

    def to_dict(self) -> dict[str, Any]:
        return {**dict(self.shape), "backend": self.backend, "winner": self.winner, "tied": list(self.tied),
                "margin": self.margin, "ms": dict(self.times_ms), "refused": dict(self.refused),
                "pytorch_default_ms": self.pytorch_default_ms}

    @classmethod
    def from_dict(cls, data: Any, tie_rel: float, source: Any = None, field: str = "row") -> MapRow:
        """A row read back and checked field by field; winner, ties and margin are decided again from the times
        and must agree with what the file says."""
        if not isinstance(data, dict):
            raise _fail(source, field, f"must be an object, not {type(data).__name__}")
        shape = {k: data.get(k) for k in SHAPE_FIELDS}
        for k in ("batch", "heads", "seq_q", "seq_kv", "head_dim"):
            v = shape[k]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= 1 << 24:
                raise _fail(source, f"{field}.{k}", f"must be a positive whole number, not {shorten(repr(v), 40)}")
        for k in ("kv_heads", "head_dim_v"):
            v = shape[k]
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= 1 << 24):
                raise _fail(source, f"{field}.{k}", f"must be None or a positive whole number, not "
                            f"{shorten(repr(v), 40)}")
        for k in ("direction", "dtype"):
            if not isinstance(shape[k], str) or not shape[k]:
                raise _fail(source, f"{field}.{k}", "must be text naming the attention's " + k)
        if not isinstance(shape["causal"], bool):
            raise _fail(source, f"{field}.causal", "must be true or false")
        times, refused = data.get("ms"), data.get("refused")
        if not isinstance(times, dict) or not isinstance(refused, dict):
            raise _fail(source, f"{field}.ms", "ms and refused must be objects keyed by contender")
        for part in (times, refused):
            for name in part:
                if name not in CONTENDERS:
                    raise _fail(source, f"{field}.ms.{str(name)[:30]}", "is not a contender; contenders are "
                                + ", ".join(CONTENDERS))
        clean = {n: _ms(source, f"{field}.ms.{n}", v) for n, v in times.items()}
        for n, why in refused.items():
            if not isinstance(why, str):
                raise _fail(source, f"{field}.refused.{n}", "must be the reason as text")
        default = data.get("pytorch_default_ms")
        row = cls.decide(shape, clean, refused, tie_rel,
                         None if default is None else _ms(source, f"{field}.pytorch_default_ms", default))
        said = (data.get("winner"), list(data.get("tied") or []))
        if data.get("backend", row.backend) != row.backend:
            raise _fail(source, f"{field}.backend", f"says {shorten(repr(data.get('backend')), 30)} but its times "
                        f"give {row.backend!r} under the tie rule {tie_rel:g}")
        if said != (row.winner, list(row.tied)):
            raise _fail(source, f"{field}.winner", f"says {said[0]!r} (tied {said[1]}) but its times give "
                        f"{row.winner!r} (tied {list(row.tied)}) under the tie rule {tie_rel:g}")
        return row


@dataclasses.dataclass(frozen=True)
class BackendMap:
    """Which backend wins each attention shape of one sweep on one GPU (rows in the sweep's order)."""

    gpu: str
    cudnn: int | None
    rows: tuple[MapRow, ...]
    tie_rel: float = metrics.TIE_REL
    torch: str = ""
    created: str = ""

    def wins(self) -> dict[str, int]:
        """Shapes each backend won (:attr:`MapRow.backend`), plus "tie" and "none ran" (each shape counted once)."""
        out: dict[str, int] = dict.fromkeys(dict.fromkeys(BACKENDS.values()), 0)
        for row in self.rows:
            out[row.backend] = out.get(row.backend, 0) + 1
        return out

    def summary(self) -> str:
        """One paragraph: which backend wins how many shapes and by what margins over the next, the kit's best plan
        against PyTorch's own cuDNN path, and what PyTorch's default dispatch got."""
        told = [f"{n} {k}" for n, k in self.wins().items() if k]
        text = (f"{len(self.rows)} attention shapes on {self.gpu} (cuDNN {self.cudnn}, tie rule {self.tie_rel:.0%}), "
                "shapes won by backend: " + ", ".join(told) + ".")
        margins = sorted(m for m in (r.backend_margin for r in self.rows) if m is not None)
        if margins:
            text += (f" The winner's margin over the next backend: {margins[0]:.0%} to {margins[-1]:.0%} "
                     f"(median {margins[len(margins) // 2]:.0%}).")
        ratios = sorted(((r.kit_vs_pytorch_cudnn, r) for r in self.rows if r.kit_vs_pytorch_cudnn is not None),
                        key=lambda x: x[0])
        if ratios:
            faster = [x for x in ratios if x[0] > 1 + self.tie_rel]
            slower = [x for x in ratios if x[0] < 1 / (1 + self.tie_rel)]
            text += (f" The kit's best cuDNN plan against PyTorch's cuDNN path: faster in {len(faster)} shapes"
                     + (f" (up to {faster[-1][0] - 1:.0%}, at {shape_label(faster[-1][1].shape)})" if faster else "")
                     + f", slower in {len(slower)}"
                     + (f" (up to {1 / slower[0][0] - 1:.0%}, at {shape_label(slower[0][1].shape)})" if slower else "")
                     + f", tied in {len(ratios) - len(faster) - len(slower)}.")
        default = [r for r in self.rows if r.pytorch_default_ms is not None and r.winner is not None]
        if default:
            near = sum(r.pytorch_default_ms <= min(r.times_ms.values()) * (1 + self.tie_rel) for r in default
                       if r.pytorch_default_ms is not None)
            text += (f" PyTorch's own dispatch (no backend forced) was within the tie rule of the winner in {near} of "
                     f"{len(default)} shapes.")
        return text

    def frame(self) -> Any:
        """One row per shape: its fields, each contender's time, the verdict and margin (a pandas DataFrame)."""
        import pandas as pd

        return pd.DataFrame([{**dict(r.shape), **{f"{n}_ms": r.times_ms.get(n) for n in CONTENDERS},
                              "pytorch_default_ms": r.pytorch_default_ms, "backend": r.backend, "verdict": r.verdict,
                              "winner": r.winner,
                              "margin": r.margin} for r in self.rows])

    def winner_for(self, **shape: Any) -> MapRow | None:
        """The row of the shape with these fields (those given must all match; the first such row), or None."""
        unknown = [k for k in shape if k not in SHAPE_FIELDS]
        if unknown:
            raise OptionError(unknown[0], shape[unknown[0]], "is not a shape field; fields are "
                              + ", ".join(SHAPE_FIELDS))
        return next((r for r in self.rows if all(r.shape.get(k) == v for k, v in shape.items())), None)

    def to_dict(self) -> dict[str, Any]:
        return {**FORMAT, "gpu": self.gpu, "cudnn": self.cudnn, "torch": self.torch, "created": self.created,
                "tie_rel": self.tie_rel, "contenders": dict(CONTENDERS), "rows": [r.to_dict() for r in self.rows]}

    def to_json(self, path: str | Path | None = None) -> str:
        """The map as JSON text (written to ``path`` too, where given)."""
        text = json.dumps(self.to_dict(), indent=1)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    @classmethod
    def from_dict(cls, data: Any, source: Any = None) -> BackendMap:
        """A map read back (:meth:`to_dict`'s shape), every field checked; DataError naming the field."""
        if not isinstance(data, dict):
            raise _fail(source, "map", f"must be an object, not {type(data).__name__}")
        for key, want in FORMAT.items():
            if data.get(key) != want:
                raise _fail(source, key, f"must be {want!r} (an attention backend map of this kit), not "
                            f"{shorten(repr(data.get(key)), 40)}")
        if not isinstance(data.get("gpu"), str) or not data["gpu"]:
            raise _fail(source, "gpu", "must name the GPU the map was measured on")
        version = data.get("cudnn")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version <= 0):
            raise _fail(source, "cudnn", "must be cuDNN's version number (91900 is 9.19.0) or null")
        tie = data.get("tie_rel")
        if isinstance(tie, bool) or not metrics.is_finite(tie) or not 0 <= float(tie) < 1:
            raise _fail(source, "tie_rel", "must be a share between 0 and 1 (0.03: within 3% counts as a tie)")
        said = data.get("contenders", CONTENDERS)
        if not isinstance(said, dict) or not set(said) <= set(CONTENDERS):
            raise _fail(source, "contenders", "must be an object naming the contenders (" + ", ".join(CONTENDERS)
                        + ")")
        rows = data.get("rows")
        if not isinstance(rows, list) or not rows:
            raise _fail(source, "rows", "must be a non-empty list of shapes")
        for key in ("torch", "created"):
            if not isinstance(data.get(key, ""), str):
                raise _fail(source, key, "must be text")
        return cls(data["gpu"], version, tuple(MapRow.from_dict(r, float(tie), source, f"rows[{i}]")
                                               for i, r in enumerate(rows)),
                   float(tie), data.get("torch", ""), data.get("created", ""))


def shape_label(shape: Mapping[str, Any]) -> str:
    """A shape in a few words: "b1 h32/8 s4096 d128 causal fwd"."""
    heads = f"h{shape.get('heads')}" + (f"/{shape['kv_heads']}" if shape.get("kv_heads") not in (None, shape.get(
        "heads")) else "")
    d = f"d{shape.get('head_dim')}" + (f"/{shape['head_dim_v']}" if shape.get("head_dim_v") else "")
    seq = f"s{shape.get('seq_q')}" + (f"/{shape['seq_kv']}" if shape.get("seq_kv") != shape.get("seq_q") else "")
    causal = " causal" if shape.get("causal") else ""
    return f"b{shape.get('batch')} {heads} {seq} {d}{causal} {shape.get('direction', '')}".strip()


def has_backends(frame: Any) -> bool:
    """Whether a sweep frame holds attention points with PyTorch's backends timed (``backends=True``)."""
    if frame is None or getattr(frame, "empty", True) or "baselines" not in frame.columns or "op" not in frame:
        return False
    cells = frame.loc[frame["op"] == "sdpa", "baselines"]
    return bool(cells.map(lambda c: isinstance(c, str) and any(f'"{n}"' in c for n in CONTENDERS)).any())


def backend_map(frame: Any, *, tie_rel: float = metrics.TIE_REL) -> BackendMap:
    """The map of a sweep frame's attention points (:func:`has_backends`): per point the best plan's median beside
    each backend's; OptionError when the frame has none."""
    if not has_backends(frame):
        raise OptionError("frame", "sweep", "holds no attention points with PyTorch's backends timed: sweep "
                          "SdpaSpec shapes with RunOptions(backends=True) (cudnn-lab sweep ... --backends)")
    if isinstance(tie_rel, bool) or not metrics.is_finite(tie_rel) or not 0 <= tie_rel < 1:
        raise OptionError("tie_rel", tie_rel, "must be a share between 0 and 1 (0.03: within 3% is a tie)")
    sdpa = frame[frame["op"] == "sdpa"]
    rows, gpu, cudnn, created = [], None, None, ""
    for _, point in sdpa.groupby("point_id", sort=False):
        first = point.iloc[0]
        if metrics.cell_text(first.get("point_status")) != "ok":
            continue
        gpu, cudnn = gpu or plain_cell(first.get("gpu")), cudnn or plain_cell(first.get("cudnn"))
        created = max(created, str(plain_cell(first.get("created")) or ""))
        spec = json.loads(first["spec"]) if isinstance(plain_cell(first.get("spec")), str) else {}
        shape = {k: spec.get(k, plain_cell(first.get(f"spec_{k}"))) for k in SHAPE_FIELDS}  # the spec's own types
        times: dict[str, float] = {}
        refused: dict[str, str] = {}
        best = point[point["is_best"].map(lambda v: not metrics.is_missing(v) and bool(v))]
        if len(best) and metrics.is_finite(best.iloc[0].get("median_ms")):
            times["cudnn"] = float(best.iloc[0]["median_ms"])
        else:
            refused["cudnn"] = "no plan ran"
        cell = plain_cell(first.get("baselines"))
        for name, item in (json.loads(cell) if isinstance(cell, str) else {}).items():
            if name not in CONTENDERS:
                continue
            if "ms" in item and metrics.is_finite(item["ms"]) and item["ms"] > 0:
                times[name] = float(item["ms"])
            else:
                refused[name] = str(item.get("error", "not timed"))
        default = plain_cell(first.get("torch_off_ms"))
        rows.append(MapRow.decide(shape, times, refused, tie_rel, default if metrics.is_finite(default) else None))
    if not rows:
        raise OptionError("frame", "sweep", "has no attention point that ran; nothing to map")
    return BackendMap(str(gpu or "unknown GPU"), int(cudnn) if cudnn is not None else None, tuple(rows), tie_rel,
                      created=created)


def _load(path: Path) -> BackendMap:
    return BackendMap.from_dict(read_json(path, "backend map JSON"), source=path)


#: Exported maps that ship, one kind of the kit's recordings (results/recordings.py).
RECORDING = recordings.register(recordings.RecordingKind(
    name="backend_map", folder=BACKEND_MAPS_DIR, suffix=".json", max_bytes=MAX_JSON_BYTES, load=_load,
    title="backend map JSON"))


def recorded_maps() -> list[BackendMap]:
    """The attention backend maps shipped in ``data/backend_maps``."""
    return [m for m in recordings.read(RECORDING.name, BACKEND_MAPS_DIR) if isinstance(m, BackendMap)]
