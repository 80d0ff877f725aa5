"""The one recordings registry (results/recordings.py): every registered kind's shipped folder loads completely
through ``read``, and a damaged copy of one file of each kind (truncated, wrong format tag, a field of the wrong
type, oversized) is refused with DataError naming the file; one cache that reads a changed file again."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import pkgutil
import shutil
from pathlib import Path
from typing import Any

import pytest

from cudnn_lab.errors import DataError, OptionError, PathError
from cudnn_lab.results import recordings

for _package in ("cudnn_lab.whatif",):  # packages whose modules register kinds of their own, where they exist
    try:
        _found = importlib.import_module(_package)
    except ImportError:
        continue
    for _info in pkgutil.iter_modules(getattr(_found, "__path__", [])):
        importlib.import_module(f"{_package}.{_info.name}")

KINDS = recordings.kinds()
NAMES = [k.name for k in KINDS]
#: Top-level keys that say which format a JSON recording is in.
TAG_KEYS = ("schema", "format", "version", "kind")


def test_the_results_layer_registers_runs_and_sweeps() -> None:
    assert {"run", "sweep"} <= set(NAMES)
    assert len(NAMES) == len(set(NAMES))
    for k in KINDS:
        assert k.suffix in (".json", ".parquet") and k.max_bytes > 0 and k.title


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_file_of_a_kind_loads_through_read(name) -> None:
    k = recordings.kind(name)
    files = sorted(p for p in k.folder.iterdir() if p.name.endswith(k.suffix))
    assert files, f"no {k.suffix} file ships in {k.folder}"
    loaded = recordings.read(name)
    assert len(loaded) == len(files)
    assert all(item is not None for item in loaded)
    assert recordings.files(name) == files  # in sorted name order
    assert recordings.read(name)[0] is loaded[0]  # the second read comes from the cache


def _first(name: str) -> Path:
    return recordings.files(name)[0]


def _truncated(src: Path, dst: Path) -> None:
    data = src.read_bytes()
    dst.write_bytes(data[: len(data) // 2])


def _wrong_tag(src: Path, dst: Path) -> None:
    if src.suffix == ".parquet":
        dst.write_bytes(b"PAR9" + src.read_bytes()[4:])
        return
    data = json.loads(src.read_text(encoding="utf-8"))
    tag = next((key for key in TAG_KEYS if isinstance(data, dict) and key in data), None)
    if tag is None:
        pytest.skip(f"{src.name} has no format tag ({', '.join(TAG_KEYS)})")
    data[tag] = 999 if isinstance(data[tag], int) else "no-such-format"
    dst.write_text(json.dumps(data), encoding="utf-8")


def _wrong_type(src: Path, dst: Path) -> None:
    if src.suffix == ".parquet":
        import pandas as pd

        frame = pd.read_parquet(src)
        col = next(c for c in frame.columns if frame[c].dtype.kind == "f" and frame[c].notna().any())
        frame[col] = frame[col].map(lambda v: None if pd.isna(v) else "fast")
        frame.to_parquet(dst)
        return
    data = json.loads(src.read_text(encoding="utf-8"))
    # an object- or list-valued field becomes text (the first of them: the spec of a run, a what-if's answers)
    key = next(k for k, v in data.items() if isinstance(v, (dict, list)))
    data[key] = "junk"
    dst.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("damage", [_truncated, _wrong_tag, _wrong_type], ids=["truncated", "tag", "type"])
def test_a_damaged_copy_is_refused_naming_the_file(tmp_path, name, damage) -> None:
    src = _first(name)
    dst = tmp_path / f"damaged{src.suffix}"
    damage(src, dst)
    with pytest.raises(DataError) as caught:
        recordings.read_one(name, dst)
    assert "damaged" in str(caught.value)
    with pytest.raises(DataError, match="damaged"):  # and in a folder of them, read whole
        recordings.read(name, tmp_path)


@pytest.mark.parametrize("name", NAMES)
def test_an_oversized_file_is_refused_before_it_is_read(tmp_path, monkeypatch, name) -> None:
    src = _first(name)
    dst = tmp_path / f"big{src.suffix}"
    shutil.copyfile(src, dst)

    def never(path: Path) -> Any:
        raise AssertionError(f"{path} was read")

    small = dataclasses.replace(recordings.kind(name), max_bytes=dst.stat().st_size - 1, load=never, head=never)
    monkeypatch.setitem(recordings._KINDS, name, small)
    recordings.clear()
    with pytest.raises(DataError, match=r"big.*more than the .* the kit reads"):
        recordings.read_one(name, dst)


def test_a_changed_file_is_read_again_and_an_unchanged_one_is_not(tmp_path) -> None:
    src = _first("run")
    dst = tmp_path / "r.json"
    shutil.copyfile(src, dst)
    first = recordings.read_one("run", dst)
    assert recordings.read_one("run", dst) is first
    _truncated(src, dst)
    with pytest.raises(DataError, match="r.json"):
        recordings.read_one("run", dst)
    shutil.copyfile(src, dst)
    os.utime(dst, ns=(1, 1))
    again = recordings.read_one("run", dst)
    assert again is not first and again.spec == first.spec
    recordings.clear()
    assert recordings.read_one("run", dst) is not again


def test_a_folder_or_fifo_is_refused_as_not_a_regular_file(tmp_path) -> None:
    with pytest.raises(PathError, match="directory"):
        recordings.read_one("run", tmp_path)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.json"
        os.mkfifo(fifo)
        with pytest.raises(PathError, match="regular"):
            recordings.read_one("run", fifo)


def test_unknown_kinds_and_second_kinds_of_a_name_are_refused() -> None:
    with pytest.raises(OptionError, match="run.*sweep|sweep.*run"):
        recordings.kind("runs")
    run = recordings.kind("run")
    assert recordings.register(run) is run  # the same kind again: nothing changes
    with pytest.raises(OptionError, match="already registered"):
        recordings.register(dataclasses.replace(run, max_bytes=run.max_bytes + 1))
    with pytest.raises(OptionError, match="suffix"):
        recordings.RecordingKind("x", run.folder, "json", 1, run.load, "x")
