"""Plotly figures of sweep frames, built by hand (no GPU): what is drawn, from which rows, and what is left out."""

from __future__ import annotations

import hashlib
import json
import math

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab import plots
from cudnn_lab.numerics import TOLERANCES

pytest.importorskip("plotly")

GPU_A, GPU_B = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
BASE = cl.ConvSpec(n=1, c=16, h=8, w=8, k=16, r=3, s=3, padding=1, dtype="fp16", layout="NHWC")


def _cell(value):
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def _point(spec, plans, *, gpu=GPU_A, cudnn=91900, ceilings=(800.0, 3000.0), best=None) -> list[dict]:
    """One point's rows as a sweep writes them.

    ``plans`` is [(plan, engine_id, median_ms, rel_l2), ...] in the heuristic's order; a median of None is a plan
    that failed to build. The pick is the first plan that ran, the best the fastest (or ``best``, a plan name).
    """
    pid = hashlib.sha1((spec.to_json() + gpu + str(cudnn)).encode()).hexdigest()[:16]
    base = {"point_id": pid, "op": spec.op, "label": spec.label(), "spec": spec.to_json(), "flops": spec.flops(),
            "min_bytes": spec.min_bytes(), "point_status": "ok", "point_error": "", "gpu": gpu, "driver": "570.1",
            "cuda": "12.8", "cudnn": cudnn, "ceiling_tflops": ceilings[0], "ceiling_gbps": ceilings[1],
            "created": "2026-01-01T00:00:00+00:00",
            **{f"spec_{k}": _cell(v) for k, v in spec.to_dict().items() if k != "op"}}
    ran = [p for p in plans if p[2] is not None]
    pick = ran[0][0] if ran else None
    best = best or (min(ran, key=lambda p: p[2])[0] if ran else None)
    rows = []
    for rank, (plan, engine, median, rel) in enumerate(plans):
        ok = median is not None
        rows.append({**base, "plan": plan, "engine_id": engine, "knobs": json.dumps({"k": rank}),
                     "heuristic_rank": rank, "status": "ok" if ok else "build_failed",
                     "error": None if ok else "CUDNN_STATUS_NOT_SUPPORTED", "median_ms": median,
                     "iqr_ms": median * 0.05 if ok else None,
                     "tflops": spec.flops() / (median * 1e-3) / 1e12 if ok else None,
                     "gbps": spec.min_bytes() / (median * 1e-3) / 1e9 if ok else None,
                     "rel_l2": rel if ok else None, "pass_cudnn": True if ok else None,
                     "is_pick": plan == pick, "is_best": plan == best})
    return rows


def _failed(spec) -> list[dict]:
    pid = hashlib.sha1(("failed" + spec.to_json()).encode()).hexdigest()[:16]
    return [{"point_id": pid, "op": spec.op, "label": spec.label(), "spec": spec.to_json(), "flops": spec.flops(),
             "min_bytes": spec.min_bytes(), "point_status": "failed", "point_error": "CUDNN_STATUS_NOT_SUPPORTED",
             **{f"spec_{k}": _cell(v) for k, v in spec.to_dict().items() if k != "op"}}]


def _invalid() -> list[dict]:
    return [{"point_id": "badbadbadbadbad0", "point_status": "invalid", "point_error": "padding: must be < r"}]


def _frame(*points: list[dict]) -> pd.DataFrame:
    """Points concatenated as a store reads them (columns a point lacks are NA)."""
    return pd.concat([pd.DataFrame(p) for p in points], ignore_index=True)


# Pick (first) and best (fastest) medians per (n, layout); the pick is slower than the best except at n=1.
MEDIANS = {(1, "NCHW"): (0.020, 0.020), (8, "NCHW"): (0.060, 0.050), (32, "NCHW"): (0.300, 0.200),
           (1, "NHWC"): (0.010, 0.010), (8, "NHWC"): (0.040, 0.030), (32, "NHWC"): (0.150, 0.100)}


