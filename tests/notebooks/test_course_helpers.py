"""The course's named helpers (``cudnn_lab.course``) on the recordings shipped with the kit and real frontend graphs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab import course

COURSE = sorted((Path(__file__).parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def conv() -> cl.RunResult:
    return cl.load_results("h200_conv_nhwc_fp16_bias_relu")


@pytest.fixture(scope="module")
def fp32_matmul() -> cl.RunResult:
    return cl.load_results("h200_matmul_fp32_bias")


# ------------------------------------------------------------------------------------------------ check

@pytest.mark.parametrize(("answer", "expected", "kw", "status"), [
    (None, 3, {}, "open"),
    (..., 3, {}, "open"),
    (3, 3, {}, "right"),
    (2, 3, {}, "wrong"),
    (3.1, 3.0, {"rel": 0.05}, "right"),
    (3.3, 3.0, {"rel": 0.05}, "wrong"),
    (0.45, 0.5, {"tol": 0.1}, "right"),
    ((18, 1, 6, 2), (18, 1, 6, 2), {}, "right"),
    ([18, 1, 6, 2], (18, 1, 6, 2), {}, "right"),
    ((18, 1, 6), (18, 1, 6, 2), {}, "wrong"),
    (" same ", "Same", {}, "right"),
    ({"b", "a"}, {"a", "b"}, {}, "right"),
    (["A", "b"], {"a", "b"}, {}, "right"),
    ({"a"}, {"a", "b"}, {}, "wrong"),
    ("yes", True, {}, "right"),
    (False, True, {}, "wrong"),
    (1, True, {}, "wrong"),
    ((4, {"KERNEL_CFG": 47}), (4, {"KERNEL_CFG": 47}), {}, "right"),
    ((4, {"KERNEL_CFG": 46}), (4, {"KERNEL_CFG": 47}), {}, "wrong"),
    ("3", 3, {}, "wrong"),
])
def test_verdict_compares_like_a_teacher(answer: object, expected: object, kw: dict, status: str) -> None:
    assert course.verdict(answer, expected, **kw).status == status


def test_verdict_says_why_and_hides_the_answer_until_one_is_given(capsys: pytest.CaptureFixture[str]) -> None:
    opened = course.verdict(None, 42, "because", name="answer_1")
    assert opened.text.startswith(course.OPEN) and "42" not in opened.text and "answer_1" in opened.text
    first = course.verdict(41, 42, "because of the data", name="answer_9")
    assert first.text.startswith(course.WRONG) and "42" not in first.text and "more than that" in first.text
    assert "hint" in first.text and "because of the data" not in first.text  # a direction, not the value
    assert "less than that" in course.verdict(50, 42, name="answer_8").text
    wrong = course.verdict(43, 42, "because of the data", name="answer_9")  # the second miss reveals it
    assert wrong.text.startswith(course.WRONG) and "42" in wrong.text and "because of the data" in wrong.text
    assert not wrong and course.verdict(42, 42, name="answer_9")
    again = course.verdict(41, 42, name="answer_9")  # a right answer starts the count again
    assert "42" not in again.text
    course.check(42, 42, "fine")
    assert capsys.readouterr().out.startswith(course.RIGHT)


#: Every branch of the referee's comparison, each with an answer it must call wrong (issue 40: the absolute-tolerance
#: branch once had no wrong answer under test).
@pytest.mark.parametrize(("answer", "expected", "kw"), [
    ("no", True, {}),                       # bool, from text
    (True, False, {}),                      # bool
    (4, 3, {}),                             # an integer, exactly
    (0.3334, 1 / 3, {}),                    # a float, to 1e-6
    (3.16, 3.0, {"rel": 0.05}),             # relative tolerance, just outside
    (0.61, 0.5, {"tol": 0.1}),              # absolute tolerance, just outside above
    (0.39, 0.5, {"tol": 0.1}),              # ... and below
    (0.2, 0.0, {"tol": 0.1}),               # ... around zero
    (1e9, 0.5, {"tol": 0.1}),               # ... far away
    (0.5000001, 0.5, {"tol": 0.0}),         # tol 0: exact
    ("other", "same", {}),                  # text
    ({"a", "c"}, {"a", "b"}, {}),           # a set
    ((1, 2.5), (1, 2.0), {"tol": 0.1}),     # a tuple, element by element with the tolerance
    ({"k": 1}, {"k": 2}, {}),               # a dict
    (object(), object(), {}),               # anything else, by equality
])
def test_every_branch_of_the_referee_can_say_wrong(answer: object, expected: object, kw: dict) -> None:
    assert course.verdict(answer, expected, **kw, name="branch").status == "wrong"
    assert course.verdict(expected, expected, **kw, name="branch").status == "right"


@pytest.mark.parametrize("kw", [{"tol": -0.1}, {"tol": float("nan")}, {"rel": 1.0}, {"rel": -0.1}, {"rel": 2},
                                {"rel": 0.1, "tol": 0.1}])
def test_a_margin_that_would_accept_anything_is_refused(kw: dict) -> None:
    with pytest.raises(ValueError, match="rel|tol"):
        course.verdict(0.0, 0.5, **kw)


def test_a_binary_answer_first_gets_the_evidence_not_the_value() -> None:
    first = course.verdict(False, True, "because 3 > 2", name="answer_bin")
    assert first.status == "wrong" and "hint" in first.text and "compare" in first.text
    for word in ("True", "False", "you said", "the data says", "otherwise", "because 3 > 2"):
        assert word not in first.text, word
    second = course.verdict("no", True, "because 3 > 2", name="answer_bin")
    assert "the data says True" in second.text and "because 3 > 2" in second.text


def test_a_first_miss_on_a_tuple_or_set_counts_what_differs_without_naming_it() -> None:
    tup = course.verdict((1.05, 9.0), (1.0, 2.0), tol=0.1, name="answer_tup")
    assert "1 of its 2 values differ" in tup.text and "2.0" not in tup.text.split("you said")[0]
    got = course.verdict({"a", "c", "d"}, {"a", "b"}, name="answer_set")
    assert "2 of your 3 items are not in the data's set" in got.text and "1 you left out" in got.text
    assert "'b'" not in got.text


# ------------------------------------------------------------------------------------------------ provenance

def test_provenance_of_a_recording_names_gpu_driver_cudnn_and_date(conv: cl.RunResult) -> None:
    # loaded from its file, a recording is named without being told (RunResult.loaded_from)
    from cudnn_lab.provenance import cudnn_version_text

    day, dev = conv.created[:10], conv.device
    assert course.provenance(conv) == course.provenance(conv, measured_here=False) == (
        f"RECORDED on NVIDIA H200 · driver {dev['driver']} · CUDA {dev['cuda']} · "
        f"cuDNN {cudnn_version_text(dev['cudnn_backend'])} · "
        f"{day} (h200_conv_nhwc_fp16_bias_relu)")
    assert course.provenance(conv, measured_here=False, name="my recording").endswith(f"{day} (my recording)")
    assert course.provenance(conv, measured_here=True).startswith("MEASURED HERE on this machine's NVIDIA H200 · ")


def test_provenance_of_two_sweeps_names_both_gpus() -> None:
    import pandas as pd

    both = pd.concat([cl.load_results("h100_standard"), cl.load_results("h200_standard")])
    text = course.provenance(both)
    assert text.startswith("RECORDED on NVIDIA H100 80GB HBM3 · driver 580.159.04 · CUDA 13.0 · cuDNN 9.19.0 · ")
    assert "; RECORDED on NVIDIA H200 · driver" in text


@pytest.mark.parametrize(("value", "text"), [(91900, "9.19.0"), ("91900", "9.19.0"), (90501, "9.5.1"),
                                             (8907, "8.9.7"), ("9.22.0", "9.22.0")])
def test_cudnn_version_as_people_write_it(value: object, text: str) -> None:
    assert course.cudnn_version(value) == text


def test_recording_for_finds_the_exact_problem_or_says_it_is_another(conv: cl.RunResult) -> None:
    # Recorded on an H100 and an H200 on different days: the newest wins; gpu= picks one.
    def newest(problem: str) -> str:
        return max((f"{g}_{problem}" for g in ("h100", "h200")), key=lambda n: cl.load_results(n).created)

    assert course.recording_for(conv.spec) == (newest("conv_nhwc_fp16_bias_relu"), True)
    assert course.recording_for(conv.spec, gpu="H200") == ("h200_conv_nhwc_fp16_bias_relu", True)
    assert course.recording_for(conv.spec, gpu="H100") == ("h100_conv_nhwc_fp16_bias_relu", True)
    nchw = conv.spec.replace(layout="NCHW")
    assert course.recording_for(nchw) == (newest("conv_nchw_fp16_bias_relu"), True)
    name, exact = course.recording_for(conv.spec.replace(n=2, c=8, h=8, w=8, k=16))
    assert name.endswith("_conv_nhwc_fp16_bias_relu") and not exact  # the closest: same layout and epilogue
    name, exact = course.recording_for(cl.MatmulSpec(m=64, n=64, k=64, dtype="fp16", epilogue=("bias",)))
    assert name.endswith("_matmul_fp16_bias") and not exact
    name, exact = course.recording_for(cl.SdpaSpec(batch=1, heads=2, seq_q=64, seq_kv=64, head_dim=64))
    assert name[4:].startswith("_sdpa_") and not exact
    assert course.recording_for(conv.spec, gpu="A100") == (None, False)  # none recorded on that GPU


# ------------------------------------------------------------------------------------------------ plan tables

def test_plans_table_names_knobs_and_rounds(conv: cl.RunResult) -> None:
    table = course.plans_table(conv, top=3)
    assert list(table.columns) == ["plan", "engine", "knobs", "heuristic rank", "median (us)", "TFLOP/s",
                                   "rel L2 error", "passes PyTorch band", "passes cuDNN band"]
    assert len(table) == 3 and table.index.tolist() == [1, 2, 3]
    first = table.iloc[0]
    assert first["plan"] == conv.best["plan"]
    assert first["median (us)"] == round(conv.best["median_ms"] * 1e3, 1)
    assert first["knobs"] == "TILE_SIZE=0, TILEK=1, IDX_MODE=0, WORKSPACE=0, TILE_CGA_M=1, TILE_CGA_N=1"
    assert table["median (us)"].is_monotonic_increasing


def test_named_knobs_decodes_backend_numbers(conv: cl.RunResult) -> None:
    version = conv.device["cudnn_backend"]
    assert course.named_knobs("eng41_k2=7_k13=1_k18=0_k25=1_k27=4_k28=1", version) == {
        "TILE_SIZE": 7, "TILEK": 1, "IDX_MODE": 0, "WORKSPACE": 1, "TILE_CGA_M": 4, "TILE_CGA_N": 1}
    assert course.named_knobs(conv.best, version)["TILE_SIZE"] == 0
    assert course.named_knobs("eng0", version) == {}


def test_ties_find_the_equally_accurate_plans(fp32_matmul: cl.RunResult) -> None:
    tied = course.ties(fp32_matmul.ok, "rel_l2", rel=1e-3)
    assert len(tied) == len(fp32_matmul.ok) == 10  # TF32 input rounding dominates every plan's error
    assert len(course.ties(fp32_matmul.ok, "median_ms", rel=1e-3)) == 1


def test_band_shares_agree_with_the_pass_columns() -> None:
    wgrad = cl.load_results("h200_conv_wgrad_nhwc_fp16")
    shares = course.band_shares(wgrad)
    assert len(shares) == 2 * len(wgrad.ok)
    for _, row in shares.iterrows():
        assert row["passes"] == (row["share within"] >= 1.0), row.to_dict()
    torch_band = shares[shares["band"] == "PyTorch"]
    assert int((~torch_band["passes"].astype(bool)).sum()) == int((~wgrad.ok["pass_torch"].astype(bool)).sum()) > 0


KERNEL_COLUMNS = ["plan", "engine", "kernel", "kind", "reading", "count", "us", "total_us", "tile"]


def test_kernels_frame_is_empty_for_a_recording_without_kernels(old_conv_recording: str) -> None:
    frame = course.kernels_frame(cl.load_results(old_conv_recording))
    assert frame.empty and list(frame.columns) == KERNEL_COLUMNS


def test_kernels_frame_reads_the_kernels_column() -> None:
    """The ``kernels`` column as the GPU layer writes it (names as an H100 ran them for an NCHW conv, 2026-11-22)."""
    import json

    nchw = cl.load_results("h200_conv_nchw_fp16_bias_relu")
    plans = nchw.plans.copy()
    kernels = [{"name": "nchwToNhwcKernel", "kind": "kernel", "count": 2, "us": 3.75, "total_us": 7.5},
               {"name": "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroup",
                "kind": "kernel", "count": 1, "us": 17.9, "total_us": 17.9}]
    plans["kernels"] = None
    plans.loc[plans["plan"] == nchw.best["plan"], "kernels"] = json.dumps(kernels)
    frame = course.kernels_frame(plans)
    assert list(frame.columns) == KERNEL_COLUMNS and len(frame) == 2
    assert set(frame["plan"]) == {nchw.best["plan"]}
    transpose, conv = frame.iloc[0], frame.iloc[1]
    assert transpose["kind"] == "transpose" and transpose["total_us"] == 7.5 and transpose["count"] == 2
    assert conv["kind"] == "implicit_gemm" and conv["tile"] == (128, 128, 64) and "tile 128x128x64" in conv["reading"]


# ------------------------------------------------------------------------------------------------ graphs

def test_inspect_diff_is_empty_for_the_same_graph_and_names_each_difference() -> None:
    spec = cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                       epilogue=("bias", "relu"))
    nhwc, again, nchw = cl.build_graph(spec), cl.build_graph(spec), cl.build_graph(spec.replace(layout="NCHW"))
    assert course.inspect_diff(nhwc, again).empty
    diff = course.inspect_diff(nhwc, nchw)
    assert set(diff["what"]) == {"tensor stride"}
    assert set(diff["name"]) == {"X", "W", "bias", "conv_fprop::Y", "bias::OUT", "Y"}
    relu_only = cl.build_graph(spec.replace(epilogue=("relu",)))
    diff = course.inspect_diff(relu_only, nhwc)
    assert ("tensor", "bias") in set(zip(diff["what"], diff["name"]))
    assert "operation" in set(diff["what"]) or "operation inputs" in set(diff["what"])


# ------------------------------------------------------------------------------------------------ GPUs, waves

def test_gpu_ratios_pair_every_problem_of_two_sweeps() -> None:
    ratios = course.gpu_ratios(cl.load_results("h100_standard"), cl.load_results("h200_standard"))
    assert len(ratios) == 73 and ratios["label"].is_unique
    assert ratios["intensity"].is_monotonic_increasing
    big_norm = ratios[ratios["label"].str.startswith("layernorm inference bf16 8192x8192")].iloc[0]
    assert 1.2 < big_norm["speedup"] < 1.5  # memory-bound and larger than L2: about the bandwidth ratio
    assert {"gpu_a", "gpu_b"} <= set(ratios.columns)
    assert set(ratios["gpu_a"]) == {"NVIDIA H100 80GB HBM3"} and set(ratios["gpu_b"]) == {"NVIDIA H200"}


def test_regret_per_point_has_one_row_per_point() -> None:
    regrets = course.regret_per_point(cl.load_results("h200_standard"))
    assert len(regrets) == 73 and (regrets["regret"] >= 1.0).all()


@pytest.mark.parametrize(("tiles", "sms", "busy", "whole", "last"), [
    (64, 132, 64 / 132, 1, 64 / 132), (132, 132, 1.0, 1, 1.0), (133, 132, 133 / 264, 2, 1 / 132),
    (256, 132, 256 / 264, 2, 124 / 132)])
def test_waves(tiles: int, sms: int, busy: float, whole: int, last: float) -> None:
    """``busy`` averages over all the waves; the last wave alone is ``last wave busy`` (issue 40: not the same)."""
    w = course.waves(tiles, sms)
    assert w["busy"] == pytest.approx(busy) and w["whole waves"] == whole
    assert w["last wave busy"] == pytest.approx(last)


@pytest.mark.parametrize(("name", "tile"), [
    ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroup", (128, 128, 64)),
    ("cudnn_generated_fort_native_sm80_convFwd_knob_21_128x128x32_4_0", (128, 128, 32)),
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", (256, 128)),
    ("nchwToNhwcKernel", None),
])
def test_tile_shape_from_kernel_names(name: str, tile: tuple | None) -> None:
    assert course.tile_shape(name) == tile


def test_main_tile_is_the_tile_of_the_kernel_that_takes_most_time() -> None:
    import json

    kernels = [{"name": "nchwToNhwcKernel", "count": 2, "us": 3.75, "total_us": 7.5},
               {"name": "cudnn_generated_fort_native_sm90_matMul_knob_2_128x128x64_5_0", "count": 1, "us": 30.7,
                "total_us": 30.7},
               {"name": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "count": 1, "us": 5.0, "total_us": 5.0}]
    assert course.main_tile(json.dumps(kernels)) == (128, 128, 64)
    assert course.main_tile(kernels[2:]) == (256, 128)
    assert course.main_tile(None) is None and course.main_tile(float("nan")) is None
    assert course.main_tile(json.dumps(kernels[:1])) is None


# ------------------------------------------------------------------------------------------------ several predictions

_PARTS = [{"label": "speed-up", "expected": None, "missing": "no GPU here"},
          {"label": "error", "expected": 0.033, "rel": 0.5, "why": "two inputs"}]


def test_check_parts_judges_each_measurable_part_and_names_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    course.check_parts(None, _PARTS, name="answer_4")
    assert capsys.readouterr().out.startswith(course.OPEN)
    course.check_parts((2.0, 0.03), _PARTS, name="answer_4")
    said = capsys.readouterr().out.splitlines()
    assert said[0] == f"{course.UNMEASURED}: speed-up: no GPU here"
    assert said[1].startswith(course.RIGHT) and "two inputs" in said[1]
    course.check_parts((2.0, 0.2), _PARTS, name="answer_4")
    assert course.WRONG in capsys.readouterr().out
    course.check_parts(0.03, _PARTS, name="answer_4")  # one value for two parts
    said = capsys.readouterr().out
    assert said.startswith(course.WRONG) and "2 values (speed-up, error)" in said


def test_kept_benchmark_reads_a_kept_output_with_its_origin() -> None:
    kept = course.kept_benchmark("fusion")
    assert kept is not None
    data, origin = kept
    assert isinstance(data, list) and data and "cudnn_us" in data[0]
    assert origin == ("RECORDED on NVIDIA H100 80GB HBM3 · driver unknown · CUDA unknown · cuDNN 9.19.0 · 2026-11-22 "
                      "(cudnn_lab/data/benchmarks/h100_2026-11-22_fusion.json)")
    assert course.kept_benchmark("no_such_benchmark") is None


def test_the_benchmarks_the_lessons_read_ship_in_the_package() -> None:
    """Binder installs the package without the checkout: every kept_benchmark a lesson names is package data."""
    named = {m for p in COURSE for m in re.findall(r'kept_benchmark\(\\?"(\w+)', p.read_text(encoding="utf-8"))}
    assert named >= {"fusion", "plans", "fp8"}, named
    for name in named:
        kept = course.kept_benchmark(name)
        assert kept is not None, f"a lesson reads kept_benchmark({name!r}); cudnn_lab/data/benchmarks/ lacks it"
        assert "(cudnn_lab/data/benchmarks/" in kept[1]
    assert sum(f.stat().st_size for f in course.KEPT_BENCHMARKS.iterdir()) < 200_000  # small copies, not a dump


def test_kept_benchmark_takes_the_newest_by_date(tmp_path: Path) -> None:
    for gpu, date in (("h100", "2026-11-25"), ("h200", "2026-11-20")):
        (tmp_path / f"{gpu}_{date}_x.json").write_text(json.dumps({"device": gpu.upper(), "cudnn": 91900}))
    data, origin = course.kept_benchmark("x", folder=tmp_path)
    assert data["device"] == "H100" and "2026-11-25" in origin and "h100_2026-11-25_x.json" in origin


# ------------------------------------------------------------------------------------------------ heuristics (03)

def test_proposal_times_read_each_recordings_proposal_phase() -> None:
    times = course.proposal_times()
    assert len(times) and (times["propose_s"] > 0).all()
    row = times.set_index("name").loc["h100_conv_nhwc_fp16_bias_relu"]
    assert row["propose_s"] == pytest.approx(0.398) and bool(row["first_in_process"])
    assert not times.set_index("name").loc["h100_conv_nhwc_fp16", "first_in_process"]


def test_ranks_from_zero_shifts_the_heuristic_figure(conv: cl.RunResult) -> None:
    from cudnn_lab import plots

    fig = course.ranks_from_zero(plots.heuristic_vs_measured(conv))
    points = [t for t in fig.data if t.mode == "markers"]
    xs = [x for t in points for x in t.x]
    ys = [y for t in points for y in t.y]
    n = len(conv.ok)
    assert sorted(xs) == list(range(n)) and sorted(ys) == list(range(n))
    best = next(t.x[t.customdata.index(conv.best["plan"])] for t in points if conv.best["plan"] in t.customdata)
    assert best == conv.best["heuristic_rank"]  # every plan of this recording ran: the two ranks agree
    assert "0 = the pick" in fig.layout.xaxis.title.text and tuple(fig.layout.xaxis.range) == (-0.5, n - 0.5)
    assert all("heuristic rank 0 " not in h or "proposed at 0" in h for t in points for h in t.hovertext)


# ------------------------------------------------------------------------------------------------ check_graph

def test_check_graph_says_right_for_the_kits_graph_and_lists_differences(capsys: pytest.CaptureFixture[str]) -> None:
    spec = cl.chain("matmul", "bias", "gelu", m=64, n=48, k=32, dtype="bf16")
    kit = cl.build_graph(spec)
    assert course.check_graph(None, kit, name="answer_4") is False
    assert course.OPEN in capsys.readouterr().out
    assert course.check_graph(cl.build_graph(spec), kit, name="answer_4") is True
    assert capsys.readouterr().out.startswith(course.RIGHT)
    other = cl.build_graph(spec.replace(n=64))  # one size changed: B, the bias and the output differ
    assert course.check_graph(other, kit, name="answer_4") is False
    said = capsys.readouterr().out
    assert said.startswith(course.WRONG) and "tensor dim" in said and "place(s)" in said
