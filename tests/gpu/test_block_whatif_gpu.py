"""Block-scaled (MXFP8, NVFP4) graphs asked live on a GPU host: cuDNN answers for a synthetic Blackwell target or
refuses in its own words, a crash answering a CC 10.x conv comes back as a refusal, and the Hopper card in use is
told apart from the target (no plan: block scaling needs compute capability 10.x)."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
from cudnn_lab.whatif import block_formats as bw

pytestmark = pytest.mark.gpu

MATMUL = cl.MatmulSpec(batch=1, m=1024, n=1024, k=1024, dtype="bf16", transpose_b=True)
CONV = cl.ConvSpec(n=8, c=64, h=28, w=28, k=64, r=3, s=3, padding=1, dtype="bf16", out_dtype="bf16")


@pytest.mark.parametrize("fmt", ["mxfp8_e4m3", "nvfp4"])
def test_sm100_matmul_gets_an_answer_from_cudnn(fmt):
    answer = bw.block_scale_plans(MATMUL, fmt, "sm100", recorded=False)
    assert answer.target == "sm100" and answer.cudnn_version >= 90000
    assert answer.refused in ("", "declined")  # a plan list or cuDNN's own refusal, never a crash of the kit
    assert answer.ok == bool(answer.proposals)


def test_conv_on_sm100_never_takes_the_process_down():
    answer = bw.block_scale_plans(CONV, "mxfp8_e4m3", "sm100", recorded=False)
    assert answer.refused in ("", "declined", "crashed", "timeout")
    assert answer.summary()


def test_the_hopper_card_proposes_no_block_scaled_plan():
    answer = bw.block_scale_plans(MATMUL, "mxfp8_e4m3", None, recorded=False)
    assert answer.target == "this GPU"
    assert not answer.ok and answer.refused == "declined"


def _recorded_gemm_answers() -> list:
    """The recorded block-scaled GEMM answers for the synthetic Blackwell targets (askable on any GPU host)."""
    from cudnn_lab.whatif.block_answers import recorded_block_scale_answers

    return [a for a in recorded_block_scale_answers() if a.spec.op == "matmul" and a.target in ("sm100", "sm120")]


def test_the_recorded_answers_include_the_sm100_gemm() -> None:
    # the live check below would pass vacuously without them
    assert any(a.target == "sm100" and a.ok for a in _recorded_gemm_answers())


@pytest.mark.parametrize("recorded", _recorded_gemm_answers(),
                         ids=lambda a: f"{a.fmt}-{a.target}-{a.cudnn_version}")
def test_the_live_answer_is_the_recorded_one(recorded) -> None:
    """Issue 37: the recorded sm100/sm120 GEMM answer asserted live, on the cuDNN it was recorded with: the same
    refusal (none, for an answer with plans), plan count and engines, and the recorded plans' notes among the live
    plans' notes. A live refusal fails unless the recorded answer is itself a refusal."""
    import cudnn

    live_version = int(cudnn.backend_version())
    if live_version != recorded.cudnn_version:
        pytest.skip(f"recorded under cuDNN {recorded.cudnn_version}, this host has {live_version}")
    live = bw.block_scale_plans(recorded.spec, recorded.fmt, recorded.target, recorded=False)
    assert live.cudnn_version == recorded.cudnn_version
    assert live.refused == recorded.refused, live.summary()
    if recorded.ok:
        assert live.plan_count == recorded.plan_count, live.summary()
        assert sorted(live.engine_ids) == sorted(recorded.engine_ids), live.summary()
        assert set(recorded.notes) <= set(live.notes), (live.notes, recorded.notes)