def _layout_sweep(ns=(32, 1, 8), gpu=GPU_A, cudnn=91900, scale=1.0) -> pd.DataFrame:
    points = []
    for n in ns:
        for layout in ("NCHW", "NHWC"):
            pick, best = MEDIANS[(n, layout)]
            plans = [("eng0_k1", 0, pick * scale, 1e-4)]
            if best != pick:
                plans.append(("eng4_k2", 4, best * scale, 2e-4))
            plans.append(("eng9_k3", 9, None, None))
            points.append(_point(BASE.replace(n=n, layout=layout), plans, gpu=gpu, cudnn=cudnn))
    return _frame(*points)


def _trace(fig, name):
    matches = [t for t in fig.data if t.name == name]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def _says_nothing_to_plot(fig) -> bool:
    return any("nothing to plot" in (a.text or "") for a in fig.layout.annotations)


# --------------------------------------------------------------------------------------------------- sweep_latency

def test_latency_draws_one_line_per_layout_from_the_picks_in_us_sorted_by_n() -> None:
    fig = plots.sweep_latency(_layout_sweep(), "n", color="layout")
    assert sorted(t.name for t in fig.data) == ["NCHW", "NHWC"]
    for layout in ("NCHW", "NHWC"):
        trace = _trace(fig, layout)
        assert trace.mode == "lines+markers"
        assert list(trace.x) == [1, 8, 32]
        assert list(trace.y) == pytest.approx([MEDIANS[(n, layout)][0] * 1e3 for n in (1, 8, 32)])


def test_latency_which_best_takes_the_fastest_plan_of_each_point() -> None:
    fig = plots.sweep_latency(_layout_sweep(), "n", color="layout", which="best")
    assert list(_trace(fig, "NCHW").y) == pytest.approx([MEDIANS[(n, "NCHW")][1] * 1e3 for n in (1, 8, 32)])


def test_latency_in_tflops_uses_the_tflops_column() -> None:
    frame = _layout_sweep()
    fig = plots.sweep_latency(frame, "n", color="layout", y="tflops")
    want = [BASE.replace(n=n, layout="NHWC").flops() / (MEDIANS[(n, "NHWC")][0] * 1e-3) / 1e12 for n in (1, 8, 32)]
    assert list(_trace(fig, "NHWC").y) == pytest.approx(want)
    assert "TFLOP/s" in fig.layout.yaxis.title.text


def test_latency_x_is_log_when_sizes_span_more_than_10x_and_linear_otherwise() -> None:
    assert plots.sweep_latency(_layout_sweep((1, 8, 32)), "n").layout.xaxis.type == "log"
    assert plots.sweep_latency(_layout_sweep((1, 8)), "n").layout.xaxis.type == "linear"


def test_latency_without_color_draws_one_line() -> None:
    frame = _frame(*(_point(BASE.replace(n=n), [("eng0", 0, 0.01 * n, 1e-4)]) for n in (4, 2, 1)))
    fig = plots.sweep_latency(frame, "n")
    assert len(fig.data) == 1 and list(fig.data[0].x) == [1, 2, 4]


def test_latency_lines_join_only_points_that_differ_in_x_alone() -> None:
    """Issue 24: n and k both vary; a line per k (within a colour) joins points that differ in n alone, and a point
    that shares its other fields with no other point is a marker, not a line."""
    ks = {16: (1, 8, 32), 32: (8, 1), 64: (4,)}
    frame = _frame(*(_point(BASE.replace(n=n, k=k, layout=lay), [("eng0", 0, 0.001 * n * k, 1e-4)])
                     for k, ns in ks.items() for n in ns for lay in ("NCHW", "NHWC")))
    fig = plots.sweep_latency(frame, "n", color="layout")
    assert len(fig.data) == 6  # 2 layouts x 3 values of k
    for trace in fig.data:
        k = int(trace.meta["fixed"]["k"])
        assert set(trace.meta["fixed"]) == {"k"}
        assert list(trace.x) == sorted(ks[k])  # only this k's points, in x order
        assert trace.mode == ("markers" if len(ks[k]) == 1 else "lines+markers")
        assert trace.y == pytest.approx(tuple(0.001 * n * k * 1e3 for n in sorted(ks[k])))
    # one legend entry per colour; the lines of one colour share it
    assert sorted(t.name for t in fig.data if t.showlegend) == ["NCHW", "NHWC"]
    assert {t.legendgroup for t in fig.data} == {"NCHW", "NHWC"}
    assert "differing in n alone" in fig.layout.title.text and "share an x" not in fig.layout.title.text


