"""gpu/heuristics_cache.py without a GPU: kept proposals and notes round-trip, are recalled only when every plan they
name is in the plan cache, and a damaged or foreign entry is ignored and removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudnn_lab import cache_dir
from cudnn_lab.gpu import heuristics_cache as hc
from cudnn_lab.gpu.cache import identity, plan_store
from cudnn_lab.gpu.notes import NotesResult
from cudnn_lab.gpu.plans import PlanEntry
from cudnn_lab.specs import MatmulSpec

INFO = {"gpu": "NVIDIA H200", "compute_capability": "9.0", "cudnn_backend": 91900, "cudnn_frontend": "1.32.0"}
SPEC = MatmulSpec(m=64, n=64, k=64, dtype="bf16")
DESCRIBED = {"nodes": [{"name": "mm"}]}
GRAPH_KEY = "ab" * 32


@pytest.fixture(autouse=True)
def cache_root(temp_cache: Path) -> Path:
    return temp_cache


def entries() -> list[PlanEntry]:
    return [PlanEntry(name="eng4_k24=2", engine_id=4, knobs={"k24": 2}, graph=None, index=0, ranks={"A": 0},
                      behavior_notes=("RUNTIME_COMPILATION",)),
            PlanEntry(name="eng0", engine_id=0, knobs={}, graph=None, index=1, ranks={"A": 1, "FALLBACK": 0})]


def ident(what: str = "proposals", info: dict | None = None) -> dict[str, str]:
    return hc.proposals_ident(SPEC, DESCRIBED, what, ("A", "FALLBACK"), info or INFO)


def keep_plans(names: list[str]) -> None:
    for name in names:
        plan_store().put(identity(GRAPH_KEY, name, INFO["gpu"], INFO["compute_capability"], INFO["cudnn_backend"],
                                  INFO["cudnn_frontend"]), b"plan blob of " + name.encode())


def test_kept_proposals_are_recalled_in_order_when_every_plan_is_on_disk() -> None:
    es = entries()
    assert hc.remember(ident(), es, [GRAPH_KEY] * len(es))
    assert hc.recall(ident(), INFO) is None  # no plan blob yet: the heuristics must be asked
    keep_plans(["eng4_k24=2"])
    assert hc.recall(ident(), INFO) is None  # one plan still missing
    keep_plans(["eng0"])
    got = hc.recall(ident(), INFO)
    assert [e["name"] for e in got] == ["eng4_k24=2", "eng0"]
    assert got[1]["ranks"] == {"A": 1, "FALLBACK": 0} and got[0]["behavior_notes"] == ["RUNTIME_COMPILATION"]
    assert got[0]["knobs"] == {"k24": 2} and got[0]["graph_key"] == GRAPH_KEY


def test_another_gpu_or_cudnn_or_mode_list_is_a_miss() -> None:
    es = entries()
    hc.remember(ident(), es, [GRAPH_KEY] * 2)
    keep_plans(["eng4_k24=2", "eng0"])
    assert hc.recall(ident(info={**INFO, "gpu": "NVIDIA H100 80GB HBM3"}), INFO) is None
    assert hc.recall(ident(info={**INFO, "cudnn_backend": 92000}), INFO) is None
    assert hc.recall(hc.proposals_ident(SPEC, DESCRIBED, "proposals", ("A",), INFO), INFO) is None
    assert hc.recall(ident(), INFO) is not None


@pytest.mark.parametrize("body", [b"not json", b'{"entries": "x"}', b'{"entries": [{"name": 3}]}', b"[]"])
def test_a_malformed_entry_is_ignored_and_removed(body: bytes) -> None:
    store = hc.heuristics_store()
    store.put(ident(), body)
    assert store.path(ident()).exists()
    assert hc.recall(ident(), INFO) is None and not store.path(ident()).exists()


def test_a_truncated_entry_is_ignored_and_removed() -> None:
    hc.remember(ident(), entries(), [GRAPH_KEY] * 2)
    path = hc.heuristics_store().path(ident())
    path.write_bytes(path.read_bytes()[:-10])
    assert hc.recall(ident(), INFO) is None and not path.exists()


def test_notes_round_trip_and_an_answer_with_errors_is_not_kept() -> None:
    result = NotesResult(notes={"eng4_k24=2": ("TENSOR_CORE",)}, unknown={"eng0": ("FFT",)})
    assert hc.remember_notes(ident("notes"), result)
    back = hc.recall_notes(ident("notes"))
    assert back.notes == result.notes and back.unknown == result.unknown and back.of("eng0") == "?"
    assert not hc.remember_notes(ident("notes", {**INFO, "gpu": "x"}), NotesResult(errors=["FFT: failed"]))
    assert hc.recall_notes(ident("notes", {**INFO, "gpu": "x"})) is None
    hc.heuristics_store().put(ident("notes"), b'{"notes": {"eng0": [1]}, "unknown": {}}')
    assert hc.recall_notes(ident("notes")) is None and not hc.heuristics_store().path(ident("notes")).exists()


def test_nothing_is_kept_with_the_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache_dir.ENV_OFF, "1")
    assert not hc.remember(ident(), entries(), [GRAPH_KEY] * 2)
    assert hc.recall(ident(), INFO) is None


def test_the_cache_command_clears_the_heuristics_answers(cache_root: Path) -> None:
    from cudnn_lab.cli import main

    hc.remember(ident(), entries(), [GRAPH_KEY] * 2)
    assert main(["cache", "--clear"]) == 0
    assert not (cache_root / "heuristics").exists()
