"""A process whose helpers are still starting exits at once (issue 37): the pool ends its helpers when the
interpreter begins to exit, before Python joins the threads waiting for them, and starts none after. CPU only: the
helpers run the kit's selftest role whose ready line would come minutes later."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import threading, time
    from cudnn_lab.gpu import build_pool as bp
    pool = bp.pool_for(0)
    pool.target = "cudnn_lab.gpu.workers.selftest:slow_start"
    starter = threading.Thread(target=lambda: print("ensure:", pool.ensure(2)[2], flush=True))  # not a daemon
    starter.start()
    while len(pool.helpers) < 2:
        time.sleep(0.05)
    print("pids", *[h.worker._proc.pid for h in pool.helpers], flush=True)
""")


def test_helpers_still_starting_do_not_hold_the_exit() -> None:
    env = {**os.environ, "CUDNN_LAB_SELFTEST_START_S": "600"}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=100)
    assert out.returncode == 0, out.stderr[-2000:]
    pids = [int(p) for p in next(line for line in out.stdout.splitlines() if line.startswith("pids")).split()[1:]]
    assert len(pids) == 2
    assert "ensure:" in out.stdout and "helper 0" in out.stdout  # the start threads ended, each helper said why
    for pid in pids:  # and no helper outlives the process
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().split()[2] == "Z", f"helper {pid} still runs"


def test_no_helper_is_started_once_the_exit_began() -> None:
    from cudnn_lab.gpu import build_pool as bp

    pool = bp.HelperPool(0, target="cudnn_lab.gpu.workers.selftest:echo")
    saved = bp._EXITING
    try:
        bp._EXITING = True
        ready, _, problems = pool.ensure(1)
        assert ready == [] and pool.helpers == [] and "exiting" in problems[0]
    finally:
        bp._EXITING = saved