def test_latency_points_that_share_nothing_are_markers() -> None:
    """n and k change together (no two points differ in n alone): every point is a marker, no zig-zag line."""
    frame = _frame(*(_point(BASE.replace(n=n, k=k), [("eng0", 0, 0.01 * n, 1e-4)])
                     for n, k in ((1, 64), (8, 16), (32, 32))))
    fig = plots.sweep_latency(frame, "n")
    assert len(fig.data) == 3 and all(t.mode == "markers" and len(t.x) == 1 for t in fig.data)
    assert "markers only" in fig.layout.title.text


def test_latency_lines_of_a_recorded_sweep_hold_every_other_field_fixed() -> None:
    """The recorded H100 sweep's matmul points: each line's points agree on every spec field but x and colour."""
    frame = cl.load_results("h100_standard")
    rows = frame[frame["op"] == "matmul"]
    fig = plots.sweep_latency(rows, "n", color="dtype")
    ran = rows[rows["is_pick"].astype(bool)].drop_duplicates("point_id")
    fields = [c for c in ran.columns if c.startswith("spec_") and c not in ("spec_n", "spec_dtype")]
    assert any(t.mode == "lines+markers" for t in fig.data)
    for trace in fig.data:
        keys = {tuple(str(v) for v in ran.set_index("point_id").loc[pid, fields]) for pid in trace.customdata}
        assert len(keys) == 1, trace.meta  # one problem but for n
        assert len(set(trace.x)) == len(trace.x)  # no two points of a line at one x


def test_latency_color_by_dtype_reads_spec_dtype() -> None:
    frame = _frame(*(_point(BASE.replace(n=n, dtype=d), [("eng0", 0, 0.01 * n, 1e-4)])
                     for n in (1, 2) for d in ("fp16", "bf16")))
    fig = plots.sweep_latency(frame, "n", color="dtype")
    assert sorted(t.name for t in fig.data) == ["bf16", "fp16"]


def test_latency_skips_failed_and_invalid_points_and_counts_them() -> None:
    frame = _frame(_layout_sweep((1, 8)), _failed(BASE.replace(n=64)), _invalid())
    fig = plots.sweep_latency(frame, "n", color="layout")
    assert all(list(t.x) == [1, 8] for t in fig.data)
    assert "1 failed" in fig.layout.title.text and "1 invalid" in fig.layout.title.text


def test_latency_title_names_the_gpu_and_cudnn_version() -> None:
    title = plots.sweep_latency(_layout_sweep(), "n").layout.title.text
    assert GPU_A in title and "cuDNN 9.19.0" in title and "conv" in title


def test_latency_hover_names_the_point_and_plan() -> None:
    fig = plots.sweep_latency(_layout_sweep(), "n", color="layout")
    hover = _trace(fig, "NHWC").hovertext[0]
    assert BASE.replace(n=1).label() in hover and "eng0_k1" in hover and "µs" in hover


def test_latency_of_an_empty_frame_says_there_is_nothing_to_plot() -> None:
    assert _says_nothing_to_plot(plots.sweep_latency(pd.DataFrame(), "n"))
    assert _says_nothing_to_plot(plots.sweep_latency(_frame(_failed(BASE), _invalid()), "n"))


def test_latency_names_an_unknown_field() -> None:
    with pytest.raises(cl.OptionError, match="bogus"):
        plots.sweep_latency(_layout_sweep(), "bogus")


