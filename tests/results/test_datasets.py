"""The recordings shipped with the kit, and load_results for names, result files, sweep files and store folders."""

from __future__ import annotations

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError, OptionError
from cudnn_lab.results import datasets
from cudnn_lab.results.store import Store


def test_recorded_datasets_list_runs_and_sweeps_with_their_gpu() -> None:
    frame = cl.recorded_datasets()
    assert list(frame.columns) == datasets.DATASET_COLUMNS
    assert set(frame["kind"]) == {"run", "sweep"}
    assert frame["gpu"].str.startswith("NVIDIA").all()
    sweeps = set(cl.recorded_datasets(kind="sweep")["name"])
    assert {"h100_standard", "h200_standard", "h100_fp8_gemm"} <= sweeps
    runs = cl.recorded_datasets(kind="run")
    assert runs["name"].str.match(r"^h[12]00_").all()  # named after the GPU by results.datasets.dataset_prefix


def test_recorded_datasets_kind_is_checked() -> None:
    with pytest.raises(OptionError, match="kind"):
        cl.recorded_datasets(kind="runs")


def test_every_recorded_run_loads_by_name() -> None:
    for name in cl.recorded_datasets(kind="run")["name"]:
        result = cl.load_results(name)
        assert isinstance(result, cl.RunResult) and len(result.ok) > 0


def test_a_recorded_sweep_loads_as_a_frame() -> None:
    frame = cl.load_results("h100_standard")
    assert isinstance(frame, pd.DataFrame) and {"point_id", "point_status", "is_pick"} <= set(frame.columns)


def test_load_results_of_a_saved_run_and_a_store_folder(tmp_path) -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    again = cl.load_results(result.save(tmp_path / "r.json"))
    pd.testing.assert_frame_equal(again.plans, result.plans)
    sweep = cl.load_results("h200_standard")
    store = Store(tmp_path / "s.parquet")
    for pid, rows in list(sweep.groupby("point_id", sort=False))[:3]:
        store.append(pid, rows)
    assert cl.load_results(tmp_path / "s.parquet")["point_id"].nunique() == 3


def test_load_results_of_a_sweep_file_copy(tmp_path) -> None:
    sweep = cl.load_results("h200_standard")
    sweep.to_parquet(tmp_path / "copy.parquet")
    assert len(cl.load_results(str(tmp_path / "copy.parquet"))) == len(sweep)


def test_unknown_name_lists_the_recorded_datasets() -> None:
    with pytest.raises(OptionError, match="h200_standard"):
        cl.load_results("no_such_recording")


def test_a_folder_that_is_not_a_store_is_refused(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(DataError, match="not a sweep store"):
        cl.load_results(tmp_path)


def test_a_broken_recording_in_the_data_folder_is_named(tmp_path, monkeypatch) -> None:
    (tmp_path / "broken.json").write_text('{"schema": 1, "spec": ')
    monkeypatch.setattr(datasets, "RECORDED_DIR", tmp_path)
    with pytest.raises(DataError, match="broken.json"):
        cl.recorded_datasets(kind="run")


def test_a_recording_without_its_device_or_a_sweep_without_points_is_named_when_listed(tmp_path, monkeypatch) -> None:
    """Listing reads only what the list shows (spec, device, date; a sweep's metadata columns), still checked."""
    import json

    import pandas as pd

    good = json.loads((datasets.RECORDED_DIR / "h200_matmul_fp16_bias.json").read_text())
    del good["device"]
    (tmp_path / "no_device.json").write_text(json.dumps(good))
    monkeypatch.setattr(datasets, "RECORDED_DIR", tmp_path)
    with pytest.raises(DataError, match=r"no_device\.json.*device.*missing"):
        cl.recorded_datasets(kind="run")
    sweeps = tmp_path / "sweeps"
    sweeps.mkdir()
    pd.DataFrame({"gpu": ["NVIDIA H100"], "median_ms": [1.0]}).to_parquet(sweeps / "pointless.parquet")
    monkeypatch.setattr(datasets, "SWEEPS_DIR", sweeps)
    with pytest.raises(DataError, match=r"pointless\.parquet.*point_id"):
        cl.recorded_datasets(kind="sweep")
