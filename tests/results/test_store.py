"""The sweep store: atomic appends, resume bookkeeping, failed points retried without duplicates, one record per
point under two concurrent writers, damaged parts and leftover temporary files."""

from __future__ import annotations

import multiprocessing
import os
import time

import pandas as pd
import pytest

from cudnn_lab.errors import DataError, PathError
from cudnn_lab.results.store import STALE_TMP_S, Store, StoreWarning


def _rows(pid: str, n: int = 2, status: str = "ok") -> pd.DataFrame:
    return pd.DataFrame({"point_id": [pid] * n, "plan": [f"eng{i}" for i in range(n)], "point_status": status})


def test_new_store_has_nothing_done(tmp_path) -> None:
    store = Store(tmp_path / "r.parquet")
    assert store.done() == set()
    assert store.read().empty


def test_appended_point_is_done_and_readable(tmp_path) -> None:
    store = Store(tmp_path / "r.parquet")
    store.append("a1", _rows("a1"))
    assert store.done() == {"a1"}
    assert list(store.read()["plan"]) == ["eng0", "eng1"]


def test_pandas_reads_the_store_folder_directly(tmp_path) -> None:
    store = Store(tmp_path / "r.parquet")
    store.append("a1", _rows("a1"))
    store.append("b2", _rows("b2", 3))
    assert len(pd.read_parquet(tmp_path / "r.parquet")) == 5


def test_appending_the_same_point_twice_keeps_one_copy(tmp_path) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1"))
    store.append("a1", _rows("a1"))
    assert len(store.read()) == 2


def test_failed_point_is_read_but_not_done(tmp_path) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1", 1, "failed"), failed=True)
    assert store.done() == set()
    assert list(store.read()["point_status"]) == ["failed"]


def test_success_after_failure_replaces_the_failure_record(tmp_path) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1", 1, "failed"), failed=True)
    store.append("a1", _rows("a1"))
    assert list(store.read()["point_status"]) == ["ok", "ok"]


def test_failed_write_leaves_no_partial_file(tmp_path) -> None:
    class Broken(pd.DataFrame):
        def to_parquet(self, *args, **kwargs):  # type: ignore[override]
            raise OSError("disk full")

    store = Store(tmp_path)
    with pytest.raises(OSError):
        store.append("a1", Broken(_rows("a1")))
    assert list(tmp_path.iterdir()) == []


def test_store_path_that_is_a_file_is_refused(tmp_path) -> None:
    path = tmp_path / "results.parquet"
    path.write_text("not a folder")
    with pytest.raises(PathError, match="must be a folder"):
        Store(path)


# ---------------------------------------------------------------------------------------------- one record per point

def _writer(path: str, status: str, ids: list[str], barrier) -> None:
    """Append every point as ok or as failed, starting together with the other writer."""
    store = Store(path)
    barrier.wait()
    for pid in ids:
        store.append(pid, _rows(pid, 2 if status == "ok" else 1, status), failed=status == "failed")


def test_two_concurrent_writers_leave_one_record_per_point_and_ok_wins(tmp_path) -> None:
    ctx = multiprocessing.get_context("spawn")
    ids = [f"p{i:02d}" for i in range(30)]
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(str(tmp_path / "s"), status, ids, barrier))
             for status in ("ok", "failed")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = Store(tmp_path / "s")
    frame = store.read()
    per_point = frame.groupby("point_id")["point_status"].agg(set)
    assert sorted(per_point.index) == ids
    assert (per_point == {"ok"}).all()
    assert len(frame) == 2 * len(ids)  # the ok record's two rows, never the failure's row on top
    assert store.done() == set(ids)
    assert not list((tmp_path / "s").glob("failed-*"))  # resume cleared the stale failures


def test_failure_written_after_an_ok_record_is_not_kept(tmp_path) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1"))
    assert store.append("a1", _rows("a1", 1, "failed"), failed=True).name == "point-a1.parquet"
    assert list(store.read()["point_status"]) == ["ok", "ok"]


