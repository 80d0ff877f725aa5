"""What-if asked live on a GPU host: deviceless answers against the card's own, cuDNN crashing for a target without
taking the kit down, carve-out refusals with cuDNN's reasons, a second cuDNN side by side, and a profile file."""

from __future__ import annotations

from pathlib import Path

import pytest

import cudnn_lab as cl
from cudnn_lab.whatif import devices as tg
from cudnn_lab import whatif as wi

pytestmark = pytest.mark.gpu

CONVS = [cl.ConvSpec(n=16, c=64, h=56, w=56, k=128, r=3, s=3, padding=1, layout=layout, dtype="fp16",
                     epilogue=epilogue) for layout in ("NHWC", "NCHW") for epilogue in ((), ("bias", "relu"))]
MATMUL = cl.MatmulSpec(batch=1, m=1024, n=1024, k=512, dtype="fp16", epilogue=("bias",))
SYSTEM_CUDNN = Path("/usr/lib/x86_64-linux-gnu")


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    path = tmp_path_factory.mktemp("target") / "card.json"
    target = wi.profile(path)
    assert tg.load_target(path).description == target.description
    return target


@pytest.mark.parametrize("spec", CONVS, ids=lambda s: s.label())
def test_deviceless_plans_equal_the_cards_for_convs(spec, card):
    here = wi.plans_for(spec, recorded=False)
    deviceless = wi.plans_for(spec, card, recorded=False)
    assert here.ok and deviceless.ok
    assert [p["plan"] for p in here.proposals] == [p["plan"] for p in deviceless.proposals]


def test_deviceless_matmul_lacks_only_runtime_compiled_plans(card):
    here = {p["plan"]: p for p in wi.plans_for(MATMUL, recorded=False).proposals}
    deviceless = {p["plan"] for p in wi.plans_for(MATMUL, card, recorded=False).proposals}
    assert deviceless <= set(here)
    assert all("RUNTIME_COMPILATION" in here[p]["behavior_notes"] for p in set(here) - deviceless)


def test_a_target_cudnn_crashes_on_is_an_answer_and_the_next_question_works(card):
    crashed = wi.plans_for(CONVS[0], tg.synthetic("10.0", card), recorded=False)
    if crashed.ok:
        pytest.skip("this cuDNN answers for compute capability 10.0 (it crashed in 9.19.0 on 2026-11-26)")
    assert crashed.refused == "crashed" and "SIGSEGV" in crashed.message
    assert wi.plans_for(CONVS[0], tg.synthetic("8.0", card), recorded=False).ok


def test_a_carve_out_refused_by_matmul_engines_says_why():
    w = wi.plans_for(MATMUL, sm_count=100, recorded=False)
    assert not w.ok and set(w.reasons()["category"]) == {"carve-out"}
    conv = wi.plans_for(CONVS[0], sm_count=100, recorded=False)
    assert conv.ok


def test_an_sm_count_above_the_cards_is_refused(card):
    with pytest.raises(cl.OptionError, match="sm_count"):
        wi.plans_for(CONVS[0], sm_count=card.sm_count + 1, recorded=False)


@pytest.mark.skipif(not (SYSTEM_CUDNN / "libcudnn.so.9").exists(), reason="no system cuDNN 9 in /usr/lib")
def test_a_second_cudnn_is_asked_in_a_process_of_its_own():
    d = wi.drift(CONVS[0], SYSTEM_CUDNN)
    assert d.old.cudnn_version < d.new.cudnn_version
    assert not d.frame().empty and "cuDNN" in d.summary()


@pytest.mark.skipif(not (SYSTEM_CUDNN / "libcudnn.so.9").exists(), reason="no system cuDNN 9 in /usr/lib")
def test_a_spec_runs_under_a_second_cudnn_beside_this_one():
    small = cl.ConvSpec(n=8, c=32, h=28, w=28, k=64, r=3, s=3, padding=1, layout="NHWC", dtype="fp16")
    d = wi.run_drift(small, SYSTEM_CUDNN, {"heuristics": ("A",), "time_cap_s": 0.1})
    assert wi.RunDrift.version(d.old) < wi.RunDrift.version(d.new)
    assert d.old.settings["cudnn_lib_version"] == wi.RunDrift.version(d.old)
    for result in (d.old, d.new):
        ok = result.plans[result.plans["median_ms"].notna()]
        assert not ok.empty and bool(ok["pass_cudnn"].all())  # numerics checked under each version
    frame = d.frame()
    assert "in" in frame and (frame["in"] == "both").any()
    assert "measured on" in d.summary()
