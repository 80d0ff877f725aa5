"""Sweeps on a real GPU: a store filled point by point, killed in the middle and resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

import cudnn_lab as cl

pytestmark = pytest.mark.gpu

BASE = cl.ConvSpec(n=2, c=32, h=16, w=16, k=32, layout="NHWC", dtype="fp16")
OVER = {"n": [1, 2, 4, 8, 16], "layout": ["NCHW", "NHWC"]}


def test_sweep_rows_carry_spec_device_and_pick(tmp_path) -> None:
    frame = cl.sweep(BASE, {"layout": ["NCHW", "NHWC"]}, store=tmp_path / "s", progress=False, time_cap_s=0.05,
                     plans="heuristic")
    assert set(frame["point_status"]) == {"ok"}
    assert frame["is_pick"].sum() == 2
    assert frame["gpu"].notna().all() and (frame["median_ms"] > 0).all()
    assert set(frame["spec_layout"]) == {"NCHW", "NHWC"}


def test_all_plan_sweep_marks_best_per_point(tmp_path) -> None:
    frame = cl.sweep(BASE, {"dtype": ["fp16", "bf16"]}, plans="all", progress=False, time_cap_s=0.05)
    assert frame.groupby("point_id")["is_best"].sum().eq(1).all()


def test_a_thread_pool_sweep_takes_turns_on_the_gpu_and_every_point_checks_out(tmp_path) -> None:
    # Threads share the process's sessions (handles, streams, inputs): runs take turns (session.RUN_LOCK) instead of
    # racing on them (before the lock, two threads crashed the process or failed the check of a correct plan).
    import concurrent.futures as cf

    with cf.ThreadPoolExecutor(3) as ex:
        frame = cl.sweep(BASE, {"n": [1, 2, 4], "layout": ["NCHW", "NHWC"]}, store=tmp_path / "s", executor=ex,
                         progress=False, time_cap_s=0.05, plans="heuristic", seed=3)
    assert set(frame["point_status"]) == {"ok"} and frame["point_id"].nunique() == 6
    assert frame["pass_torch"].all() and (frame["median_ms"] > 0).all()
    assert (frame["point_s"] > 0).all()  # each point says how long it took on its worker


SWEEP = textwrap.dedent(f"""
    import sys
    import cudnn_lab as cl
    cl.sweep(cl.ConvSpec(n=2, c=32, h=16, w=16, k=32, layout="NHWC", dtype="fp16"), {OVER!r},
             store=sys.argv[1], progress=False, time_cap_s=0.05, baselines=False, plans="heuristic")
""")


def test_killed_gpu_sweep_resumes_without_losing_or_duplicating_rows(tmp_path) -> None:
    """On an H100 (2026-11-22) this found 51 rows, not 10: the point run here that an earlier test of this module
    had run with plans='all' reused that session's plans with their old 'ok' status. Statuses are per run now."""
    store = tmp_path / "s.parquet"
    proc = subprocess.Popen([sys.executable, "-c", SWEEP, str(store)])
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and (
            not store.exists() or len(list(store.glob("point-*.parquet"))) < 3):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = pd.read_parquet(store)["point_id"].nunique()
    assert done >= 3
    frame = cl.sweep(BASE, OVER, store=store, progress=False, time_cap_s=0.05, baselines=False, plans="heuristic")
    assert frame["point_id"].nunique() == 10
    assert len(frame) == 10  # heuristic pick only: one row per point