def test_latency_reads_a_frame_back_from_parquet(tmp_path) -> None:
    frame = _frame(_layout_sweep((1, 8)), _failed(BASE.replace(n=64)), _invalid())
    frame.to_parquet(tmp_path / "s.parquet")
    fig = plots.sweep_latency(pd.read_parquet(tmp_path / "s.parquet"), "n", color="layout")
    assert list(_trace(fig, "NCHW").y) == pytest.approx([20.0, 60.0])


# --------------------------------------------------------------------------------------------------- sweep_roofline

def _roofline_frame() -> pd.DataFrame:
    mm = cl.MatmulSpec(m=256, n=256, k=256, dtype="fp16")
    return _frame(_point(BASE, [("eng0", 0, 0.02, 1e-4)], ceilings=(700.0, 3000.0)),
                  _point(BASE.replace(n=8), [("eng0", 0, 0.05, 1e-4)], ceilings=(800.0, 3200.0)),
                  _point(mm, [("eng1", 1, 0.01, 1e-4), ("eng2", 2, 0.008, 1e-4)], ceilings=(900.0, 3400.0)),
                  _failed(BASE.replace(n=64)))


def test_roofline_places_each_point_at_intensity_and_tflops_coloured_by_op() -> None:
    fig = plots.sweep_roofline(_roofline_frame())
    conv, matmul = _trace(fig, "conv"), _trace(fig, "matmul")
    assert list(conv.x) == pytest.approx([BASE.flops() / BASE.min_bytes(),
                                          BASE.replace(n=8).flops() / BASE.replace(n=8).min_bytes()])
    mm = cl.MatmulSpec(m=256, n=256, k=256, dtype="fp16")
    assert list(matmul.y) == pytest.approx([mm.flops() / (0.008 * 1e-3) / 1e12])  # the best plan
    assert conv.marker.color != matmul.marker.color
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_roofline_roofs_are_the_median_ceilings_of_the_gpu() -> None:
    fig = plots.sweep_roofline(_roofline_frame())
    compute = next(t for t in fig.data if t.name.startswith("compute "))
    memory = next(t for t in fig.data if t.name.startswith("memory "))
    assert list(compute.y) == [800.0, 800.0]
    assert "3200 GB/s" in memory.name
    assert memory.x[1] == pytest.approx(800.0 * 1e3 / 3200.0)  # the memory roof ends at the ridge


def test_roofline_of_an_empty_frame_says_there_is_nothing_to_plot() -> None:
    assert _says_nothing_to_plot(plots.sweep_roofline(pd.DataFrame()))


# --------------------------------------------------------------------------------------------------- heat map

def _heatmap_frame() -> pd.DataFrame:
    medians = {(1, "fp16", "NCHW"): 0.02, (1, "fp16", "NHWC"): 0.01, (8, "fp16", "NCHW"): 0.05,
               (8, "fp16", "NHWC"): 0.04, (1, "bf16", "NCHW"): 0.03, (1, "bf16", "NHWC"): 0.06,
               (8, "bf16", "NHWC"): 0.07}  # n=8 bf16 has no NCHW point
    return _frame(*(_point(BASE.replace(n=n, dtype=d, layout=lay), [("eng0", 0, ms * 1.5, 1e-4),
                                                                    ("eng1", 1, ms, 1e-4)])
                    for (n, d, lay), ms in medians.items()), _failed(BASE.replace(n=8, dtype="bf16", layout="NCHW")))


def test_heatmap_cells_are_nchw_over_nhwc_medians_and_blank_without_both_layouts() -> None:
    fig = plots.layout_speedup_heatmap(_heatmap_frame(), "n", "dtype")
    (heat,) = fig.data
    assert list(heat.x) == ["1", "8"] and list(heat.y) == ["bf16", "fp16"]
    z = [list(r) for r in heat.z]
    assert z[0][0] == pytest.approx(0.03 / 0.06) and z[0][1] is None
    assert z[1][0] == pytest.approx(0.02 / 0.01) and z[1][1] == pytest.approx(0.05 / 0.04)
    assert [list(r) for r in heat.text] == [["0.50x", ""], ["2.00x", "1.25x"]]


