"""SM carve-outs without a GPU: the counts sm_scaling takes and refuses, the classic families that refuse a carve-out,
cache keys that keep whole-GPU plans apart from carve-out ones, a ScalingResult's record and its figure.

The ScalingResult here is built by hand (a data-structure test: its shape is what ``sm_scaling`` makes, its times
the H200 conv measurements of 2026-11-26 quoted in ``cudnn_lab/whatif/scaling.py``); the measured ones come from
``tests/gpu/test_sm_scaling_gpu.py``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pytest

import cudnn_lab as cl
from cudnn_lab.errors import DataError, NoGPUError, OptionError
from cudnn_lab.whatif.scaling import (FRAME_COLUMNS, LABEL, PER_COUNT_COLUMNS, REFUSED_COLUMNS, ScalingResult,
                                  check_sm_counts, sm_scaling)

RESNET = cl.ConvSpec(n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")


# ------------------------------------------------------------------------------------------------ the counts

def test_good_counts_are_kept_in_order() -> None:
    assert check_sm_counts((None, 114, 78, 66)) == (None, 114, 78, 66)
    assert check_sm_counts([66, None]) == (66, None)


@pytest.mark.parametrize("bad", [(), [], None, "114", 114, (None, 0), (None, -1), (None, True), (None, False),
                                 (None, 1.5), (None, "66"), (None, 114, 114), (None, None), (114, 78)],
                         ids=repr)
def test_bad_counts_are_an_option_error_naming_sm_counts(bad) -> None:
    with pytest.raises(OptionError) as info:
        check_sm_counts(bad)
    assert info.value.option == "sm_counts" and "sm_counts" in str(info.value)
    with pytest.raises(OptionError) as info:
        sm_scaling(RESNET, bad)  # refused before any GPU is looked for
    assert info.value.option == "sm_counts"


def test_sm_scaling_sets_sm_count_itself_and_takes_no_exploration() -> None:
    with pytest.raises(OptionError, match="sm_count") as info:
        sm_scaling(RESNET, options={"sm_count": 66})
    assert info.value.option == "options"
    with pytest.raises(OptionError, match="explore"):
        sm_scaling(RESNET, options=cl.RunOptions(explore=3))
    with pytest.raises(OptionError, match="spec"):
        sm_scaling("conv")


@pytest.mark.parametrize("spec", [cl.SoftmaxSpec(), cl.ActivationSpec(), cl.TransformSpec(), cl.PoolSpec(),
                                  cl.RnnSpec()], ids=lambda s: type(s).__name__)
def test_classic_calls_refuse_a_carve_out_before_any_gpu(spec) -> None:
    with pytest.raises(OptionError) as info:
        cl.run(spec, sm_count=66)
    assert info.value.option == "sm_count" and "classic" in str(info.value) and "whole GPU" in str(info.value)
    with pytest.raises(OptionError) as info:
        sm_scaling(spec)
    assert info.value.option == "sm_counts" and "classic" in str(info.value)
    with pytest.raises((NoGPUError, OptionError)) as whole:  # the whole GPU is asked as always
        cl.run(spec, sm_count=None)
    assert not (isinstance(whole.value, OptionError) and whole.value.option == "sm_count")


def test_a_transform_graph_kind_takes_a_carve_out_and_convert_does_not() -> None:
    from cudnn_lab.gpu.frontend import takes_carve_out

    assert takes_carve_out(RESNET) and takes_carve_out(cl.MatmulSpec(m=64, n=64, k=64))
    assert not takes_carve_out(cl.TransformSpec(kind="convert"))
    assert takes_carve_out(cl.TransformSpec(kind="transpose"))


def test_without_a_gpu_sm_scaling_raises_no_gpu_before_importing_torch() -> None:
    from cudnn_lab.capabilities import gpu_visible

    if gpu_visible():
        pytest.skip("a GPU is visible here: tests/gpu/test_sm_scaling_gpu.py measures it")
    code = ("import sys, cudnn_lab as cl\n"
            "from cudnn_lab.whatif.scaling import sm_scaling\n"
            "try:\n"
            "    sm_scaling(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8))\n"
            "except cl.NoGPUError as e:\n"
            "    print('NoGPUError', 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["NoGPUError", "False"], out.stderr[-2000:]


# ------------------------------------------------------------------------------------------------ cache keys

def test_cache_keys_of_the_whole_gpu_stay_as_they_were_and_a_carve_out_gets_its_own() -> None:
    import hashlib

    from cudnn_lab.gpu import heuristics_cache as hc
    from cudnn_lab.gpu.cache import graph_key

    spec, described = {"op": "conv", "n": 32}, {"nodes": [{"name": "conv"}]}
    before = hashlib.sha256(json.dumps({"spec": spec, "graph": described}, sort_keys=True,
                                       default=str).encode()).hexdigest()  # the key as the kit always made it
    assert graph_key(spec, described) == graph_key(spec, described, None) == before
    assert len({graph_key(spec, described, n) for n in (None, 66, 114)}) == 3
    info = {"gpu": "NVIDIA H200", "compute_capability": "9.0", "cudnn_backend": 91900, "cudnn_frontend": "1.32.0"}
    whole = hc.proposals_ident(RESNET, described, "proposals", ("A",), info)
    assert whole == hc.proposals_ident(RESNET, described, "proposals", ("A",), info, None)
    assert whole != hc.proposals_ident(RESNET, described, "proposals", ("A",), info, 66)


# ------------------------------------------------------------------------------------------------ the error

#: The shape of cuDNN's refusal of a graph under a carve-out (as ``test_whatif_heuristics.py`` reads it): one block per
#: engine configuration, its header, then the checks that failed, innermost first.
CARVE_OUT_MESSAGE = """No valid engine configs for __
{"engineId":0,"smVersion":900,"knobChoices":{},"targetSMcount":114}
Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: target_sm_count != deviceProp.multiProcessorCount
Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: finalize_internal()

