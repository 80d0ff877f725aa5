"""The `cudnn-lab` command with a closed stdout (`| head -0`, a closed terminal): no traceback, nothing lost.

Each command runs as a real process whose stdout is a pipe with its read end already closed, so its first write
meets EPIPE, as under `cudnn-lab ... | head -0`: with Python's buffered stdout (the error comes at the final flush)
and unbuffered (PYTHONUNBUFFERED=1: it comes at the first print).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab import cli

REPO = Path(cli.__file__).resolve().parent.parent
RECORDING = "h100_conv_nhwc_fp16_bias_relu"
NO_GPU_WORDS = "Cannot run on a GPU"  # NoGPUError's message


def _env(unbuffered: bool = False) -> dict[str, str]:
    """This checkout's package first on the path, whether or not it is installed; stdout buffered or not."""
    path = os.environ.get("PYTHONPATH", "")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + path if path else "")
    return {**env, "PYTHONUNBUFFERED": "1"} if unbuffered else env


def cudnn_lab_closed(*args: str, cwd: Path, stderr_closed: bool = False,
                     unbuffered: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``python -m cudnn_lab.cli ARGS`` with stdout (and stderr with ``stderr_closed``) a pipe nobody reads."""
    read, write = os.pipe()
    os.close(read)  # closed before the child writes anything: every write to it fails with EPIPE
    try:
        return subprocess.run([sys.executable, "-m", "cudnn_lab.cli", *args], stdout=write,
                              stderr=write if stderr_closed else subprocess.PIPE, text=True, cwd=cwd,
                              env=_env(unbuffered), timeout=300)
    finally:
        os.close(write)


def assert_clean(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in (proc.stderr or ""), proc.stderr
    assert "Exception ignored" not in (proc.stderr or ""), proc.stderr  # the interpreter's final flush


@pytest.mark.parametrize("args", [["doctor"], ["cache", "--info"], ["cache"], ["--help"], ["--version"],
                                  ["run", "--help"], ["sweep", "--help"], ["report", "--help"],
                                  ["plans", "--help"], ["profile", "--help"],
                                  ["plans", "SPEC", "--target", "h200", "--target", "sm80", "--recorded"]],
                         ids=lambda a: " ".join(a))
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_printing_commands_exit_0_into_a_closed_stdout(args: list[str], unbuffered: bool, tmp_path: Path) -> None:
    if "SPEC" in args:  # a problem with recorded what-if answers
        import cudnn_lab as cl

        spec = tmp_path / "conv.json"
        spec.write_text(cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout="NHWC",
                                    dtype="fp16").to_json())
        args = [str(spec) if a == "SPEC" else a for a in args]
    proc = cudnn_lab_closed(*args, cwd=tmp_path, unbuffered=unbuffered)
    assert_clean(proc)
    assert proc.returncode == 0


@pytest.mark.parametrize(("stderr_closed", "unbuffered"), [(False, False), (False, True), (True, True)],
                         ids=["stdout", "stdout-unbuffered", "stdout-and-stderr"])
def test_report_into_a_closed_stdout_keeps_the_file_and_exits_0(stderr_closed: bool, unbuffered: bool,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "sub" / "r.html"
    proc = cudnn_lab_closed("report", RECORDING, "-o", str(out), cwd=tmp_path, stderr_closed=stderr_closed,
                            unbuffered=unbuffered)
    assert_clean(proc)
    assert proc.returncode == 0  # was 5: the "saved" line's BrokenPipeError was taken for a failed write
    assert "<table" in out.read_text()


def test_report_into_a_closed_stdout_makes_no_fallback_file(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    env_tmp = tmp_path / "tmp"
    env_tmp.mkdir()
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "cudnn_lab.cli", "report", RECORDING, "-o", str(out)],
                              stdout=write, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                              env={**_env(unbuffered=True), "TMPDIR": str(env_tmp)}, timeout=300)
    finally:
        os.close(write)
    assert_clean(proc)
    assert proc.returncode == 0
    assert out.is_file()
    assert list(env_tmp.glob("cudnn-lab-*")) == []  # the report went where asked, not to a temporary file


def test_doctor_with_stdout_closed_from_the_start(tmp_path: Path) -> None:
    """`cudnn-lab doctor >&-`: Python starts with no stdout at all."""
    proc = subprocess.run(["sh", "-c", 'exec "$0" -m cudnn_lab.cli doctor >&-', sys.executable],
                          stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=_env(), timeout=300)
    assert_clean(proc)
    assert proc.returncode == 0


def test_a_usage_error_into_closed_streams_still_exits_2(tmp_path: Path) -> None:
    proc = cudnn_lab_closed("report", RECORDING, cwd=tmp_path, stderr_closed=True)  # -o is required
    assert proc.returncode == 2


def _sweep_file(tmp_path: Path) -> Path:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"spec": json.loads(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8).to_json()),
                             "over": {"n": [1, 2]}, "plans": "heuristic"}))
    return f


def _spec_file(tmp_path: Path) -> Path:
    f = tmp_path / "s.spec.json"
    f.write_text(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8).to_json())
    return f


@pytest.fixture
def no_gpu() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")


@pytest.mark.parametrize("stderr_closed", [False, True], ids=["stdout", "stdout-and-stderr"])
def test_sweep_without_gpu_fails_cleanly_into_a_closed_stdout(stderr_closed: bool, tmp_path: Path,
                                                              no_gpu: None) -> None:
    proc = cudnn_lab_closed("sweep", str(_sweep_file(tmp_path)), cwd=tmp_path, stderr_closed=stderr_closed)
    assert proc.returncode == 3  # NoGPUError's code, also when its message cannot be printed
    if not stderr_closed:
        assert_clean(proc)
        assert proc.stderr.count(NO_GPU_WORDS) == 1


@pytest.mark.parametrize("stderr_closed", [False, True], ids=["stdout", "stdout-and-stderr"])
def test_run_without_gpu_fails_cleanly_into_a_closed_stdout(stderr_closed: bool, tmp_path: Path,
                                                            no_gpu: None) -> None:
    out = tmp_path / "r.json"
    proc = cudnn_lab_closed("run", str(_spec_file(tmp_path)), "-o", str(out), cwd=tmp_path,
                            stderr_closed=stderr_closed)
    assert proc.returncode == 3
    assert not out.exists()  # nothing ran, nothing saved
    if not stderr_closed:
        assert_clean(proc)
        assert proc.stderr.startswith(f"cudnn-lab run: {NO_GPU_WORDS}")
        assert proc.stderr.count(NO_GPU_WORDS) == 1


def test_run_help_documents_the_closed_stdout_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "closed stdout" in text and "same exit code" in text


def test_say_into_a_closed_pipe_drops_the_output_and_later_writes() -> None:
    """The helper every command prints through: the first EPIPE points the descriptor at the null device."""
    read, write = os.pipe()
    os.close(read)
    stream = io.TextIOWrapper(io.FileIO(write, "w"))
    saved = sys.stdout
    sys.stdout = stream
    try:
        cli._say("a line nobody reads")
        cli._say("and another")  # the descriptor now goes to the null device
        print("a plain print", flush=True)
    finally:
        sys.stdout = saved
        stream.close()


def test_say_keeps_other_write_errors() -> None:
    """Only a closed stream is the user's choice: another failure to print is not hidden."""
    full = open("/dev/full", "w")  # noqa: SIM115 - every write fails with ENOSPC
    saved = sys.stdout
    sys.stdout = full
    try:
        with pytest.raises(OSError, match="No space"):
            cli._say("x")
    finally:
        sys.stdout = saved
        try:
            full.close()
        except OSError:
            pass


@pytest.mark.gpu
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_run_into_a_closed_stdout_keeps_the_result_and_report(unbuffered: bool, tmp_path: Path) -> None:
    """The plan table used to be printed before the save: its BrokenPipeError lost the finished run."""
    out, report = tmp_path / "r.json", tmp_path / "r.html"
    proc = cudnn_lab_closed("run", str(_spec_file(tmp_path)), "--plans", "heuristic", "--time-cap-s", "0.05",
                            "-o", str(out), "--report", str(report), cwd=tmp_path, unbuffered=unbuffered)
    assert_clean(proc)
    assert proc.returncode == 0
    assert len(cl.load_results(out).plans) > 0
    assert "<table" in report.read_text()


@pytest.mark.gpu
def test_sweep_into_a_closed_stdout_keeps_the_store(tmp_path: Path) -> None:
    store = tmp_path / "store.parquet"
    proc = cudnn_lab_closed("sweep", str(_sweep_file(tmp_path)), "--store", str(store), "--time-cap-s", "0.05",
                            cwd=tmp_path)
    assert_clean(proc)
    assert proc.returncode == 0
    assert cl.load_results(store)["point_id"].nunique() == 2


@pytest.mark.parametrize("script", ["record.py", "record_sweeps.py"])
def test_recording_scripts_without_gpu_say_so_once(script: str, tmp_path: Path, no_gpu: None) -> None:
    """They used to print NoGPUError once per problem (34 times) and end in a traceback."""
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / script), "--out", str(out)], capture_output=True,
                          text=True, cwd=tmp_path, env=_env(), timeout=300)
    assert proc.returncode == 3  # NoGPUError's exit code in the CLI's table
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"{script}: {NO_GPU_WORDS}")
    assert proc.stderr.count(NO_GPU_WORDS) == 1
    assert proc.stdout == ""
    assert not out.exists()  # nothing made before the check