def test_heatmap_colour_scale_is_diverging_and_centred_at_one() -> None:
    from plotly.colors import get_colorscale

    heat = plots.layout_speedup_heatmap(_heatmap_frame(), "n", "dtype").data[0]
    assert heat.zmin * heat.zmax == pytest.approx(1.0)  # symmetric in log: 0.5x and 2x get opposite colours
    white = dict(get_colorscale("RdBu"))[0.5]  # the scale's neutral middle colour
    at = next(pos for pos, color in heat.colorscale if color == white)
    assert heat.zmin + at * (heat.zmax - heat.zmin) == pytest.approx(1.0)


def test_heatmap_with_pick_uses_the_picks() -> None:
    heat = plots.layout_speedup_heatmap(_heatmap_frame(), "n", "dtype", which="pick").data[0]
    assert heat.z[1][0] == pytest.approx((0.02 * 1.5) / (0.01 * 1.5))


def test_heatmap_without_layout_pairs_says_there_is_nothing_to_plot() -> None:
    frame = _frame(_point(BASE.replace(layout="NHWC"), [("eng0", 0, 0.01, 1e-4)]))
    assert _says_nothing_to_plot(plots.layout_speedup_heatmap(frame, "n", "dtype"))
    assert _says_nothing_to_plot(plots.layout_speedup_heatmap(pd.DataFrame(), "n", "dtype"))


# --------------------------------------------------------------------------------------------------- regret

def _regret_frame() -> pd.DataFrame:
    # n:     1        2        4        8
    # pick:  eng0     eng0     eng4     eng0   (engine changes at n=4 and n=8)
    rows = [(1, [("eng0_a", 0, 0.010, 1e-4)]),
            (2, [("eng0_a", 0, 0.030, 1e-4), ("eng4_b", 4, 0.020, 1e-4)]),
            (4, [("eng4_b", 4, 0.040, 1e-4), ("eng7_c", 7, 0.010, 1e-4)]),
            (8, [("eng0_a", 0, 0.080, 1e-4), ("eng9_d", 9, None, None)])]
    return _frame(*(_point(BASE.replace(n=n), plans) for n, plans in rows), _failed(BASE.replace(n=16)))


def test_regret_is_pick_median_over_best_median_along_x() -> None:
    fig = plots.regret_along(_regret_frame(), "n")
    line = _trace(fig, "regret")
    assert list(line.x) == [1, 2, 4, 8]
    assert list(line.y) == pytest.approx([1.0, 1.5, 4.0, 1.0])


def test_regret_marks_and_annotates_where_the_picks_engine_changes() -> None:
    fig = plots.regret_along(_regret_frame(), "n")
    stars = _trace(fig, "pick's engine changes")
    assert list(stars.x) == [4, 8] and list(stars.y) == pytest.approx([4.0, 1.0])
    texts = [a.text for a in fig.layout.annotations if a.text.startswith("engine")]
    assert texts == ["engine 0 -> 4", "engine 4 -> 0"]


def test_regret_annotations_sit_on_a_log_x_axis_at_log10_x() -> None:
    frame = _frame(_point(BASE.replace(n=1), [("eng0", 0, 0.01, 1e-4)]),
                   _point(BASE.replace(n=32), [("eng4", 4, 0.02, 1e-4)]))
    fig = plots.regret_along(frame, "n")
    assert fig.layout.xaxis.type == "log"
    (note,) = [a for a in fig.layout.annotations if a.text.startswith("engine")]
    assert note.x == pytest.approx(math.log10(32))


def test_regret_without_engine_changes_has_no_change_markers() -> None:
    frame = _frame(*(_point(BASE.replace(n=n), [("eng0", 0, 0.01 * n, 1e-4)]) for n in (1, 2)))
    fig = plots.regret_along(frame, "n")
    assert all(t.name != "pick's engine changes" for t in fig.data)
    assert not [a for a in fig.layout.annotations if a.text.startswith("engine")]


