"""The kit's exit (issue 37): its threads joined, then its GPU state released in order while CUDA is up; and
scripts/probe_exit.py, which compares process exits with and without that, without a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import probe_exit  # noqa: E402

#: the probe's no-GPU answers (on a GPU host the probe runs instead)
no_gpu = pytest.mark.skipif(probe_exit.gpu_present() == "", reason="a GPU is here: the probe runs")


def _exit_of(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_release_callbacks_run_at_exit_newest_first_after_the_kits_threads():
    code = ("import time\nfrom cudnn_lab.gpu.device import kit_thread, release_at_exit\n"
            "state = []\n"
            "kit_thread(lambda: (time.sleep(0.5), state.append('thread')), 'cudnn_lab-test')\n"
            "release_at_exit(lambda: print('first', state, flush=True))\n"
            "release_at_exit(lambda: print('second', state, flush=True))\n"
            "print('work done', flush=True)\n")
    out = _exit_of(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["work done", "second ['thread']", "first ['thread']"]


def test_a_failing_release_does_not_stop_the_others_nor_the_exit():
    code = ("from cudnn_lab.gpu.device import release_at_exit\n"
            "release_at_exit(lambda: print('ran', flush=True))\n"
            "release_at_exit(lambda: 1 / 0)\n")
    out = _exit_of(code)
    assert out.returncode == 0 and out.stdout.strip() == "ran", (out.stdout, out.stderr)
    assert "ZeroDivisionError" not in out.stderr


def test_the_release_can_be_turned_off():
    code = ("from cudnn_lab.gpu import device\n"
            "device.release_at_exit(lambda: print('ran', flush=True))\n"
            "device.RELEASE_AT_EXIT = False\n")
    out = _exit_of(code)
    assert out.returncode == 0 and out.stdout == "", (out.stdout, out.stderr)


def test_release_gpu_state_reports_failures_and_runs_the_rest():
    from cudnn_lab.gpu import device

    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("handle gone")

    before = list(device._RELEASES)
    try:
        device.release_at_exit(lambda: ran.append("a"))
        device.release_at_exit(broken)
        failed = device.release_gpu_state()
    finally:
        device._RELEASES[:] = before
    assert ran == ["a"]
    assert len(failed) == 1 and "handle gone" in failed[0] and "broken" in failed[0]


def test_the_sessions_are_released_at_exit():
    from cudnn_lab.gpu import device, session

    assert session._release_sessions in device._RELEASES
    session._SESSIONS[("not", "a", "session")] = object()  # type: ignore[assignment]
    session._release_sessions()
    assert session._SESSIONS == {}


@no_gpu
def test_the_probe_says_it_needs_a_gpu_and_writes_why(tmp_path, capsys):
    out = tmp_path / "probe.json"
    assert probe_exit.main(["--seconds", "5", "--json", str(out)]) == 0
    assert "skipped, it needs a GPU" in capsys.readouterr().out
    assert "CUDA" in json.loads(out.read_text())["skipped"]


def test_the_probe_tables_tell_an_abort_after_the_work_from_one_during_it():
    children = [{"variant": "run_cupti", "ended": "rc 0", "work_done": True, "stderr_marks": []},
                {"variant": "run_cupti", "ended": "SIGABRT", "work_done": True,
                 "stderr_marks": ["free(): invalid pointer"]},
                {"variant": "run_cupti", "ended": "rc 1", "work_done": False, "stderr_marks": ["Traceback"]},
                {"variant": "run_cupti", "ended": "timeout", "work_done": True, "stderr_marks": []},
                {"variant": "query", "ended": "timeout", "work_done": False, "stderr_marks": []}]
    table = probe_exit.exit_table(children)
    assert table["run_cupti"]["children"] == 4
    assert table["run_cupti"]["ended"] == {"rc 0": 1, "SIGABRT": 1, "rc 1": 1, "timeout": 1}
    assert table["run_cupti"]["aborted_after_work"] == 1  # a child still exiting at its time is slow, not aborted
    assert table["run_cupti"]["slow_exit"] == 1
    assert table["run_cupti"]["marks"] == ["free(): invalid pointer", "Traceback"]
    assert table["query"]["aborted_after_work"] == 0 and table["query"]["slow_exit"] == 0
    assert [probe_exit._ended(rc) for rc in (-6, None, 0)] == ["SIGABRT", "timeout", "rc 0"]


@no_gpu
def test_a_child_that_cannot_do_its_work_is_not_counted_as_an_exit_abort():
    got = probe_exit.one_child("cupti_only", 120)  # no GPU here: the work itself fails
    assert got["ended"] == "rc 1" and got["work_done"] is False and got["exit_s"] is None, got
    assert any("Error" in m or "Traceback" in m for m in got["stderr_marks"]), got


def test_unknown_variants_are_refused(capsys):
    with pytest.raises(SystemExit):
        probe_exit.main(["--variants", "run,bogus"])
    assert "unknown exit variant 'bogus'" in capsys.readouterr().err


#: A kit program ended by end_program: what each exit step leaves on stdout tells which ran.
PROGRAM = """
import atexit, os, sys, threading, time
from cudnn_lab.gpu.device import end_program, kit_thread, release_at_exit
if sys.argv[1] == "cudnn":
    import cudnn  # the native GPU stack is loaded: the process ends before the libraries' own teardown

class Finalized:
    def __del__(self, write=os.write):
        write(1, b"\\nfinalized\\n")  # straight to the pipe: sys.stdout may be gone by then

keep = Finalized()  # collected only by the interpreter's own teardown

def main():
    state = []
    kit_thread(lambda: (time.sleep(0.3), state.append("joined")), "cudnn_lab-test")
    threading.Thread(target=lambda: (time.sleep(0.3), print("non-daemon done"))).start()
    threading._register_atexit(lambda: print("threading hook"))
    atexit.register(lambda: print("atexit"))
    release_at_exit(lambda: print("released"))
    print("unflushed", end="")  # a buffered write the exit must not lose
    if sys.argv[2] == "raise":
        raise ValueError("broken main")
    if sys.argv[2] == "text":
        raise SystemExit("cudnn-lab x: what went wrong")
    return int(sys.argv[2])
end_program(main)
"""


@pytest.mark.parametrize("loaded", ["cudnn", "plain"])
@pytest.mark.parametrize(("ends", "status"), [("3", 3), ("0", 0), ("raise", 1), ("text", 1)])
def test_a_kit_program_ends_with_its_status_after_every_exit_hook(loaded: str, ends: str, status: int) -> None:
    """end_program: main's status (a return, SystemExit text, an exception's traceback), Python's exit hooks all run
    in their order, buffered output kept; with cuDNN loaded the interpreter's own teardown (which runs ``__del__``
    of module objects, then the native libraries' destructors) is skipped, elsewhere it runs as usual."""
    out = subprocess.run([sys.executable, "-c", PROGRAM, loaded, ends], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == status, out.stderr[-2000:]
    lines = out.stdout.replace("unflushed", "unflushed\n").split("\n")
    assert lines[0] == "unflushed"
    steps = [ln for ln in lines if ln]
    # threading's exit first (its hooks, then the join of the non-daemon thread), then atexit hooks, newest first
    assert steps[1:5] == ["threading hook", "non-daemon done", "atexit", "released"], steps
    assert ("finalized" in steps) == (loaded == "plain")
    if ends == "raise":
        assert "ValueError: broken main" in out.stderr and "Traceback" in out.stderr
    if ends == "text":
        assert out.stderr.strip().endswith("cudnn-lab x: what went wrong")
