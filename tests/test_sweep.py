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
    with pytest.raises(cl.OptionError, match="not a field"):
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
    assert again["point_id"].nunique() == 3 and not _repeated(again)


def _repeated(frame) -> bool:
    """Whether any row is there twice: a point's plan (on a GPU, one row per plan) or a failed point's one row."""
    return bool(frame.duplicated([c for c in ("point_id", "plan") if c in frame.columns]).any())


def test_text_progress_shows_count_and_eta(capsys) -> None:
    from cudnn_lab.sweeps import text_progress

    show = text_progress()
    show(1, 4, 12.0, "conv")
    err = capsys.readouterr().err
    assert "1/4" in err and "ETA" in err


SLOW_SWEEP = textwrap.dedent("""
    import concurrent.futures as cf, sys, time
    import cudnn_lab as cl

    class SlowExecutor(cf.ThreadPoolExecutor):  # a real executor that hands out points slowly, to be killed midway
        def submit(self, *a, **k):
            time.sleep(0.4)
            return super().submit(*a, **k)

    with SlowExecutor(1) as ex:
        cl.sweep(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), {"n": list(range(1, 21))}, store=sys.argv[1],
                 executor=ex, progress=False)
""")


def _parts(store) -> list:
    """Points written so far (not a temporary file still being written)."""
    return [p for p in store.glob("*.parquet") if not p.name.startswith(".")] if store.exists() else []


def test_killed_sweep_resumes_without_losing_or_duplicating_rows(tmp_path) -> None:
    store = tmp_path / "s.parquet"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_SWEEP, str(store)])
    deadline = time.time() + 60
    while time.time() < deadline and len(_parts(store)) < 3:
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = pd.read_parquet(store)
    assert 3 <= before["point_id"].nunique() < 20
    with cf.ThreadPoolExecutor(2) as ex:
        after = cl.sweep(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8), {"n": list(range(1, 21))}, store=store,
                         executor=ex, progress=False)
    assert after["point_id"].nunique() == 20
    assert not _repeated(after)


def test_point_ids_leave_the_device_index_out() -> None:
    # A GPUExecutor worker sees its GPU as device 0: the same point on "device 1" must keep its id.
    from cudnn_lab.sweeps.points import id_settings

    a, b = cl.RunOptions(device=0).to_dict(), cl.RunOptions(device=1).to_dict()
    assert point_id(BASE, id_settings(a), "H100") == point_id(BASE, id_settings(b), "H100")
    assert point_id(BASE, id_settings(a), "H100") != point_id(BASE, id_settings(cl.RunOptions(seed=1).to_dict()),
                                                               "H100")


def test_an_option_added_later_keeps_old_point_ids_at_its_default() -> None:
    # A store written before screen_ratio existed resumes: at its default the option is not part of the id.
    from cudnn_lab.sweeps.points import ID_SETTINGS_NEW, id_settings

    now = cl.RunOptions().to_dict()
    before = {k: v for k, v in now.items() if k not in ID_SETTINGS_NEW}
    assert point_id(BASE, id_settings(now), "H200") == point_id(BASE, id_settings(before), "H200")
    off = cl.RunOptions(screen_ratio=0).to_dict()
    assert point_id(BASE, id_settings(off), "H200") != point_id(BASE, id_settings(now), "H200")


def test_the_grid_is_lazy_and_its_size_a_product() -> None:
    from cudnn_lab.sweeps import grid_size, iter_points

    over = {"n": range(1, 1001), "c": range(1, 1001), "k": range(1, 1001)}
    assert grid_size(BASE, over) == 10**9
    points = iter_points(BASE, over)
    first = next(points)
    assert (first.n, first.c, first.k) == (1, 1, 1)
    assert next(points).k == 2  # the last axis varies fastest


