"""Bad files, names and paths handed to the results layer get the kit's own error naming the file, field or option
(issue 11), never a raw JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ArrowInvalid or IsADirectoryError.

Grouped like the issue's list: result JSON and recordings, JSON that cannot be parsed safely, output paths, plot
inputs of the wrong kind, sweep files and stores, Lab state and spec files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab import plots
from cudnn_lab.errors import CudnnLabError, DataError, OptionError, PathError
from cudnn_lab.report import save_report
from cudnn_lab.results import RunResult, loading


@pytest.fixture(scope="module")
def good() -> dict:
    return cl.load_results("h200_conv_nhwc_fp16").to_dict()


def _write(tmp_path: Path, data, name: str = "r.json") -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


LOADERS = [cl.load_results, RunResult.load]


# ------------------------------------------------------------------------------------------ result JSON: the file

@pytest.mark.parametrize("load", LOADERS)
def test_a_directory_is_a_path_error(tmp_path, load) -> None:
    (tmp_path / "d.json").mkdir()
    with pytest.raises((PathError, DataError), match="d.json"):
        load(tmp_path / "d.json")


@pytest.mark.parametrize("load", LOADERS)
def test_a_missing_file_is_a_path_error(tmp_path, load) -> None:
    with pytest.raises(PathError, match="does not exist"):
        load(tmp_path / "missing.json")


@pytest.mark.parametrize("load", LOADERS)
@pytest.mark.parametrize("content, needle", [(b"", "empty"), (b"  \n", "empty"),
                                             (b'{"schema": 1, "spec": {', "truncated"), (b"\xff\xfe{}", "not UTF-8"),
                                             (b"{'schema': 1}", "not valid JSON"),
                                             (b"[1, 2", "truncated")])
def test_undecodable_result_files_name_the_file(tmp_path, load, content, needle) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(DataError, match=needle) as info:
        load(path)
    assert info.value.path == str(path)


# ------------------------------------------------------------------------------------------ result JSON: the schema

@pytest.mark.parametrize("key", ["schema", "spec", "plans", "device", "torch", "ceilings", "settings"])
def test_a_missing_key_is_named(tmp_path, good, key) -> None:
    path = _write(tmp_path, {k: v for k, v in good.items() if k != key})
    with pytest.raises(DataError, match=f"field {key}: is missing"):
        cl.load_results(path)


@pytest.mark.parametrize("key, value", [
    ("device", "NVIDIA H100"), ("device", None), ("plans", {"plan": "x"}), ("torch", []), ("ceilings", 5),
    ("settings", "all"), ("warnings", "one"), ("created", 20260101), ("histograms", []), ("spec", "conv"),
    ("schema", "1"), ("schema", True),
])
def test_a_wrong_typed_key_is_named(tmp_path, good, key, value) -> None:
    path = _write(tmp_path, {**good, key: value})
    with pytest.raises(DataError, match=f"field {key}") as info:
        cl.load_results(path)
    assert "r.json" in str(info.value)


@pytest.mark.parametrize("column, value", [
    ("median_ms", "fast"), ("engine_id", 4.5), ("engine_id", True), ("pass_cudnn", "yes"), ("plan", ""),
    ("plan", None), ("status", None), ("knobs", {"k": 1}), ("samples", [1]),
])
def test_a_wrong_typed_plan_cell_is_named_with_its_row(tmp_path, good, column, value) -> None:
    plans = [dict(row) for row in good["plans"]]
    plans[2][column] = value
    with pytest.raises(DataError, match=rf"plans\[2\]\.{column}"):
        cl.load_results(_write(tmp_path, {**good, "plans": plans}))


@pytest.mark.parametrize("change, needle", [
    ({"device": {"gpu": 5}}, "device.gpu"), ({"device": {"gpu": "x", "extra": {"a": 1}}}, "device.extra"),
    ({"torch": {"benchmark_off_ms": "0.1"}}, "torch.benchmark_off_ms"), ({"ceilings": {"tflops": "800"}}, "ceilings"),
    ({"warnings": ["ok", 3]}, r"warnings\[1\]"), ({"histograms": {"p": {"edges": [0, 1], "counts": [1, 2]}}},
                                                  "histograms.p"),
    ({"histograms": {"p": {"edges": ["a"], "counts": []}}}, "edges"),
])
def test_nested_fields_are_typed_too(tmp_path, good, change, needle) -> None:
    with pytest.raises(DataError, match=needle):
        cl.load_results(_write(tmp_path, {**good, **change}))


def test_a_bad_spec_inside_a_result_names_file_and_spec_field(tmp_path, good) -> None:
    path = _write(tmp_path, {**good, "spec": {**good["spec"], "layout": "NWHC"}})
    with pytest.raises(DataError, match=r"r\.json.*field spec: .*layout"):
        RunResult.load(path)


def test_a_result_with_a_string_device_is_refused_at_load_not_later(tmp_path, good) -> None:
    with pytest.raises(DataError, match="field device: must be an object"):
        RunResult.load(_write(tmp_path, {**good, "device": "NVIDIA H200"}))


# ------------------------------------------------------------------------------------------ JSON parsed safely

@pytest.mark.parametrize("text, needle", [
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels"),
    ('{"schema": ' + "9" * 5000 + "}", "digits"),
    ('{"epsilon": ' + str(10**400) + "}", "digits"),
    ("null", "must be an object"),
    ("NaN", "not a finite number"),
])
def test_json_that_cannot_be_read_safely(tmp_path, text, needle) -> None:
    with pytest.raises(DataError, match=needle):
        cl.load_results(_write(tmp_path, text))


def test_huge_integer_in_a_spec_file_is_refused_with_the_file_named(tmp_path) -> None:
    path = _write(tmp_path, '{"op": "norm", "epsilon": ' + str(10**400) + "}", "s.json")
    with pytest.raises(DataError, match="s.json"):
        loading.read_spec_file(path)


def test_a_long_bad_value_is_shortened_in_the_message(tmp_path, good) -> None:
    path = _write(tmp_path, {**good, "device": "x" * 1_000_000})
    with pytest.raises(DataError) as info:
        cl.load_results(path)
    assert len(str(info.value)) < 500


# ------------------------------------------------------------------------------------------ names and arguments

@pytest.mark.parametrize("bad", ["", "   ", None, 3, b"h200_standard", ["h200_standard"]])
def test_empty_or_non_path_names_are_option_errors(bad) -> None:
    with pytest.raises(OptionError, match="name_or_path"):
        cl.load_results(bad)


def test_load_with_none_is_an_option_error() -> None:
    with pytest.raises(OptionError):
        RunResult.load(None)


def test_from_dict_of_none_is_a_data_error() -> None:
    with pytest.raises(DataError):
        RunResult.from_dict(None)


# ------------------------------------------------------------------------------------------ output paths

def test_save_into_a_directory_is_refused(tmp_path) -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    with pytest.raises(PathError, match="is a directory"):
        result.save(tmp_path)


def test_save_into_a_missing_folder_makes_it(tmp_path) -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    assert result.save(tmp_path / "new" / "dir" / "r.json").is_file()


def test_save_under_a_file_is_refused_and_the_result_kept(tmp_path) -> None:
    result = cl.load_results("h200_matmul_fp16_bias")
    (tmp_path / "f").write_text("x")
    with pytest.raises(PathError, match="is a file"):
        result.save(tmp_path / "f" / "r.json")
    assert len(result.plans) > 0


def test_report_onto_a_directory_is_refused_before_the_report_is_made(tmp_path, monkeypatch) -> None:
    import cudnn_lab.report as report

    result = cl.load_results("h200_matmul_fp16_bias")
    monkeypatch.setattr(report, "report_html", lambda *a, **k: pytest.fail("report made before the path check"))
    with pytest.raises(PathError, match="is a directory"):
        save_report(result, tmp_path)
    with pytest.raises(OptionError, match="report"):
        save_report(result, "")


# ------------------------------------------------------------------------------------------ plot inputs

RUN_FIGURES = [plots.latency_bar, plots.heuristic_vs_measured, plots.errors_per_plan, plots.error_histogram,
               plots.roofline]


@pytest.mark.parametrize("figure", RUN_FIGURES, ids=lambda f: f.__name__)
def test_a_sweep_frame_given_to_a_run_figure_says_it_wants_one_run(figure) -> None:
    with pytest.raises(OptionError, match="single RunResult.*sweep frame") as info:
        figure(cl.load_results("h200_standard"))
    assert figure.__name__ in str(info.value)


@pytest.mark.parametrize("figure", RUN_FIGURES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", [None, "h200_conv_nhwc_fp16", {}])
def test_other_inputs_to_a_run_figure(figure, bad) -> None:
    with pytest.raises(OptionError, match="single RunResult"):
        figure(bad)


@pytest.mark.parametrize("call", [
    lambda r: plots.sweep_latency(r, "n"), lambda r: plots.sweep_roofline(r), lambda r: plots.regret_along(r, "n"),
    lambda r: plots.error_by_dtype(r), lambda r: plots.layout_speedup_heatmap(r, "n", "c"),
    lambda r: plots.compare_gpus(r, pd.DataFrame()),
])
def test_a_run_given_to_a_sweep_figure_says_it_wants_a_sweep_frame(call) -> None:
    with pytest.raises(OptionError, match="sweep frame.*single run"):
        call(cl.load_results("h200_conv_nhwc_fp16"))


@pytest.mark.parametrize("call, option", [
    (lambda f: plots.sweep_latency(f, "n", y="speed"), "y"), (lambda f: plots.sweep_latency(f, "n", which=1), "which"),
    (lambda f: plots.sweep_latency(f, 5), "x"), (lambda f: plots.compare_gpus(f, f, kind="pie"), "kind"),
    (lambda f: plots.sweep_roofline(f, which="worst"), "which"), (lambda f: plots.sweep_latency(None, "n"), "frame"),
])
def test_bad_sweep_figure_options_are_named(call, option) -> None:
    with pytest.raises(OptionError, match=option):
        call(cl.load_results("h200_standard"))


def test_selected_plan_must_be_text() -> None:
    with pytest.raises(OptionError, match="selected"):
        plots.latency_bar(cl.load_results("h200_conv_nhwc_fp16"), selected=3)


# ------------------------------------------------------------------------------------------ sweep files and stores

@pytest.mark.parametrize("content, needle", [
    (b"", "empty"), (b"hello", "not a Parquet file"), (b"PAR1" + b"\x01" * 100, "truncated"),
    (b"PAR1" + b"\x00" * 100 + b"PAR1", "damaged"),
])
def test_undecodable_parquet_is_named(tmp_path, content, needle) -> None:
    path = _write(tmp_path, content, "s.parquet")
    with pytest.raises(DataError, match=needle) as info:
        cl.load_results(path)
    assert info.value.path == str(path)


def test_truncated_copy_of_a_recorded_sweep(tmp_path) -> None:
    whole = Path(cl.recorded_datasets(kind="sweep")["path"].iloc[0]).read_bytes()
    with pytest.raises(DataError, match="truncated"):
        cl.load_results(_write(tmp_path, whole[: len(whole) * 2 // 3], "s.parquet"))


def test_foreign_parquet_is_not_a_sweep(tmp_path) -> None:
    pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).to_parquet(tmp_path / "f.parquet")
    with pytest.raises(DataError, match="column point_id is missing"):
        cl.load_results(tmp_path / "f.parquet")


def test_sweep_with_text_in_a_number_column_is_named(tmp_path) -> None:
    frame = cl.load_results("h200_standard").head(5).copy()
    frame["median_ms"] = "slow"
    frame.to_parquet(tmp_path / "s.parquet")
    with pytest.raises(DataError, match="field median_ms"):
        cl.load_results(tmp_path / "s.parquet")


def test_store_with_only_garbage_parts_is_a_data_error(tmp_path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "point-a.parquet").write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="point-a"), pytest.raises(DataError, match="no readable point"):
        cl.load_results(tmp_path / "s")


def test_json_file_named_parquet_and_other_suffixes(tmp_path) -> None:
    with pytest.raises(DataError, match="not a Parquet file"):
        cl.load_results(_write(tmp_path, "{}", "s.parquet"))
    with pytest.raises(DataError, match="neither a result JSON"):
        cl.load_results(_write(tmp_path, "hello", "notes.txt"))


# ------------------------------------------------------------------------------------------ every error is the kit's

@pytest.mark.parametrize("content", [b"", b"\x00\x01", b"{}", b"[]", b'{"schema": 1}', b"PAR1", b"\xef\xbb\xbf",
                                     b'"text"', b"1e999", b'{"schema": 1, "spec": {"op": "conv", "n": "x"}}'])
@pytest.mark.parametrize("suffix", [".json", ".parquet", ""])
def test_no_raw_exception_for_any_small_bad_file(tmp_path, content, suffix) -> None:
    path = _write(tmp_path, content, f"f{suffix}")
    with pytest.raises(CudnnLabError):
        cl.load_results(path)
