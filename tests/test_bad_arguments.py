"""Bad arguments to cl.run, cl.sweep and the CLI, as a careless user would hand them (issue 11's list): each gets
the kit's own error naming the option, file or path, before any GPU work, and a short message."""

from __future__ import annotations

import concurrent.futures as cf
import math
import os

import numpy as np
import pytest

import cudnn_lab as cl
from cudnn_lab import cli
from cudnn_lab.errors import OptionError, PathError

SPEC = cl.ConvSpec(n=1, c=8, h=8, w=8, k=8)
NO_GPU = not cl.probe().gpu


def _short(err: BaseException) -> None:
    assert len(str(err)) < 600, str(err)[:200]


# ------------------------------------------------------------------------------------------------ cl.run arguments

RUN_BAD = [
    ({"heuristics": 5}, "heuristics"), ({"heuristics": [1, 2]}, "heuristics"), ({"heuristics": "Z"}, "heuristics"),
    ({"plans": "best"}, "plans"), ({"time_cap_s": -1}, "time_cap_s"), ({"time_cap_s": math.nan}, "time_cap_s"),
    ({"time_cap_s": 10**400}, "time_cap_s"), ({"device": -1}, "device"), ({"seed": -3}, "seed"),
    ({"max_plans": 0}, "max_plans"), ({"timing": "kernel"}, "timing"), ({"timing": "x" * 100_000}, "timing"),
    ({"progress": True}, "progress"), ({"progress": "bar"}, "progress"), ({"options": "all"}, "options"),
    ({"options": {"plans": "none"}}, "plans"), ({"bogus": 1}, "bogus"),
]


@pytest.mark.parametrize("kwargs,option", RUN_BAD, ids=[o for _, o in RUN_BAD])
def test_run_refuses_bad_options_before_asking_for_a_gpu(kwargs, option: str) -> None:
    with pytest.raises(OptionError) as info:
        cl.run(SPEC, **kwargs)
    assert option in str(info.value)
    _short(info.value)


@pytest.mark.parametrize("spec", [None, "conv", {"op": "conv"}, cl.ConvSpec])
def test_run_refuses_what_is_not_a_spec(spec) -> None:
    with pytest.raises(OptionError, match="spec"):
        cl.run(spec)


def test_run_with_good_options_and_no_gpu_says_no_gpu() -> None:
    if not NO_GPU:
        pytest.skip("a GPU is present")
    with pytest.raises(cl.NoGPUError):
        cl.run(SPEC, cl.RunOptions(plans="heuristic"), seed=2)


# ------------------------------------------------------------------------------------------------ cl.sweep arguments

SWEEP_BAD = [
    ({"over": "n=1,2"}, "over"), ({"over": ["n", 1, 2]}, "over"), ({"over": {"n": 4}}, "over['n']"),
    ({"over": {"n": "1,2"}}, "over['n']"), ({"over": {"n": []}}, "over['n']"), ({"over": {"n": [1, 1]}}, "over['n']"),
    ({"over": {"bogus": [1]}}, "over['bogus']"), ({"over": {5: [1]}}, "over"),
    ({"over": {"n": np.int64(4)}}, "over['n']"),
    ({"heuristics": 5}, "heuristics"), ({"time_cap_s": -1}, "time_cap_s"), ({"progress": True}, "progress"),
    ({"executor": "threads"}, "executor"), ({"executor": cf.ThreadPoolExecutor}, "executor"),
    ({"options": 3}, "options"),
]


@pytest.mark.parametrize("kwargs,option", SWEEP_BAD, ids=[str(o) for _, o in SWEEP_BAD])
def test_sweep_refuses_bad_arguments_before_any_point(kwargs, option) -> None:
    with pytest.raises(OptionError) as info:
        cl.sweep(SPEC, **{"over": {"n": [1, 2]}, "progress": False, **kwargs})
    assert option in str(info.value)
    _short(info.value)


@pytest.mark.parametrize("spec", [None, "conv", [], [SPEC, "conv"]])
def test_sweep_refuses_what_is_not_a_spec_or_a_list_of_specs(spec) -> None:
    with pytest.raises(OptionError, match="spec"):
        cl.sweep(spec, {"n": [1]}, progress=False)


def test_numpy_values_in_over_are_taken_as_python_values() -> None:
    points = cl.sweeps.grid(SPEC, {"n": np.arange(1, 4), "dtype": np.array(["fp16"])})
    assert [p.n for p in points] == [1, 2, 3] and {p.dtype for p in points} == {"fp16"}


def test_a_store_under_a_regular_file_is_a_path_error(tmp_path) -> None:
    (tmp_path / "file").write_text("x")
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(PathError, match="file"):
        cl.sweep(SPEC, {"n": [1]}, store=tmp_path / "file" / "s", executor=ex, progress=False)


def test_a_store_that_is_a_regular_file_is_a_path_error(tmp_path) -> None:
    (tmp_path / "s.parquet").write_text("x")
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(PathError, match="folder"):
        cl.sweep(SPEC, {"n": [1]}, store=tmp_path / "s.parquet", executor=ex, progress=False)


