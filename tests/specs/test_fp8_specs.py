"""FP8 fields of MatmulSpec, ConvSpec and SdpaSpec: what they take, what they refuse (naming the field), what a form
shows, what the GPU must offer, and how they count bytes."""

from __future__ import annotations

import pytest

from cudnn_lab import ConvSpec, MatmulSpec, SdpaSpec, spec_from_dict, spec_from_json
from cudnn_lab.errors import SpecError
from cudnn_lab.specs.fp8 import FP8_TENSOR_CORES, SDPA_FP8, SDPA_FP8_BOTTOM_RIGHT, SDPA_FP8_BWD_HEAD_DIM, \
    SDPA_FP8_BWD_RAGGED, SDPA_FP8_HALF_OUT, unmet

GEMM = dict(m=256, n=128, k=64, dtype="fp8_e4m3", transpose_b=True)
CONV = dict(n=2, c=32, h=8, w=8, k=16, dtype="fp8_e4m3")
ATTN = dict(batch=2, heads=4, seq_q=128, seq_kv=128, head_dim=128, dtype="fp8_e4m3")


def test_fp8_gemm_fields_and_derived_values():
    s = MatmulSpec(**GEMM, amax=True, scale_a=64.0)
    assert s.fp8 and s.c_dtype == "bf16" and s.b_fp8_dtype == "fp8_e4m3"
    assert s.scales() == {"A": 64.0, "B": None}
    assert s.output_names() == ("C", "Amax")
    assert s.tensor_dtypes() == {"A": "fp8_e4m3", "B": "fp8_e4m3", "C": "bf16", "descale_A": "fp32",
                                 "descale_B": "fp32", "scale_C": "fp32", "Amax": "fp32"}
    # one byte per FP8 element, two per bf16 output element, four per scalar
    assert s.min_bytes() == 256 * 64 + 64 * 128 + 2 * 256 * 128 + 4 * 4
    assert s.label() == "matmul NT fp8_e4m3->bf16 256x128x64+amax"
    assert s.gpu_requirements() == (FP8_TENSOR_CORES,)
    mixed = MatmulSpec(**GEMM, b_dtype="fp8_e5m2", out_dtype="fp32")
    assert mixed.tensor_dtypes()["B"] == "fp8_e5m2" and mixed.c_dtype == "fp32" and "e4m3xe5m2" in mixed.label()
    for spec in (s, mixed):
        assert spec_from_dict(spec.to_dict()) == spec and spec_from_json(spec.to_json()) == spec


@pytest.mark.parametrize("changes,field,words", [
    (dict(epilogue=("relu",)), "epilogue", "must be empty for FP8"),
    (dict(scale_a=0.0), "scale_a", "0 turns every input into 0"),
    (dict(scale_b=float("nan")), "scale_b", "NaN"),
    (dict(scale_b=float("inf")), "scale_b", "infinite"),
    (dict(out_dtype="fp8_e4m3"), "out_dtype", "bf16, fp16, fp32"),
    (dict(b_dtype="e5m2"), "b_dtype", "same, fp8_e4m3, fp8_e5m2"),
    (dict(amax=1), "amax", "True or False"),
])
def test_fp8_gemm_refusals_name_the_field(changes, field, words):
    with pytest.raises(SpecError) as e:
        MatmulSpec(**{**GEMM, **changes})
    assert e.value.field == field and words in str(e.value) and e.value.spec == "MatmulSpec"


def test_fp8_fields_are_checked_but_ignored_when_not_fp8():
    plain = MatmulSpec(m=64, n=64, k=64, dtype="bf16", out_dtype="fp32", scale_a=2.0, amax=True)
    assert not plain.fp8 and plain.c_dtype == "bf16" and plain.output_names() == ("C",)
    assert plain.tensor_dtypes() == {"A": "bf16", "B": "bf16", "C": "bf16"} and plain.scales() == {}
    assert plain.gpu_requirements() == () and "fp8" not in plain.label()
    with pytest.raises(SpecError) as e:  # junk never enters, even in an ignored field
        MatmulSpec(m=64, n=64, k=64, dtype="bf16", scale_a=0)
    assert e.value.field == "scale_a"


def test_gemm_form_rules_follow_the_dtype():
    assert "fp8_e4m3" in MatmulSpec.field_choices()["dtype"] and MatmulSpec.field_choices()["out_dtype"] == (
        "bf16", "fp16", "fp32")
    assert MatmulSpec.hidden_fields({"dtype": "fp16"}) >= {"b_dtype", "out_dtype", "scale_a", "scale_b", "amax"}
    assert MatmulSpec.hidden_fields({"dtype": "fp8_e4m3"}) == {"epilogue"}
    hints = MatmulSpec.field_hints({"dtype": "fp8_e5m2"})
    assert "k" not in hints and hints["transpose_b"].startswith("FP8: on")
    assert MatmulSpec.field_hints({"dtype": "fp16"}) == {}


def test_fp8_conv_fields():
    s = ConvSpec(**CONV, amax=True, scale_w=8.0)
    assert s.fp8 and s.output_names() == ("Y", "Amax") and s.scales() == {"X": None, "W": 8.0}
    assert s.tensor_dtypes()["Y"] == "fp16" and s.tensor_dtypes()["X"] == "fp8_e4m3"
    assert s.tensor_shapes()["descale_W"] == (1, 1, 1, 1)
    assert s.label().startswith("conv fprop NHWC fp8_e4m3->fp16") and s.label().endswith("+amax")
    assert spec_from_json(s.to_json()) == s
    assert ConvSpec.hidden_fields({"dtype": "fp16"}) == {"out_dtype", "scale_x", "scale_w", "amax"}
    assert ConvSpec.field_hints({"dtype": "fp8_e4m3"})["layout"] == "FP8: NHWC"