{"engineId":4,"smVersion":900,"knobChoices":{},"targetSMcount":114}
Warning: CUDNN_STATUS_NOT_SUPPORTED; Reason: target_sm_count != deviceProp.multiProcessorCount
"""


def test_an_unsupported_carve_out_keeps_cudnns_message_and_says_why_in_its_summary() -> None:
    from cudnn_lab.gpu.frontend import carve_out_sentence, unsupported
    from cudnn_lab.gpu.reasons import summarize

    detail = f"heur_mode A: {CARVE_OUT_MESSAGE}"
    err = unsupported(detail, cl.MatmulSpec(m=64, n=64, k=64), "NVIDIA H200", "91900", 114)
    assert err.detail == detail and summarize(detail) in err.summary
    assert "carve-out" in err.summary and "114 SMs" in err.summary and "sm_count=None" in err.summary
    assert "target_sm_count" in str(err)  # the backend message follows the summary
    plain = unsupported("heur_mode A: the heuristics returned no plans", RESNET, "NVIDIA H200", "91900")
    assert "carve-out" not in plain.summary and "SMs" not in plain.summary
    # a message naming the SM count without engine blocks still says carve-out
    assert "carve-out" in carve_out_sentence("targetSMcount mismatch", 66)
    assert carve_out_sentence("targetSMcount mismatch", None) == ""


# ------------------------------------------------------------------------------------------------ the record

def _row(sm, sms, plan, engine, ms, status="ok", best=False, error=None, tile="256x128x64"):
    return {"sm_count": sm, "sms": sms, "plan": plan, "engine_id": engine, "knobs": "{}", "heuristic_rank": 0,
            "status": status, "error": error, "median_ms": ms, "iqr_ms": None if ms is None else ms * 0.01,
            "min_ms": None if ms is None else ms * 0.99, "tflops": None, "gbps": None, "kernel_ms": ms,
            "tile": tile if status == "ok" else None, "pass_cudnn": True if status == "ok" else None,
            "from_cache": False, "reused": False, "is_best": best}


def hand_built() -> ScalingResult:
    """A ScalingResult of the shape sm_scaling makes: the H200 conv times of 2026-11-26 (best 48.9 us on 132 SMs,
    56.7 on 114, 75.0 on 66), one plan left out under the carve-outs, and a count under which nothing ran."""
    from cudnn_lab.whatif.scaling import _typed

    rows = [_row(None, 132, "eng1_k2=3", 1, 0.0489, best=True), _row(None, 132, "eng9_k2=1", 9, 0.061),
            _row(114, 114, "eng1_k2=3", 1, 0.0567, best=True),
            _row(66, 66, "eng1_k2=3", 1, 0.0750, best=True),
            _row(66, 66, "eng9_k2=1", 9, None, status="build_failed", error="CUDNN_STATUS_NOT_SUPPORTED")]
    refused = [{"sm_count": 114, "sms": 114, "plan": "eng9_k2=1", "engine_id": 9, "how": "not_proposed",
                "category": "not proposed", "reason": "listed on the whole GPU only"},
               {"sm_count": 66, "sms": 66, "plan": "eng9_k2=1", "engine_id": 9, "how": "build_failed",
                "category": "other", "reason": "CUDNN_STATUS_NOT_SUPPORTED"},
               {"sm_count": 78, "sms": 78, "plan": None, "engine_id": 0, "how": "no_plan", "category": "carve-out",
                "reason": "target_sm_count != deviceProp.multiProcessorCount"}]
    return ScalingResult(spec=RESNET, sm_counts=(None, 114, 78, 66), full_sm_count=132,
                         rows=_typed(pd.DataFrame(rows, columns=list(FRAME_COLUMNS))),
                         refused=_typed(pd.DataFrame(refused, columns=list(REFUSED_COLUMNS))),
                         device={"gpu": "NVIDIA H200", "sm_count": 132, "cudnn_backend": 91900},
                         settings=cl.RunOptions(baselines=False).to_dict() | {"sm_count": None},
                         errors=((78, "No plan ... on 78 SMs (carve-out)"),), created="2026-11-26T12:00:00+00:00")


def test_per_count_gives_the_best_the_ideal_and_what_was_refused() -> None:
    r = hand_built()
    per = r.per_count
    assert list(per.columns) == list(PER_COUNT_COLUMNS)
    assert [None if pd.isna(v) else int(v) for v in per["sm_count"]] == [None, 114, 78, 66]
    assert list(per["sms"]) == [132, 114, 78, 66]
    assert r.whole_gpu_best_ms == pytest.approx(0.0489)
    assert list(per["ideal_ms"]) == pytest.approx([0.0489 * 132 / n for n in (132, 114, 78, 66)])
    assert per["over_ideal"].iloc[0] == pytest.approx(1.0)
    assert per["over_ideal"].iloc[3] == pytest.approx(0.0750 / (0.0489 * 2))
    assert math.isnan(per["best_ms"].iloc[2]) and per["error"].iloc[2].startswith("No plan")
    assert list(per["refused"]) == [0, 1, 1, 1] and list(per["plans_ok"]) == [2, 1, 0, 1]
    assert r.label == LABEL and "memory bandwidth and L2" in r.label
    assert "78 SMs: no plan ran" in r.summary() and "ideal" in r.summary()
    assert len(r.refused_at(66)) == 1 and r.refused_at(78)["category"].tolist() == ["carve-out"]


def test_a_scaling_result_round_trips_through_json() -> None:
    r = hand_built()
    text = json.dumps(r.to_dict(), allow_nan=False)
    back = ScalingResult.from_dict(json.loads(text))
    assert back.to_dict() == r.to_dict()
    pd.testing.assert_frame_equal(back.frame(), r.frame())
    pd.testing.assert_frame_equal(back.refused, r.refused)
    pd.testing.assert_frame_equal(back.per_count, r.per_count)
    assert (back.spec, back.sm_counts, back.full_sm_count, back.errors) == (r.spec, r.sm_counts, 132, r.errors)


@pytest.mark.parametrize("change", [
    {"format": "other"}, {"sm_counts": [None, 114, 114]}, {"sm_counts": [114]}, {"full_sm_count": 100},
    {"full_sm_count": True}, {"errors": [{"sm_count": 5, "error": "x"}]}, {"device": []},
    {"frame": [{"nonsense": 1}]}, {"frame": [{"sm_count": 99}]}, {"frame": [{"median_ms": "fast"}]},
    {"frame": [{"engine_id": 1.5}]}, {"refused": "none"}, {"spec": {"op": "nope"}}], ids=lambda c: next(iter(c)))
def test_a_bad_record_is_a_data_error(change) -> None:
    data = hand_built().to_dict() | change
    with pytest.raises(DataError):
        ScalingResult.from_dict(data, source="scaling.json")


# ------------------------------------------------------------------------------------------------ the figure

def test_the_figure_draws_the_best_time_and_the_dashed_ideal_line_with_the_label() -> None:
    import plotly.graph_objects as go

    from cudnn_lab.plots.sm_scaling import plot_sm_scaling

    fig = plot_sm_scaling(hand_built())
    assert isinstance(fig, go.Figure)
    best = next(t for t in fig.data if t.name == "best plan")
    ideal = next(t for t in fig.data if "ideal" in (t.name or ""))
    assert best.mode == "markers+lines+text" and list(best.x) == [66, 114, 132]  # 78: nothing ran
    assert list(best.y) == pytest.approx([75.0, 56.7, 48.9])
    assert ideal.line.dash == "dash" and list(ideal.x) == [66, 78, 114, 132]
    assert list(ideal.y) == pytest.approx([48.9 * 132 / n for n in (66, 78, 114, 132)])
    title = fig.layout.title.text
    assert LABEL in title and "no plan ran on 78 SMs" in title
    hover = " ".join(best.hovertext)
    assert "eng9_k2=1" in hover and "CUDNN_STATUS_NOT_SUPPORTED" in hover and "not_proposed" in hover


def test_the_figure_wants_a_scaling_result() -> None:
    from cudnn_lab.plots.sm_scaling import plot_sm_scaling

    with pytest.raises(OptionError, match="ScalingResult"):
        plot_sm_scaling(pd.DataFrame())


def test_waves_come_from_the_best_plans_tile_and_the_gemm_view():
    """392 output tiles of 128x128 for a 32x28x28-pixel, 256-channel conv (M = 25088, N = 256): 2.97 waves on 132
    SMs at one tile per SM; unknown where the spec has no GEMM view or the tile is unknown."""
    from cudnn_lab.whatif.scaling import _waves

    conv = cl.ConvSpec(n=32, c=256, h=28, w=28, k=256, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    w = _waves(conv, "128x128x64", 132)
    assert w["tiles"] == 392 and abs(w["waves"] - 392 / 132) < 1e-12
    assert math.isnan(_waves(conv, None, 132)["waves"])
    assert math.isnan(_waves(conv.replace(direction="dgrad"), "128x128x64", 132)["waves"])
    mm = cl.MatmulSpec(m=1000, n=300, k=64, dtype="bf16")
    assert _waves(mm, "128x64", 66)["tiles"] == 8 * 5
