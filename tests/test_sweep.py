"""Sweeps without a GPU: the grid, point ids, invalid points, resume and a killed sweep resumed."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.sweeps import grid, point_id

BASE = cl.ConvSpec(n=1, c=8, h=8, w=8, k=8)


def test_grid_is_the_cartesian_product() -> None:
    points = grid(BASE, {"n": [1, 2, 4], "layout": ["NCHW", "NHWC"]})
    assert [(p.n, p.layout) for p in points] == [(n, lay) for n in (1, 2, 4) for lay in ("NCHW", "NHWC")]


def test_grid_keeps_invalid_points_as_errors() -> None:
    points = grid(BASE, {"padding": [1, 5]})
    assert isinstance(points[0], cl.ConvSpec)
    assert isinstance(points[1], cl.SpecError) and "padding" in str(points[1])


def test_grid_refuses_unknown_field() -> None:
    with pytest.raises(cl.SpecError, match="not a field"):
        grid(BASE, {"bogus": [1]})


def test_grid_takes_a_list_of_specs() -> None:
    points = grid([BASE, cl.MatmulSpec(m=64, n=64, k=64)], {"dtype": ["fp16", "bf16"]})
    assert [type(p).__name__ for p in points] == ["ConvSpec"] * 2 + ["MatmulSpec"] * 2


def test_point_id_changes_with_spec_settings_and_gpu() -> None:
    s = {"plans": "all"}
    ids = {point_id(BASE, s, "H100"), point_id(BASE.replace(n=2), s, "H100"), point_id(BASE, {"plans": "x"}, "H100"),
           point_id(BASE, s, "H200")}
    assert len(ids) == 4
    assert point_id(BASE, s, "H100") == point_id(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), s, "H100")


def test_sweep_without_gpu_or_executor_says_so() -> None:
    if cl.probe().gpu:
        pytest.skip("a GPU is present")
    with pytest.raises(cl.NoGPUError, match="sweep"):
        cl.sweep(BASE, {"n": [1, 2]})


def test_sweep_records_every_point_once_and_goes_on_after_failures(tmp_path) -> None:
    # Without a GPU every valid point fails with NoGPUError: each is recorded with its error, none is lost.
    with cf.ThreadPoolExecutor(2) as ex:
        frame = cl.sweep(BASE, {"n": [1, 2], "padding": [1, 3]}, store=tmp_path / "s", executor=ex, progress=False)
    assert frame["point_id"].nunique() == 4
    assert set(frame["point_status"]) <= {"ok", "failed", "invalid"}
    assert (frame.loc[frame["point_status"] != "ok", "point_error"].str.len() > 0).all()


def test_rerun_on_the_same_store_duplicates_nothing(tmp_path) -> None:
    with cf.ThreadPoolExecutor(2) as ex:
        cl.sweep(BASE, {"n": [1, 2, 3]}, store=tmp_path / "s", executor=ex, progress=False)
        again = cl.sweep(BASE, {"n": [1, 2, 3]}, store=tmp_path / "s", executor=ex, progress=False)
    assert len(again) == again["point_id"].nunique() == 3


def test_text_progress_shows_count_and_eta(capsys) -> None:
    from cudnn_lab.sweeps import text_progress

    show = text_progress()
    show(1, 4, 12.0, "conv")
    err = capsys.readouterr().err
    assert "1/4" in err and "ETA" in err


SLOW_SWEEP = textwrap.dedent("""
    import concurrent.futures as cf, sys, time
    import cudnn_lab as cl
    import cudnn_lab.sweeps as sw
    real = sw.run_point
    def slow(*a):  # a real point, made slow so the test can kill the sweep in the middle
        time.sleep(0.4)
        return real(*a)
    sw.run_point = slow
    with cf.ThreadPoolExecutor(1) as ex:
        cl.sweep(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), {"n": list(range(1, 21))}, store=sys.argv[1],
                 executor=ex, progress=False)
""")


def test_killed_sweep_resumes_without_losing_or_duplicating_rows(tmp_path) -> None:
    store = tmp_path / "s.parquet"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SWEEP, str(store)])
    deadline = time.time() + 60
    while time.time() < deadline and len(list(store.glob("*.parquet")) if store.exists() else []) < 3:
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = pd.read_parquet(store)
    assert 3 <= before["point_id"].nunique() < 20
    with cf.ThreadPoolExecutor(2) as ex:
        after = cl.sweep(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), {"n": list(range(1, 21))}, store=store,
                         executor=ex, progress=False)
    assert after["point_id"].nunique() == 20
    assert len(after) == 20
