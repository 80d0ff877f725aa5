"""Runs under another cuDNN read by meaning (issue 37): the version a run stores (a number, its digits or its
dotted text) read as the number or refused naming the field, never a raw error from summary(); and RunDrift's
verdict pinned where the truth is known (a plan is its engine and knobs, however its name is spelt)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from cudnn_lab.errors import DataError, OptionError
from cudnn_lab.whatif import versions as wv


def _pair() -> wv.RunDrift:
    conv = [d for d in wv.recorded_run_drifts() if d.old.spec.op == "conv"]
    assert conv
    return conv[0]


def _copy(result: Any, **settings: Any) -> Any:
    out = copy.copy(result)
    out.plans = result.plans.copy()
    out.settings = {**result.settings, **settings}
    out.device = dict(result.device)
    return out


@pytest.mark.parametrize(("stored", "read"), [(91400, 91400), ("91400", 91400), ("9.14.0", 91400), ("9.14", 91400),
                                              (" 9.19.0 ", 91900)])
def test_a_version_stored_as_text_is_read_as_the_number(stored: Any, read: int) -> None:
    d = _pair()
    old = _copy(d.old, cudnn_lib_version=stored)
    drift = wv.RunDrift(old, d.new)
    assert wv.RunDrift.version(old) == read
    assert drift.summary().startswith(f"cuDNN {read // 10000}.{read // 100 % 100}.{read % 100}:")


@pytest.mark.parametrize("stored", ["banana", "9.x", "v9.14", "1e5", float("inf"), float("nan"), True, -5, 12,
                                    [91400], {"v": 1}, "123456"])
def test_an_unreadable_version_is_refused_naming_the_field(stored: Any) -> None:
    d = _pair()
    old = _copy(d.old, cudnn_lib_version=stored)
    with pytest.raises(DataError, match="settings.cudnn_lib_version"):
        wv.RunDrift(old, d.new)
    with pytest.raises(DataError, match="settings.cudnn_lib_version"):
        wv.RunDrift.version(old)


def test_a_saved_run_with_a_text_version_reads_and_summarises(tmp_path: Any) -> None:
    d = _pair()
    path = tmp_path / "run.json"
    d.old.save(path)
    data = json.loads(path.read_text())
    data["settings"]["cudnn_lib_version"] = "9.14.0"
    path.write_text(json.dumps(data))
    old = wv.RunResult.load(path)
    assert "cuDNN 9.14.0" in wv.RunDrift(old, d.new).summary()
    data["settings"]["cudnn_lib_version"] = "nine"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError) as e:
        wv.RunDrift(wv.RunResult.load(path), d.new)
    assert "run.json" in str(e.value) and "settings.cudnn_lib_version" in str(e.value)


def test_two_different_problems_are_no_drift() -> None:
    conv, matmul = sorted(wv.recorded_run_drifts(), key=lambda d: d.old.spec.op)
    with pytest.raises(OptionError, match="new"):
        wv.RunDrift(conv.old, matmul.new)


def _respelt(name: str) -> str:
    """The same plan named with its knobs in the other order (eng62_k2=4_k13=1 -> eng62_k13=1_k2=4)."""
    engine, *knobs = name.split("_")
    return "_".join([engine, *reversed(knobs)])


def test_the_same_plans_spelt_differently_are_no_change() -> None:
    d = _pair()
    new = _copy(d.old, cudnn_lib_version=91900)
    new.plans["plan"] = [_respelt(p) for p in new.plans["plan"]]
    knobbed = {p for p in d.old.plans["plan"] if p.count("_") >= 2}
    assert knobbed and set(new.plans["plan"]).isdisjoint(knobbed)
    drift = wv.RunDrift(d.old, new)
    assert drift.best_changed is False
    assert set(drift.frame()["in"]) == {"both"}
    assert "is the same or tied" in drift.summary()


def test_a_new_best_plan_is_a_change() -> None:
    d = _pair()
    old = d.old
    ok = wv.RunDrift.plans(old)
    ok = ok[ok["median_ms"].notna() & (ok["status"] == "ok")]
    best_name, best_ms, tied = d.best(old)
    slowest = ok.sort_values("median_ms").iloc[-1]
    assert slowest["plan"] not in tied and slowest["median_ms"] > 1.5 * best_ms
    new = _copy(old, cudnn_lib_version=91900)
    row = new.plans["plan"] == slowest["plan"]
    new.plans.loc[row, "median_ms"] = best_ms / 2  # the new version's best, clearly apart from the old best
    new.plans.loc[row, "iqr_ms"] = 0.0
    drift = wv.RunDrift(old, new)
    assert drift.best(new)[0] == slowest["plan"]
    assert drift.best_changed is True
    assert "changed" in drift.summary()
    unchanged = wv.RunDrift(old, _copy(old, cudnn_lib_version=91900))
    assert unchanged.best_changed is False


_NAME = re.compile(r"eng(\d+)((?:_k\d+=-?\d+)*)")


def ident(name: str) -> tuple[str, frozenset[str]]:
    """A plan name's engine and set of knob settings (order left out)."""
    m = _NAME.fullmatch(name)
    assert m, name
    return m.group(1), frozenset(m.group(2).split("_")[1:])


def test_the_recorded_drifts_verdicts() -> None:
    for d in wv.recorded_run_drifts():
        a, _, tied_a = d.best(d.old)
        b, _, tied_b = d.best(d.new)
        same = ident(a) == ident(b) or ident(a) in {ident(t) for t in tied_b} or ident(b) in {ident(t) for t in tied_a}
        assert d.best_changed is (not same)