def test_regret_of_an_empty_frame_says_there_is_nothing_to_plot() -> None:
    assert _says_nothing_to_plot(plots.regret_along(pd.DataFrame(), "n"))
    assert _says_nothing_to_plot(plots.regret_along(_frame(_failed(BASE)), "n"))


# --------------------------------------------------------------------------------------------------- error_by_dtype

def _error_frame() -> pd.DataFrame:
    return _frame(_point(BASE.replace(dtype="fp16"), [("a", 0, 0.01, 1e-4), ("b", 1, 0.02, 3e-4),
                                                      ("c", 2, None, None)]),
                  _point(BASE.replace(dtype="bf16"), [("a", 0, 0.01, 2e-3)]),
                  _point(BASE.replace(dtype="fp32"), [("a", 0, 0.02, 5e-5), ("b", 1, 0.03, float("inf"))]),
                  _failed(BASE.replace(dtype="fp16", n=4)), _invalid())


def test_error_by_dtype_draws_rel_l2_of_every_plan_that_ran_per_dtype() -> None:
    fig = plots.error_by_dtype(_error_frame())
    assert sorted(_trace(fig, "fp16").y) == pytest.approx([1e-4, 3e-4])
    assert list(_trace(fig, "bf16").y) == pytest.approx([2e-3])
    assert list(_trace(fig, "fp32").y) == pytest.approx([5e-5])  # the infinite one is drawn apart
    assert _trace(fig, "fp16").type == "box" and fig.layout.yaxis.type == "log"


def test_error_by_dtype_marks_each_dtypes_cudnn_band() -> None:
    band = _trace(plots.error_by_dtype(_error_frame()), "cuDNN band rtol")
    assert dict(zip(band.x, band.y)) == {d: TOLERANCES[d]["cudnn"].rtol for d in ("fp16", "bf16", "fp32")}


def test_error_by_dtype_draws_nan_inf_results_at_the_top() -> None:
    fig = plots.error_by_dtype(_error_frame())
    top = _trace(fig, "NaN/Inf outputs")
    assert list(top.x) == ["fp32"] and top.marker.symbol == "triangle-up"
    assert math.log10(top.y[0]) < fig.layout.yaxis.range[1]


def test_error_by_dtype_of_an_empty_frame_says_there_is_nothing_to_plot() -> None:
    assert _says_nothing_to_plot(plots.error_by_dtype(pd.DataFrame()))
    assert _says_nothing_to_plot(plots.error_by_dtype(_frame(_failed(BASE), _invalid())))


# --------------------------------------------------------------------------------------------------- compare_gpus

def _gpu_pair():
    a = _layout_sweep((1, 8), gpu=GPU_A, cudnn=91900)
    b = _frame(_layout_sweep((8, 32), gpu=GPU_B, cudnn=91000, scale=0.5))  # shares the n=8 points only
    return a, b


def test_compare_gpus_draws_the_speedup_against_intensity_with_the_ratios_marked() -> None:
    a, b = _gpu_pair()  # b is twice as fast at the shared n=8 points; its ceilings are a's
    b = b.assign(ceiling_gbps=6000.0, ceiling_tflops=800.0)
    fig = plots.compare_gpus(a, b)
    points = _trace(fig, "conv")
    assert list(points.y) == pytest.approx([2.0, 2.0])  # a's latency / b's
    assert list(points.x) == pytest.approx([BASE.replace(n=8).flops() / BASE.replace(n=8).min_bytes()] * 2)
    assert fig.layout.xaxis.type == "log" and "FLOP/byte" in fig.layout.xaxis.title.text
    assert "speedup" in fig.layout.yaxis.title.text
    assert sorted({s.y0 for s in fig.layout.shapes if s.y0 == s.y1}) == pytest.approx([1.0, 2.0])  # same speed, bw
    names = [t.name for t in fig.data]
    assert "bandwidth ratio 2.00x" in names and "compute ratio 1.00x" in names and "roofline expectation" in names
    assert "geometric mean 2.00x" in fig.layout.title.text