def test_a_folder_of_other_files_is_not_taken_as_a_store(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(PathError, match="not a sweep store"):
        cl.sweep(SPEC, {"n": [1]}, store=tmp_path, executor=ex, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_an_unwritable_store_is_a_path_error(tmp_path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(PathError, match="writable"):
        cl.sweep(SPEC, {"n": [1]}, store=ro / "s", executor=ex, progress=False)


@pytest.mark.parametrize("store", ["", 5, b"s"])
def test_a_store_that_is_not_a_path_is_an_option_error(store) -> None:
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(OptionError, match="store"):
        cl.sweep(SPEC, {"n": [1]}, store=store, executor=ex, progress=False)


def test_points_the_spec_refuses_are_recorded_with_the_field_named(tmp_path) -> None:
    with cf.ThreadPoolExecutor(1) as ex:
        frame = cl.sweep(SPEC, {"n": [10**400, -1]}, executor=ex, progress=False)
    assert set(frame["point_status"]) == {"invalid"}
    assert frame["point_error"].str.contains("n=").all()
    assert frame["point_error"].str.len().max() < 600


# ------------------------------------------------------------------------------------------------ CLI arguments

@pytest.fixture
def files(tmp_path):
    (tmp_path / "dir").mkdir()
    (tmp_path / "latin1.json").write_bytes(b'{"op": "conv", "label": "\xe9"}')
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "broken.json").write_text('{"op": "conv",')
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "spec.json").write_text(SPEC.to_json())
    (tmp_path / "file").write_text("x")
    return tmp_path


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("name", ["dir", "", "latin1.json", "empty.json", "broken.json", "list.json", "deep.json",
                                  "absent.json"])
def test_cli_file_arguments_get_a_message_and_exit_2(files, capsys, command: str, name: str) -> None:
    arg = str(files / name) if name else ""
    assert cli.main([command, arg]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cudnn-lab {command}: ") and "Traceback" not in err
    assert len(err) < 800


@pytest.mark.parametrize("output,match", [("dir", "directory"), ("file/r.json", "file")])
def test_run_output_paths_are_checked_before_the_gpu(files, capsys, output: str, match: str) -> None:
    assert cli.main(["run", str(files / "spec.json"), "-o", str(files / output)]) == 2
    assert match in capsys.readouterr().err


def test_run_report_path_is_checked_before_the_gpu(files, capsys) -> None:
    assert cli.main(["run", str(files / "spec.json"), "--report", str(files / "dir")]) == 2
    assert "report" in capsys.readouterr().err


def test_run_makes_a_missing_output_folder_before_the_work(files, capsys) -> None:
    code = cli.main(["run", str(files / "spec.json"), "-o", str(files / "new" / "deeper" / "r.json")])
    if NO_GPU:
        assert code == 3
    assert (files / "new" / "deeper").is_dir()


@pytest.mark.parametrize("flags,option", [(["--heuristics", "5"], "heuristics"), (["--time-cap-s", "-1"], "time_cap_s"),
                                          (["--time-cap-s", "nan"], "time_cap_s"), (["--device", "-1"], "device"),
                                          (["--timing", "kernel"], "timing"), (["--max-plans", "0"], "max_plans")])
def test_run_options_on_the_command_line_are_checked_before_the_gpu(files, capsys, flags, option) -> None:
    assert cli.main(["run", str(files / "spec.json"), *flags]) == 2
    assert option in capsys.readouterr().err


def test_report_onto_a_directory_is_refused_before_loading(files, capsys) -> None:
    assert cli.main(["report", "h200_conv_nhwc_fp16", "-o", str(files / "dir")]) == 2
    assert "directory" in capsys.readouterr().err


def test_a_write_failing_after_the_work_goes_to_a_temporary_file_and_exits_5(files, capsys) -> None:
    result = cl.load_results("h200_conv_nhwc_fp16")
    assert cli._save(result.save, files / "file" / "r.json", "result JSON", ".result.json") == cli.EXIT_UNSAVED
    err = capsys.readouterr().err
    assert "could not write the result JSON" in err and "saved to" in err
    saved = err.split("saved to ")[1].split(" instead")[0]
    assert cl.RunResult.load(saved).spec == result.spec
    os.unlink(saved)


def test_the_help_documents_every_exit_code(capsys) -> None:
    assert cli.main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for _, code, meaning in cli.EXIT_CODES:
        assert f"{code} {' '.join(meaning.split())}" in out
    assert f"{cli.EXIT_UNSAVED} the work ran" in out


def test_the_cli_flags_default_to_run_options_defaults() -> None:
    args = cli._parser().parse_args(["run", "s.json"])
    assert cli._run_overrides(args) == {}  # nothing given: RunOptions' own defaults apply
    args = cli._parser().parse_args(["run", "s.json", "--plans", "heuristic", "--no-baselines", "--cold-l2"])
    assert cli._run_overrides(args) == {"plans": "heuristic", "baselines": False, "cold_l2": True}
