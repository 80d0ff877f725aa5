"""The sweep store checks a part's contents against its name (issue 25): a part holding another point's rows, rows of
several points, or no rows is no record of its point. It is set aside (renamed, never deleted) with one warning, its
point is not done, and a resumed sweep runs the point again. The rows are a shipped sweep's, recorded on a GPU."""

from __future__ import annotations

import concurrent.futures as cf
import warnings

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.results.store import ASIDE_PREFIX, Store, StoreWarning


@pytest.fixture(scope="module")
def points() -> dict[str, pd.DataFrame]:
    """Three points of a recorded sweep, by id."""
    frame = cl.load_results("h100_fp8_gemm")
    return {pid: rows.reset_index(drop=True) for pid, rows in list(frame.groupby("point_id", sort=False))[:3]}


def _store(tmp_path, points) -> tuple[Store, list[str]]:
    store = Store(tmp_path / "store")
    for pid, rows in points.items():
        store.append(pid, rows)
    return store, list(points)


def test_right_parts_are_done_and_read_without_a_warning(tmp_path, points) -> None:
    store, ids = _store(tmp_path, points)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        assert store.done() == set(ids)
        assert len(store.read()) == sum(len(r) for r in points.values())
    assert not list(store.path.glob(f"{ASIDE_PREFIX}*"))


def test_a_part_holding_another_points_rows_is_set_aside_and_not_done(tmp_path, points) -> None:
    store, (a, b, c) = _store(tmp_path, points)
    points[b].to_parquet(store.path / f"point-{a}.parquet", index=False)  # a's part now holds b's rows
    with pytest.warns(StoreWarning, match=rf"point-{a}\.parquet \(holds rows of point '{b}', not of point") as caught:
        done = store.done()
    assert len(caught) == 1 and "set aside" in str(caught[0].message) and "run again" in str(caught[0].message)
    assert done == {b, c}  # a is not done: a resume runs it again
    aside = store.path / f"{ASIDE_PREFIX}point-{a}.parquet"
    assert not (store.path / f"point-{a}.parquet").exists() and aside.is_file()  # renamed aside, not deleted
    pd.testing.assert_frame_equal(pd.read_parquet(aside), points[b])
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        frame = store.read()  # set aside once: no second warning
    assert sorted(frame["point_id"].unique()) == sorted([b, c])
    assert (frame["point_id"] == b).sum() == len(points[b])  # b's rows once, not doubled
    assert len(pd.read_parquet(store.path)) == len(frame)  # readers of the folder skip the part set aside


def test_an_empty_part_is_set_aside_when_read_and_its_point_not_done(tmp_path, points) -> None:
    store, (a, b, c) = _store(tmp_path, points)
    points[a].iloc[:0].to_parquet(store.path / f"point-{a}.parquet", index=False)
    with pytest.warns(StoreWarning, match=rf"point-{a}\.parquet \(holds no rows; set aside") as caught:
        frame = store.read()
    assert len(caught) == 1
    assert sorted(frame["point_id"].unique()) == sorted([b, c])
    assert (store.path / f"{ASIDE_PREFIX}point-{a}.parquet").is_file()
    assert store.done() == {b, c}


def test_a_part_mixing_its_rows_with_another_points_is_set_aside(tmp_path, points) -> None:
    store, (a, b, c) = _store(tmp_path, points)
    pd.concat([points[a], points[c]], ignore_index=True).to_parquet(store.path / f"point-{a}.parquet", index=False)
    with pytest.warns(StoreWarning, match=rf"holds rows of point '{c}', besides its own"):
        assert store.done() == {b, c}


def test_a_mislabelled_failure_record_is_set_aside_too(tmp_path, points) -> None:
    store, (a, b, c) = _store(tmp_path, points)
    points[b].to_parquet(store.path / "failed-zz.parquet", index=False)
    with pytest.warns(StoreWarning, match=r"failed-zz\.parquet \(holds rows of point"):
        frame = store.read()
    assert (frame["point_id"] == b).sum() == len(points[b])
    assert (store.path / f"{ASIDE_PREFIX}failed-zz.parquet").is_file()


def test_a_part_set_aside_twice_keeps_both_copies(tmp_path, points) -> None:
    store, (a, b, c) = _store(tmp_path, points)
    for _ in range(2):
        points[b].to_parquet(store.path / f"point-{a}.parquet", index=False)
        with pytest.warns(StoreWarning, match="set aside"):
            store.done()
    assert sorted(p.name for p in store.path.glob(f"{ASIDE_PREFIX}*")) == [
        f"{ASIDE_PREFIX}point-{a}.1.parquet", f"{ASIDE_PREFIX}point-{a}.parquet"]


def test_unreadable_and_mislabelled_parts_give_one_warning_together(tmp_path, points) -> None:
    store, (a, b, c) = _store(tmp_path, points)
    points[b].to_parquet(store.path / f"point-{a}.parquet", index=False)
    (store.path / "point-zz.parquet").write_bytes(b"garbage, not parquet")
    with pytest.warns(StoreWarning) as caught:
        store.read()
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "skipped 1 unreadable part" in message and "point-zz.parquet" in message
    assert f"set aside 1 part file(s) that do not hold their point's rows: point-{a}.parquet" in message


def test_a_resumed_sweep_runs_the_point_of_a_mislabelled_part_again(tmp_path) -> None:
    """cl.sweep on a store (no GPU here: each point that runs is recorded as failed with the real NoGPUError). The
    point whose part holds another point's recorded rows is run again, not skipped."""
    spec = cl.MatmulSpec(m=64, n=64, k=64, dtype="fp16")
    store = tmp_path / "store"
    with cf.ThreadPoolExecutor(1) as ex:
        first = cl.sweep(spec, {"m": [64, 128]}, store=store, executor=ex, progress=False)
    a, b = list(first["point_id"])
    recorded = cl.load_results("h100_fp8_gemm")
    other = recorded[recorded["point_id"] == recorded["point_id"].iloc[0]]
    other.to_parquet(store / f"point-{a}.parquet", index=False)  # claims to hold point a: counted done before
    with cf.ThreadPoolExecutor(1) as ex, pytest.warns(StoreWarning, match=rf"point-{a}\.parquet"):
        again = cl.sweep(spec, {"m": [64, 128]}, store=store, executor=ex, progress=False)
    assert sorted(again["point_id"]) == sorted([a, b])  # one record each: a was run again, the foreign rows gone
    row = again[again["point_id"] == a].iloc[0]
    assert row["point_status"] == "failed" and "GPU" in row["point_error"]
    assert (store / f"{ASIDE_PREFIX}point-{a}.parquet").is_file()
