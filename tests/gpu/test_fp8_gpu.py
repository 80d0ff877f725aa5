"""FP8 on a Hopper GPU: does cuDNN run what the kit offers, and refuse what the kit refuses?

Each probe builds a raw cuDNN frontend graph (no kit spec in between) and asks whether any plan of heuristic modes
A + FALLBACK builds. The expectations are the kit's FP8 rules (specs/fp8.py and the FP8 fields of the specs; the
table in docs/FINDINGS.md): a probe that fails means a rule is wrong for this GPU and cuDNN, and says which.
One full execution checks the FP8 GEMM recipe's arithmetic (two descale multiplies) against float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.gpu


def _hopper() -> None:
    import torch

    major = torch.cuda.get_device_capability()[0]
    if major != 9:
        pytest.skip(f"these expectations are for Hopper (cc 9.x); this GPU is cc {major}.x")


def _buildable(make: Callable[[Any, Any], Any]) -> tuple[int, str]:
    """(plans that build, why none did) for the graph ``make(cudnn, handle)`` returns."""
    import cudnn

    handle = cudnn.create_handle()
    try:
        g = make(cudnn, handle)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        built, last = 0, ""
        for i in range(g.get_execution_plan_count()):
            try:
                g.build_plan_at_index(i)
                built += 1
            except Exception as e:  # noqa: BLE001 - one plan failing is normal
                last = str(e).splitlines()[0]
        return built, last or "no plan proposed"
    except Exception as e:  # noqa: BLE001 - validation/heuristics refusing is the answer we probe for
        return 0, " ".join(str(e).split())[:300]
    finally:
        cudnn.destroy_handle(handle)


def _scalar(g: Any, cudnn: Any, name: str, rank: int) -> Any:
    return g.tensor(name=name, dim=[1] * rank, stride=[1] * rank, data_type=cudnn.data_type.FLOAT)


def _gemm(a: str = "FP8_E4M3", b: str = "FP8_E4M3", out: str = "BFLOAT16", b_col_major: bool = True,
          m: int = 256, n: int = 256, k: int = 256, amax: bool = False, a_col_major: bool = False
          ) -> Callable[[Any, Any], Any]:
    def make(cudnn: Any, handle: Any) -> Any:
        dt = cudnn.data_type
        g = cudnn.pygraph(io_data_type=getattr(dt, out), intermediate_data_type=dt.FLOAT,
                          compute_data_type=dt.FLOAT, handle=handle)
        A = g.tensor(name="A", dim=[1, m, k], stride=[m * k, 1, m] if a_col_major else [m * k, k, 1],
                     data_type=getattr(dt, a))
        B = g.tensor(name="B", dim=[1, k, n], stride=[k * n, 1, k] if b_col_major else [k * n, n, 1],
                     data_type=getattr(dt, b))
        acc = g.matmul(A, B, compute_data_type=dt.FLOAT, name="matmul")
        c = g.mul(acc, _scalar(g, cudnn, "descale_A", 3), compute_data_type=dt.FLOAT, name="descale_a")
        c = g.mul(c, _scalar(g, cudnn, "descale_B", 3), compute_data_type=dt.FLOAT, name="descale_b")
        if amax:
            am = g.reduction(c, mode=cudnn.reduction_mode.AMAX, compute_data_type=dt.FLOAT, name="amax")
            am.set_output(True).set_name("Amax").set_data_type(dt.FLOAT).set_dim([1, 1, 1]).set_stride([1, 1, 1])
            c = g.mul(c, _scalar(g, cudnn, "scale_C", 3), compute_data_type=dt.FLOAT, name="scale_c")
        c.set_output(True).set_name("C").set_data_type(getattr(dt, out)).set_dim([1, m, n]).set_stride(
            [m * n, n, 1])
        return g
    return make


def _conv(x: str = "FP8_E4M3", out: str = "HALF", c: int = 64, kk: int = 64, nhwc: bool = True
          ) -> Callable[[Any, Any], Any]:
    n, h, w, r = 8, 28, 28, 3

    def strides(d0: int, d1: int, hh: int, ww: int) -> list[int]:
        return [d1 * hh * ww, 1, ww * d1, d1] if nhwc else [d1 * hh * ww, hh * ww, ww, 1]

    def make(cudnn: Any, handle: Any) -> Any:
        dt = cudnn.data_type
        g = cudnn.pygraph(io_data_type=getattr(dt, out), intermediate_data_type=dt.FLOAT,
                          compute_data_type=dt.FLOAT, handle=handle)
        X = g.tensor(name="X", dim=[n, c, h, w], stride=strides(n, c, h, w), data_type=getattr(dt, x))
        W = g.tensor(name="W", dim=[kk, c, r, r], stride=strides(kk, c, r, r), data_type=getattr(dt, x))
        y = g.conv_fprop(X, W, padding=[1, 1], stride=[1, 1], dilation=[1, 1], compute_data_type=dt.FLOAT,
                         name="conv_fprop")
        y = g.mul(y, _scalar(g, cudnn, "descale_X", 4), compute_data_type=dt.FLOAT, name="descale_x")
        y = g.mul(y, _scalar(g, cudnn, "descale_W", 4), compute_data_type=dt.FLOAT, name="descale_w")
        y.set_output(True).set_name("Y").set_data_type(getattr(dt, out)).set_dim([n, kk, h, w]).set_stride(
            strides(n, kk, h, w))
        return g
    return make


def _sdpa_fp8(out: str = "FP8_E4M3", d: int = 128, causal: bool = True, alignment: str = "TOP_LEFT",
              bias: bool = False, alibi: bool = False, padding: bool = False, dropout: float = 0.0,
              backward: bool = False, ragged: bool = False) -> Callable[[Any, Any], Any]:
    b, h, s = 2, 4, 256

    def make(cudnn: Any, handle: Any) -> Any:
        dt = cudnn.data_type
        e4 = dt.FP8_E4M3
        g = cudnn.pygraph(io_data_type=e4, intermediate_data_type=dt.FLOAT, compute_data_type=dt.FLOAT,
                          handle=handle)
        st = [s * h * d, d, h * d, 1]  # BSHD in memory

        def t(name: str, dtype: Any = e4) -> Any:
            return g.tensor(name=name, dim=[b, h, s, d], stride=st, data_type=dtype)

        q, k, v = t("Q"), t("K"), t("V")
        kw: dict[str, Any] = {"attn_scale": d ** -0.5}
        if causal:
            kw.update(diagonal_alignment=getattr(cudnn.diagonal_alignment, alignment), right_bound=0)
        if bias:
            kw["bias"] = g.tensor(name="Bias", dim=[1, h, s, s], stride=[h * s * s, s * s, s, 1], data_type=e4)
        if alibi:
            kw["use_alibi_mask"] = True
        if padding or ragged:
            kw.update(use_padding_mask=True,
                      seq_len_q=g.tensor(name="seq_len_q", dim=[b, 1, 1, 1], stride=[1, 1, 1, 1],
                                         data_type=dt.INT32),
                      seq_len_kv=g.tensor(name="seq_len_kv", dim=[b, 1, 1, 1], stride=[1, 1, 1, 1],
                                          data_type=dt.INT32))
        if ragged:
            for name, ten in (("Q", q), ("K", k), ("V", v)):
                ten.set_ragged_offset(g.tensor(name=f"{name}_offset", dim=[b + 1, 1, 1, 1], stride=[1, 1, 1, 1],
                                               data_type=dt.INT64))
        if dropout:
            kw["dropout"] = (dropout, *(g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=dt.INT64)
                                        for n in ("Seed", "Offset")))
        if not backward:
            sc = {n: _scalar(g, cudnn, n, 4) for n in ("descale_q", "descale_k", "descale_v", "descale_s",
                                                        "scale_s", "scale_o")}
            o, _, amax_s, amax_o = g.sdpa_fp8(q, k, v, **sc, generate_stats=False, name="sdpa_fp8", **kw)
            o.set_output(True).set_dim([b, h, s, d]).set_stride(st).set_data_type(getattr(dt, out))
            if ragged:
                o.set_ragged_offset(g.tensor(name="O_offset", dim=[b + 1, 1, 1, 1], stride=[1, 1, 1, 1],
                                             data_type=dt.INT64))
            for a in (amax_s, amax_o):
                a.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(dt.FLOAT)
            return g
        o, do = t("O", getattr(dt, out)), t("dO")
        stats = g.tensor(name="Stats", dim=[b, h, s, 1], stride=[h * s, s, 1, 1], data_type=dt.FLOAT)
        names = ("descale_q", "descale_k", "descale_v", "descale_o", "descale_dO", "descale_s", "descale_dP",
                 "scale_s", "scale_dQ", "scale_dK", "scale_dV", "scale_dP")
        sc = {n: _scalar(g, cudnn, n, 4) for n in names}
        kw.pop("bias", None)
        kw.pop("use_alibi_mask", None)
        outs = g.sdpa_fp8_backward(q, k, v, o, do, stats, **sc, name="sdpa_fp8_backward", **kw)
        for grad in outs[:3]:
            grad.set_output(True).set_dim([b, h, s, d]).set_stride(st).set_data_type(getattr(dt, out))
        for a in outs[3:7]:
            a.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(dt.FLOAT)
        return g
    return make


#: (probe, graph, does the kit offer it on Hopper with cuDNN 9.19, the kit's rule that a mismatch contradicts)
PROBES: list[tuple[str, Callable[[Any, Any], Any], bool, str]] = [
    ("matmul e4m3 x e4m3 TN -> bf16", _gemm(), True, "MatmulSpec offers fp8 TN with bf16 output"),
    ("matmul e4m3 x e4m3 TN -> fp16", _gemm(out="HALF"), True, "MatmulSpec.out_dtype offers fp16 for fp8"),
    ("matmul e4m3 x e4m3 TN -> fp32", _gemm(out="FLOAT"), True, "MatmulSpec.out_dtype offers fp32 for fp8"),
    ("matmul e4m3 x e4m3 TN -> bf16 + amax", _gemm(amax=True), True, "MatmulSpec.amax"),
    ("matmul e4m3 x e5m2 TN", _gemm(b="FP8_E5M2"), True, "MatmulSpec.b_dtype offers mixed e4m3 x e5m2"),
    ("matmul e5m2 x e5m2 TN", _gemm(a="FP8_E5M2", b="FP8_E5M2"), True, "MatmulSpec offers e5m2 x e5m2"),
    ("matmul e4m3 NN (B row-major)", _gemm(b_col_major=False), True, "MatmulSpec offers fp8 with transpose_b=False"),
    ("matmul e4m3 TN k=24", _gemm(k=24), True, "MatmulSpec offers fp8 with k not a multiple of 16"),
    ("conv fprop e4m3 NHWC -> fp16", _conv(), True, "ConvSpec offers fp8 fprop NHWC"),
    ("conv fprop e4m3 NHWC -> bf16", _conv(out="BFLOAT16"), True, "ConvSpec.out_dtype offers bf16 for fp8"),
    ("conv fprop e4m3 NHWC -> fp32", _conv(out="FLOAT"), True, "ConvSpec.out_dtype offers fp32 for fp8"),
    ("conv fprop e4m3 NCHW", _conv(nhwc=False), False, "fp8 conv needs layout NHWC"),
    ("conv fprop e4m3 NHWC c=24", _conv(c=24), True, "ConvSpec offers fp8 with c not a multiple of 16"),
    ("sdpa_fp8 fwd causal, e4m3 O", _sdpa_fp8(), True, "SdpaSpec offers fp8 forward"),
    ("sdpa_fp8 fwd e5m2 O", _sdpa_fp8(out="FP8_E5M2"), True, "SdpaSpec.out_dtype offers e5m2 O"),
    ("sdpa_fp8 fwd padding mask", _sdpa_fp8(padding=True), True, "SdpaSpec seq_lens with fp8"),
    ("sdpa_fp8 fwd ragged", _sdpa_fp8(ragged=True, causal=False), True, "SdpaSpec ragged with fp8 forward"),
    ("sdpa_fp8 fwd dropout", _sdpa_fp8(dropout=0.1), True, "SdpaSpec dropout with fp8 forward"),
    ("sdpa_fp8 fwd head_dim 64", _sdpa_fp8(d=64), True, "fp8 head_dim: multiples of 16"),
    ("sdpa_fp8 fwd fp16 O", _sdpa_fp8(out="HALF"), False, "fp16/bf16 O of fp8 attention needs Blackwell + 9.13"),
    ("sdpa_fp8 fwd bias", _sdpa_fp8(bias=True), False, "fp8 attention takes no bias"),
    ("sdpa_fp8 fwd alibi", _sdpa_fp8(alibi=True), False, "fp8 attention takes no ALiBi"),
    ("sdpa_fp8 fwd bottom-right causal", _sdpa_fp8(alignment="BOTTOM_RIGHT"), False,
     "fp8 bottom-right needs Blackwell + 9.7"),
    ("sdpa_fp8 bwd d128", _sdpa_fp8(backward=True), True, "SdpaSpec offers fp8 backward at head_dim 128"),
    ("sdpa_fp8 bwd d64", _sdpa_fp8(backward=True, d=64), False, "fp8 backward on Hopper: head_dim 128 only"),
    # builds (Philox), but the kit refuses FP8 backward dropout: with its mask dropout the gradients came out wrong
    ("sdpa_fp8 bwd dropout", _sdpa_fp8(backward=True, dropout=0.1), True,
     "cuDNN builds it; SdpaSpec refuses it on numerics (docs/FINDINGS.md)"),
]


@pytest.mark.parametrize("probe,make,offered,rule", PROBES, ids=[p[0] for p in PROBES])
def test_cudnn_agrees_with_the_kits_fp8_rules(probe, make, offered, rule):
    _hopper()
    built, why = _buildable(make)
    if offered:
        assert built > 0, f"{probe}: no plan builds ({why}), but the kit offers it ({rule}): refuse it in the spec"
    else:
        assert built == 0, f"{probe}: {built} plan(s) build, but the kit refuses it ({rule}): relax that rule"


def test_fp8_gemm_recipe_matches_float64_of_the_same_fp8_values():
    """The raw recipe the kit builds (matmul, two descale multiplies), executed: within PyTorch's FP8 GEMM band."""
    _hopper()
    import cudnn
    import torch

    from cudnn_lab.reference.quantize import dequantize, quantize

    m = n = k = 512
    g0 = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, device="cuda", generator=g0) / k**0.5
    b = torch.randn(n, k, device="cuda", generator=g0).t()  # [k, n] column-major
    qa, qb = quantize(a, "fp8_e4m3"), quantize(b, "fp8_e4m3")
    assert qb.data.stride() == (1, k)
    handle = cudnn.create_handle()
    try:
        graph = _gemm(m=m, n=n, k=k)(cudnn, handle)
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        graph.check_support()
        graph.build_plans()
        c = torch.full((1, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        feeds = {"A": qa.data.unsqueeze(0), "B": qb.data.unsqueeze(0), "C": c,
                 "descale_A": torch.full((1, 1, 1), qa.descale, device="cuda"),
                 "descale_B": torch.full((1, 1, 1), qb.descale, device="cuda")}
        tensors = {t.get_name(): t for t in graph.get_inputs() + graph.get_outputs()}
        ws = torch.empty(graph.get_workspace_size(), device="cuda", dtype=torch.uint8)
        graph.execute({tensors[name]: data for name, data in feeds.items()}, ws, handle=handle)
        torch.cuda.synchronize()
    finally:
        cudnn.destroy_handle(handle)
    ref = dequantize(qa) @ dequantize(qb)
    assert not torch.isnan(c).any()
    torch.testing.assert_close(c[0].double(), ref, atol=7e-2, rtol=7e-2)  # test_scaled_mm_vs_emulated's band
    rel = float((c[0].double() - ref).norm() / ref.norm())
    assert rel < 1e-2, rel
    # torch._scaled_mm on the same values, the FP8 GEMM baseline, agrees too
    base = torch._scaled_mm(qa.data, qb.data, scale_a=torch.tensor(qa.descale, device="cuda"),
                            scale_b=torch.tensor(qb.descale, device="cuda"), out_dtype=torch.bfloat16)
    assert float((base.double() - ref).norm() / ref.norm()) < 1e-2


# --- the kit's own FP8 runs (cl.run): checked against float64 of the same FP8 values, quantization apart ---------

RUN = dict(plans="heuristic", baselines=True, roofline=False, time_cap_s=0.05)


def _pick_passes(result) -> Any:
    pick = result.heuristic_pick
    assert pick["status"] == "ok", pick.to_dict()
    assert pick["nan_count"] == 0, pick.to_dict()
    assert bool(pick["pass_cudnn"]), (pick.to_dict(), result.warnings)
    q = result.settings.get("quantization") or {}
    assert q and all(v["saturated"] == 0 for k, v in q.items() if isinstance(v, dict)), q
    return pick


@pytest.mark.parametrize("out_dtype,amax", [("bf16", True), ("fp16", False), ("fp32", True)])
def test_fp8_gemm_runs_within_pytorchs_fp8_band(out_dtype, amax):
    _hopper()
    import cudnn_lab as cl

    spec = cl.MatmulSpec(m=1024, n=1024, k=1024, dtype="fp8_e4m3", transpose_b=True, out_dtype=out_dtype, amax=amax)
    r = cl.run(spec, **RUN)
    pick = _pick_passes(r)
    assert pick["rel_l2"] < 1e-2, pick.to_dict()  # measured 1.7e-3 at 4096^3 with bf16 out (GPU_FACTS)
    # the quantization's own error in the output is reported apart, and is larger than the kernel's
    assert r.settings["quantization"]["output_rel_l2"] > pick["rel_l2"]
    assert r.torch.get("benchmark_off_ms", 0) > 0, r.torch  # torch._scaled_mm ran


def test_fp8_gemm_fp16_output_with_amax_fails_in_cublaslt_but_runs_on_the_other_engines():
    """cuDNN 9.19 on an H100 (2026-11-22): engine 0 (cuBLASLt), the heuristics' first pick, builds an FP8 GEMM with
    an fp16 C and an Amax output but fails to execute it (CUBLAS_STATUS_EXECUTION_FAILED); bf16 + amax and fp16
    without amax run on it. If this test fails, the bug is fixed: drop the note in docs/FINDINGS.md."""
    _hopper()
    import cudnn_lab as cl

    spec = cl.MatmulSpec(m=1024, n=1024, k=1024, dtype="fp8_e4m3", transpose_b=True, out_dtype="fp16", amax=True)
    plans = cl.run(spec, plans="all", baselines=False, roofline=False, time_cap_s=0.01, kernels=False).plans
    eng0 = plans[plans["engine_id"] == 0]
    assert len(eng0) and (eng0["status"] == "run_failed").all(), eng0[["plan", "status", "error"]]
    assert eng0["error"].str.contains("CUBLAS").all()
    others = plans[(plans["engine_id"] != 0) & (plans["status"] == "ok")]
    assert len(others) >= 3 and others["pass_cudnn"].astype(bool).all(), others[["plan", "rel_l2"]]


def test_fp8_gemm_mixed_formats_and_roofline_against_the_fp8_roof():
    _hopper()
    import cudnn_lab as cl

    spec = cl.MatmulSpec(m=4096, n=4096, k=4096, dtype="fp8_e4m3", b_dtype="fp8_e5m2", transpose_b=True)
    r = cl.run(spec, plans="heuristic", roofline=True, time_cap_s=0.2)
    _pick_passes(r)
    assert r.ceilings["dtype"] == "fp8_e4m3"
    bf16_roof = cl.run(cl.MatmulSpec(m=1024, n=1024, k=1024, dtype="bf16"), plans="heuristic",
                       roofline=True, time_cap_s=0.05).ceilings["tflops"]
    assert r.ceilings["tflops"] > 1.3 * bf16_roof, (r.ceilings, bf16_roof)  # FP8's roof is about twice bf16's


def test_fp8_conv_fprop_runs():
    _hopper()
    import cudnn_lab as cl

    spec = cl.ConvSpec(n=16, c=64, h=28, w=28, k=128, r=3, s=3, padding=1, dtype="fp8_e4m3", amax=True)
    r = cl.run(spec, **RUN)
    _pick_passes(r)
    assert "benchmark_off_error" in r.torch and "FP8 convolution" in r.torch["benchmark_off_error"]


@pytest.mark.parametrize("direction", ["fwd_inference", "fwd_training"])
@pytest.mark.parametrize("dtype", ["fp8_e4m3", "fp8_e5m2"])
def test_fp8_attention_forward_within_cudnns_fp8_band(dtype, direction):
    _hopper()
    import cudnn_lab as cl

    spec = cl.SdpaSpec(batch=2, heads=8, seq_q=512, seq_kv=512, head_dim=128, causal=True, dtype=dtype,
                       direction=direction)
    pick = _pick_passes(cl.run(spec, **RUN))
    assert pick["rel_l2"] < 0.1, pick.to_dict()  # measured 3.4e-2 against float32 of the same e4m3 values


def test_fp8_attention_with_padding_runs():
    _hopper()
    import cudnn_lab as cl

    spec = cl.SdpaSpec(batch=3, heads=8, seq_q=256, seq_kv=256, head_dim=128, causal=True, dtype="fp8_e4m3",
                       seq_lens_q=(256, 100, 17), seq_lens_kv=(256, 120, 40))
    _pick_passes(cl.run(spec, **RUN))


def test_fp8_attention_backward_head_dim_128():
    _hopper()
    import cudnn_lab as cl

    spec = cl.SdpaSpec(batch=2, heads=4, seq_q=256, seq_kv=256, head_dim=128, causal=True, dtype="fp8_e4m3",
                       direction="bwd")
    _pick_passes(cl.run(spec, **RUN))


def test_fp16_output_of_fp8_attention_is_refused_on_hopper_naming_the_rule():
    _hopper()
    import cudnn_lab as cl

    spec = cl.SdpaSpec(batch=1, heads=2, seq_q=128, seq_kv=128, head_dim=64, dtype="fp8_e4m3", out_dtype="fp16")
    with pytest.raises(cl.UnsupportedGraphError) as e:
        cl.run(spec, **RUN)
    assert "compute capability 10.0" in str(e.value) and "cuDNN 9.13.0" in str(e.value)