def test_a_huge_grid_announces_its_size_and_stores_a_point_at_once(tmp_path) -> None:
    seen: list[tuple[int, int, str]] = []

    class Stop(Exception):
        pass

    def progress(done: int, total: int, eta: float | None, message: str) -> None:
        seen.append((done, total, message))
        if done >= 1:
            raise Stop  # enough: the first point is stored

    store = tmp_path / "s"
    with cf.ThreadPoolExecutor(1) as ex, pytest.raises(Stop):
        cl.sweep(BASE, {"n": range(1, 1001), "c": range(1, 1001), "k": range(1, 1001)}, store=store, executor=ex,
                 progress=progress)
    assert seen[0][:2] == (0, 10**9) and "1000000000 point" in seen[0][2]
    assert len(list(store.glob("*.parquet"))) >= 1


def test_numpy_values_in_over_become_plain_python(tmp_path) -> None:
    import numpy as np

    points = grid(BASE, {"n": np.array([1, 2]), "padding": [np.int64(1)], "layout": np.array(["NCHW"])})
    assert [(p.n, p.padding, p.layout) for p in points] == [(1, 1, "NCHW"), (2, 1, "NCHW")]
    assert all(type(p.n) is int for p in points)


def test_a_sweep_uses_the_run_options_of_cl_run(tmp_path) -> None:
    with cf.ThreadPoolExecutor(1) as ex:
        frame = cl.sweep(BASE, {"n": [1]}, executor=ex, progress=False, options={"plans": "heuristic"},
                         torch_baseline=False, time_cap_s=0.1)
    if cl.probe().gpu:  # the point ran: it holds the heuristics' pick alone, as the options said
        assert frame["point_status"].tolist() == ["ok"] and frame["is_pick"].all()
    else:  # no GPU here: the point says why
        assert frame["point_status"].tolist() == ["failed"]
        assert "GPU" in frame["point_error"].iloc[0]


# ------------------------------------------------------------------------------------------------ axes from text

def test_parse_axis_types_values_as_the_field_is() -> None:
    from cudnn_lab.sweeps import parse_axis

    assert parse_axis(cl.ConvSpec, "n", "1, 8, 32") == (1, 8, 32)
    assert parse_axis(cl.ConvSpec, "padding", "1, 3x1") == (1, (3, 1))
    assert parse_axis(cl.ConvSpec, "layout", "NCHW,NHWC") == ("NCHW", "NHWC")
    assert parse_axis(cl.SdpaSpec, "causal", "true, no") == (True, False)
    assert parse_axis(BASE, "n", "2") == (2,)  # a spec stands for its class


def test_parse_axis_reads_int_choices_and_optional_values() -> None:
    import dataclasses

    from cudnn_lab.sweeps import axis_kind, parse_axis, sweep_fields

    for cls in (cl.ConvSpec, cl.MatmulSpec, cl.SdpaSpec, cl.NormSpec, cl.PoolSpec):
        for field in sweep_fields(cls):
            kind = axis_kind(cls, field)
            if kind in ("optional_int", "optional_float"):
                assert parse_axis(cls, field, "none") == (None,)
            choices = cls.field_choices().get(field)
            if choices:
                assert parse_axis(cls, field, ", ".join(map(str, choices))) == tuple(choices)
        assert "epilogue" not in sweep_fields(cls)
        assert set(sweep_fields(cls)) <= {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("field,text,match", [
    ("n", "", "one or more"), ("n", "1,,2", "empty value"), ("n", "one", "whole number"), ("n", "1, 1", "twice"),
    ("layout", "NCWH", "one of"), ("padding", "1x2x3", "pair"), ("epilogue", "relu", "can sweep"),
    ("bogus", "1", "can sweep"), ("n", 5, "as text"),
])
def test_parse_axis_names_the_field_and_what_is_wrong(field: str, text, match: str) -> None:
    from cudnn_lab.sweeps import parse_axis

    with pytest.raises(cl.SpecError, match=match):
        parse_axis(cl.ConvSpec, field, text)


def test_parse_axis_wants_a_spec_class() -> None:
    from cudnn_lab.sweeps import parse_axis

    with pytest.raises(cl.OptionError, match="spec class"):
        parse_axis("conv", "n", "1")
