"""Paths checked before the work: output files, input files and store folders."""

from __future__ import annotations

import os

import pytest

from cudnn_lab.errors import OptionError, PathError
from cudnn_lab.results.paths import check_input_path, check_output_path, check_store_path, write_text

root_only = pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                               reason="root can write anywhere, so permissions cannot be tested")


def test_output_path_in_a_new_folder_is_made(tmp_path) -> None:
    out = check_output_path(tmp_path / "a" / "b" / "r.json", what="result JSON")
    assert out.parent.is_dir() and not out.exists()


def test_output_path_that_is_a_directory_is_refused(tmp_path) -> None:
    with pytest.raises(PathError, match="is a directory"):
        check_output_path(tmp_path, what="report")


def test_output_path_under_a_regular_file_is_refused(tmp_path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(PathError, match="is a file, not a folder"):
        check_output_path(tmp_path / "f" / "sub" / "r.json", what="result JSON")


@pytest.mark.parametrize("bad", ["", "   ", None, 5, b"r.json", "a\x00b"])
def test_output_path_that_is_not_a_path_names_the_argument(bad) -> None:
    with pytest.raises(OptionError, match="report"):
        check_output_path(bad, what="report")


def test_output_suffix_is_checked(tmp_path) -> None:
    with pytest.raises(OptionError, match=r"\.json"):
        check_output_path(tmp_path / "r.txt", what="result JSON", suffixes=(".json",))


@root_only
def test_unwritable_folder_is_refused_before_the_work(tmp_path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(PathError, match="not writable"):
            check_output_path(locked / "r.json", what="result JSON")
    finally:
        locked.chmod(0o700)


def test_input_path_checks(tmp_path) -> None:
    with pytest.raises(PathError, match="does not exist"):
        check_input_path(tmp_path / "missing.json", what="result JSON")
    with pytest.raises(PathError, match="is a directory"):
        check_input_path(tmp_path, what="result JSON")
    assert check_input_path(tmp_path, what="store", folder=True) == tmp_path
    (tmp_path / "ok.json").write_text("{}")
    assert check_input_path(str(tmp_path / "ok.json"), what="x") == tmp_path / "ok.json"


def test_store_path_that_is_a_file_or_under_one_is_refused(tmp_path) -> None:
    (tmp_path / "f.parquet").write_text("x")
    with pytest.raises(PathError, match="must be a folder"):
        check_store_path(tmp_path / "f.parquet")
    with pytest.raises(PathError, match="is a file"):
        check_store_path(tmp_path / "f.parquet" / "inner")
    assert check_store_path(tmp_path / "new" / "s.parquet") == tmp_path / "new" / "s.parquet"


def test_write_text_replaces_atomically_and_says_where_it_failed(tmp_path) -> None:
    out = write_text(tmp_path / "r.txt", "one", what="report")
    write_text(out, "two", what="report")
    assert out.read_text() == "two" and [p.name for p in tmp_path.iterdir()] == ["r.txt"]
    with pytest.raises(PathError, match="could not write the report"):
        write_text(tmp_path / "gone" / "r.txt", "x", what="report")