def test_ok_and_failed_parts_both_on_disk_read_as_the_ok_one(tmp_path) -> None:
    """What a writer killed between its rename and its cleanup leaves: read() and done() still see one record."""
    store = Store(tmp_path)
    store.append("a1", _rows("a1", 1, "failed"), failed=True)
    _rows("a1", 3).to_parquet(tmp_path / "point-a1.parquet", index=False)  # written by hand, failure left behind
    assert len(store.read()) == 3 and set(store.read()["point_status"]) == {"ok"}
    assert store.done() == {"a1"} and not (tmp_path / "failed-a1.parquet").exists()


@pytest.mark.parametrize("content", [b"", b"garbage, not parquet", b"PAR1" + b"\x00" * 40])
def test_garbage_part_file_is_skipped_with_one_warning_and_rerun_on_resume(tmp_path, content) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1"))
    store.append("b2", _rows("b2", 3))
    (tmp_path / "point-zz.parquet").write_bytes(content)
    with pytest.warns(StoreWarning, match="point-zz.parquet") as caught:
        frame = store.read()
    assert len(caught) == 1
    assert sorted(frame["point_id"].unique()) == ["a1", "b2"]
    assert store.done() == {"a1", "b2"}  # zz is not done: a resume runs it again
    store.append("zz", _rows("zz"))
    assert sorted(store.read()["point_id"].unique()) == ["a1", "b2", "zz"]


def test_truncated_part_is_skipped(tmp_path) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1"))
    whole = store.append("b2", _rows("b2")).read_bytes()
    (tmp_path / "point-b2.parquet").write_bytes(whole[: len(whole) // 2])
    with pytest.warns(StoreWarning, match="truncated"):
        assert list(store.read()["point_id"].unique()) == ["a1"]
    assert store.done() == {"a1"}


def test_foreign_parquet_part_is_skipped(tmp_path) -> None:
    store = Store(tmp_path)
    store.append("a1", _rows("a1"))
    pd.DataFrame({"x": [1, 2]}).to_parquet(tmp_path / "point-x.parquet")
    with pytest.warns(StoreWarning, match="point_id"):
        assert list(store.read()["point_id"].unique()) == ["a1"]
    assert store.done() == {"a1"}


def test_leftover_temporary_files_are_removed_when_old_and_ignored_when_fresh(tmp_path) -> None:
    old, fresh = tmp_path / ".tmp-old.parquet", tmp_path / ".tmp-fresh.parquet"
    for tmp in (old, fresh):
        tmp.write_bytes(b"half a write")
    os.utime(old, (time.time() - 2 * STALE_TMP_S,) * 2)
    store = Store(tmp_path)
    assert not old.exists() and fresh.exists()  # a fresh one may belong to a writer still at work
    store.append("a1", _rows("a1"))
    assert list(store.read()["point_id"]) == ["a1", "a1"]
    assert store.clean_tmp(older_than_s=0) == [fresh]


def test_point_id_must_be_a_plain_name(tmp_path) -> None:
    with pytest.raises(DataError, match="point id"):
        Store(tmp_path).append("../escape", _rows("x"))


def test_parts_read_ahead_give_the_same_rows_and_a_part_changed_since_is_read_again(tmp_path) -> None:
    store = Store(tmp_path / "r.parquet")
    for pid in ("a1", "b2", "c3"):
        store.read_ahead(store.append(pid, _rows(pid)))
    time.sleep(0.01)
    changed = store.append("b2", _rows("b2", 5))  # rewritten after it was read ahead: its old rows must not show
    assert changed in store._ahead  # the stale read-ahead is still there, keyed by the file's old stamp
    got = store.read()
    fresh = Store(tmp_path / "r.parquet").read()  # a store that read nothing ahead
    pd.testing.assert_frame_equal(got, fresh)
    assert (got["point_id"] == "b2").sum() == 5 and store._ahead == {} and store._reader is None