@pytest.mark.parametrize("changes,field,words", [
    (dict(direction="dgrad"), "direction", "FP8 forward"),
    (dict(layout="NCHW"), "layout", "channels-last"),
    (dict(groups=2), "groups", "must be 1"),
    (dict(epilogue=("bias",)), "epilogue", "must be empty"),
    (dict(scale_x=-1.0), "scale_x", "negative"),
    (dict(out_dtype="fp64"), "out_dtype", "bf16, fp16, fp32"),
])
def test_fp8_conv_refusals_name_the_field(changes, field, words):
    with pytest.raises(SpecError) as e:
        ConvSpec(**{**CONV, **changes})
    assert e.value.field == field and words in str(e.value)


def test_fp8_attention_fields_and_requirements():
    fwd = SdpaSpec(**ATTN, direction="fwd_training", causal=True)
    assert fwd.output_names() == ("O", "Stats", "Amax_S", "Amax_O")
    assert fwd.io_names()[0] == ("Q", "K", "V", "descale_Q", "descale_K", "descale_V", "descale_S", "scale_S",
                                 "scale_O")
    dtypes = fwd.tensor_dtypes()
    assert dtypes["Q"] == dtypes["O"] == "fp8_e4m3" and dtypes["Stats"] == dtypes["Amax_O"] == "fp32"
    assert fwd.gpu_requirements() == (SDPA_FP8,)
    assert "fp8_e4m3->fp8_e4m3" in fwd.label()
    half = SdpaSpec(**ATTN, out_dtype="bf16")
    assert SDPA_FP8_HALF_OUT in half.gpu_requirements() and half.tensor_dtypes()["O"] == "bf16"
    br = SdpaSpec(**ATTN, causal=True, diagonal_alignment="bottom_right")
    assert SDPA_FP8_BOTTOM_RIGHT in br.gpu_requirements()
    bwd = SdpaSpec(**{**ATTN, "head_dim": 64}, direction="bwd", seq_lens_q=(128, 7), ragged=True)
    assert {SDPA_FP8_BWD_HEAD_DIM, SDPA_FP8_BWD_RAGGED} <= set(bwd.gpu_requirements())
    assert bwd.scales() == {"Q": None, "K": None, "V": None, "O": None, "dO": None}
    assert bwd.output_names()[3:] == ("Amax_dQ", "Amax_dK", "Amax_dV", "Amax_dP")
    ins = bwd.io_names()[0]
    assert ins[6:18] == ("descale_Q", "descale_K", "descale_V", "descale_O", "descale_dO", "descale_S",
                         "descale_dP", "scale_S", "scale_dQ", "scale_dK", "scale_dV", "scale_dP")
    # on Hopper with cuDNN 9.19, each requirement is a sentence naming the rule and what it needs
    msgs = [unmet(r, (9, 0), 91900) for r in bwd.gpu_requirements()]
    assert msgs[0] is None and all(m and "compute capability 10.0" in m for m in msgs[1:])


@pytest.mark.parametrize("changes,field,words", [
    (dict(bias="tensor"), "bias", "FP8"),
    (dict(bias="alibi", causal=True), "bias", "FP8"),
    (dict(direction="bwd", dropout=0.1), "dropout", "FP8 backward"),
    (dict(scale_o=0), "scale_o", "0 turns"),
    (dict(scale_do=float("inf")), "scale_do", "infinite"),
    (dict(out_dtype="fp32"), "out_dtype", "fp8_e4m3, fp8_e5m2, fp16, bf16"),
])
def test_fp8_attention_refusals_name_the_field(changes, field, words):
    with pytest.raises(SpecError) as e:
        SdpaSpec(**{**ATTN, **changes})
    assert e.value.field == field and words in str(e.value)


def test_attention_form_hides_fp8_fields_unless_fp8():
    assert SdpaSpec.hidden_fields({"dtype": "fp16"}) >= {"out_dtype", "scale_q", "scale_o", "scale_do"}
    hidden = SdpaSpec.hidden_fields({"dtype": "fp8_e5m2", "direction": "fwd_inference", "causal": True,
                                     "dropout": 0.1})
    assert "scale_q" not in hidden and "scale_do" in hidden and "dropout_seed" not in hidden
    assert "diagonal_alignment" not in hidden
    assert {"dropout_seed", "diagonal_alignment"} <= SdpaSpec.hidden_fields({"dtype": "fp16"})
    assert SdpaSpec.field_hints({"dtype": "fp8_e4m3"})["out_dtype"] == "Hopper: fp8 only"


@pytest.mark.parametrize("make", [
    lambda: MatmulSpec(**{**GEMM, "transpose_b": False}), lambda: MatmulSpec(**{**GEMM, "transpose_a": True}),
    lambda: MatmulSpec(**{**GEMM, "k": 24}), lambda: MatmulSpec(**{**GEMM, "dtype": "fp8_e5m2"}),
    lambda: ConvSpec(**{**CONV, "c": 24, "k": 40}), lambda: ConvSpec(**{**CONV, "c": 3}),
], ids=["gemm NN", "gemm TT", "gemm k=24", "gemm e5m2 x e5m2", "conv c=24 k=40", "conv c=3"])
def test_what_cudnn_9_19_runs_on_hopper_is_accepted(make):
    # cuDNN 9.19 ran these right on an H100 (2026-11-22: rel L2 1.6e-3 GEMMs, 2.1e-4 convs, every plan in band)
    assert make().fp8
