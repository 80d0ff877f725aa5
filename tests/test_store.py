"""The sweep store: atomic appends, resume bookkeeping, failed points retried without duplicates."""

from __future__ import annotations

import pandas as pd
import pytest

from cudnn_lab.errors import SpecError
from cudnn_lab.store import Store


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
    with pytest.raises(SpecError, match="store"):
        Store(path)