def test_compare_gpus_bars_hold_each_best_latency_and_the_speedup_of_b() -> None:
    a, b = _gpu_pair()
    fig = plots.compare_gpus(a, b, kind="bars")
    bars_a, bars_b = _trace(fig, "a: H100"), _trace(fig, "b: H200")
    speedup = _trace(fig, "speedup of b (right axis)")
    labels = [BASE.replace(n=8, layout=lay).label() for lay in ("NCHW", "NHWC")]
    assert list(bars_a.x) == labels and bars_a.type == "bar"
    assert list(bars_a.y) == pytest.approx([MEDIANS[(8, lay)][1] * 1e3 for lay in ("NCHW", "NHWC")])
    assert list(bars_b.y) == pytest.approx([MEDIANS[(8, lay)][1] * 0.5 * 1e3 for lay in ("NCHW", "NHWC")])
    assert list(speedup.y) == pytest.approx([2.0, 2.0]) and speedup.yaxis == "y2"
    assert fig.layout.yaxis2.title.text.startswith("speedup of b") and "(µs)" in fig.layout.yaxis.title.text
    assert fig.layout.yaxis2.dtick in (0.5, 1.0) and fig.layout.yaxis2.range[0] == 0  # round ticks, no 0.295
    assert fig.layout.barmode == "group"


def test_compare_gpus_with_many_points_draws_a_scatter_with_the_diagonal() -> None:
    ns = (1, 8, 32)
    a = _layout_sweep(ns)
    b = _layout_sweep(ns, gpu=GPU_B, scale=2.0)
    fig = plots.compare_gpus(a, b, kind="scatter")
    points, diagonal = _trace(fig, "shared points"), _trace(fig, "b = a")
    assert list(points.customdata) == pytest.approx([0.5] * 6)  # b's speedup: half as fast
    assert [y / x for x, y in zip(points.x, points.y)] == pytest.approx([2.0] * 6)
    assert list(diagonal.x) == list(diagonal.y)
    assert fig.layout.xaxis.type == "log"


def test_compare_gpus_auto_switches_to_a_scatter_beyond_24_points() -> None:
    specs = [BASE.replace(n=n) for n in range(1, 27)]
    a = _frame(*(_point(s, [("e", 0, 0.01, 1e-4)]) for s in specs))
    b = _frame(*(_point(s, [("e", 0, 0.02, 1e-4)], gpu=GPU_B) for s in specs))
    assert {t.type for t in plots.compare_gpus(a, b, kind="auto").data} == {"scatter"}
    assert "shared points" in [t.name for t in plots.compare_gpus(a, b, kind="auto").data]


def test_compare_gpus_orders_bars_by_a_spec_field() -> None:
    a = _layout_sweep((32, 1, 8))
    b = _layout_sweep((32, 1, 8), gpu=GPU_B)
    nhwc_a = a[a["spec_layout"] == "NHWC"]
    fig = plots.compare_gpus(nhwc_a, b[b["spec_layout"] == "NHWC"], x="n", kind="bars")
    assert list(fig.data[0].x) == ["n=1", "n=8", "n=32"]
    assert fig.layout.xaxis.title.text.startswith("n")


def test_compare_gpus_tells_the_same_gpu_apart() -> None:
    fig = plots.compare_gpus(_layout_sweep((1,)), _layout_sweep((1,)), kind="bars")
    assert {t.name for t in fig.data if t.type == "bar"} == {"a: H100", "b: H100"}
    assert f"a: {GPU_A}, cuDNN 9.19.0 (91900)" in fig.layout.title.text


def test_compare_gpus_without_shared_points_says_there_is_nothing_to_plot() -> None:
    a = _layout_sweep((1,))
    b = _layout_sweep((32,), gpu=GPU_B)
    assert _says_nothing_to_plot(plots.compare_gpus(a, b))
    assert _says_nothing_to_plot(plots.compare_gpus(pd.DataFrame(), b))
