"""cl.run on a real GPU for the single-tensor classic calls: cudnnSoftmaxForward (every algo and mode),
cudnnActivationForward (every mode, with coefficients), cudnnTransformTensor (layouts and dtype conversions), each
one plan row checked against float64 and timed against PyTorch; the graph API's structural transforms refused
below the cuDNN version that runs them."""

from __future__ import annotations

import pytest

import cudnn_lab as cl
import cudnn_lab.gpu.classic.ops  # registers the plan sources (also done by cudnn_lab.gpu)
from cudnn_lab.gpu.classic.ops import NeedsNewerCudnnError
from cudnn_lab.specs.activation import ACTIVATIONS, ActivationSpec
from cudnn_lab.specs.softmax import SoftmaxSpec
from cudnn_lab.specs.transform import TransformSpec

pytestmark = pytest.mark.gpu

SMALL = dict(n=4, c=24, h=9, w=11)
QUICK = dict(plans="all", baselines=False, roofline=False, time_cap_s=0.05)


def _assert_one_right_row(result: cl.RunResult, call: str) -> dict:
    assert list(result.plans["plan"]) == [f"classic {call}"], result.plans
    row = result.heuristic_pick.to_dict()
    assert row["status"] == "ok" and row["engine_id"] == -1, row
    assert row["nan_count"] == 0, row  # every element of the NaN-poisoned Y was written
    assert bool(row["pass_cudnn"]), row
    assert row["median_ms"] > 0
    return row


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("mode", ["channel", "instance"])
@pytest.mark.parametrize("algo", ["accurate", "fast", "log"])
def test_softmax(algo: str, mode: str, dtype: str, layout: str) -> None:
    spec = SoftmaxSpec(**SMALL, algo=algo, mode=mode, dtype=dtype, layout=layout)
    _assert_one_right_row(cl.run(spec, **QUICK), "cudnnSoftmaxForward")


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("mode", list(ACTIVATIONS))
def test_activation(mode: str, dtype: str) -> None:
    spec = ActivationSpec(**SMALL, mode=mode, dtype=dtype, layout="NCHW" if dtype == "fp32" else "NHWC")
    _assert_one_right_row(cl.run(spec, **QUICK), "cudnnActivationForward")


@pytest.mark.parametrize("mode,coef", [("clipped_relu", 1.5), ("elu", 0.3), ("swish", 1.702)])
def test_activation_coefficients_reach_cudnn(mode: str, coef: float) -> None:
    spec = ActivationSpec(**SMALL, mode=mode, coef=coef, dtype="fp32")
    _assert_one_right_row(cl.run(spec, **QUICK), "cudnnActivationForward")


@pytest.mark.parametrize("layout,out_layout", [("NCHW", "NHWC"), ("NHWC", "NCHW"), ("NCHW", "NCHW")])
@pytest.mark.parametrize("dtype,out_dtype", [("fp16", "fp16"), ("fp32", "fp16"), ("fp32", "bf16"),
                                             ("fp16", "fp32"), ("bf16", "fp32")])
def test_transform_tensor(layout: str, out_layout: str, dtype: str, out_dtype: str) -> None:
    spec = TransformSpec(**SMALL, layout=layout, out_layout=out_layout, dtype=dtype, out_dtype=out_dtype)
    row = _assert_one_right_row(cl.run(spec, **QUICK), "cudnnTransformTensor")
    print(spec.label(), "max_abs", row["max_abs"])


def test_layout_change_next_to_an_nchw_conv() -> None:
    """The NCHW -> NHWC copy of a conv's input on its own, beside the NCHW conv whose plans make that copy."""
    conv = cl.ConvSpec(n=32, c=128, h=28, w=28, k=128, layout="NCHW", dtype="fp16")
    copy = TransformSpec(n=32, c=128, h=28, w=28, layout="NCHW", out_layout="NHWC", dtype="fp16")
    t = cl.run(copy, plans="all", roofline=True, time_cap_s=0.2)
    c = cl.run(conv, plans="heuristic", baselines=False, roofline=False, time_cap_s=0.2)
    row = _assert_one_right_row(t, "cudnnTransformTensor")
    print(f"cudnnTransformTensor NCHW->NHWC {row['median_ms'] * 1e3:.1f} us ({row['gbps']:.0f} GB/s); "
          f"NCHW conv heuristic pick {c.heuristic_pick['median_ms'] * 1e3:.1f} us")
    assert t.torch.get("benchmark_off_ms", 0) > 0  # PyTorch's .to(memory_format=channels_last) on the same x


@pytest.mark.parametrize("kind", ["transpose", "reshape", "slice", "concatenate"])
def test_graph_kinds_are_refused_below_their_cudnn_version(kind: str) -> None:
    import cudnn

    extra = {"stop": SMALL["c"] // 2} if kind == "slice" else {}  # a slice within x's c = 24 channels
    spec = TransformSpec(**SMALL, kind=kind, **extra)
    if int(cudnn.backend_version()) >= 92200:
        pytest.skip("this cuDNN runs the structural graphs alone; the refusal applies below 9.22.0")
    with pytest.raises(NeedsNewerCudnnError) as info:
        cl.run(spec, **QUICK)
    assert "9.22.0" in str(info.value) and kind in str(info.value)
